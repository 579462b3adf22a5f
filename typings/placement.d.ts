// Type declarations for where memory lives: locations, managed memory's prefetches and advice,
// what the driver knows of a pointer, and batched copies.
import type { Context, Device, Stream } from './index';
import type { DevicePointerLike, HostBuffer, Memcpy2D, Memcpy3D } from './memory';

/** Where memory is: 'host', a Device or a device ordinal, or a location of the driver's. */
export type MemoryLocation =
  | 'host'
  | Device
  | number
  | {
      /** A device, the host, a host NUMA node, or the NUMA node of the calling thread. */
      type: 'device' | 'host' | 'host-numa' | 'host-numa-current';
      /** The device ordinal or NUMA node (0 by default). */
      id?: number;
    };

/** A location as the driver reports it. */
export interface ReportedLocation {
  /** 'device', 'host', 'host-numa' or 'host-numa-current'. */
  type: string;
  /** The device ordinal or NUMA node. */
  id: number;
}

/** Managed memory: a managed TypedArray, or managed device memory (its size, or `bytes`). */
export type ManagedRange = ArrayBufferView | DevicePointerLike;

/** The bytes of a range, where not all of it. */
export interface RangeOptions {
  /** Bytes from its start (all of a TypedArray, or the memory's size, by default). */
  bytes?: number | bigint;
}

/**
 * Moves memory's pages to location in stream order (cuMemPrefetchAsync, driver 12.2+).
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * cuda.init();
 * const ctx = new cuda.Device(0).makeContext();
 * const stream = new cuda.Stream();
 * const data = cuda.managedZeros(1 << 20, 'float32');
 * cuda.memPrefetchAsync(data, cuda.Context.getDevice(), stream);
 * stream.synchronizeSync();
 * ctx.detach();
 * ```
 */
export declare function memPrefetchAsync(
  memory: ManagedRange,
  location: MemoryLocation,
  stream?: Stream | null,
  options?: RangeOptions,
): void;
/** Advises the driver on memory's use (a cuda.MemAdvise member); the preferred-location and
 * accessed-by advice take a location. */
export declare function memAdvise(
  memory: ManagedRange,
  advice: number,
  location?: MemoryLocation,
  options?: RangeOptions,
): void;
/** What was advised for memory, and where it was last prefetched. */
export declare function memRangeAttributes(
  memory: ManagedRange,
  options?: RangeOptions,
): {
  /** Read-mostly advice covers the whole range. */
  readMostly: boolean;
  /** The preferred location of the whole range, or null. */
  preferredLocation: ReportedLocation | null;
  /** Where the whole range was last prefetched, or null. */
  lastPrefetchLocation: ReportedLocation | null;
  /** The devices advised to access it. */
  accessedBy: (ReportedLocation | null)[];
};
/** One range of a batched prefetch or discard. */
export interface BatchRange extends RangeOptions {
  /** The managed memory. */
  memory: ManagedRange;
  /** Where to prefetch it (prefetches only). */
  location?: MemoryLocation;
}
/** Prefetches every range to its location in one call (cuMemPrefetchBatchAsync, driver 13.0). */
export declare function memPrefetchBatchAsync(
  items: readonly (BatchRange & { location: MemoryLocation })[],
  stream?: Stream | null,
): void;
/** Discards every range's contents (cuMemDiscardBatchAsync, driver 13.0). */
export declare function memDiscardBatchAsync(items: readonly BatchRange[], stream?: Stream | null): void;
/** Discards every range's contents and prefetches it to its location (driver 13.0). */
export declare function memDiscardAndPrefetchBatchAsync(
  items: readonly (BatchRange & { location: MemoryLocation })[],
  stream?: Stream | null,
): void;

/** What the driver knows of an address. */
export interface PointerAttributes {
  /** 'host' (page-locked or registered), 'device', 'array', 'unified', or null: CUDA never saw it. */
  memoryType: 'host' | 'device' | 'array' | 'unified' | null;
  /** The Context it was made in, where cudadrv knows it; else null. */
  context: Context | null;
  /** The ordinal of its device, or null. */
  device: number | null;
  /** Its address on the device, or null. */
  devicePointer: bigint | null;
  /** Its address on the host, or null. */
  hostPointer: bigint | null;
  /** Managed memory. */
  isManaged: boolean;
  /** Mapped to physical memory. */
  mapped: boolean;
  /** Where its allocation starts, or null. */
  rangeStart: bigint | null;
  /** Its allocation's bytes. */
  rangeSize: number;
  /** A process-wide id of the allocation. */
  bufferId: bigint;
  /** A process-wide id of the physical allocation. */
  memoryBlockId: bigint;
  /** Synchronous copies to it synchronize every stream. */
  syncMemops: boolean;
  /** It can be shared by memGetIpcHandle(). */
  legacyIpcCapable: boolean;
  /** It can be used with GPUDirect RDMA. */
  gpuDirectRdmaCapable: boolean;
  /** MemAllocationHandleType bits it can be exported by. */
  allowedHandleTypes: number;
  /** The current context's device's MemAccessFlags on it. */
  accessFlags: number;
  /** It came from a memory pool. */
  fromPool: boolean;
  /** Where its mapping starts, or null. */
  mappingBase: bigint | null;
  /** Its mapping's bytes. */
  mappingSize: number;
}
/** What the driver knows of pointer: device memory of any kind, an address, or a host buffer. */
export declare function pointerAttributes(pointer: DevicePointerLike | HostBuffer): PointerAttributes;

/** One copy of a batch. */
export interface BatchCopy {
  /** Device memory or a host buffer. */
  dest: DevicePointerLike | HostBuffer;
  /** Device memory or a host buffer. */
  src: DevicePointerLike | HostBuffer;
  /** Bytes (by default the host side's length, else src's size). */
  bytes?: number | bigint;
  /** Where src is likely to be, for managed memory. */
  srcLocation?: MemoryLocation;
  /** Where dest is likely to be, for managed memory. */
  dstLocation?: MemoryLocation;
  /** A hint that the copy should overlap with kernels. */
  preferOverlapWithCompute?: boolean;
}
/**
 * Makes every copy in one call on stream (cuMemcpyBatchAsync, driver 13.0); copies within a batch
 * run in no set order. Pageable host sources are read, and pageable destinations filled, before
 * this returns.
 */
export declare function memcpyBatchAsync(copies: readonly BatchCopy[], stream: Stream): void;
/**
 * Makes every 2D and 3D copy (Memcpy2D and Memcpy3D objects, CUDA arrays included) in one call on
 * stream (cuMemcpy3DBatchAsync, driver 13); copies within a batch run in no set order.
 */
export declare function memcpy3DBatchAsync(copies: readonly (Memcpy2D | Memcpy3D)[], stream: Stream): void;
