'use strict';
// Virtual memory management: physical allocations (PhysicalMemory), ranges of reserved device
// addresses (VirtualAddressRange) they are mapped into, and GrowableBuffer, device memory whose
// address stays the same as it grows. C checks every mapping against its range and allocation.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { Context } = require('../driver/context');
const { Device } = require('../driver/device');
const { LogicError } = require('../driver/errors');
const { locationOf } = require('../internal/location');
const { PointerHolderBase } = require('./device-memory');
const { exportedHandle, handleTypesOf, accessFlags } = require('./memory-pool');

const currentDevice = () => Context.getDevice();

// [type, id, handleTypes] of { device, handleType } options.
function placement(opts, what, extra = []) {
  check.keys(opts, ['device', 'handleType', ...extra], what);
  const { device = currentDevice(), handleType = 'none' } = opts ?? {};
  check.instance('device', device, Device);
  return [...locationOf('device', device), handleTypesOf(what, handleType)];
}

/** The granularity (bytes) that physical allocations, mappings and reservations are multiples
 * of on device: the minimum, or with `{ recommended: true }` the size that performs best. */
function memGetAllocationGranularity(opts = undefined) {
  const [type, id, handleTypes] = placement(opts, 'memGetAllocationGranularity()', ['recommended']);
  const recommended = opts?.recommended ?? false;
  if (typeof recommended !== 'boolean') throw new TypeError('recommended must be a boolean');
  return binding.memGetAllocationGranularity(type, id, handleTypes, recommended);
}

let importing = false;

/**
 * Physical device memory with no address (cuMemCreate): `new PhysicalMemory(bytes, { device,
 * handleType })`, bytes a multiple of the granularity. Map it into a VirtualAddressRange to use
 * it; release() lets it go once no range maps it.
 */
class PhysicalMemory {
  constructor(bytes, opts = undefined) {
    if (importing) return;
    const [type, id, handleTypes] = placement(opts, 'new PhysicalMemory()');
    this.size = check.size('bytes', bytes);
    retryOutOfMemory(() => binding.memCreate(this, this.size, type, id, handleTypes));
  }

  /** The physical memory another process exported (exportHandle()) as fd, of bytes bytes; fd
   * stays yours to close. */
  static importHandle(fd, bytes) {
    check.integer('fd', fd, 0, 2 ** 31 - 1);
    bytes = check.size('bytes', bytes);
    importing = true;
    let memory;
    try {
      memory = new PhysicalMemory();
    } finally {
      importing = false;
    }
    binding.memImportHandle(memory, fd, bytes);
    memory.size = bytes;
    return memory;
  }

  /** A ShareableHandle (a file descriptor) another process imports it by (handleType 'posix-fd'). */
  exportHandle() {
    return exportedHandle((handle) => binding.memExportHandle(this, handle));
  }

  /** Lets the memory go once no range maps it; a second release() does nothing. */
  release() {
    binding.memRelease(this);
  }

  [Symbol.dispose]() {
    this.release();
  }
}

/**
 * A range of device addresses with nothing behind them yet (cuMemAddressReserve):
 * `new VirtualAddressRange(bytes, { alignment })`. map() puts PhysicalMemory at an offset,
 * setAccess() lets devices use it; it goes wherever device memory goes (ptr, size).
 */
class VirtualAddressRange extends PointerHolderBase {
  #address;
  #freed = false;

  constructor(bytes, opts = undefined) {
    super();
    check.keys(opts, ['alignment'], 'new VirtualAddressRange()');
    /** Its bytes. */
    this.size = check.size('bytes', bytes);
    this.#address = binding.memAddressReserve(this, this.size, check.size('alignment', opts?.alignment ?? 0));
  }

