// cudadrv/tools: PyCUDA's pycuda.tools.
/**
 * PyCUDA's tools: the default context, memoization per context, occupancy, memory pools.
 * @packageDocumentation
 * @module cudadrv/tools
 */
import type { DType, ArrayOf } from './memory';
import { Context, Device } from './index';

// ---- default device and context ----

/**
 * A context on the default device, made by ctxMaker(device) (default: a new context, current on
 * this thread). The device is CUDA_DEVICE's (an ordinal or a PCI bus id), else the one in
 * ~/.cuda-device or ~/.cuda_device, else the first device where ctxMaker succeeds. When every
 * device fails, the RuntimeError lists each failure and carries them as `errors`.
 * @example
 * ```js
 * const { makeDefaultContext } = require('cudadrv/tools');
 * const ctx = makeDefaultContext(); // CUDA_DEVICE's device, or the first that takes a context
 * console.log(ctx.device.name());
 * ctx.detach();
 * ```
 */
export declare function makeDefaultContext(ctxMaker?: (device: Device) => Context): Context;
export declare function makeDefaultContext<T>(ctxMaker: (device: Device) => T): T;
/** @deprecated Use makeDefaultContext(). The Device of CUDA_DEVICE or ~/.cuda-device, else `fallback`. */
export declare function getDefaultDevice(fallback?: number | string): Device;

// ---- memoization per context ----

/** Options of contextDependentMemoize. */
export interface MemoizeOptions {
  /** Results kept per context, most recently used first (default 256). */
  maxSize?: number;
}
/**
 * fn memoized per current context and arguments (primitives by value, objects by identity).
 * Rejected Promises are not kept.
 * @typeParam F - the function's type, which the memoized function keeps.
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
  /** [major, minor]. */
  readonly computeCapability: [number, number];
  /** Threads per block, at most. */
  readonly maxThreads: number;
  /** Threads per warp. */
  readonly warpSize: number;
  /** Resident threads per multiprocessor, at most. */
  readonly maxThreadsPerMp: number;
  /** Resident warps per multiprocessor, at most. */
  readonly warpsPerMp: number;
  /** Resident blocks per multiprocessor, at most. */
  readonly threadBlocksPerMp: number;
  /** Registers per multiprocessor. */
  readonly registers: number;
  /** Registers a block may use, at most. */
  readonly registersPerBlock: number;
  /** Bytes of shared memory per multiprocessor. */
  readonly sharedMemory: number;
  /** Bytes of shared memory a block may use without opting in. */
  readonly sharedMemoryPerBlock: number;
  /**
   * Bytes of shared memory a block may use after opting in (setAttribute
   * maxDynamicSharedSizeBytes).
   */
  readonly sharedMemoryPerBlockOptin: number;
  /** Bytes of shared memory the system reserves per block. */
  readonly reservedSharedMemoryPerBlock: number;
  /** Shared memory banks. */
  readonly smemGranularity: number;
  /** Bytes by which shared memory is allocated to blocks. */
  readonly smemAllocGranularity: number;
  /** Registers are allocated per warp. */
  readonly registerAllocationUnit: 'warp';
  /** Registers by which a warp's registers are allocated. */
  readonly registerGranularity: number;
  /** Registers a thread may use, at most. */
  readonly maxRegistersPerThread: number;
  /** Register file partitions per multiprocessor. */
  readonly registerSubPartitions: number;
  /** Multiprocessors on the device (0 where the attributes given leave it out). */
  readonly multiprocessorCount: number;
  /** Whether kernels can launch in thread block clusters (compute capability 9.0+). */
  readonly clusterLaunch: boolean;
  /** Blocks in a cluster that every device launching clusters allows: 8 (1 where there are none). */
  readonly maxPortableClusterSize: number;
  /** The alignment, in bytes, that coalesces accesses of words of wordSize bytes. */
  alignBytes(wordSize?: 4 | 8 | 16): number;
  /** bytes rounded up to alignBytes(wordSize). */
  align(bytes: number, wordSize?: 4 | 8 | 16): number;
  /** alignBytes(wordSize) in words. */
  alignWords(wordSize: 4 | 8 | 16): number;
  /** elements rounded up so that elements * dtypeSize is aligned. */
  alignDtype(elements: number, dtypeSize: 4 | 8 | 16): number;
  /** threadCount rounded up to a multiple of 16 (a half warp). */
  coalesce(threadCount: number): number;
  /** The smallest texture channel count (1, 2 or 4) that holds size components. */
  makeValidTexChannelCount(size: number): 1 | 2 | 4;
  /** The smallest texture channel count (1, 2 or 4) that holds size components. */
  static makeValidTexChannelCount(size: number): 1 | 2 | 4;
}

/** What limits occupancy: the device's block limit, warps, registers or shared memory. */
export type OccupancyLimit = 'device' | 'warps' | 'regs' | 'smem';

