// cudadrv/tools: PyCUDA's pycuda.tools.
import type { DType, ArrayOf } from './memory';
import { Context, Device } from './index';

// ---- default device and context ----

/**
 * A context on the default device, made by ctxMaker(device) (default: a new context, current on
 * this thread). The device is CUDA_DEVICE's (an ordinal or a PCI bus id), else the one in
 * ~/.cuda-device or ~/.cuda_device, else the first device where ctxMaker succeeds. When every
 * device fails, the RuntimeError lists each failure and carries them as `errors`.
 */
export declare function makeDefaultContext(ctxMaker?: (device: Device) => Context): Context;
export declare function makeDefaultContext<T>(ctxMaker: (device: Device) => T): T;
/** @deprecated Use makeDefaultContext(). The Device of CUDA_DEVICE or ~/.cuda-device, else `fallback`. */
export declare function getDefaultDevice(fallback?: number | string): Device;

// ---- memoization per context ----

export interface MemoizeOptions {
  /** Results kept per context, most recently used first (default 256). */
  maxSize?: number;
}
/**
 * fn memoized per current context and arguments (primitives by value, objects by identity).
 * Rejected Promises are not kept.
 */
export declare function contextDependentMemoize<F extends (...args: any[]) => any>(fn: F, options?: MemoizeOptions): F;
/** Empties every cache of contextDependentMemoize. */
export declare function clearContextCaches(): void;

// ---- tests ----

/**
 * A test function for Mocha or node:test: fn runs with a context of makeDefaultContext() current
 * (and as its argument; node:test's test context second), detached afterwards even when fn
 * throws; skipped, saying why, where no GPU can be used (failed where CUDADRV_REQUIRE_GPU=1).
 */
export declare function markCudaTest<This = any>(
  fn: (this: This, context: Context, ...rest: any[]) => void | PromiseLike<void>,
): (this: This, ...args: any[]) => void | Promise<void>;

// ---- occupancy ----

/** Device attributes keyed by DeviceAttribute name, as dev.getAttributes() returns them. */
export type DeviceAttributes = Record<string, number>;

/** What occupancy depends on, read from the device's attributes. */
export declare class DeviceData {
  /** From a Device, an object of attributes, or (nothing) the current context's device. */
  constructor(dev?: Device | DeviceAttributes);
  readonly computeCapability: [number, number];
  /** Threads per block, at most. */
  readonly maxThreads: number;
  readonly warpSize: number;
  readonly maxThreadsPerMp: number;
  readonly warpsPerMp: number;
  readonly threadBlocksPerMp: number;
  /** Registers per multiprocessor. */
  readonly registers: number;
  readonly registersPerBlock: number;
  /** Bytes of shared memory per multiprocessor. */
  readonly sharedMemory: number;
  readonly sharedMemoryPerBlock: number;
  readonly sharedMemoryPerBlockOptin: number;
  readonly reservedSharedMemoryPerBlock: number;
  /** Shared memory banks. */
  readonly smemGranularity: number;
  /** Bytes by which shared memory is allocated to blocks. */
  readonly smemAllocGranularity: number;
  readonly registerAllocationUnit: 'warp';
  /** Registers by which a warp's registers are allocated. */
  readonly registerGranularity: number;
  readonly maxRegistersPerThread: number;
  readonly registerSubPartitions: number;
  alignBytes(wordSize?: 4 | 8 | 16): number;
  align(bytes: number, wordSize?: 4 | 8 | 16): number;
  alignWords(wordSize: 4 | 8 | 16): number;
  alignDtype(elements: number, dtypeSize: 4 | 8 | 16): number;
  coalesce(threadCount: number): number;
  makeValidTexChannelCount(size: number): 1 | 2 | 4;
  static makeValidTexChannelCount(size: number): 1 | 2 | 4;
}

export type OccupancyLimit = 'device' | 'warps' | 'regs' | 'smem';

