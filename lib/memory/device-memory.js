'use strict';
// Device memory: allocations (plain, pitched, stream-ordered, from the driver's pools, opened IPC
// handles), copies between host and device and between devices, memsets, and the 2D/3D copy
// descriptors. Everything that takes device memory reads it through lib/pointer.js, so any kind
// of device memory goes anywhere; sizes are checked against what is known of it first.
const binding = require('../internal/binding');
const { Context } = require('../driver/context');
const { Device } = require('../driver/device');
const { Stream } = require('../driver/stream');
const { IpcMemFlags, MemPoolAttribute, MemoryType } = require('../driver/constants');
const { LogicError, RuntimeError } = require('../driver/errors');
const check = require('../internal/checks');
const { devicePointer, deviceExtent } = require('../internal/pointer');
const { dtypeOf, dtypeOfArray, shapeLength } = require('../internal/dtype');
const { internal: host } = require('./host-memory');

const token = Symbol('DeviceAllocation');
const RELEASED = Object.freeze({ _ptr: null }); // the root of a released slice

// Where src/memory.c writes the id of the memory it has just handed to an allocation (which the
// allocation names it by) and the handle of the context it was made in.
const made = new Float64Array(3);
const madeBuffer = made.buffer;

// The Context of the context current in the last allocation, weakly: Context.getCurrent() (a
// driver call) once per context rather than once per allocation.
let madeIn = { handle: -1, context: null };

function madeContext() {
  const handle = made[1];
  let context = handle === madeIn.handle ? madeIn.context.deref() : undefined;
  if (context === undefined || context._detached) {
    context = Context.getCurrent();
    madeIn = { handle, context: new WeakRef(context) };
  }
  return context;
}

// stream argument of an Async call: a Stream, or null/undefined for the default stream.
function streamArg(stream) {
  if (stream === undefined || stream === null) return null;
  return check.instance('stream', stream, Stream, ' (or null for the default stream)');
}

