'use strict';
// The CudaError tree. Every failing driver call reaches JS through makeError(), registered with
// the addon, which picks the class from the CUresult in one table.
const binding = require('../internal/binding');
const { describe, options } = require('../internal/checks');

/** Base class of every cudadrv error; carries the driver's `code`, `codeName` and the `api` that failed. */
class CudaError extends Error {
  constructor(message, info) {
    if (typeof message !== 'string')
      throw new TypeError(`a CudaError's message must be a string, not ${describe(message)}`);
    const { code = null, codeName = null, api = null } = options('info', info);
    super(message);
    this.code = code;
    this.codeName = codeName;
    this.api = api;
  }

  get name() {
    return this.constructor.name;
  }
}

/** Out of device or host memory, or a pool that cannot grow. */
class MemoryError extends CudaError {}
/** Invalid values, handles or contexts; use after free; calls made in the wrong state. */
class LogicError extends CudaError {}
/** Kernel launch failures and the sticky faults a kernel leaves (illegal address, assert...). */
class LaunchError extends CudaError {}
/** No device, no binary for the GPU, files not found, a missing driver library. */
class RuntimeError extends CudaError {}
/** NVRTC refused the source: `log` holds its whole program log. */
class CompileError extends CudaError {
  constructor(message, info) {
    const { log = '', options: used = [], source = '', ...rest } = options('info', info);
    super(message, rest);
    this.log = log;
    this.options = used;
    this.source = source;
  }
}
/** A link failed (nvJitLink or the driver's linker): `log` holds the linker's whole error log and
 * `infoLog` its information log; `input` names the input the linker refused, where it refused one. */
class LinkError extends CudaError {
  constructor(message, info) {
    const { log = '', infoLog = '', input = null, ...rest } = options('info', info);
    super(message, rest);
    this.log = log;
    this.infoLog = infoLog;
    this.input = input;
  }
}
/** A compile given up through its `signal` or `timeout` (Node's convention: name 'AbortError');
 * `cause` holds the signal's reason. */
class AbortError extends CudaError {
  constructor(message, info) {
    const { cause } = options('info', info);
    super(message);
    if (cause !== undefined) this.cause = cause;
  }
}

// CUresult → class. Codes not listed are RuntimeError.
const MEMORY = [2];
// The faults a kernel leaves behind (sticky: the context is unusable afterwards) and launch limits.
const LAUNCH = [700, 701, 702, 703, 710, 714, 715, 716, 717, 718, 719, 720];
const LOGIC = [
  1, 3, 4, 101, 200, 201, 202, 205, 206, 207, 208, 210, 211, 212, 213, 216, 217, 218, 219, 400, 401, 704, 705, 708, 709,
  711, 712, 713, 800, 801, 900, 901, 902, 903, 904, 905, 906, 907, 908, 910, 912, 913, 914, 915,
];
const CLASS_OF_CODE = new Map([
  ...MEMORY.map((c) => [c, MemoryError]),
  ...LAUNCH.map((c) => [c, LaunchError]),
  ...LOGIC.map((c) => [c, LogicError]),
]);

let codeNames = null; // CUresult value → 'CUDA_ERROR_...', from the header built against
function codeName(code) {
  if (!codeNames) {
    codeNames = new Map();
    for (const [name, value] of Object.entries(binding.constants().CudaResult)) {
      if (!codeNames.has(value)) codeNames.set(value, `CUDA_${name}`);
    }
  }
  return codeNames.get(code) || `CUresult ${code}`;
}

function errorClassFor(code) {
  return CLASS_OF_CODE.get(code) || RuntimeError;
}

// Called by the addon: kind is 'cuda' (a driver call failed), 'logic' (use after free, wrong
// state; description is the whole message), 'runtime' (the driver is missing or lacks a call) or
// 'memory' (the host is out of memory).
function makeError(code, api, description, kind) {
  const info = { code, codeName: codeName(code), api };
  if (kind === 'logic') return new LogicError(description, info);
  if (kind === 'memory') return new MemoryError(description, info);
  if (kind === 'runtime') return new RuntimeError(description, info);
  const Class = errorClassFor(code);
  return new Class(`${api} failed: ${description || info.codeName}`, info);
}

binding.setErrorFactory(makeError);

module.exports = {
  CudaError,
  MemoryError,
  LogicError,
  LaunchError,
  RuntimeError,
  CompileError,
  LinkError,
  AbortError,
  makeError,
};