/** Occupancy of blocks of `threads` threads using `sharedMem` bytes and `registers` a thread. */
export declare class OccupancyRecord {
  /** Throws a RangeError when such a block cannot run at all. */
  constructor(devdata: DeviceData, threads: number, sharedMem?: number, registers?: number);
  /** Blocks per multiprocessor each factor allows (regs and smem only where used). */
  readonly tbPerMpLimits: { device: number; warps: number; regs?: number; smem?: number };
  /** Resident blocks per multiprocessor. */
  readonly tbPerMp: number;
  readonly limitedBy: OccupancyLimit;
  /** Resident warps per multiprocessor. */
  readonly warpsPerMp: number;
  /** warpsPerMp as a fraction of the most the multiprocessor holds. */
  readonly occupancy: number;
}

// ---- memory pools ----

/** floor(log2(n)); 0 for 0. */
export declare function bitlog2(n: number | bigint): number;
/** The pool bin of a request of size bytes. */
export declare function binNumber(size: number | bigint): number;
/** The size of the blocks of a bin. */
export declare function allocSize(bin: number): number;

/** Device memory, as a pool's allocator returns it. */
export interface RawDeviceMemory {
  free(): void;
  ptr?: bigint;
  getPointer?(): bigint | number;
}

declare abstract class MemoryPool {
  /** Blocks kept for reuse. */
  readonly heldBlocks: number;
  /** Blocks in use. */
  readonly activeBlocks: number;
  /** Bytes of every block the pool has (held and in use). */
  readonly managedBytes: number;
  /** Bytes requested by the allocations in use. */
  readonly activeBytes: number;
  /** Frees every held block. */
  freeHeld(): void;
  /** Frees the held blocks, and every block given back from now on. */
  stopHolding(): void;
  /** stopHolding(), for `using`. */
  [Symbol.dispose](): void;
}

/** A pool of device memory; `allocator` defaults to cuda.memAlloc. */
export declare class DeviceMemoryPool extends MemoryPool {
  constructor(allocator?: (bytes: number) => RawDeviceMemory);
  allocate(size: number | bigint): PooledDeviceAllocation;
}

/** Device memory from a DeviceMemoryPool; usable wherever device memory is. */
export declare class PooledDeviceAllocation {
  private constructor();
  /** The device address; a LogicError once freed. */
  readonly ptr: bigint;
  /** The size asked for. */
  readonly size: number;
  readonly pool: DeviceMemoryPool;
  getPointer(): bigint;
  /** Gives the memory back to the pool. */
  free(): void;
  [Symbol.dispose](): void;
}

/** Allocates page-locked host memory for a PageLockedMemoryPool. */
export declare class PageLockedAllocator {
  constructor(flags?: number);
  readonly flags: number;
  allocate(bytes: number): Uint8Array;
  free(array: Uint8Array): void;
}

/** dtype names and constructors, as in the memory functions. */
export type Dtype = DType;

/** A pool of page-locked host memory. */
export declare class PageLockedMemoryPool extends MemoryPool {
  constructor(allocator?: { allocate(bytes: number): Uint8Array; free(array: Uint8Array): void });
  readonly allocator: { allocate(bytes: number): Uint8Array; free(array: Uint8Array): void };
  /** A TypedArray of the shape and dtype over pooled pinned memory. */
  allocate<D extends Dtype>(shape: number | number[], dtype: D): ArrayOf<D>;
}

/** Pooled pinned memory behind an array of PageLockedMemoryPool.allocate(). */
export declare class PooledHostAllocation {
  private constructor();
  /** The allocation behind a pool's array, or null. */
  static of(array: ArrayBufferView): PooledHostAllocation | null;
  /** Bytes of the array. */
  readonly size: number;
  readonly pool: PageLockedMemoryPool;
  /** Gives the memory back to the pool. */
  free(): void;
  [Symbol.dispose](): void;
}

// Only what is marked `export` above is exported (without this, a declaration file exports all).
export {};