// Throws a RangeError when bytes do not fit in the device memory `memory` stands for.
function fits(bytes, memory, what) {
  const extent = deviceExtent(memory);
  if (bytes > extent) {
    throw new RangeError(`${what}: ${bytes} bytes do not fit in ${extent} bytes of device memory`);
  }
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

/**
 * Device memory from memAlloc(), memAllocPitch(), memAllocAsync(), toDevice(), or a slice() of
 * one. `ptr` is its address (a bigint), `size` its bytes, `context` the Context it lives in (kept
 * alive by it). Freed when garbage-collected, or at once with free().
 */
class DeviceAllocation extends PointerHolderBase {
  constructor(secret) {
    if (secret !== token) {
      throw new TypeError('use memAlloc(bytes) to allocate device memory (DeviceAllocation ' + 'objects come from it)');
    }
    super();
    this._root = this; // the allocation owning the memory (a slice's parent's root)
    this._offset = 0n;
    this._ptr = null; // the root's address while it is allocated
    this._address = -1; // this memory's address as a number for kernel arguments (-1: past 2^53)
    this._id = 0; // what src/memory.c names the root's memory by
    this._stream = null; // the stream of memAllocAsync()
    this.size = 0;
    this.context = null;
  }

  /** The device address (a bigint); LogicError once freed. */
  get ptr() {
    const base = this._root._ptr;
    if (base === null) {
      throw new LogicError(
        this._root === RELEASED
          ? 'this slice has been released (free())'
          : `this ${this._root.constructor.name} has been freed; allocate new memory`,
      );
    }
    return this._offset === 0n ? base : base + this._offset;
  }

  getPointer() {
    return this.ptr;
  }

  /** A view of size bytes at offset (the rest by default) that keeps this memory alive; copies
   * through it are checked against its bounds. Its free() releases the view, not the memory. */
  slice(offset = 0, size = undefined) {
    check.size('offset', offset);
    if (offset > this.size) throw new RangeError(`offset ${offset} is past the end (${this.size} bytes)`);
    if (size === undefined) size = this.size - offset;
    check.size('size', size);
    if (offset + size > this.size) {
      throw new RangeError(`slice(${offset}, ${size}) reaches past the end of ${this.size} bytes`);
    }
    void this.ptr; // a freed parent gives no slices
    const view = new DeviceAllocation(token);
    view._root = this._root;
    view._offset = this._offset + BigInt(offset);
    const address = this._address + offset;
    view._address = this._address >= 0 && address <= Number.MAX_SAFE_INTEGER ? address : -1;
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
    if (this._root !== this) {
      this._root = RELEASED;
      return;
    }
    if (this._ptr === null) return;
    const order = stream === undefined ? this._stream : streamArg(stream);
    try {
      binding.memFree(this._id, order);
    } finally {
      this._ptr = null; // the addon counts it freed even when the driver reports an error
    }
  }

  [Symbol.dispose]() {
    this.free();
  }

  toString() {
    const where = this._root._ptr === null ? 'freed' : `0x${this.ptr.toString(16)}`;
    return `${this.constructor.name}(${where}, ${this.size} bytes)`;
  }
}

// A new DeviceAllocation of size bytes whose address allocate(obj) returns (its id in `made`).
function allocation(size, allocate) {
  return host.retryOutOfMemory(() => {
    const memory = new DeviceAllocation(token);
    memory._ptr = allocate(memory);
    memory._address = made[2];
    memory._id = made[0];
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

/**
 * Stream-ordered device memory (cuMemAllocAsync): usable by work enqueued on `stream` (the
 * default stream when null) after this call, from the device's current memory pool, or from
 * `{ pool }`. free() frees it on that stream; needs DeviceAttribute.MEMORY_POOLS_SUPPORTED.
 */
function memAllocAsync(bytes, stream = null, opts = undefined) {
  bytes = positiveSize('bytes', bytes);
  stream = streamArg(stream);
  const { pool = null } = opts ?? {};
  if (pool !== null) check.instance('pool', pool, MemoryPool);
  const memory = allocation(bytes, (obj) => binding.memAllocAsync(obj, bytes, stream, pool, madeBuffer));
  memory._stream = stream;
  memory.context = stream ? stream.context : madeContext();
  return memory;
}

/** `{ free, total }` bytes of device memory of the current context's device. */
function memGetInfo() {
  return binding.memGetInfo();
}

/** One of the driver's memory pools (stream-ordered allocation): MemoryPool.getDefault(device),
 * MemoryPool.getCurrent(device). */
class MemoryPool {
  constructor(secret) {
    if (secret !== token) throw new TypeError('use MemoryPool.getDefault(device) or MemoryPool.getCurrent(device)');
  }

  static _get(device, current) {
    const ordinal =
      device === undefined ? Context.getDevice().ordinal : check.instance('device', device, Device).ordinal;
    const pool = new MemoryPool(token);
    if (current) binding.memPoolGetCurrent(pool, ordinal);
    else binding.memPoolGetDefault(pool, ordinal);
    return pool;
  }

  /** The device's default pool (the device of the current context when omitted). */
  static getDefault(device) {
    return MemoryPool._get(device, false);
  }

  /** The pool memAllocAsync() takes from on device. */
  static getCurrent(device) {
    return MemoryPool._get(device, true);
  }

  /** A MemPoolAttribute: a number (REUSE_* are 0 or 1, the others bytes). */
  getAttribute(attribute) {
    check.member('attribute', attribute, MemPoolAttribute, 'MemPoolAttribute');
    return binding.memPoolGetAttribute(this, attribute);
  }

  /** Sets a MemPoolAttribute: REUSE_* take booleans, RELEASE_THRESHOLD bytes, and the *_HIGH
   * watermarks only 0 (a reset). */
  setAttribute(attribute, value) {
    check.member('attribute', attribute, MemPoolAttribute, 'MemPoolAttribute');
    binding.memPoolSetAttribute(
      this,
      attribute,
      typeof value === 'boolean' ? Number(value) : check.size('value', value),
    );
  }

  /** Releases memory the pool holds beyond minBytesToKeep back to the system. */
  trimTo(minBytesToKeep) {
    binding.memPoolTrimTo(this, check.size('minBytesToKeep', minBytesToKeep));
  }

  /** memAllocAsync(bytes, stream, { pool: this }). */
  allocate(bytes, stream = null) {
    return memAllocAsync(bytes, stream, { pool: this });
  }
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
    this._ptr = ptr;
    this._address = made[2];
    this._id = made[0];
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

// ---- copies ----

/** Copies all of src (any host buffer) to device memory dest. */
function memcpyHtoD(dest, src) {
  const ptr = devicePointer(dest, 'dest');
  const view = host.hostView('src', src);
  fits(view.byteLength, dest, 'memcpyHtoD(dest, src)');
  binding.memcpyHtoD(ptr, view);
}

/** Fills all of dest (any host buffer) from device memory src. */
function memcpyDtoH(dest, src) {
  const view = host.hostView('dest', dest);
  const ptr = devicePointer(src, 'src');
  fits(view.byteLength, src, 'memcpyDtoH(dest, src)');
  binding.memcpyDtoH(view, ptr);
}

/** memcpyHtoD on stream; returns at once. Page-locked, managed and registered src arrays are kept
 * alive until the stream has passed the copy (pageable memory is copied before this returns). */
function memcpyHtoDAsync(dest, src, stream = null) {
  const ptr = devicePointer(dest, 'dest');
  const view = host.hostView('src', src);
  stream = streamArg(stream);
  fits(view.byteLength, dest, 'memcpyHtoDAsync(dest, src)');
  binding.memcpyHtoDAsync(ptr, view, stream, host.needsKeeping(view) ? view : undefined);
}

/** memcpyDtoH on stream; returns at once for page-locked dest (pageable dest is filled before
 * this returns, as the driver does). dest is kept alive until the stream has passed the copy. */
function memcpyDtoHAsync(dest, src, stream = null) {
  const view = host.hostView('dest', dest);
  const ptr = devicePointer(src, 'src');
  stream = streamArg(stream);
  fits(view.byteLength, src, 'memcpyDtoHAsync(dest, src)');
  binding.memcpyDtoHAsync(view, ptr, stream, host.needsKeeping(view) ? view : undefined);
}

// size of a device-to-device copy: given, or all of src where its size is known.
function copySize(size, src, what) {
  if (size !== undefined) return check.size('size', size);
  const extent = deviceExtent(src);
  if (extent === Infinity) throw new TypeError(`${what}: size is required when src has no size`);
  return extent;
}

/** Copies size bytes (all of src by default) between device memory. */
function memcpyDtoD(dest, src, size) {
  const to = devicePointer(dest, 'dest');
  const from = devicePointer(src, 'src');
  size = copySize(size, src, 'memcpyDtoD');
  fits(size, dest, 'memcpyDtoD: dest');
  fits(size, src, 'memcpyDtoD: src');
  binding.memcpyDtoD(to, from, size, undefined);
}

function memcpyDtoDAsync(dest, src, size, stream = null) {
  const to = devicePointer(dest, 'dest');
  const from = devicePointer(src, 'src');
  size = copySize(size, src, 'memcpyDtoDAsync');
  stream = streamArg(stream);
  fits(size, dest, 'memcpyDtoDAsync: dest');
  fits(size, src, 'memcpyDtoDAsync: src');
  binding.memcpyDtoD(to, from, size, stream);
}

function contextArg(name, context) {
  if (context === undefined || context === null) {
    const current = Context.getCurrent();
    if (!current) throw new LogicError(`${name}: no context is current; pass one or make one current`);
    return current;
  }
  return check.instance(name, context, Context);
}

function peer(dest, src, size, destContext, srcContext, stream) {
  const to = devicePointer(dest, 'dest');
  const from = devicePointer(src, 'src');
  size = copySize(size, src, 'memcpyPeer');
  fits(size, dest, 'memcpyPeer: dest');
  fits(size, src, 'memcpyPeer: src');
  binding.memcpyPeer(
    to,
    contextArg('destContext', destContext),
    from,
    contextArg('srcContext', srcContext),
    size,
    stream,
  );
}

/** Copies size bytes from src in srcContext to dest in destContext (both the current context by
 * default): between devices, or between two contexts of one device. */
function memcpyPeer(dest, src, size, destContext, srcContext) {
  peer(dest, src, size, destContext, srcContext, undefined);
}

function memcpyPeerAsync(dest, src, size, destContext, srcContext, stream = null) {
  peer(dest, src, size, destContext, srcContext, streamArg(stream));
}

// ---- memsets ----

// value as the unsigned bits of a width-byte element: -2**(8w-1) to 2**(8w)-1 accepted.
function memsetValue(value, width) {
  const bits = width * 8;
  check.integer('value', value, -(2 ** (bits - 1)), 2 ** bits - 1);
  return width === 4 ? value >>> 0 : value & ((1 << bits) - 1);
}

function memset(width, dest, value, count, stream) {
  const ptr = devicePointer(dest, 'dest');
  value = memsetValue(value, width);
  count = check.size('count', count);
  fits(count * width, dest, `memsetD${width * 8}(dest, value, ${count})`);
  binding.memsetD(width, ptr, value, count, stream);
}

function memset2D(width, dest, pitch, value, columns, rows, stream) {
  const ptr = devicePointer(dest, 'dest');
  pitch = check.size('pitch', pitch);
  value = memsetValue(value, width);
  columns = check.size('width', columns);
  rows = check.size('height', rows);
  if (rows > 1 && pitch < columns * width) {
    throw new RangeError(`pitch ${pitch} is less than a row of ${columns} elements (${columns * width} bytes)`);
  }
  if (rows && columns) fits(pitch * (rows - 1) + columns * width, dest, `memsetD2D${width * 8}`);
  binding.memsetD2D(width, ptr, pitch, value, columns, rows, stream);
}

/** Sets count bytes at dest to value. */
const memsetD8 = (dest, value, count) => memset(1, dest, value, count, undefined);
/** Sets count 16-bit words at dest to value. */
const memsetD16 = (dest, value, count) => memset(2, dest, value, count, undefined);
/** Sets count 32-bit words at dest to value (a float's bits: new Uint32Array(new Float32Array([x]).buffer)[0]). */
const memsetD32 = (dest, value, count) => memset(4, dest, value, count, undefined);
const memsetD8Async = (dest, value, count, stream = null) => memset(1, dest, value, count, streamArg(stream));
const memsetD16Async = (dest, value, count, stream = null) => memset(2, dest, value, count, streamArg(stream));
const memsetD32Async = (dest, value, count, stream = null) => memset(4, dest, value, count, streamArg(stream));
/** Sets height rows of width bytes, pitch bytes apart, to value. */
const memsetD2D8 = (dest, pitch, value, width, height) => memset2D(1, dest, pitch, value, width, height, undefined);
const memsetD2D16 = (dest, pitch, value, width, height) => memset2D(2, dest, pitch, value, width, height, undefined);
const memsetD2D32 = (dest, pitch, value, width, height) => memset2D(4, dest, pitch, value, width, height, undefined);
const memsetD2D8Async = (dest, pitch, value, width, height, stream = null) =>
  memset2D(1, dest, pitch, value, width, height, streamArg(stream));
const memsetD2D16Async = (dest, pitch, value, width, height, stream = null) =>
  memset2D(2, dest, pitch, value, width, height, streamArg(stream));
const memsetD2D32Async = (dest, pitch, value, width, height, stream = null) =>
  memset2D(4, dest, pitch, value, width, height, streamArg(stream));

// ---- numpy-style helpers ----

/** New device memory holding a copy of array (any host buffer). */
function toDevice(array) {
  const view = host.hostView('array', array);
  if (view.byteLength === 0) throw new RangeError('toDevice(): the array is empty');
  const memory = memAlloc(view.byteLength);
  binding.memcpyHtoD(memory.ptr, view);
  return memory;
}

/** A new TypedArray of (shape, dtype) copied from device memory at pointer. */
function fromDevice(pointer, shape, dtype) {
  const ptr = devicePointer(pointer, 'pointer');
  const type = dtypeOf(dtype);
  const result = new type.ctor(shapeLength(shape));
  fits(result.byteLength, pointer, 'fromDevice(pointer, shape, dtype)');
  binding.memcpyDtoH(result, ptr);
  return result;
}

/** fromDevice with the length and dtype of array. */
function fromDeviceLike(pointer, array) {
  const type = ArrayBuffer.isView(array) ? dtypeOfArray(array) : undefined;
  if (!type) throw new TypeError(`fromDeviceLike: array must be a TypedArray, not ${check.describe(array)}`);
  return fromDevice(pointer, array.length, type.ctor);
}

// ---- 2D and 3D copies ----

// BigUint64Array fields, per side: x, y, z, lod, memoryType, device address, pitch, height (rows
// per slice); then width in bytes, height, depth (src/memory.c reads them in this order). Fields
// 2D copies lack read as 0.
const FIELDS_2D = ['XInBytes', 'Y', 'Pitch'];
const FIELDS_3D = ['Z', 'LOD', 'Height'];

/**
 * A 2D copy (cuMemcpy2D): set the source with setSrcHost/setSrcDevice/setSrcArray/setSrcUnified and the
 * fields srcXInBytes, srcY, srcPitch; the destination likewise; then widthInBytes and height;
 * run() copies, run(stream) enqueues.
 */
class Memcpy2D {
  constructor() {
    for (const side of ['src', 'dst']) {
      for (const field of FIELDS_2D) this[side + field] = 0;
      this[`${side}MemoryType`] = 0;
      this[`${side}Host`] = null;
      this[`${side}Device`] = 0n;
      this[`${side}Array`] = null;
      this[`_${side}Memory`] = null; // what setSrcDevice/setDstDevice got, for its size
    }
    this.widthInBytes = 0;
    this.height = 0;
  }

  _setHost(side, buffer) {
    this[`${side}Host`] = host.hostView(`${side}Host`, buffer);
    this[`${side}Array`] = null;
    this[`${side}MemoryType`] = MemoryType.HOST;
    this[`_${side}Memory`] = null;
  }

  _setDevice(side, pointer, type = MemoryType.DEVICE) {
    this[`${side}Device`] = devicePointer(pointer, `${side}Device`);
    this[`${side}Host`] = null;
    this[`${side}Array`] = null;
    this[`${side}MemoryType`] = type;
    this[`_${side}Memory`] = pointer;
  }

  _setArray(side, array) {
    this[`${side}Array`] = check.instance(`${side}Array`, array, require('./array').CudaArray);
    this[`${side}Host`] = null;
    this[`${side}MemoryType`] = MemoryType.ARRAY;
    this[`_${side}Memory`] = null;
  }

  _setUnified(side, memory) {
    if (ArrayBuffer.isView(memory) || memory instanceof ArrayBuffer) {
      this._setHost(side, memory);
      this[`${side}MemoryType`] = MemoryType.UNIFIED;
    } else {
      this._setDevice(side, memory, MemoryType.UNIFIED);
    }
  }

  /** The source is host memory (any host buffer). */
  setSrcHost(buffer) {
    this._setHost('src', buffer);
  }

  /** The source is device memory (anything that stands for it). */
  setSrcDevice(pointer) {
    this._setDevice('src', pointer);
  }

  /** The source is unified memory: a managed array, or a device pointer. */
  setSrcUnified(memory) {
    this._setUnified('src', memory);
  }

  /** The source is a CudaArray (srcXInBytes and srcY, srcZ in 3D, address within it). */
  setSrcArray(array) {
    this._setArray('src', array);
  }

  setDstHost(buffer) {
    this._setHost('dst', buffer);
  }

  setDstDevice(pointer) {
    this._setDevice('dst', pointer);
  }

  setDstUnified(memory) {
    this._setUnified('dst', memory);
  }

  setDstArray(array) {
    this._setArray('dst', array);
  }

  _depth() {
    return 1;
  }

  // The fields for src/memory.c, after checking every side against what is known of its size.
  _fields() {
    const width = check.size('widthInBytes', this.widthInBytes);
    const height = check.size('height', this.height);
    const depth = check.size('depth', this._depth());
    const fields = new BigUint64Array(19);
    const is3D = this instanceof Memcpy3D;
    ['src', 'dst'].forEach((side, i) => {
      const name = (field) => side + field;
      const read = (field) => (is3D || FIELDS_2D.includes(field) ? check.size(name(field), this[name(field)]) : 0);
      const type = this[name('MemoryType')];
      if (![MemoryType.HOST, MemoryType.DEVICE, MemoryType.UNIFIED, MemoryType.ARRAY].includes(type)) {
        throw new LogicError(
          `${side}: call set${side === 'src' ? 'Src' : 'Dst'}Host(), ` +
            `...Device(), ...Array() or ...Unified() before run()`,
        );
      }
      const [x, y, z, lod, pitch, rows] = ['XInBytes', 'Y', 'Z', 'LOD', 'Pitch', 'Height'].map(read);
      const address =
        type === MemoryType.HOST || type === MemoryType.ARRAY
          ? 0n
          : devicePointer(this[name('Device')], name('Device'));
      fields.set([x, y, z, lod, type, address, pitch, rows].map(BigInt), i * 8);
      if (type !== MemoryType.ARRAY && width && height && depth) {
        // the driver checks arrays
        const end = x + ((z + depth - 1) * rows + y + height - 1) * pitch + width;
        const memory = this[name('Host')] || this[`_${side}Memory`];
        const extent =
          memory === null ? Infinity : ArrayBuffer.isView(memory) ? memory.byteLength : deviceExtent(memory);
        if (end > extent) {
          throw new RangeError(
            `${this.constructor.name}: the copy reaches byte ${end} of ${side}, ` + `which holds ${extent}`,
          );
        }
      }
    });
    fields.set([BigInt(width), BigInt(height), BigInt(depth)], 16);
    return fields;
  }

  // The page-locked host arrays and the CudaArrays to keep alive during an Async copy.
  _keep() {
    const kept = [this.srcHost, this.dstHost].filter((view) => view && host.needsKeeping(view));
    kept.push(...[this.srcArray, this.dstArray].filter((array) => array));
    return kept.length === 0 ? undefined : kept.length === 1 ? kept[0] : kept;
  }

  // What src/memory.c takes for a side besides its fields: its host buffer, or its CudaArray.
  _host(side) {
    return this[`${side}Host`] || this[`${side}Array`] || undefined;
  }

  /** run() or run({ aligned }) copies now (2D: cuMemcpy2D when aligned, else
   * cuMemcpy2DUnaligned); run(stream) enqueues on stream (null: the default stream), keeping
   * page-locked arrays alive until the stream has passed the copy. */
  run(streamOrOptions = undefined) {
    const fields = this._fields();
    if (streamOrOptions === null || streamOrOptions instanceof Stream) {
      this._copy(fields, false, streamOrOptions, this._keep());
      return;
    }
    if (streamOrOptions !== undefined && typeof streamOrOptions !== 'object') {
      throw new TypeError(`run() takes a Stream, null or { aligned }, not ${check.describe(streamOrOptions)}`);
    }
    const { aligned = false } = streamOrOptions ?? {};
    this._copy(fields, Boolean(aligned), undefined, undefined);
  }

  // stream undefined: a synchronous copy.
  _copy(fields, aligned, stream, keep) {
    binding.memcpy2D(fields, this._host('src'), this._host('dst'), aligned, stream, keep);
  }
}

/** A 3D copy (cuMemcpy3D): Memcpy2D's fields plus srcZ, srcLOD, srcHeight (rows per slice),
 * dstZ, dstLOD, dstHeight and depth. */
class Memcpy3D extends Memcpy2D {
  constructor() {
    super();
    for (const side of ['src', 'dst']) for (const field of FIELDS_3D) this[side + field] = 0;
    this.depth = 0;
  }

  _depth() {
    return this.depth;
  }

  _copy(fields, aligned, stream, keep) {
    binding.memcpy3D(fields, this._host('src'), this._host('dst'), stream, keep);
  }
}

/** A 3D copy between contexts (cuMemcpy3DPeer): Memcpy3D plus setSrcContext/setDstContext (the
 * current context by default). */
class Memcpy3DPeer extends Memcpy3D {
  constructor() {
    super();
    this.srcContext = null;
    this.dstContext = null;
  }

  setSrcContext(context) {
    this.srcContext = check.instance('context', context, Context);
  }

  setDstContext(context) {
    this.dstContext = check.instance('context', context, Context);
  }

  _copy(fields, aligned, stream, keep) {
    binding.memcpy3DPeer(
      fields,
      this._host('src'),
      this._host('dst'),
      contextArg('srcContext', this.srcContext),
      contextArg('dstContext', this.dstContext),
      stream,
      keep,
    );
  }
}

module.exports = {
  PointerHolderBase,
  DeviceAllocation,
  IPCMemoryHandle,
  MemoryPool,
  memGetInfo,
  memAlloc,
  memAllocPitch,
  memAllocAsync,
  memGetIpcHandle,
  toDevice,
  fromDevice,
  fromDeviceLike,
  memcpyHtoD,
  memcpyDtoH,
  memcpyHtoDAsync,
  memcpyDtoHAsync,
  memcpyDtoD,
  memcpyDtoDAsync,
  memcpyPeer,
  memcpyPeerAsync,
  memsetD8,
  memsetD16,
  memsetD32,
  memsetD8Async,
  memsetD16Async,
  memsetD32Async,
  memsetD2D8,
  memsetD2D16,
  memsetD2D32,
  memsetD2D8Async,
  memsetD2D16Async,
  memsetD2D32Async,
  Memcpy2D,
  Memcpy3D,
  Memcpy3DPeer,
};

// For lib/array.js, out of the public namespace (lib/index.js spreads enumerable properties).
Object.defineProperty(module.exports, 'internal', { value: { streamArg, fits } });
