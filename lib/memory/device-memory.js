'use strict';
// Device memory: allocations (plain, pitched, stream-ordered, from the driver's pools, opened IPC
// handles) and the numpy-style helpers that copy arrays to and from them. Everything that takes
// device memory reads it through lib/internal/pointer.js, so any kind of device memory goes
// anywhere; sizes are checked against what is known of it first.
const binding = require('../internal/binding');
const { noteStaged } = require('./staging');
const check = require('../internal/checks');
const layouts = require('../internal/layouts');
const { Context, isDetached } = require('../driver/context');
const { streamArg } = require('../driver/stream');
const { IpcMemFlags } = require('../driver/constants');
const { LogicError, RuntimeError } = require('../driver/errors');
const { devicePointer, deviceExtent, fits } = require('../internal/pointer');
const { dtypeOf, dtypeOfArray, shapeLength } = require('../internal/dtype');
const host = require('./host-memory');
const { retryOutOfMemory } = require('../internal/reclaim');

const token = Symbol('DeviceAllocation');

// Where the addon writes, for memory it has just handed to an allocation, the id the allocation
// names it by, the handle of the context it was made in, and its address as a number.
const MADE = layouts.made;
const made = new Float64Array(MADE.count);
const madeBuffer = made.buffer;

// The Context of the context current in the last allocation, weakly: Context.getCurrent() (a
// driver call) once per context rather than once per allocation.
let madeIn = { handle: -1, context: null };

function madeContext() {
  const handle = made[MADE.context];
  let context = handle === madeIn.handle ? madeIn.context.deref() : undefined;
  if (context === undefined || isDetached(context)) {
    context = Context.getCurrent();
    madeIn = { handle, context: new WeakRef(context) };
  }
  return context;
}

/** Base class for objects that stand for device memory: implement getPointer() (an address as a
 * bigint or number), and give `size` in bytes where known (copies are checked against it). */
class PointerHolderBase {
  getPointer() {
    throw new TypeError(`${this.constructor.name} must implement getPointer()`);
  }

  /** The device address, a bigint. */
  get ptr() {
    return devicePointer(this.getPointer(), `${this.constructor.name}.getPointer()`);
  }

  /**
   * An ArrayBuffer over `size` bytes at `offset` of this memory, which must lie in one live host
   * allocation of cudadrv's that the device can address (managed memory, mapped page-locked or
   * registered memory); anything else is refused with a LogicError. The buffer keeps that
   * allocation alive, and reads as empty (detached) once it is freed, however that happens.
   */
  asBuffer(size, offset = 0) {
    offset = check.size('offset', offset);
    const extent = deviceExtent(this);
    if (size === undefined) {
      if (extent === Infinity) throw new TypeError('asBuffer(size, offset): size is required here');
      size = extent - offset;
    }
    size = check.size('size', size);
    if (offset + size > extent) {
      throw new RangeError(`asBuffer(${size}, ${offset}) reaches past the ${extent} bytes of this memory`);
    }
    check.viewBytes('asBuffer(): a view', size);
    const buffer = binding.memHostView(this.ptr + BigInt(offset), size, host.externalBuffers());
    if (buffer === null) {
      throw new RuntimeError(
        'asBuffer() needs external ArrayBuffers, which this runtime refuses ' +
          '(CUDADRV_NO_EXTERNAL_BUFFERS=1, or a V8 memory cage as in Electron); copy the memory ' +
          'with memcpyDtoH() instead',
      );
    }
    host.markUntransferable(buffer);
    return buffer;
  }
}

// Set in DeviceAllocation's static block, which alone sees its private fields:
let adopt; // (memory, ptr, stream): memory now owns what the addon just wrote to `made`
let launchAddress; // (v): v's address as a number where v is live device memory below 2^53, else -1

/**
 * Device memory from memAlloc(), memAllocPitch(), memAllocAsync(), toDevice(), or a slice() of
 * one. `ptr` is its address (a bigint), `size` its bytes, `context` the Context it lives in (kept
 * alive by it). Freed when garbage-collected, or at once with free().
 */
class DeviceAllocation extends PointerHolderBase {
  #root = this; // the allocation owning the memory (a slice's parent's root)
  #offset = 0n;
  #ptr = null; // the root's address while it is allocated
  #released = false; // a slice's free() lets its parent go
  #address = -1; // this memory's address as a number for kernel arguments (-1: past 2^53)
  #id = 0; // what the addon names the root's memory by
  #stream = null; // the stream of memAllocAsync()

