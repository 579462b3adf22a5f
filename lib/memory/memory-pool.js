'use strict';
// The driver's memory pools, and the stream-ordered allocations (memAllocAsync) drawn from them: a
// device's own pools, pools made with new MemoryPool(), and pools shared between processes by a
// file descriptor (POSIX), with their allocations shared by 64 bytes of export data.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { Context } = require('../driver/context');
const { Device } = require('../driver/device');
const { MemPoolAttribute, MemAccessFlags, MemAllocationHandleType } = require('../driver/constants');
const { LogicError } = require('../driver/errors');
const { devicePointer } = require('../internal/pointer');
const { locationOf } = require('../internal/location');
const { adoptedAllocation, positiveSize } = require('./device-memory');
const { streamArg } = require('../driver/stream');

// Lets a MemoryPool or ShareableHandle be made around what C wraps next (a device's pool, an
// imported one, an exported descriptor).
let wrapping = false;
function wrapped(Class, wrap) {
  wrapping = true;
  try {
    const made = new Class();
    wrap(made);
    return made;
  } finally {
    wrapping = false;
  }
}

const OPTIONS = [
  'device',
  'location',
  'handleType',
  'maxSize',
  'releaseThreshold',
  'reuseFollowEventDependencies',
  'reuseAllowOpportunistic',
  'reuseAllowInternalDependencies',
];
const HANDLE_TYPES = { none: MemAllocationHandleType.NONE, 'posix-fd': MemAllocationHandleType.POSIX_FILE_DESCRIPTOR };
const ACCESS = { none: MemAccessFlags.NONE, read: MemAccessFlags.READ, readwrite: MemAccessFlags.READWRITE };
const ACCESS_NAMES = new Map(Object.entries(ACCESS).map(([name, flags]) => [flags, name]));
/** The MemAllocationHandleType bits of a handleType option ('none', 'posix-fd'), for what. */
const handleTypesOf = (what, handleType) =>
  check.choice(`${what}: handleType`, handleType, HANDLE_TYPES, "'none' or 'posix-fd'");
/** The MemAccessFlags of an access argument ('none', 'read', 'readwrite'). */
const accessFlags = (access) => check.choice('access', access, ACCESS, "'none', 'read' or 'readwrite'");
// The attributes by name, as `attributes` gives them and the options set them.
const ATTRIBUTES = {
  reuseFollowEventDependencies: MemPoolAttribute.REUSE_FOLLOW_EVENT_DEPENDENCIES,
  reuseAllowOpportunistic: MemPoolAttribute.REUSE_ALLOW_OPPORTUNISTIC,
  reuseAllowInternalDependencies: MemPoolAttribute.REUSE_ALLOW_INTERNAL_DEPENDENCIES,
  releaseThreshold: MemPoolAttribute.RELEASE_THRESHOLD,
  reservedMemCurrent: MemPoolAttribute.RESERVED_MEM_CURRENT,
  reservedMemHigh: MemPoolAttribute.RESERVED_MEM_HIGH,
  usedMemCurrent: MemPoolAttribute.USED_MEM_CURRENT,
  usedMemHigh: MemPoolAttribute.USED_MEM_HIGH,
};
const REUSE = new Set([
  MemPoolAttribute.REUSE_FOLLOW_EVENT_DEPENDENCIES,
  MemPoolAttribute.REUSE_ALLOW_OPPORTUNISTIC,
  MemPoolAttribute.REUSE_ALLOW_INTERNAL_DEPENDENCIES,
]);

const ordinalOf = (device) =>
  device === undefined ? Context.getDevice().ordinal : check.instance('device', device, Device).ordinal;

/** An open file descriptor that stands for a pool in another process (pool.exportHandle()): pass
 * `fd` to the process that imports it, then close() it (or let `using` do so). */
class ShareableHandle {
  constructor() {
    if (!wrapping) throw new TypeError('a ShareableHandle comes from pool.exportHandle()');
  }

  /** The descriptor: hand it to a child process in `stdio` (child_process.spawn). */
  get fd() {
    return binding.shareableHandleFd(this);
  }

  /** Closes the descriptor; a second close() does nothing. */
  close() {
    binding.shareableHandleClose(this);
  }

  [Symbol.dispose]() {
    this.close();
  }
}

/**
 * A memory pool of the driver's. `new MemoryPool({ device, location, handleType, maxSize, ... })`
 * makes one (cuMemPoolCreate): on device (the current context's by default) or at `location`
 * ('host' for page-locked host memory, driver 12.6+), shareable with other processes where
 * handleType is 'posix-fd'. `MemoryPool.getDefault()` and `getCurrent()` give a device's own.
 */
class MemoryPool {
  #owned = false;

  constructor(options = undefined) {
    if (wrapping) return;
    check.keys(options, OPTIONS, 'new MemoryPool()');
    const { device, location, handleType = 'none', maxSize = 0, ...attributes } = options ?? {};
    if (device !== undefined && location !== undefined) {
      throw new TypeError('new MemoryPool(): give device or location, not both');
    }
    const [type, id] =
      location === undefined ? locationOf('device', ordinalOf(device)) : locationOf('location', location);
    const handleTypes = handleTypesOf('new MemoryPool()', handleType);
    const bytes = check.size('maxSize', maxSize);
    retryOutOfMemory(() => binding.memPoolCreate(this, type, id, handleTypes, bytes));
    this.#owned = true;
    for (const [name, value] of Object.entries(attributes)) {
      if (value !== undefined) this.setAttribute(ATTRIBUTES[name], value);
    }
  }

