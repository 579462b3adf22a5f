'use strict';
// Memory pools (PyCUDA's DeviceMemoryPool and PageLockedMemoryPool): freed blocks are kept in bins
// and handed out again, so that a loop allocating and freeing the same sizes costs no driver call.
//
// Binning as PyCUDA's mempool.hpp does it (bin_number / alloc_size), with 4 significant bits after
// the leading one: a size s with bitlog2(s) = l goes to bin l * 16 + (the 4 bits below the leading
// one), and every block of a bin has the bin's largest size, so a request is rounded up by less
// than 2^(l-4) <= s / 16 (at most 6.25%). Sizes are plain numbers up to 2^53 - 1, handled exactly:
// shifts become divisions by powers of two, which are exact in doubles.
const check = require('../internal/checks');
const { LogicError, MemoryError } = require('../driver/errors');
const { devicePointer } = require('../internal/pointer');
const memory = require('../memory/device-memory');
const hostMemory = require('../memory/host-memory');

let dtypes = null; // lib/dtype.js, loaded on first use

const MANTISSA_BITS = 4;
const MANTISSA = 1 << MANTISSA_BITS; // 16
const TWO_32 = 2 ** 32;
const BIN_COUNT = 53 * MANTISSA; // sizes below 2^53 have bitlog2 <= 52

/** floor(log2(n)) for a safe integer n >= 1; 0 for 0, as PyCUDA's bitlog2. */
function bitlog2(n) {
  if (n < TWO_32) return n === 0 ? 0 : 31 - Math.clz32(n);
  return 63 - Math.clz32(Math.floor(n / TWO_32));
}

/** The bin of a request of size bytes (PyCUDA's bin_number). */
function binNumber(size) {
  const l = bitlog2(size);
  let shifted;
  if (l < MANTISSA_BITS) shifted = size << (MANTISSA_BITS - l);
  else if (size < TWO_32) shifted = size >>> (l - MANTISSA_BITS);
  else shifted = Math.floor(size / 2 ** (l - MANTISSA_BITS));
  return l * MANTISSA + (shifted & (MANTISSA - 1));
}

/** The size of the blocks of a bin: the largest size that falls in it (PyCUDA's alloc_size). */
function allocSize(bin) {
  const exponent = Math.floor(bin / MANTISSA);
  const head = MANTISSA | (bin & (MANTISSA - 1));
  if (exponent < MANTISSA_BITS) return head >> (MANTISSA_BITS - exponent);
  const unit = 2 ** (exponent - MANTISSA_BITS);
  return (head + 1) * unit - 1; // head << shift | (ones below it)
}

function checkedSize(size) {
  return check.size('size', size);
}

function checkedBin(bin) {
  return check.integer('bin', bin, 0, BIN_COUNT - 1);
}

// What a pool keeps per block it got from its allocator; made once per block, reused for every
// allocation the block serves, so the hot path allocates nothing but the handle it returns.
class Block {
  constructor(raw, bin) {
    this.raw = raw;
    this.bin = bin;
    this.ptr = 0n; // device pools: the block's address
    this.size = 0; // the size of the request it serves now
    this.owner = null; // host pools: the PooledHostAllocation it serves now
  }
}

// The pool machinery both kinds share. Subclasses supply _allocateRaw(bytes) and _freeRaw(raw),
// and hand blocks out through _take(size) and back through _give(block).
class MemoryPool {
  constructor() {
    this._bins = new Array(BIN_COUNT).fill(null);
    this._held = 0;
    this._active = 0;
    this._managedBytes = 0;
    this._activeBytes = 0;
    this._holding = true;
    // A handle dropped without free() gives its block back when it is collected.
    this._registry = new FinalizationRegistry((block) => this._reclaim(block));
  }

  /** Blocks kept for reuse, not in use. */
  get heldBlocks() {
    return this._held;
  }

  /** Blocks handed out and not yet freed. */
  get activeBlocks() {
    return this._active;
  }

  /** Bytes of every block the pool got from its allocator and still has (held and active). */
  get managedBytes() {
    return this._managedBytes;
  }

  /** Bytes requested by the allocations in use (before rounding up to the bins). */
  get activeBytes() {
    return this._activeBytes;
  }

  /** Frees every held block back to the allocator. Blocks in use are not touched. */
  freeHeld() {
    for (let bin = 0; bin < BIN_COUNT; bin++) {
      const stack = this._bins[bin];
      while (stack !== null && stack.length > 0) this._freeBlock(stack.pop());
    }
  }

  /** Frees the held blocks, and from now on frees each block as soon as it is given back. */
  stopHolding() {
    this._holding = false;
    this.freeHeld();
  }

