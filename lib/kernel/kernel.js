'use strict';
// Kernels: the functions of a module, callable with typed arguments (kernel(...args, { block })),
// through prepared formats (the fast path), or through PyCUDA's deprecated launch API.
// (The launch path, and what a launch costs: launch.js.)
const binding = require('../internal/binding');
const { FunctionAttribute, FuncCache, SharedConfig } = require('../driver/constants');
const { LogicError } = require('../driver/errors');
const { Stream } = require('../driver/stream');
const { Event } = require('../driver/event');
const { camelCase } = require('../internal/names');
const check = require('../internal/checks');
const { TYPES, TypedScalar, scalars, integerValue } = require('./scalars');
const { ArgumentHandler, In, Out, InOut } = require('./handlers');
const { parseFormat, layout } = require('./formats');
const packing = require('./packing');
const launch = require('./launch');

const {
  KernelState,
  callKernel,
  preparedFunctions,
  notPrepared,
  launcherOf,
  writeDims,
  launchOn,
  addKernelNode,
  setKernelNode,
} = launch;
const { ADD_KERNEL_NODE, SET_KERNEL_NODE } = require('../internal/graph-nodes');
const { checkTexrefs, compileFormat, dim3, checkSignature } = launch;

const { classify, fieldOf, packBytes } = packing;

// ---- the deprecated launch API ----

const warned = new Set();
function deprecated(method, instead) {
  if (warned.has(method)) return;
  warned.add(method);
  process.emitWarning(`kernel.${method}() is deprecated: ${instead}`, 'DeprecationWarning');
}

function legacyOf(k) {
  if (k.legacy === null)
    k.legacy = { block: undefined, options: { shared: 0 }, bytes: new Uint8Array(0), launcher: null };
  return k.legacy;
}

function legacyLaunch(k, grid, stream) {
  const legacy = legacyOf(k);
  if (legacy.block === undefined) {
    throw new LogicError(`kernel '${k.name}': call setBlockShape(x, y, z) before launching this way`);
  }
  const size = legacy.bytes.length;
  if (legacy.launcher === null || legacy.launcher.size !== size) {
    if (k.info === undefined) k.info = binding.funcGetParamInfo(k);
    const want = k.info && k.info.length ? k.info[k.info.length - 2] + k.info[k.info.length - 1] : 0;
    if (k.info && size !== want) {
      throw new TypeError(
        `kernel '${k.name}' takes ${want} bytes of parameters, but ${size} are set ` + '(paramSetSize / paramSet)',
      );
    }
    legacy.launcher = launcherOf(k, size, []);
  }
  const launcher = legacy.launcher;
  launcher.views.u8.set(legacy.bytes);
  writeDims(launcher, grid, legacy.block, legacy.options);
  launchOn(launcher, stream == null ? null : check.instance('stream', stream, Stream));
}

const CONFIG_KEYS = new Set(['grid', 'block', 'shared', 'cluster']);

// The Uint32Array of an occupancy query's launch configuration (src/kernel/occupancy.c): grid,
// block, shared bytes, cluster (0 0 0: none).
function occupancyConfig(config, method) {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new TypeError(`${method}() takes { grid, block, shared, cluster }, not ${check.describe(config)}`);
  }
  for (const key in config) {
    if (!CONFIG_KEYS.has(key)) {
      throw new TypeError(`${method}(): unknown option '${key}' (the options are grid, block, shared and cluster)`);
    }
  }
  const { grid, block, shared = 0, cluster } = config;
  const words = new Uint32Array(10);
  dim3(words, 0, grid === undefined ? 1 : grid, 'grid');
  dim3(words, 3, block, 'block');
  words[6] = check.integer('shared', shared, 0, 4294967295);
  if (cluster !== undefined) dim3(words, 7, cluster, 'cluster');
  return words;
}

// ---- Kernel ----

/**
 * A kernel (PyCUDA's Function), from `module.getFunction(name)`. Callable:
 * `kernel(...args, { block, grid, stream, shared, cluster, cooperative, timeKernel, texrefs })`;
 * `cluster: [x, y, z]` launches thread block clusters of that shape, `cooperative: true` a
 * cooperative launch (grid-wide synchronization), both through cuLaunchKernelEx.
 */
class Kernel {
  constructor() {
    throw new TypeError('kernels come from module.getFunction(name)');
  }

