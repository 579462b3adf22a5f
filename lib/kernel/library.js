'use strict';
// Libraries (CUDA 12.0+): code loaded once for every context (cuLibraryLoadData), where a Module
// is loaded into one. A library's kernel launches in whatever context is current, becoming a
// function of that context the first time it is used there.
const binding = require('../internal/binding');
const { Context } = require('../driver/context');
const { LogicError } = require('../driver/errors');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { libraryKernelOf } = require('./kernel');
const { loadCode } = require('./module');
const { parseKernelSignatures } = require('./formats');

function currentContext() {
  const ctx = Context.getCurrent();
  if (!ctx) {
    throw new LogicError(
      "a Library's kernels and globals live in the current context, and none is current: make or push a context first",
    );
  }
  return ctx;
}

function name(value) {
  if (typeof value !== 'string') throw new TypeError(`name must be a string, not ${check.describe(value)}`);
  return value;
}

/**
 * Code loaded for every context: `new Library(image, { options, messageHandler, source })` (or
 * `libraryFromBuffer`) loads PTX, cubin or fatbin without needing a context. Its kernels launch
 * in whichever context is current. options: JIT options; messageHandler(success, infoLog,
 * errorLog) receives the JIT logs; source: the CUDA C++ it came from (so kernels take bare
 * numbers).
 */
class Library {
  constructor(image, opts) {
    setUp(this, loadCode(this, binding.libraryLoadData, image, opts));
  }

  /** The kernel `name`: a callable Kernel that launches in whatever context is current (the
   * same object for the same name). */
  getKernel(kernelName) {
    let kernel = this._kernelsByName.get(name(kernelName));
    if (kernel === undefined) {
      binding.libraryHasKernel(this, kernelName); // fail now, not at the first launch
      kernel = libraryKernelOf(this, kernelName, this._kernelSignatures().get(kernelName) ?? null, currentContext);
      this._kernelsByName.set(kernelName, kernel);
    }
    return kernel;
  }

  /** PyCUDA's name for getKernel. */
  getFunction(kernelName) {
    return this.getKernel(kernelName);
  }

  /** The names of every kernel in the library (CUDA 12.4+), as getKernel() takes them. */
  kernelNames() {
    return binding.libraryKernelNames(this);
  }

  /** The global (`__device__` or `__constant__`) `name` in the current context: `{ ptr, size }`,
   * usable as device memory. */
  getGlobal(globalName) {
    return this._variable(globalName, false);
  }

  /** The `__managed__` variable `name`: `{ ptr, size }`, the same address in every context. */
  getManaged(variableName) {
    return this._variable(variableName, true);
  }

  _variable(variableName, managed) {
    if (!managed) currentContext();
    const [ptr, size] = binding.libraryGetGlobal(this, name(variableName), managed);
    const variable = { ptr, size };
    Object.defineProperty(variable, 'library', { value: this }); // kept alive
    return Object.freeze(variable);
  }

  /** Unloads the library now, from every context; its kernels and variables become unusable. A
   * second unload() does nothing. */
  unload() {
    binding.libraryUnload(this);
    this._kernelsByName.clear();
  }

  [Symbol.dispose]() {
    this.unload();
  }
}

function setUp(library, source) {
  let signatures = null;
  Object.defineProperties(library, {
    _kernelsByName: { value: new Map() },
    _kernelSignatures: {
      value: () => (signatures ??= source === undefined ? new Map() : parseKernelSignatures(source)),
    },
  });
}

/** `new Library(image, { options, messageHandler })`: loads PTX, cubin or fatbin bytes (a Linker's
 * output, a compile's) for every context (cuLibraryLoadData). */
function libraryFromBuffer(image, opts) {
  return new Library(image, opts);
}

/** Loads the PTX, cubin or fatbin file at path for every context (cuLibraryLoadFromFile). */
function libraryFromFile(path) {
  if (typeof path !== 'string') throw new TypeError(`path must be a string, not ${check.describe(path)}`);
  const library = Object.create(Library.prototype);
  retryOutOfMemory(() => binding.libraryLoadFromFile(library, path));
  setUp(library, undefined);
  return library;
}

module.exports = { Library, libraryFromBuffer, libraryFromFile };