  /** stopHolding(): `using pool = new DeviceMemoryPool()` frees what it holds at the block's end. */
  [Symbol.dispose]() {
    this.stopHolding();
  }

  _take(size) {
    const bin = binNumber(size);
    const stack = this._bins[bin];
    let block;
    if (stack !== null && stack.length > 0) {
      block = stack.pop();
      this._held--;
    } else {
      block = this._newBlock(bin, size);
    }
    block.size = size;
    this._active++;
    this._activeBytes += size;
    return block;
  }

  _give(block) {
    this._active--;
    this._activeBytes -= block.size;
    if (!this._holding) {
      this._release(block);
      return;
    }
    const stack = this._bins[block.bin];
    if (stack === null) this._bins[block.bin] = [block];
    else stack.push(block);
    this._held++;
  }

  // Called by the FinalizationRegistry for a handle collected without free().
  _reclaim(block) {
    try {
      if (block.owner !== null) {
        block.owner._block = null;
        block.owner = null;
      }
      this._give(block);
    } catch {
      // Finalization must not throw; a block that cannot be freed is the allocator's loss.
    }
  }

  // A new block for bin; on out-of-memory, frees held blocks, largest first, retrying after each.
  _newBlock(bin, size) {
    const bytes = allocSize(bin);
    for (;;) {
      let raw;
      try {
        raw = this._allocateRaw(bytes);
      } catch (error) {
        if (!(error instanceof MemoryError)) throw error;
        if (this._freeLargestHeld()) continue;
        const failure = new MemoryError(
          `${this.constructor.name}: out of memory for a ${bytes}-byte ` +
            `block (${size} bytes asked for) after freeing every held block (${error.message}); ` +
            `in use: ${this._active} blocks, ${this._activeBytes} bytes`,
          error,
        );
        failure.cause = error;
        throw failure;
      }
      const block = new Block(raw, bin);
      this._initBlock(block);
      this._managedBytes += bytes;
      return block;
    }
  }

  _freeLargestHeld() {
    for (let bin = BIN_COUNT - 1; bin >= 0; bin--) {
      const stack = this._bins[bin];
      if (stack !== null && stack.length > 0) {
        this._freeBlock(stack.pop());
        return true;
      }
    }
    return false;
  }

  _freeBlock(block) {
    this._held--;
    this._release(block);
  }

  _release(block) {
    this._managedBytes -= allocSize(block.bin);
    this._freeRaw(block.raw);
  }

  _initBlock() {}
}

const token = Symbol('pooled');

// What both kinds of pooled allocation share: the pool, the block, free() back to the pool.
class PooledAllocation {
  constructor(secret, pool, block, how) {
    if (secret !== token) throw new TypeError(`use ${how} to get a ${new.target.name}`);
    this._pool = pool;
    this._block = block;
    /** The size asked for, in bytes. */
    this.size = block.size;
  }

  /** The pool it came from. */
  get pool() {
    return this._pool;
  }

  /** Gives the memory back to the pool. A second free() does nothing. */
  free() {
    const block = this._block;
    if (block === null) return;
    this._block = null;
    block.owner = null;
    const pool = this._pool;
    pool._registry.unregister(this);
    pool._give(block);
  }

  [Symbol.dispose]() {
    this.free();
  }
}

/**
 * Device memory from a DeviceMemoryPool. Goes wherever device memory goes (`ptr`, `getPointer()`,
 * `size`); `free()` gives the block back to the pool, and so does garbage collection.
 */
class PooledDeviceAllocation extends PooledAllocation {
  constructor(secret, pool, block) {
    super(secret, pool, block, 'pool.allocate(size)');
  }

  /** The device address (a bigint). */
  get ptr() {
    if (this._block === null) throw freed();
    return this._block.ptr;
  }

  getPointer() {
    return this.ptr;
  }

  toString() {
    return this._block === null
      ? 'PooledDeviceAllocation(freed)'
      : `PooledDeviceAllocation(0x${this._block.ptr.toString(16)}, ${this.size} bytes)`;
  }
}

function freed() {
  return new LogicError('this pooled allocation has been freed: its memory belongs to the pool again');
}

/**
 * A pool of device memory (PyCUDA's DeviceMemoryPool). `allocator(bytes)` makes the blocks; it
 * defaults to cuda.memAlloc and must return device memory with `free()` (a DeviceAllocation or
 * anything with getPointer()/ptr), and throw a MemoryError when memory runs out. A pool serves the
 * context its allocator allocates in.
 */
class DeviceMemoryPool extends MemoryPool {
  constructor(allocator = memory.memAlloc) {
    super();
    this._allocateRaw = check.func('allocator', allocator);
  }

  /** A PooledDeviceAllocation of size bytes (a number or bigint). */
  allocate(size) {
    const block = this._take(checkedSize(size));
    const allocation = new PooledDeviceAllocation(token, this, block);
    this._registry.register(allocation, block, allocation);
    return allocation;
  }