  /** The Module (or Library) this kernel belongs to. */
  get module() {
    return this._k.module;
  }

  // graph.addKernel(kernel, ...args, options): a kernel node of graph after deps (node indices).
  [ADD_KERNEL_NODE](graph, deps, list) {
    return addKernelNode(this._k, graph, deps, list);
  }

  // exec.setKernelArgs(node, ...args, options): node (its index in graph) launches them in exec.
  [SET_KERNEL_NODE](exec, graph, index, list) {
    setKernelNode(this._k, exec, graph, index, list);
  }

  /** The kernel's parameters as the driver lays them out ([{ offset, size }], from
   * cuFuncGetParamInfo), or null where the driver cannot tell. */
  paramInfo() {
    const k = this._k;
    if (k.info === undefined) k.info = binding.funcGetParamInfo(k);
    if (k.info === null) return null;
    const result = [];
    for (let i = 0; i < k.info.length; i += 2) result.push({ offset: k.info[i], size: k.info[i + 1] });
    return result;
  }

  /**
   * Fixes the argument types (struct format characters `b B h H i I l L q Q n N e f d ? P` with
   * repeat counts, or an array of them, dtype names and TypedArray constructors) for
   * preparedCall / preparedTimedCall / preparedAsyncCall, the fast path. `texrefs` are accepted
   * (the driver binds a module's references by itself). Returns the kernel.
   */
  prepare(format, opts) {
    const { texrefs } = check.options('options', opts);
    const k = this._k;
    if (texrefs !== undefined) checkTexrefs(texrefs);
    const fields = parseFormat(format);
    const compiled = compileFormat(k, fields);
    k.preparedFormat = fields.map((f) => f.char).join('');
    const [preparedCall, preparedAsyncCall] = preparedFunctions(k, fields, compiled);
    Object.defineProperties(this, {
      preparedCall: { value: preparedCall, writable: true, configurable: true },
      preparedAsyncCall: { value: preparedAsyncCall, writable: true, configurable: true },
    });
    return this;
  }

  /** `preparedCall(grid, block, ...args, { shared, cluster, cooperative }?)`: launches with the
   * prepared format. */
  preparedCall() {
    throw notPrepared('preparedCall');
  }

  /** `preparedAsyncCall(grid, block, stream, ...args, { shared, cluster, cooperative }?)`: launches
   * on stream. */
  preparedAsyncCall() {
    throw notPrepared('preparedAsyncCall');
  }

  /** `preparedTimedCall(grid, block, ...args, { shared, cluster, cooperative }?)`: launches between
   * two events; returns a function giving a Promise of the kernel's time in seconds, which takes
   * `{ signal }` as every wait does. */
  preparedTimedCall(grid, block, ...args) {
    if (!Object.prototype.hasOwnProperty.call(this, 'preparedCall')) throw notPrepared('preparedTimedCall');
    const start = new Event().record();
    this.preparedCall(grid, block, ...args);
    const end = new Event().record();
    return (options) => end.synchronize(options).then(() => end.timeSince(start) / 1000);
  }

  /** cuFuncGetAttribute: a FunctionAttribute of the kernel. */
  getAttribute(attribute) {
    check.member('attribute', attribute, FunctionAttribute, 'FunctionAttribute');
    return binding.funcGetAttribute(this._k, attribute);
  }

  /** cuFuncSetAttribute (MAX_DYNAMIC_SHARED_SIZE_BYTES, PREFERRED_SHARED_MEMORY_CARVEOUT...). */
  setAttribute(attribute, value) {
    check.member('attribute', attribute, FunctionAttribute, 'FunctionAttribute');
    check.integer('value', value, -2147483648, 2147483647);
    binding.funcSetAttribute(this._k, attribute, value);
  }

  /** cuFuncSetCacheConfig with a FuncCache member. */
  setCacheConfig(config) {
    binding.funcSetCacheConfig(this._k, check.member('config', config, FuncCache, 'FuncCache'));
  }

  /** cuFuncSetSharedMemConfig with a SharedConfig member. */
  setSharedConfig(config) {
    binding.funcSetSharedMemConfig(this._k, check.member('config', config, SharedConfig, 'SharedConfig'));
  }

