'use strict';
// Loads the native addon through node-gyp-build: build/Release where it was built from source,
// else the prebuilt binary for this platform in prebuilds/ (scripts/prebuild.js).
const fs = require('fs');
const path = require('path');
const { isDenoPermissionError, explainDenoPermission } = require('./deno');

const ROOT = path.join(__dirname, '..', '..');

// The platforms this copy of the package holds a prebuilt binary for.
function prebuilt() {
  try {
    return fs.readdirSync(path.join(ROOT, 'prebuilds')).sort().join(', ') || 'none';
  } catch {
    return 'none';
  }
}

/* What to do when loading failed. */
function advice(error) {
  if (/No native build was found/.test(error.message)) {
    return (
      `no prebuilt binary fits this platform (prebuilt: ${prebuilt()}); build one with ` +
      '"npm rebuild cudadrv", which needs a C compiler, make, Python and the CUDA toolkit headers'
    );
  }
  return 'run "npm rebuild cudadrv" (needs a C compiler, make, Python and the CUDA toolkit headers)';
}

function load() {
  try {
    // Inside the try: node-gyp-build reads the environment as it loads, which Deno may refuse.
    return require('node-gyp-build')(ROOT);
  } catch (error) {
    if (isDenoPermissionError(error)) throw explainDenoPermission(error);
    error.message = `cudadrv: the native addon could not be loaded (${error.message.trim()}); ${advice(error)}`;
    throw error;
  }
}

const addon = load();
// No thread of the addon may still run in NVRTC or the driver when exit() runs their destructors:
// the process waits here for compiles in flight and the background queues (src/core/threads.c).
process.once('exit', addon.drainThreads);

module.exports = addon;
