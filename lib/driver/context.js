'use strict';
// Contexts: made (makeContext), retained (the primary context) or found current. One JS object
// per CUcontext, so Context.getCurrent() twice gives the same object.
const binding = require('../internal/binding');
const { Limit, FuncCache, SharedConfig } = require('./constants');
const { LogicError } = require('./errors');
const { Device, contextMakers } = require('./device');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { signalOf, abortable } = require('../internal/abort');

const registry = new Map(); // CUcontext address (bigint) → Context
const token = Symbol('Context');

let isDetached; // (context) → whether detach() has run; set in Context's static block

/** A CUDA context. Get one from device.makeContext(), device.retainPrimaryContext() or
 * Context.getCurrent(). */
class Context {
  constructor(secret, address, device) {
    if (secret !== token) {
      throw new TypeError(
        'use device.makeContext(), device.retainPrimaryContext() or ' + 'Context.getCurrent() to get a Context',
      );
    }
    this.address = address;
    this.#device = device;
  }

  #device; // the Device, found on first use where not given
  #detached = false;

  static {
    isDetached = (context) => context.#detached;
  }

  /** The context current on this thread, or null. */
  static getCurrent() {
    const address = binding.ctxGetCurrent();
    if (address === null) return null;
    const known = registry.get(address);
    if (known && !known.#detached) return known;
    return register((ctx) => binding.ctxWrapCurrent(ctx), null);
  }

  /** The device of the current context. */
  static getDevice() {
    return new Device(binding.ctxGetDevice());
  }

  /** Pops the current context off this thread's stack and returns it. */
  static pop() {
    const current = Context.getCurrent();
    if (!current) {
      throw new LogicError(
        'Context.pop(): the context stack of this thread is empty; push a ' +
          'context first (ctx.push()) or make one (device.makeContext())',
      );
    }
    binding.ctxPop();
    return current;
  }

  /** A Promise that resolves once the current context has finished all its work; `{ signal }`
   * rejects it with an AbortError once the signal aborts. */
  static synchronize(options = undefined) {
    return abortable(signalOf(options), 'Context.synchronize()', () => binding.ctxSynchronize());
  }

  /** Blocks until the current context has finished all its work. */
  static synchronizeSync() {
    binding.ctxSynchronizeSync();
  }

  static setLimit(limit, value) {
    check.member('limit', limit, Limit, 'Limit');
    binding.ctxSetLimit(limit, check.size('value', value));
  }

  static getLimit(limit) {
    check.member('limit', limit, Limit, 'Limit');
    return binding.ctxGetLimit(limit);
  }

  static setCacheConfig(config) {
    binding.ctxSetCacheConfig(check.member('config', config, FuncCache, 'FuncCache'));
  }

  static getCacheConfig() {
    return binding.ctxGetCacheConfig();
  }

  static setSharedConfig(config) {
    binding.ctxSetSharedConfig(check.member('config', config, SharedConfig, 'SharedConfig'));
  }

  static getSharedConfig() {
    return binding.ctxGetSharedConfig();
  }

  /** The flags of the current context. */
  static getFlags() {
    return binding.ctxGetFlags();
  }

  /** The API version of the current context. */
  static getApiVersion() {
    return currentOrThrow('getApiVersion').getApiVersion();
  }

  /** Lets the current context access memory of peer's context. */
  static enablePeerAccess(peer, flags = 0) {
    check.instance('peer', peer, Context);
    binding.ctxEnablePeerAccess(peer, check.integer('flags', flags, 0, 4294967295));
  }

  static disablePeerAccess(peer) {
    check.instance('peer', peer, Context);
    binding.ctxDisablePeerAccess(peer);
  }

  /** [least, greatest] stream priorities of the current context (greatest is numerically lowest). */
  static getStreamPriorityRange() {
    return binding.ctxGetStreamPriorityRange();
  }

  /** The Device this context runs on. */
  get device() {
    if (!this.#device) {
      this.#device = inContext(this, () => Context.getDevice());
    }
    return this.#device;
  }

  /** Makes this context current, on top of this thread's stack. */
  push() {
    binding.ctxPush(this);
  }

  /** Makes this context current, replacing the top of this thread's stack (cuCtxSetCurrent). */
  setCurrent() {
    binding.ctxSetCurrent(this);
  }

  /** Pops this context if it is current, then destroys it (or releases the primary context).
   * Everything made in it is gone with it. A second detach() does nothing. */
  detach() {
    if (this.#detached) return;
    try {
      binding.ctxDetach(this); // throws where a context above it could not be put back
    } finally {
      this.#detached = true;
      if (registry.get(this.address) === this) registry.delete(this.address);
    }
  }

  getApiVersion() {
    return binding.ctxGetApiVersion(this);
  }

  enablePeerAccess(peer, flags = 0) {
    inContext(this, () => Context.enablePeerAccess(peer, flags));
  }

  disablePeerAccess(peer) {
    inContext(this, () => Context.disablePeerAccess(peer));
  }

  /** A Promise that resolves once this context has finished all its work; `{ signal }` rejects
   * it with an AbortError once the signal aborts. */
  synchronize(options = undefined) {
    return abortable(signalOf(options), 'context.synchronize()', () => inContext(this, () => binding.ctxSynchronize()));
  }

  synchronizeSync() {
    inContext(this, () => binding.ctxSynchronizeSync());
  }

  equals(other) {
    return other instanceof Context && other.address === this.address;
  }

  [Symbol.dispose]() {
    this.detach();
  }

  /** `await using`: waits for the context's work, then detaches it. */
  async [Symbol.asyncDispose]() {
    try {
      await this.synchronize();
    } finally {
      this.detach();
    }
  }

  toString() {
    return `Context(0x${this.address.toString(16)})`;
  }
}

// A new Context (of Class: Context or a subclass) around the CUcontext that make(ctx) wraps it
// around and returns the address of; out of memory, tried once more after a collection.
function register(make, device, Class = Context) {
  const ctx = retryOutOfMemory(() => {
    const made = new Class(token, 0n, device);
    made.address = make(made);
    return made;
  });
  if (!registry.has(ctx.address)) registry.set(ctx.address, ctx);
  return ctx;
}

contextMakers.create = (device, flags) => {
  check.integer('flags', flags, 0, 4294967295);
  return register((ctx) => binding.ctxCreate(ctx, flags, device.handle), device);
};
contextMakers.retainPrimary = (device) => register((ctx) => binding.ctxRetainPrimary(ctx, device.handle), device);

function currentOrThrow(what) {
  const ctx = Context.getCurrent();
  if (!ctx) {
    throw new LogicError(
      `Context.${what}(): no context is current on this thread; make one ` +
        'with new cuda.Device(0).makeContext(), or require("cudadrv/autoprimaryctx")',
    );
  }
  return ctx;
}

// Runs fn with ctx current, restoring the previous stack afterwards.
function inContext(ctx, fn) {
  ctx.push();
  try {
    return fn();
  } finally {
    binding.ctxPop();
  }
}

/** The Contexts of this thread's JS that are not detached (for cudadrv/testing's leak check). */
function liveContexts() {
  return [...registry.values()].filter((ctx) => !isDetached(ctx));
}

/** The live Context cudadrv made or wrapped for the CUcontext at address, or null. */
function knownContext(address) {
  const ctx = registry.get(address);
  return ctx && !isDetached(ctx) ? ctx : null;
}

module.exports = { Context, inContext, isDetached, liveContexts, knownContext, register };
