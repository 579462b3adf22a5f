'use strict';
// Host memory as TypedArrays: page-locked (pinned), aligned, managed, and registered memory, each
// reached from its arrays with hostAllocationOf(). Freed memory is detached: its arrays read as
// empty instead of touching freed memory.
const binding = require('../internal/binding');
const { Context } = require('../driver/context');
const { Stream } = require('../driver/stream');
const { HostAllocFlags, MemAttachFlags, MemHostRegisterFlags } = require('../driver/constants');
const { LogicError, RuntimeError } = require('../driver/errors');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { dtypeOf, dtypeOfArray, shapeLength, typedArrayFor } = require('../internal/dtype');

const ownerOfBuffer = new WeakMap(); // ArrayBuffer → the allocation owning its memory
const ownerOfView = new WeakMap(); // array from registerHostMemory or a pool → its RegisteredHostMemory or PooledHostAllocation
const token = Symbol('host memory');

// CUDADRV_NO_EXTERNAL_BUFFERS=1 takes the path of runtimes that refuse external ArrayBuffers
// (Electron's memory cage): V8-owned memory, registered with the driver where it must be pinned.
function externalBuffers() {
  return process.env.CUDADRV_NO_EXTERNAL_BUFFERS !== '1';
}

/**
 * A host-buffer argument as a view of its bytes: TypedArrays, DataViews and Buffers as they are,
 * ArrayBuffers and SharedArrayBuffers through a Uint8Array. TypeError for anything else,
 * LogicError for an array whose allocation was freed.
 */
function hostView(name, value) {
  const isView = ArrayBuffer.isView(value);
  if (
    !isView &&
    !(value instanceof ArrayBuffer) &&
    !(typeof SharedArrayBuffer === 'function' && value instanceof SharedArrayBuffer)
  ) {
    throw new TypeError(
      `${name} must be a TypedArray, DataView, Buffer, ArrayBuffer or ` +
        `SharedArrayBuffer, not ${check.describe(value)}`,
    );
  }
  const owner = ownerOfBuffer.get(isView ? value.buffer : value);
  if (owner && owner._freed) {
    throw new LogicError(
      `${name} is an array of host memory that was freed ` + `(${owner.constructor.name}.free()); allocate a new one`,
    );
  }
  return isView ? value : check.uint8View(name, value);
}

/**
 * The allocation behind a TypedArray (or ArrayBuffer) made here: a PagelockedHostAllocation,
 * AlignedHostAllocation, ManagedAllocation or, for arrays from registerHostMemory(), the
 * RegisteredHostMemory; undefined for other memory. PyCUDA's `ary.base`.
 */
function hostAllocationOf(array) {
  if (ArrayBuffer.isView(array)) return ownerOfView.get(array) || ownerOfBuffer.get(array.buffer);
  if (array instanceof ArrayBuffer) return ownerOfBuffer.get(array);
  return undefined;
}

function options(value, name) {
  return check.options(`${name} options`, value);
}

// flags made only of the bits of group.
function bitFlags(name, flags, group, groupName) {
  check.integer(name, flags, 0, 4294967295);
  const known = Object.values(group).reduce((all, bit) => all | bit, 0);
  if ((flags & ~known) !== 0) {
    throw new RangeError(
      `${name} must combine members of cuda.${groupName} ` + `(${Object.keys(group).join(', ')}), not ${flags}`,
    );
  }
  return flags;
}

function refuseConstruction(secret, how) {
  if (secret !== token) throw new TypeError(`use ${how}`);
}

/** Base of host memory the device can address. */
class HostPointer {
  /** The device address of the memory's first byte, a bigint. The memory starts at `byteOffset`
   * of its ArrayBuffer, so an array over it is at
   * getDevicePointer() + BigInt(array.byteOffset - allocation.byteOffset). */
  getDevicePointer() {
    if (this._freed) {
      throw new LogicError(`this ${this.constructor.name} has been freed; it has no device address`);
    }
    if (this._devicePointer === undefined) this._devicePointer = binding.hostGetDevicePointer(this);
    return this._devicePointer;
  }

  /** The device address, so that this object goes wherever device memory goes. */
  getPointer() {
    return this.getDevicePointer();
  }
}

/** Page-locked host memory (cuMemHostAlloc), from pagelockedEmpty() and friends. */
class PagelockedHostAllocation extends HostPointer {
  constructor(secret) {
    super();
    refuseConstruction(secret, 'pagelockedEmpty(shape, dtype) to allocate page-locked memory');
  }

  /** HostAllocFlags the memory was allocated with. */
  getFlags() {
    return binding.hostGetFlags(this);
  }

  /** Releases the memory now; its arrays read as empty afterwards. A second free() does nothing. */
  free() {
    freeHost(this);
  }

  [Symbol.dispose]() {
    this.free();
  }
}