  getPointer() {
    if (this.#freed) throw new LogicError('this VirtualAddressRange has been freed; reserve a new one');
    return this.#address;
  }

  /** Maps bytes of physical memory (all of it by default, from physicalOffset) at offset. */
  map(offset, physical, opts = undefined) {
    check.keys(opts, ['bytes', 'physicalOffset'], 'map()');
    check.instance('physical', physical, PhysicalMemory);
    const physicalOffset = check.size('physicalOffset', opts?.physicalOffset ?? 0);
    const bytes = opts?.bytes ?? physical.size - physicalOffset;
    binding.memMap(this, check.size('offset', offset), check.size('bytes', bytes), physical, physicalOffset);
  }

  /** Undoes the mapping made at offset of bytes bytes. */
  unmap(offset, bytes) {
    binding.memUnmap(this, check.size('offset', offset), check.size('bytes', bytes));
  }

  /** Lets device read and write ('readwrite'), read, or not touch ('none') the mapped bytes at
   * offset, which must be whole mappings. */
  setAccess(offset, bytes, device, access = 'readwrite') {
    const [type, id] = locationOf('device', device);
    binding.memSetAccess(this, check.size('offset', offset), check.size('bytes', bytes), type, id, accessFlags(access));
  }

  /** Unmaps whatever is mapped and gives the addresses back; a second free() does nothing. */
  free() {
    binding.memAddressFree(this);
    this.#freed = true;
  }

  [Symbol.dispose]() {
    this.free();
  }
}

/**
 * Device memory that grows in place: its address (ptr) stays the same, so kernels and copies that
 * hold it keep working, while grow() maps more physical memory at its end.
 * `new GrowableBuffer({ maxBytes, device, peers })`: up to maxBytes (reserved at once, costing no
 * memory), usable by device and any peer devices given.
 */
class GrowableBuffer extends PointerHolderBase {
  #range;
  #device;
  #peers;
  #granularity;
  #mapped = 0;

  constructor(opts) {
    super();
    check.keys(opts, ['maxBytes', 'device', 'peers', 'initialBytes'], 'new GrowableBuffer()');
    const { maxBytes, peers = [], initialBytes = 0 } = opts ?? {};
    check.size('maxBytes', maxBytes);
    const device = opts?.device ?? currentDevice();
    this.#device = check.instance('device', device, Device);
    this.#peers = check
      .list('peers', peers, 'an array of Devices')
      .map((p, i) => check.instance(`peers[${i}]`, p, Device));
    this.#granularity = memGetAllocationGranularity({ device });
    const reserved = this.#roundUp(check.size('maxBytes', maxBytes));
    if (reserved === 0) throw new RangeError('new GrowableBuffer(): maxBytes must be at least 1');
    this.#range = new VirtualAddressRange(reserved);
    /** The bytes usable now (grow() adds more). */
    this.size = 0;
    /** The most bytes it can grow to. */
    this.maxBytes = reserved;
    this.grow(check.size('initialBytes', initialBytes));
  }

  #roundUp(bytes) {
    return Math.ceil(bytes / this.#granularity) * this.#granularity;
  }

  getPointer() {
    return this.#range.getPointer(); // a LogicError once freed
  }

  /** Makes at least bytes usable, keeping what it holds and its address; a RangeError past maxBytes. */
  grow(bytes) {
    bytes = check.size('bytes', bytes);
    if (bytes > this.maxBytes)
      throw new RangeError(`grow(${bytes}): past the ${this.maxBytes} bytes reserved (maxBytes)`);
    const target = this.#roundUp(bytes);
    if (target > this.#mapped) {
      const chunk = target - this.#mapped;
      const physical = new PhysicalMemory(chunk, { device: this.#device });
      try {
        this.#range.map(this.#mapped, physical);
      } finally {
        physical.release(); // the mapping keeps it
      }
      for (const device of [this.#device, ...this.#peers]) this.#range.setAccess(this.#mapped, chunk, device);
      this.#mapped = target;
    }
    this.size = Math.max(this.size, bytes);
  }

  /** Unmaps and frees everything; a second free() does nothing. */
  free() {
    this.#range.free();
    this.size = 0;
  }

  [Symbol.dispose]() {
    this.free();
  }
}

module.exports = { memGetAllocationGranularity, PhysicalMemory, VirtualAddressRange, GrowableBuffer };
