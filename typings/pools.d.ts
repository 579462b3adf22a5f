// Type declarations for the driver's memory pools: a device's own, made, and shared between
// processes by a file descriptor.
import type { Device, Stream } from './index';
import type { DeviceAllocation, DevicePointerLike } from './memory';
import type { MemoryLocation } from './placement';

/** Who may touch a pool's memory: nobody, readers, or readers and writers. */
export type MemoryAccess = 'none' | 'read' | 'readwrite';

/** new MemoryPool()'s options. */
export interface MemoryPoolOptions {
  /** The device whose memory the pool holds (the current context's by default). */
  device?: Device;
  /** Or where its memory is: 'host' for page-locked host memory (driver 12.6+), a device... */
  location?: MemoryLocation;
  /** 'posix-fd' to share the pool with other processes (exportHandle()); 'none' by default. */
  handleType?: 'none' | 'posix-fd';
  /** The most bytes the pool may hold (0, the default: as much as the device has). */
  maxSize?: number | bigint;
  /** Bytes the pool keeps after a synchronization instead of giving them back. */
  releaseThreshold?: number | bigint;
  /** Reuse memory freed on another stream once an event dependency orders the two. */
  reuseFollowEventDependencies?: boolean;
  /** Reuse memory whose free has already run on the device, without a dependency. */
  reuseAllowOpportunistic?: boolean;
  /** Let the driver insert dependencies to reuse memory. */
  reuseAllowInternalDependencies?: boolean;
}

/** Every attribute of a pool, by name. */
export interface MemoryPoolAttributes {
  /** MemPoolAttribute.REUSE_FOLLOW_EVENT_DEPENDENCIES. */
  reuseFollowEventDependencies: boolean;
  /** MemPoolAttribute.REUSE_ALLOW_OPPORTUNISTIC. */
  reuseAllowOpportunistic: boolean;
  /** MemPoolAttribute.REUSE_ALLOW_INTERNAL_DEPENDENCIES. */
  reuseAllowInternalDependencies: boolean;
  /** Bytes kept after a synchronization. */
  releaseThreshold: number;
  /** Bytes the pool holds from the driver now. */
  reservedMemCurrent: number;
  /** The most it held since the last reset. */
  reservedMemHigh: number;
  /** Bytes allocated from the pool now. */
  usedMemCurrent: number;
  /** The most allocated since the last reset. */
  usedMemHigh: number;
}

/**
 * A memory pool of the driver's, which memAllocAsync() draws from. `new MemoryPool(options)` makes
 * one (cuMemPoolCreate); getDefault() and getCurrent() give a device's own (getCurrent() the one
 * set current).
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * cuda.init();
 * const ctx = new cuda.Device(0).makeContext();
 * const stream = new cuda.Stream();
 * const pool = new cuda.MemoryPool({ releaseThreshold: 64 << 20 });
 * const memory = pool.allocate(1 << 20, stream);
 * memory.free(stream);
 * pool.destroy();
 * ctx.detach();
 * ```
 */
export declare class MemoryPool {
  /** A new pool (cuMemPoolCreate) on options.device or at options.location; out of memory, it
   * collects garbage once and tries again. */
  constructor(options?: MemoryPoolOptions);
  /** The device's default pool (the current context's device when omitted). */
  static getDefault(device?: Device): MemoryPool;
  /** The pool memAllocAsync draws from on the device: where that is a pool made here, another
   * object on it, which keeps the pool alive until it too is collected (its destroy() refuses). */
  static getCurrent(device?: Device): MemoryPool;
  /** The pool another process exported as the file descriptor fd (which stays yours to close),
   * imported in the current context (a LogicError where none is current). The driver destroys it
   * with that context: once the context is detached, the pool is a LogicError to use, and its
   * destroy() and collection leave it to the driver. */
  static importHandle(fd: number): MemoryPool;
  /** Makes this pool the one memAllocAsync() draws from on its device. */
  setCurrent(device?: Device): void;
  /** Lets device's kernels read and write, read, or not touch this pool's memory. */
  setAccess(device: Device | number, access: MemoryAccess): void;
  /** Device's access to this pool's memory. */
  getAccess(device: Device | number): MemoryAccess;
  /** A MemPoolAttribute. */
  getAttribute(attribute: number): number;
  /** Sets a MemPoolAttribute: release threshold, reuse policies (booleans), high-water resets (0). */
  setAttribute(attribute: number, value: number | bigint | boolean): void;
  /** Every attribute by name. */
  readonly attributes: MemoryPoolAttributes;
  /** Releases the pool's unused memory back to the driver, keeping at least minBytesToKeep. */
  trimTo(minBytesToKeep: number | bigint): void;
  /** Stream-ordered memory from this pool (cuMemAllocFromPoolAsync). */
  allocate(bytes: number | bigint, stream?: Stream | null): DeviceAllocation;
  /** A file descriptor another process imports this pool by (a pool made with handleType 'posix-fd'). */
  exportHandle(): ShareableHandle;
  /** The 64 bytes another process that imported this pool opens memory of it by. */
  exportPointer(memory: DevicePointerLike): Buffer;
  /** Memory another process allocated from this imported pool and exported; free it here first. */
  importPointer(data: Uint8Array, bytes?: number | bigint): DeviceAllocation;
  /** Destroys a made or imported pool (a device's own pool becomes current again where it was
   * current; the driver's pool goes once no object from getCurrent() holds it); on an object
   * from getDefault() or getCurrent() a LogicError. */
  destroy(): void;
  /** `using`: destroys a made or imported pool. */
  [Symbol.dispose](): void;
}