/** Host memory at a chosen alignment (no driver needed), from alignedEmpty() and friends. */
class AlignedHostAllocation {
  constructor(secret) {
    refuseConstruction(secret, 'alignedEmpty(shape, dtype, { alignment }) to allocate aligned memory');
  }

  /** Releases the memory now; its arrays read as empty afterwards. Unregister it first if it was
   * registered (a LogicError says so). A second free() does nothing. */
  free() {
    freeHost(this);
  }

  [Symbol.dispose]() {
    this.free();
  }
}

/** Managed (unified) memory, from managedEmpty() and friends. */
class ManagedAllocation extends HostPointer {
  constructor(secret) {
    super();
    refuseConstruction(secret, 'managedEmpty(shape, dtype) to allocate managed memory');
  }

  /** Attaches the memory to stream (cuStreamAttachMemAsync) with MemAttachFlags. */
  attach(flags, stream = null) {
    check.member('flags', flags, MemAttachFlags, 'MemAttachFlags');
    if (stream !== null) check.instance('stream', stream, Stream, ' or null');
    binding.managedAttach(this, flags, stream);
  }

  /** Releases the memory now; its arrays read as empty afterwards. A second free() does nothing. */
  free() {
    freeHost(this);
  }

  [Symbol.dispose]() {
    this.free();
  }
}

/** Memory that registerHostMemory() page-locked; `base` is the array it was given. */
class RegisteredHostMemory extends HostPointer {
  constructor(secret) {
    super();
    refuseConstruction(secret, 'registerHostMemory(array, flags) to register memory');
  }

  /** MemHostRegisterFlags the memory was registered with. */
  getFlags() {
    return binding.hostGetFlags(this);
  }

  /** Unregisters the memory (which stays usable as ordinary memory). A second call does nothing. */
  unregister() {
    if (this._freed) return;
    this._freed = true;
    binding.hostFree(this);
  }

  [Symbol.dispose]() {
    this.unregister();
  }
}

// Marks buffer as never to be moved to another thread: its memory is released on this one. Node's
// worker_threads takes some 3 ms to load, so it is loaded at the first allocation, not with cudadrv.
function markUntransferable(buffer) {
  require('worker_threads').markAsUntransferable(buffer);
}

function freeHost(allocation) {
  if (allocation._freed) return;
  try {
    binding.hostFree(allocation);
  } catch (error) {
    // the addon counts it freed even when the driver reports an error; a refusal (a graph copies
    // to or from it: a LogicError of the addon's own, naming no driver call) frees nothing
    if (!(error instanceof LogicError) || error.api) allocation._freed = true;
    throw error;
  }
  allocation._freed = true;
}

// An array of (shape, dtype) over memory that allocate(allocation, bytes) returns as a Uint8Array.
function hostArray(Class, shape, dtype, allocate) {
  const type = dtypeOf(dtype);
  const length = shapeLength(shape);
  const bytes = check.viewBytes(`an array of ${Class.name}`, length * type.size);
  const [allocation, view] = retryOutOfMemory(() => {
    const fresh = new Class(token);
    return [fresh, allocate(fresh, bytes)];
  });
  allocation.size = bytes;
  allocation.byteOffset = view.byteOffset; // where the memory starts in its ArrayBuffer
  allocation._buffer = view.buffer;
  allocation._freed = false;
  markUntransferable(view.buffer); // its memory is released here, on this thread
  if (Class !== AlignedHostAllocation) allocation.context = Context.getCurrent();
  ownerOfBuffer.set(view.buffer, allocation);
  return typedArrayFor(view, length, type.ctor);
}

function like(array, name) {
  const type = ArrayBuffer.isView(array) ? dtypeOfArray(array) : undefined;
  if (!type) throw new TypeError(`${name}: the array must be a TypedArray, not ${check.describe(array)}`);
  return [array.length, type.ctor];
}

function pagelocked(shape, dtype, opts, zero) {
  const { flags = 0 } = options(opts, 'pagelocked');
  bitFlags('flags', flags, HostAllocFlags, 'HostAllocFlags');
  return hostArray(PagelockedHostAllocation, shape, dtype, (allocation, bytes) =>
    binding.hostAlloc(allocation, bytes, flags, zero, externalBuffers()),
  );
}

/** A TypedArray of (shape, dtype) over new page-locked memory (contents undefined);
 * `{ flags }` takes HostAllocFlags (PORTABLE, DEVICEMAP, WRITECOMBINED). */
function pagelockedEmpty(shape, dtype, opts) {
  return pagelocked(shape, dtype, opts, false);
}

/** pagelockedEmpty, filled with zeros. */
function pagelockedZeros(shape, dtype, opts) {
  return pagelocked(shape, dtype, opts, true);
}

/** pagelockedEmpty with the length and dtype of array. */
function pagelockedEmptyLike(array, opts) {
  return pagelocked(...like(array, 'pagelockedEmptyLike'), opts, false);
}

function pagelockedZerosLike(array, opts) {
  return pagelocked(...like(array, 'pagelockedZerosLike'), opts, true);
}