  _initBlock(block) {
    const raw = block.raw;
    if (raw === null || typeof raw !== 'object' || typeof raw.free !== 'function') {
      throw new TypeError(`the pool's allocator must return device memory with free(), not ${check.describe(raw)}`);
    }
    try {
      block.ptr = devicePointer(raw, "the pool's allocator result");
    } catch (error) {
      raw.free();
      throw error;
    }
  }

  _freeRaw(raw) {
    raw.free();
  }
}

/**
 * The allocator of page-locked (pinned) host memory for PageLockedMemoryPool:
 * `allocate(bytes)` → Uint8Array over new pinned memory (cuda.pagelockedEmpty with these flags),
 * `free(array)` frees it.
 */
class PageLockedAllocator {
  constructor(flags = 0) {
    /** HostAllocFlags for every block. */
    this.flags = check.integer('flags', flags, 0, 4294967295);
  }

  allocate(bytes) {
    return hostMemory.pagelockedEmpty(bytes, 'uint8', { flags: this.flags });
  }

  free(array) {
    // page-locked memory alone: registered, aligned and managed arrays are not this allocator's
    const allocation = hostMemory.hostAllocationOf(array);
    if (!(allocation instanceof hostMemory.PagelockedHostAllocation)) {
      throw new TypeError(`free(array): array must be pinned memory from allocate(), not ${check.describe(array)}`);
    }
    allocation.free();
  }
}

/**
 * Pinned host memory from a PageLockedMemoryPool; reach it from the array with
 * `PooledHostAllocation.of(array)`. `free()` gives the block back to the pool (the array then
 * views memory the pool may hand out again: drop it), and so does collecting the array.
 */
class PooledHostAllocation extends PooledAllocation {
  constructor(secret, pool, block) {
    super(secret, pool, block, 'pool.allocate(shape, dtype)');
  }

  /** The PooledHostAllocation behind an array from PageLockedMemoryPool.allocate(), or null. */
  static of(array) {
    const allocation = hostMemory.hostAllocationOf(array);
    return allocation instanceof PooledHostAllocation ? allocation : null;
  }
}

/**
 * A pool of page-locked host memory (PyCUDA's PageLockedMemoryPool). `allocator` defaults to
 * `new PageLockedAllocator()`; any object with `allocate(bytes)` → Uint8Array and `free(array)`
 * will do.
 */
class PageLockedMemoryPool extends MemoryPool {
  constructor(allocator = new PageLockedAllocator()) {
    super();
    if (
      allocator === null ||
      typeof allocator !== 'object' ||
      typeof allocator.allocate !== 'function' ||
      typeof allocator.free !== 'function'
    ) {
      throw new TypeError(
        `allocator must be a PageLockedAllocator (an object with allocate(bytes) ` +
          `and free(array)), not ${check.describe(allocator)}`,
      );
    }
    this.allocator = allocator;
  }

  /** A TypedArray of the given shape and dtype over pooled pinned memory. */
  allocate(shape, dtype) {
    if (dtypes === null) dtypes = require('../internal/dtype');
    const { ctor, size: itemSize } = dtypes.dtypeOf(dtype);
    const length = dtypes.shapeLength(shape);
    const block = this._take(length * itemSize);
    const allocation = new PooledHostAllocation(token, this, block);
    block.owner = allocation;
    const raw = block.raw;
    const array = new ctor(raw.buffer, raw.byteOffset, length);
    hostMemory.setAllocationOf(array, allocation); // its hostAllocationOf(), PyCUDA's ary.base
    this._registry.register(array, block, allocation);
    return array;
  }

  _allocateRaw(bytes) {
    const raw = this.allocator.allocate(bytes);
    if (!(raw instanceof Uint8Array) || raw.byteLength < bytes) {
      this.allocator.free(raw);
      throw new TypeError(
        `allocator.allocate(${bytes}) must return a Uint8Array of at least ${bytes} ` +
          `bytes, not ${check.describe(raw)}`,
      );
    }
    return raw;
  }

  _freeRaw(raw) {
    this.allocator.free(raw);
  }
}

module.exports = {
  /** floor(log2(n)) of a size; 0 for 0. */
  bitlog2: (n) => bitlog2(checkedSize(n)),
  /** The pool bin a request of size bytes goes to. */
  binNumber: (size) => binNumber(checkedSize(size)),
  /** The size of the blocks of a bin, in bytes. */
  allocSize: (bin) => allocSize(checkedBin(bin)),
  DeviceMemoryPool,
  PooledDeviceAllocation,
  PageLockedAllocator,
  PageLockedMemoryPool,
  PooledHostAllocation,
};
