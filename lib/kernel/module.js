'use strict';
// Modules: code loaded into a context (PTX, cubin, fatbin) and what it holds: kernels, globals,
// texture and surface references. `new Module(image, { options, messageHandler, source })`
// loads on the current context; SourceModule (cudadrv/compiler) extends it.
const binding = require('../internal/binding');
const { Context } = require('../driver/context');
const { JitOption, refuseRemoved } = require('../driver/constants');
const { CudaError } = require('../driver/errors');
const { camelCase } = require('../internal/names');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { kernelOf } = require('./kernel');
const { parseKernelSignatures } = require('./formats');
const { TextureReference, SurfaceReference, referenceOf } = require('./texref');

// JitOption by UPPER_CASE and camelCase name.
const JIT_BY_NAME = new Map();
for (const [name, value] of Object.entries(JitOption)) {
  JIT_BY_NAME.set(name, value);
  JIT_BY_NAME.set(camelCase(name), value);
}

// [keys, values] of JIT options given as [[JitOption.X, value], ...] or { X: value } (names
// UPPER_CASE or camelCase); boolean values are 1 or 0.
function jitOptions(options) {
  const keys = [];
  const values = [];
  if (options === undefined || options === null) return [keys, values];
  let entries;
  if (Array.isArray(options)) entries = options;
  else if (typeof options === 'object') entries = Object.entries(options);
  else
    throw new TypeError(`options must be [[JitOption.X, value], ...] or { X: value }, not ${check.describe(options)}`);
  for (const entry of entries) {
    if (!Array.isArray(entry) || entry.length !== 2) {
      throw new TypeError(`each JIT option must be a [JitOption.X, value] pair, not ${check.describe(entry)}`);
    }
    let [key, value] = entry;
    if (typeof key === 'string') {
      const known = JIT_BY_NAME.get(key) ?? (/^\d+$/.test(key) ? Number(key) : undefined);
      if (known === undefined) throw new RangeError(`unknown JIT option '${key}': use a member of cuda.JitOption`);
      key = known;
    }
    check.member('JIT option', key, JitOption, 'JitOption');
    if (typeof value === 'boolean') value = value ? 1 : 0;
    check.integer(`JIT option ${key} value`, value, 0, 4294967295);
    if (key === JitOption.TARGET) refuseRemoved('JitTarget', value, 'JitOption.TARGET');
    keys.push(key);
    values.push(value);
  }
  return [keys, values];
}

/**
 * Loaded code: `new Module(image, { options, messageHandler, source })` loads PTX, cubin or
 * fatbin into the current context. options: JIT options; messageHandler(success, infoLog,
 * errorLog) receives the JIT logs; source: the CUDA C++ the image came from, whose `__global__`
 * signatures let kernels take bare numbers.
 */
class Module {
  constructor(image, opts) {
    setUp(this, loadCode(this, binding.moduleLoadData, image, opts));
  }

  /** The kernel `name` (a callable Kernel); the same object for the same name. */
  getFunction(name) {
    if (typeof name !== 'string') throw new TypeError(`name must be a string, not ${check.describe(name)}`);
    let kernel = this._kernels.get(name);
    if (kernel === undefined) {
      kernel = kernelOf(this, name, this._signatures().get(name) ?? null);
      this._kernels.set(name, kernel);
    }
    return kernel;
  }

  /** The global (`__device__` or `__constant__`) `name`: `{ ptr, size }`, usable as device memory. */
  getGlobal(name) {
    if (typeof name !== 'string') throw new TypeError(`name must be a string, not ${check.describe(name)}`);
    const [ptr, size] = binding.moduleGetGlobal(this, name);
    const global = { ptr, size };
    Object.defineProperty(global, 'module', { value: this }); // kept alive
    return Object.freeze(global);
  }

  /** The texture reference `name` that the module's PTX or cubin declares. */
  getTexref(name) {
    return referenceOf(TextureReference, this, name);
  }

  /** The surface reference `name` that the module's PTX or cubin declares. */
  getSurfref(name) {
    return referenceOf(SurfaceReference, this, name);
  }

  /** Unloads the module now; its kernels, globals and references become unusable. A second
   * free() does nothing. */
  free() {
    binding.moduleUnload(this);
    this._kernels.clear(); // getFunction() then asks the addon, which refuses a freed module
  }

  [Symbol.dispose]() {
    this.free();
  }
}

// Loads image into target with load (the addon's moduleLoadData or libraryLoadData) and the
// options of `opts`, handing the JIT's logs to its messageHandler; returns its source option.
function loadCode(target, load, image, opts) {
  const { options, messageHandler, source } = check.options('options', opts);
  const bytes = check.imageBytes(image, 'PTX, cubin or fatbin');
  const [keys, values] = jitOptions(options);
  if (messageHandler !== undefined) check.func('messageHandler', messageHandler);
  if (source !== undefined && typeof source !== 'string') {
    throw new TypeError(`source must be the CUDA C++ source string, not ${check.describe(source)}`);
  }
  let logs;
  try {
    logs = retryOutOfMemory(() => load(target, bytes, keys, values));
  } catch (error) {
    if (error instanceof CudaError && typeof error.errorLog === 'string') {
      if (messageHandler) messageHandler(false, error.infoLog, error.errorLog);
      if (error.errorLog) error.message += `\n${error.errorLog.trimEnd()}`;
    }
    throw error;
  }
  if (messageHandler) messageHandler(true, logs.infoLog, logs.errorLog);
  return source;
}

function setUp(module, source) {
  /** The Context the module was loaded in (kept alive by it). */
  module.context = Context.getCurrent();
  let signatures = null;
  Object.defineProperties(module, {
    _kernels: { value: new Map() },
    _signatures: {
      value: () => (signatures ??= source === undefined ? new Map() : parseKernelSignatures(source)),
    },
  });
}

/** Loads the PTX, cubin or fatbin file at path (cuModuleLoad) into the current context. */
function moduleFromFile(path) {
  if (typeof path !== 'string') throw new TypeError(`path must be a string, not ${check.describe(path)}`);
  const module = Object.create(Module.prototype);
  retryOutOfMemory(() => binding.moduleLoad(module, path));
  setUp(module, undefined);
  return module;
}

/** `new Module(image, { options, messageHandler })`, PyCUDA's module_from_buffer. */
function moduleFromBuffer(image, opts) {
  const { options, messageHandler } = check.options('options', opts);
  return new Module(image, { options, messageHandler });
}

module.exports = {
  Module,
  moduleFromFile,
  moduleFromBuffer,
  TextureReference,
  SurfaceReference,
  loadCode,
};