function aligned(shape, dtype, opts, zero) {
  const { alignment = 4096 } = options(opts, 'aligned');
  check.integer('alignment', alignment, 1, 2 ** 30);
  if ((alignment & (alignment - 1)) !== 0) {
    throw new RangeError(`alignment must be a power of two, not ${alignment}`);
  }
  return hostArray(AlignedHostAllocation, shape, dtype, (allocation, bytes) =>
    binding.alignedAlloc(allocation, bytes, alignment, zero, externalBuffers()),
  );
}

/** A TypedArray of (shape, dtype) over new memory starting at a multiple of `{ alignment }`
 * (a power of two, 4096 by default; contents undefined). Needs no GPU. */
function alignedEmpty(shape, dtype, opts) {
  return aligned(shape, dtype, opts, false);
}

function alignedZeros(shape, dtype, opts) {
  return aligned(shape, dtype, opts, true);
}

function alignedEmptyLike(array, opts) {
  return aligned(...like(array, 'alignedEmptyLike'), opts, false);
}

function alignedZerosLike(array, opts) {
  return aligned(...like(array, 'alignedZerosLike'), opts, true);
}

function managed(shape, dtype, opts, zero) {
  const { flags = MemAttachFlags.GLOBAL } = options(opts, 'managed');
  if (flags !== MemAttachFlags.GLOBAL && flags !== MemAttachFlags.HOST) {
    throw new RangeError(`flags must be cuda.MemAttachFlags.GLOBAL or HOST, not ${flags}`);
  }
  const refused = () =>
    new RuntimeError(
      'managed memory needs external ArrayBuffers, which this ' +
        'runtime refuses (CUDADRV_NO_EXTERNAL_BUFFERS=1, or a V8 memory cage as in Electron); use ' +
        'pagelockedEmpty() or device memory instead',
    );
  if (!externalBuffers()) throw refused();
  return hostArray(ManagedAllocation, shape, dtype, (allocation, bytes) => {
    const view = binding.managedAlloc(allocation, bytes, flags, zero);
    if (view === null) throw refused();
    return view;
  });
}

/** A TypedArray of (shape, dtype) over new managed memory, which host and device both address;
 * `{ flags }`: MemAttachFlags.GLOBAL (default) or HOST. Passed to a kernel, it passes its pointer. */
function managedEmpty(shape, dtype, opts) {
  return managed(shape, dtype, opts, false);
}

function managedZeros(shape, dtype, opts) {
  return managed(shape, dtype, opts, true);
}

function managedEmptyLike(array, opts) {
  return managed(...like(array, 'managedEmptyLike'), opts, false);
}

function managedZerosLike(array, opts) {
  return managed(...like(array, 'managedZerosLike'), opts, true);
}

/**
 * Page-locks the memory of array, which must start at a page boundary (use alignedEmpty), with
 * MemHostRegisterFlags; returns a new array of the same type over the same memory, whose
 * hostAllocationOf() is the RegisteredHostMemory (`base` is array).
 */
function registerHostMemory(array, flags = 0) {
  if (!ArrayBuffer.isView(array)) {
    throw new TypeError(`array must be a TypedArray or DataView, not ${check.describe(array)}`);
  }
  const view = hostView('array', array);
  bitFlags('flags', flags, MemHostRegisterFlags, 'MemHostRegisterFlags');
  const registration = retryOutOfMemory(() => {
    const fresh = new RegisteredHostMemory(token);
    binding.hostRegister(fresh, view, flags);
    return fresh;
  });
  registration.base = array;
  registration.size = view.byteLength;
  registration.byteOffset = view.byteOffset;
  registration.context = Context.getCurrent();
  registration._buffer = view.buffer;
  registration._freed = false;
  const Same = array instanceof DataView ? DataView : dtypeOfArray(array).ctor;
  const shared = new Same(view.buffer, view.byteOffset, Same === DataView ? view.byteLength : array.length);
  ownerOfView.set(shared, registration);
  return shared;
}

module.exports = {
  HostPointer,
  PagelockedHostAllocation,
  HostAllocation: PagelockedHostAllocation,
  AlignedHostAllocation,
  ManagedAllocation,
  RegisteredHostMemory,
  pagelockedEmpty,
  pagelockedZeros,
  pagelockedEmptyLike,
  pagelockedZerosLike,
  alignedEmpty,
  alignedZeros,
  alignedEmptyLike,
  alignedZerosLike,
  managedEmpty,
  managedZeros,
  managedEmptyLike,
  managedZerosLike,
  registerHostMemory,
  hostAllocationOf,
  // for the other memory modules and the pools
  hostView,
  externalBuffers,
  setAllocationOf,
  markUntransferable,
};

// An array made over host memory that owner (a pool's allocation) hands out: hostAllocationOf()
// answers owner for it, as PyCUDA's ary.base does.
function setAllocationOf(view, owner) {
  ownerOfView.set(view, owner);
}
