'use strict';
// Deno refuses what its permissions do not allow with a NotCapable error (PermissionDenied before
// Deno 2) that names one flag at a time; cudadrv's message names every flag it needs at once.

const FLAGS = '--allow-read --allow-env --allow-ffi --allow-sys=homedir';

/** Whether error is Deno refusing a permission. */
function isDenoPermissionError(error) {
  return (
    process.versions.deno !== undefined &&
    error instanceof Error &&
    (error.name === 'NotCapable' || error.name === 'PermissionDenied')
  );
}

/** Rewrites a Deno permission error's message to say what cudadrv needs; returns the error. */
function explainDenoPermission(error) {
  if (isDenoPermissionError(error)) {
    error.message =
      `cudadrv: Deno refused a permission (${error.message}). cudadrv needs ${FLAGS} ` +
      '(the last for the default compile cache directory), or -A. With --allow-ffi the native ' +
      "addon can do anything the process can, so Deno's other permissions do not confine it.";
  }
  return error;
}

module.exports = { isDenoPermissionError, explainDenoPermission };