  static #get(device, current) {
    const ordinal = ordinalOf(device);
    return wrapped(MemoryPool, (pool) =>
      current ? binding.memPoolGetCurrent(pool, ordinal) : binding.memPoolGetDefault(pool, ordinal),
    );
  }

  /** The device's default pool (the device of the current context when omitted). */
  static getDefault(device) {
    return MemoryPool.#get(device, false);
  }

  /** The pool memAllocAsync() takes from on device (another object on a pool made here, which C
   * keeps alive while this one lives: see mempool.c). */
  static getCurrent(device) {
    return MemoryPool.#get(device, true);
  }

  /**
   * The pool another process exported (pool.exportHandle()) as the file descriptor fd, which
   * stays yours to close, imported in the current context, which the driver destroys it with.
   * Import its allocations with importPointer().
   */
  static importHandle(fd) {
    check.integer('fd', fd, 0, 2 ** 31 - 1);
    const pool = wrapped(MemoryPool, (made) => binding.memPoolImportHandle(made, fd));
    pool.#owned = true;
    return pool;
  }

  /** Makes this pool the one memAllocAsync() takes from on its device (cuDeviceSetMemPool). */
  setCurrent(device = undefined) {
    binding.memPoolSetCurrent(this, ordinalOf(device));
  }

  /** Lets device's kernels read and write ('readwrite'), read ('read') or not touch ('none')
   * this pool's memory. */
  setAccess(device, access) {
    binding.memPoolSetAccess(this, ...locationOf('device', device), accessFlags(access));
  }

  /** Device's access to this pool's memory: 'none', 'read' or 'readwrite'. */
  getAccess(device) {
    return ACCESS_NAMES.get(binding.memPoolGetAccess(this, ...locationOf('device', device)));
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
    if (REUSE.has(attribute) && typeof value !== 'boolean') {
      throw new TypeError(`a reuse attribute takes a boolean, not ${check.describe(value)}`);
    }
    binding.memPoolSetAttribute(
      this,
      attribute,
      typeof value === 'boolean' ? Number(value) : check.size('value', value),
    );
  }

  /** Every attribute by name: the reuse policies (booleans), releaseThreshold and the bytes
   * reserved and used, now and at their highs. */
  get attributes() {
    const result = {};
    for (const [name, attribute] of Object.entries(ATTRIBUTES)) {
      const value = this.getAttribute(attribute);
      result[name] = REUSE.has(attribute) ? value !== 0 : value;
    }
    return result;
  }

  /** Releases memory the pool holds beyond minBytesToKeep back to the system. */
  trimTo(minBytesToKeep) {
    binding.memPoolTrimTo(this, check.size('minBytesToKeep', minBytesToKeep));
  }

  /** memAllocAsync(bytes, stream, { pool: this }). */
  allocate(bytes, stream = null) {
    return memAllocAsync(bytes, stream, { pool: this });
  }

  /** A ShareableHandle (a file descriptor) another process imports this pool by; the pool must
   * have been made with handleType 'posix-fd'. */
  exportHandle() {
    return exportedHandle((handle) => binding.memPoolExportHandle(this, handle));
  }

  /** The 64 bytes (a Buffer) another process that imported this pool opens memory of this pool
   * by, with importPointer(); send them any way (a message, a pipe). */
  exportPointer(memory) {
    return binding.memPoolExportPointer(devicePointer(memory, 'memory'));
  }

  /**
   * The memory another process allocated from this (imported) pool and exported as data, in the
   * current context; free it here before it is freed there. bytes: its size where known (the
   * driver's address range otherwise).
   */
  importPointer(data, bytes = undefined) {
    if (!(data instanceof Uint8Array)) {
      throw new TypeError(`data must be the Buffer exportPointer() gave, not ${check.describe(data)}`);
    }
    if (data.length !== 64) throw new RangeError(`data must be 64 bytes long, not ${data.length}`);
    const size = bytes === undefined ? 0 : check.size('bytes', bytes);
    return adoptedAllocation(size, (obj, made) => binding.memPoolImportPointer(obj, this, data, made));
  }

  /** Destroys a pool made with new MemoryPool() or imported (its memory still allocated stays
   * usable until freed; an object getCurrent() gave on it keeps it alive, but not current); on an
   * object from getDefault() or getCurrent() a LogicError. A second destroy() does nothing. */
  destroy() {
    if (!this.#owned) {
      throw new LogicError(
        'destroy(): this MemoryPool came from getDefault() or getCurrent(); ' +
          'destroy a pool through the object new MemoryPool() or importHandle() gave',
      );
    }
    binding.memPoolDestroy(this);
  }

  [Symbol.dispose]() {
    if (this.#owned) this.destroy();
  }
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
  return adoptedAllocation(bytes, (obj, made) => binding.memAllocAsync(obj, bytes, stream, pool, made), stream);
}

/** A ShareableHandle around the descriptor that exportInto(handle) wraps in it (C's export calls). */
function exportedHandle(exportInto) {
  return wrapped(ShareableHandle, exportInto);
}

module.exports = { MemoryPool, ShareableHandle, exportedHandle, memAllocAsync, handleTypesOf, accessFlags };