  constructor(secret) {
    if (secret !== token) {
      throw new TypeError('use memAlloc(bytes) to allocate device memory (DeviceAllocation objects come from it)');
    }
    super();
    this.size = 0;
    this.context = null;
  }

  static {
    adopt = (memory, ptr, stream = null) => {
      memory.#ptr = ptr;
      memory.#address = made[MADE.address];
      memory.#id = made[MADE.id];
      memory.#stream = stream;
      return memory;
    };
    launchAddress = (v) => (#root in v && !v.#released && v.#root.#ptr !== null ? v.#address : -1);
  }

  /** The device address (a bigint); LogicError once freed. */
  get ptr() {
    const base = this.#released ? null : this.#root.#ptr;
    if (base === null) {
      throw new LogicError(
        this.#released
          ? 'this slice has been released (free())'
          : `this ${this.#root.constructor.name} has been freed; allocate new memory`,
      );
    }
    return this.#offset === 0n ? base : base + this.#offset;
  }

  getPointer() {
    return this.ptr;
  }

  /** A view of size bytes at offset (the rest by default) that keeps this memory alive; copies
   * through it are checked against its bounds. Its free() releases the view, not the memory. */
  slice(offset = 0, size = undefined) {
    offset = check.size('offset', offset); // a number, where a bigint was given
    if (offset > this.size) throw new RangeError(`offset ${offset} is past the end (${this.size} bytes)`);
    size = size === undefined ? this.size - offset : check.size('size', size);
    if (offset + size > this.size) {
      throw new RangeError(`slice(${offset}, ${size}) reaches past the end of ${this.size} bytes`);
    }
    void this.ptr; // a freed parent gives no slices
    const view = new DeviceAllocation(token);
    view.#root = this.#root;
    view.#offset = this.#offset + BigInt(offset);
    const address = this.#address + offset;
    view.#address = this.#address >= 0 && address <= Number.MAX_SAFE_INTEGER ? address : -1;
    view.size = size;
    view.context = this.context;
    return view;
  }

  /**
   * Frees the memory now (cuMemFree waits for the device); memory from memAllocAsync() is freed
   * in stream order instead, on `stream` (the stream it was allocated on by default). A slice
   * lets its parent go. A second free() does nothing.
   */
  free(stream = undefined) {
    if (this.#root !== this) {
      this.#released = true;
      this.#root = this; // the parent may go
      return;
    }
    if (this.#ptr === null) return;
    const order = stream === undefined ? this.#stream : streamArg(stream);
    try {
      binding.memFree(this.#id, order);
    } finally {
      this.#ptr = null; // the addon counts it freed even when the driver reports an error
    }
  }

  [Symbol.dispose]() {
    this.free();
  }

  toString() {
    const where = this.#released || this.#root.#ptr === null ? 'freed' : `0x${this.ptr.toString(16)}`;
    return `${this.constructor.name}(${where}, ${this.size} bytes)`;
  }
}

// A new DeviceAllocation of size bytes whose address allocate(obj) returns (its id in `made`).
function allocation(size, allocate, stream = null) {
  return retryOutOfMemory(() => {
    const memory = new DeviceAllocation(token);
    adopt(memory, allocate(memory), stream);
    memory.size = size;
    return memory;
  });
}

function positiveSize(name, value) {
  const bytes = check.size(name, value);
  if (bytes === 0) throw new RangeError(`${name} must be at least 1`);
  return bytes;
}

/** `bytes` of device memory in the current context. On out-of-memory, collects garbage (and
 * releases the memory of dropped allocations) once and tries again, then throws MemoryError. */
function memAlloc(bytes) {
  bytes = positiveSize('bytes', bytes);
  const memory = allocation(bytes, (obj) => binding.memAlloc(obj, bytes, madeBuffer));
  memory.context = madeContext();
  return memory;
}

/** A pitched 2D allocation of height rows of widthInBytes (accessSize 4, 8 or 16: the size of
 * the elements read): `{ allocation, pitch }`, pitch being the bytes from one row to the next. */
function memAllocPitch(widthInBytes, height, accessSize = 4) {
  widthInBytes = positiveSize('widthInBytes', widthInBytes);
  height = positiveSize('height', height);
  if (![4, 8, 16].includes(accessSize)) {
    throw new RangeError(`accessSize must be 4, 8 or 16, not ${check.describe(accessSize)}`);
  }
  let pitch = 0;
  const memory = allocation(0, (obj) => {
    const [ptr, rowPitch] = binding.memAllocPitch(obj, widthInBytes, height, accessSize, madeBuffer);
    pitch = rowPitch;
    return ptr;
  });
  memory.size = pitch * height;
  memory.context = madeContext();
  return { allocation: memory, pitch };
}

/** A DeviceAllocation of size bytes (0: the size allocate() reports as [address, size]) around
 * memory that allocate(obj, made) adopts for obj: stream-ordered memory on stream (its context's),
 * imported pool memory (the current context's). */
function adoptedAllocation(size, allocate, stream = null) {
  const memory = allocation(
    size,
    (obj) => {
      const made = allocate(obj, madeBuffer);
      if (!Array.isArray(made)) return made;
      if (size === 0) size = made[1];
      return made[0];
    },
    stream,
  );
  memory.size = size;
  memory.context = stream ? stream.context : madeContext();
  return memory;
}

/** `{ free, total }` bytes of device memory of the current context's device. */
function memGetInfo() {
  return binding.memGetInfo();
}

/** Another process's device memory, opened from the Buffer that memGetIpcHandle() gave there;
 * usable as device memory until close(). flags: IpcMemFlags (LAZY_ENABLE_PEER_ACCESS by default). */
class IPCMemoryHandle extends DeviceAllocation {
  constructor(handle, flags = IpcMemFlags.LAZY_ENABLE_PEER_ACCESS) {
    super(token);
    if (!(handle instanceof Uint8Array)) {
      throw new TypeError(`handle must be the Buffer memGetIpcHandle() returned, not ${check.describe(handle)}`);
    }
    if (handle.length !== 64) throw new RangeError(`handle must be 64 bytes long, not ${handle.length}`);
    if (flags !== 0 && flags !== IpcMemFlags.LAZY_ENABLE_PEER_ACCESS) {
      throw new RangeError(`flags must be 0 or cuda.IpcMemFlags.LAZY_ENABLE_PEER_ACCESS, not ${check.describe(flags)}`);
    }
    const [ptr, size] = binding.ipcOpenMemHandle(this, handle, flags, madeBuffer);
    adopt(this, ptr);
    this.size = size;
    this.context = madeContext();
  }

  /** Closes the handle (cuIpcCloseMemHandle). A second close() does nothing. */
  close() {
    this.free();
  }
}

/** A 64-byte Buffer another process opens with new IPCMemoryHandle(buffer), for memory from
 * memAlloc(). */
function memGetIpcHandle(pointer) {
  return binding.ipcGetMemHandle(devicePointer(pointer, 'pointer'));
}

// ---- numpy-style helpers ----

/** New device memory holding a copy of array (any host buffer). */
function toDevice(array) {
  const view = host.hostView('array', array);
  if (view.byteLength === 0) throw new RangeError('toDevice(): the array is empty');
  const memory = memAlloc(view.byteLength);
  if (binding.memcpyHtoD(memory.ptr, view)) noteStaged();
  return memory;
}

/** A new TypedArray of (shape, dtype) copied from device memory at pointer. */
function fromDevice(pointer, shape, dtype) {
  const ptr = devicePointer(pointer, 'pointer');
  const type = dtypeOf(dtype);
  const length = shapeLength(shape);
  let result;
  try {
    result = new type.ctor(length);
  } catch (error) {
    // more elements than a TypedArray holds, or than memory allows: the engine's words otherwise
    throw new RangeError(`fromDevice(): a ${type.ctor.name} of ${length} elements cannot be made (${error.message})`, {
      cause: error,
    });
  }
  fits(result.byteLength, pointer, 'fromDevice(pointer, shape, dtype)');
  if (binding.memcpyDtoH(result, ptr)) noteStaged();
  return result;
}

/** fromDevice with the length and dtype of array. */
function fromDeviceLike(pointer, array) {
  const type = ArrayBuffer.isView(array) ? dtypeOfArray(array) : undefined;
  if (!type) throw new TypeError(`fromDeviceLike: array must be a TypedArray, not ${check.describe(array)}`);
  return fromDevice(pointer, array.length, type.ctor);
}

module.exports = {
  PointerHolderBase,
  DeviceAllocation,
  IPCMemoryHandle,
  adoptedAllocation,
  positiveSize,
  memGetInfo,
  memAlloc,
  memAllocPitch,
  memGetIpcHandle,
  toDevice,
  fromDevice,
  fromDeviceLike,
  launchAddress,
};