  /** Blocks of blockSize threads that fit on one multiprocessor at once. */
  maxActiveBlocksPerMultiprocessor(blockSize, dynamicSmem = 0, flags = 0) {
    check.integer('blockSize', blockSize, 1, 2147483647);
    return binding.occupancyMaxActiveBlocks(
      this._k,
      blockSize,
      check.size('dynamicSmem', dynamicSmem),
      check.integer('flags', flags, 0, 4294967295),
    );
  }

  /**
   * The block size that maximises occupancy, and the least grid size that reaches it:
   * `{ minGridSize, blockSize }`. dynamicSmem: bytes, or a function of the block size.
   */
  maxPotentialBlockSize(dynamicSmem = 0, blockSizeLimit = 0, flags = 0) {
    if (typeof dynamicSmem !== 'function') check.size('dynamicSmem', dynamicSmem);
    const [minGridSize, blockSize] = binding.occupancyMaxPotentialBlockSize(
      this._k,
      dynamicSmem,
      check.integer('blockSizeLimit', blockSizeLimit, 0, 2147483647),
      check.integer('flags', flags, 0, 4294967295),
    );
    return { minGridSize, blockSize };
  }

  /** The dynamic shared memory, in bytes, each block may use for numBlocks blocks of blockSize
   * threads to fit on one multiprocessor together. */
  availableDynamicSharedMemoryPerBlock(numBlocks, blockSize) {
    return binding.occupancyAvailableDynamicSmem(
      this._k,
      check.integer('numBlocks', numBlocks, 1, 2147483647),
      check.integer('blockSize', blockSize, 1, 2147483647),
    );
  }

  /** The most clusters of `{ cluster, grid, block, shared }` that can be resident on the device at
   * once (compute capability 9.0+; the cluster may be left out where the kernel fixes its own). */
  maxActiveClusters(config) {
    return binding.occupancyMaxActiveClusters(this._k, occupancyConfig(config, 'maxActiveClusters'));
  }

  /** The largest cluster size (in blocks) the kernel can launch with for `{ grid, block, shared }`
   * (compute capability 9.0+: 8 is portable; larger needs FunctionAttribute.NON_PORTABLE_CLUSTER_SIZE_ALLOWED). */
  maxPotentialClusterSize(config) {
    return binding.occupancyMaxPotentialClusterSize(this._k, occupancyConfig(config, 'maxPotentialClusterSize'));
  }

  /** @deprecated pass { block } to the call. */
  setBlockShape(x, y = 1, z = 1) {
    deprecated('setBlockShape', 'pass { block: [x, y, z] } to the call');
    dim3(new Uint32Array(3), 0, [x, y, z], 'block');
    legacyOf(this._k).block = [x, y, z];
  }

  /** @deprecated pass { shared } to the call. */
  setSharedSize(bytes) {
    deprecated('setSharedSize', 'pass { shared: bytes } to the call');
    legacyOf(this._k).options.shared = check.integer('bytes', bytes, 0, 4294967295);
  }

  /** @deprecated pass the arguments to the call. */
  paramSetSize(bytes) {
    deprecated('paramSetSize', 'pass the arguments to the call');
    const legacy = legacyOf(this._k);
    const resized = new Uint8Array(check.integer('bytes', bytes, 0, 32764));
    resized.set(legacy.bytes.subarray(0, bytes));
    legacy.bytes = resized;
  }

  /** @deprecated pass cuda.int32(value) to the call. */
  paramSeti(offset, value) {
    deprecated('paramSeti', 'pass cuda.int32(value) or cuda.uint32(value) to the call');
    const view = legacyView(this._k, offset, 4);
    if (Number.isInteger(value) && value < 0) view.setInt32(0, integerValue(value, TYPES.i, 'value'), true);
    else view.setUint32(0, integerValue(value, TYPES.I, 'value'), true);
  }

  /** @deprecated pass cuda.float32(value) to the call. */
  paramSetf(offset, value) {
    deprecated('paramSetf', 'pass cuda.float32(value) to the call');
    if (typeof value !== 'number') throw new TypeError(`value must be a number, not ${check.describe(value)}`);
    legacyView(this._k, offset, 4).setFloat32(0, value, true);
  }