/**
 * Occupancy of blocks of `threads` threads using `sharedMem` bytes and `registers` a thread.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context, current
 * const tools = require('cudadrv/tools');
 * const { SourceModule } = require('cudadrv/compiler');
 * const kernel = new SourceModule('__global__ void noop() {}').getFunction('noop');
 * const data = new tools.DeviceData(cuda.Context.getDevice());
 * const occupancy = new tools.OccupancyRecord(data, 256, kernel.sharedSizeBytes, kernel.numRegs);
 * console.log(occupancy.tbPerMp, occupancy.limitedBy, occupancy.occupancy);
 * ```
 */
export declare class OccupancyRecord {
  /** Throws a RangeError when such a block cannot run at all, or clusterSize (1 to 16) blocks
   * cannot form a cluster on the device. */
  constructor(devdata: DeviceData, threads: number, sharedMem?: number, registers?: number, clusterSize?: number);
  /** Blocks per multiprocessor each factor allows (regs and smem only where used). */
  readonly tbPerMpLimits: {
    /** The device's limit of resident blocks. */
    device: number;
    /** What the warps of a block allow. */
    warps: number;
    /** What the registers of a block allow. */
    regs?: number;
    /** What the shared memory of a block allows. */
    smem?: number;
  };
  /** Resident blocks per multiprocessor. */
  readonly tbPerMp: number;
  /** The factor that allows the fewest blocks. */
  readonly limitedBy: OccupancyLimit;
  /** Resident warps per multiprocessor. */
  readonly warpsPerMp: number;
  /** warpsPerMp as a fraction of the most the multiprocessor holds. */
  readonly occupancy: number;
  /** Blocks in a cluster (1: no clusters). */
  readonly clusterSize: number;
  /** The fewest multiprocessors one cluster's blocks take, all resident at once: clusterSize over
   * tbPerMp, rounded up. How many clusters are active at once: kernel.maxActiveClusters(). */
  readonly multiprocessorsPerCluster: number;
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
  /** Frees the memory. */
  free(): void;
  /** The device address (or getPointer()). */
  ptr?: bigint;
  /** The device address (or ptr). */
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

/**
 * A pool of device memory; `allocator` defaults to cuda.memAlloc.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context, current
 * const { DeviceMemoryPool } = require('cudadrv/tools');
 * const pool = new DeviceMemoryPool();
 * for (let i = 0; i < 100; i++) pool.allocate(1 << 20).free(); // the driver allocates once
 * console.log(pool.heldBlocks, pool.activeBlocks);              // 1 0
 * pool.freeHeld();
 * ```
 */
export declare class DeviceMemoryPool extends MemoryPool {
  constructor(allocator?: (bytes: number) => RawDeviceMemory);
  /**
   * A block of at least size bytes: a held one of its bin, else a new one (collecting garbage and
   * freeing held blocks where the allocator runs out).
   */
  allocate(size: number | bigint): PooledDeviceAllocation;
}

/** Device memory from a DeviceMemoryPool; usable wherever device memory is. */
export declare class PooledDeviceAllocation {
  private constructor();
  /** The device address; a LogicError once freed. */
  readonly ptr: bigint;
  /** The size asked for. */
  readonly size: number;
  /** The pool it came from. */
  readonly pool: DeviceMemoryPool;
  /** The device address, as `ptr`. */
  getPointer(): bigint;
  /** Gives the memory back to the pool. */
  free(): void;
  /** `using`: gives the memory back to the pool. */
  [Symbol.dispose](): void;
}

/** Allocates page-locked host memory for a PageLockedMemoryPool. */
export declare class PageLockedAllocator {
  /** An allocator of HostAllocFlags. */
  constructor(flags?: number);
  /** Its HostAllocFlags. */
  readonly flags: number;
  /** Page-locked memory of bytes bytes. */
  allocate(bytes: number): Uint8Array;
  /** Frees memory it allocated. */
  free(array: Uint8Array): void;
}

/** dtype names and constructors, as in the memory functions. */
export type Dtype = DType;

/** A pool of page-locked host memory. */
export declare class PageLockedMemoryPool extends MemoryPool {
  /** A pool drawing from allocator (a PageLockedAllocator by default). */
  constructor(allocator?: { allocate(bytes: number): Uint8Array; free(array: Uint8Array): void });
  /** The allocator it draws from. */
  readonly allocator: {
    /** Page-locked memory of bytes bytes. */
    allocate(bytes: number): Uint8Array;
    /** Frees memory it allocated. */
    free(array: Uint8Array): void;
  };
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
  /** The pool it came from. */
  readonly pool: PageLockedMemoryPool;
  /** Gives the memory back to the pool. */
  free(): void;
  /** `using`: gives the memory back to the pool. */
  [Symbol.dispose](): void;
}

// Only what is marked `export` above is exported (without this, a declaration file exports all).
export {};