/** A file descriptor that stands for a pool, for another process (pool.exportHandle()). */
export declare class ShareableHandle {
  private constructor();
  /** The descriptor: pass it to a child process in spawn()'s `stdio`. */
  readonly fd: number;
  /** Closes the descriptor; a second close() does nothing. */
  close(): void;
  /** `using`: closes it. */
  [Symbol.dispose](): void;
}

/** new PhysicalMemory()'s options. */
export interface PhysicalMemoryOptions {
  /** Its device (the current context's by default). */
  device?: Device;
  /** 'posix-fd' to share it with other processes (exportHandle()); 'none' by default. */
  handleType?: 'none' | 'posix-fd';
}

/** The bytes that allocations, mappings and reservations on device are multiples of. */
export declare function memGetAllocationGranularity(options?: PhysicalMemoryOptions & {
  /** The size that performs best rather than the minimum. */
  recommended?: boolean;
}): number;

/** Physical device memory with no address (cuMemCreate); map it into a VirtualAddressRange. */
export declare class PhysicalMemory {
  /**
   * bytes (a multiple of the granularity) on options.device; out of memory, it collects garbage
   * once and tries again, then throws MemoryError.
   */
  constructor(bytes: number | bigint, options?: PhysicalMemoryOptions);
  /** Physical memory another process exported as fd (yours to close), of bytes bytes. */
  static importHandle(fd: number, bytes: number | bigint): PhysicalMemory;
  /** Its bytes. */
  readonly size: number;
  /** A file descriptor another process imports it by (handleType 'posix-fd'). */
  exportHandle(): ShareableHandle;
  /** Lets it go once no range maps it; a second release() does nothing. */
  release(): void;
  /** `using`: releases it. */
  [Symbol.dispose](): void;
}

/** Reserved device addresses (cuMemAddressReserve) that PhysicalMemory is mapped into. */
export declare class VirtualAddressRange {
  /** bytes of addresses (a multiple of the granularity). */
  constructor(bytes: number | bigint, options?: {
    /** Their alignment (the granularity by default). */
    alignment?: number | bigint;
  });
  /** Its bytes. */
  readonly size: number;
  /** Its first address. */
  readonly ptr: bigint;
  /** Its first address. */
  getPointer(): bigint;
  /** Maps physical memory (all of it from physicalOffset, or bytes of it) at offset. */
  map(offset: number | bigint, physical: PhysicalMemory, options?: {
    /** Bytes to map. */
    bytes?: number | bigint;
    /** Where in physical the mapping starts. */
    physicalOffset?: number | bigint;
  }): void;
  /** Undoes the mapping made at offset of bytes bytes. */
  unmap(offset: number | bigint, bytes: number | bigint): void;
  /** Lets device use mapped bytes ('readwrite' by default). */
  setAccess(offset: number | bigint, bytes: number | bigint, device: Device | number, access?: MemoryAccess): void;
  /** Unmaps everything and gives the addresses back. */
  free(): void;
  /** `using`: frees it. */
  [Symbol.dispose](): void;
}

/**
 * Device memory that grows in place: its address stays the same while grow() maps more at its end.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * cuda.init();
 * const ctx = new cuda.Device(0).makeContext();
 * const buffer = new cuda.GrowableBuffer({ maxBytes: 1 << 30, initialBytes: 1 << 20 });
 * cuda.memcpyHtoD(buffer, new Float32Array(1 << 18));
 * buffer.grow(64 << 20); // buffer.ptr is unchanged, and so are its first bytes
 * buffer.free();
 * ctx.detach();
 * ```
 */
export declare class GrowableBuffer {
  /** Reserves maxBytes of addresses and makes initialBytes usable on device and peers. */
  constructor(options: {
    /** The most bytes it can grow to. */
    maxBytes: number | bigint;
    /** Bytes usable at once (0 by default). */
    initialBytes?: number | bigint;
    /** Its device (the current context's by default). */
    device?: Device;
    /** Other devices that may use it. */
    peers?: readonly Device[];
  });
  /** Bytes usable now. */
  readonly size: number;
  /** The most bytes it can grow to (maxBytes rounded up to the granularity). */
  readonly maxBytes: number;
  /** Its address, the same for its whole life. */
  readonly ptr: bigint;
  /** Its address. */
  getPointer(): bigint;
  /** Makes at least bytes usable, keeping its contents and address. */
  grow(bytes: number | bigint): void;
  /** Unmaps and frees everything. */
  free(): void;
  /** `using`: frees it. */
  [Symbol.dispose](): void;
}