  /** @deprecated pass the arguments to the call. Sets the parameters (and their size) from
   * typed arguments, as a call would pack them. */
  paramSet(...args) {
    deprecated('paramSet', 'pass the arguments to the call');
    const k = this._k;
    const fields = args.map((v, i) => fieldOf(classify(v, i, k.signature), i));
    if (args.some((v) => v instanceof ArgumentHandler)) {
      throw new TypeError('paramSet(): In/Out/InOut need a call; pass them to kernel(...)');
    }
    if (k.info === undefined) k.info = binding.funcGetParamInfo(k);
    checkSignature(k, fields);
    const { offsets, size } = layout(fields, k.info, k.name);
    legacyOf(k).bytes = packBytes(fields, offsets, size, args);
  }

  /** @deprecated the driver binds a module's texture references at launch by itself. */
  paramSetTexref(texref) {
    deprecated('paramSetTexref', 'the driver binds texture references by itself');
    checkTexrefs([texref]);
  }

  /** @deprecated call the kernel with { block, grid }. */
  launch() {
    deprecated('launch', 'call the kernel: kernel(...args, { block, grid })');
    legacyLaunch(this._k, undefined, null);
  }

  /** @deprecated call the kernel with { block, grid }. */
  launchGrid(width, height = 1) {
    deprecated('launchGrid', 'call the kernel: kernel(...args, { block, grid })');
    legacyLaunch(this._k, [width, height], null);
  }

  /** @deprecated call the kernel with { block, grid, stream }. */
  launchGridAsync(width, height, stream) {
    deprecated('launchGridAsync', 'call the kernel: kernel(...args, { block, grid, stream })');
    legacyLaunch(this._k, [width, height], stream);
  }

  toString() {
    return `Kernel(${this._k.name})`;
  }
}

// Kernels are functions: call, apply and bind work on them.
Object.setPrototypeOf(Kernel.prototype, Function.prototype);

function legacyView(k, offset, size) {
  const bytes = legacyOf(k).bytes;
  check.integer('offset', offset);
  if (offset + size > bytes.length) {
    throw new RangeError(
      `offset ${offset} + ${size} bytes is past the parameter size ${bytes.length}; ` +
        'call paramSetSize(bytes) first',
    );
  }
  return new DataView(bytes.buffer, offset, size);
}

// One getter per FunctionAttribute: kernel.numRegs, kernel.sharedSizeBytes, ...
for (const [name, value] of Object.entries(FunctionAttribute)) {
  const property = camelCase(name);
  if (name === 'MAX' || property in Kernel.prototype) continue;
  Object.defineProperty(Kernel.prototype, property, {
    get() {
      return binding.funcGetAttribute(this._k, value);
    },
    configurable: true,
  });
}

// The Kernel for function `name` of module (signature: parsed parameter types, or null).
function kernelOf(module, name, signature) {
  const k = new KernelState(module, name, signature);
  binding.moduleGetFunction(module, name, k);
  const kernel = function (...list) {
    return callKernel(k, list);
  };
  Object.setPrototypeOf(kernel, Kernel.prototype);
  Object.defineProperties(kernel, {
    name: { value: name },
    _k: { value: k },
  });
  return kernel;
}

// The Kernel for kernel `name` of a Library: a KernelState per context, made (cuKernelGetFunction)
// the first time the kernel is used there; every call and method uses the current context's.
function libraryKernelOf(library, name, signature, currentContext) {
  const states = new WeakMap(); // Context → KernelState
  const state = () => {
    const ctx = currentContext();
    let k = states.get(ctx);
    if (k === undefined) {
      k = new KernelState(library, name, signature);
      binding.libraryGetFunction(library, name, k);
      states.set(ctx, k);
    }
    return k;
  };
  const kernel = function (...list) {
    return callKernel(state(), list);
  };
  Object.setPrototypeOf(kernel, Kernel.prototype);
  Object.defineProperties(kernel, {
    name: { value: name },
    _k: { get: state },
  });
  return kernel;
}

module.exports = {
  Kernel,
  TypedScalar,
  ...scalars,
  ArgumentHandler,
  In: In,
  Out: Out,
  InOut: InOut,
  packArguments: packing.packArguments,
};
// Internal (not enumerable, so not re-exported by index.js).
Object.defineProperty(module.exports, 'kernelOf', { value: kernelOf });
Object.defineProperty(module.exports, 'libraryKernelOf', { value: libraryKernelOf });
