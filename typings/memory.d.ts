// Type declarations for cudadrv's memory: device memory, copies and memsets, the 2D/3D copy
// descriptors, the driver's memory pools, IPC memory, and host memory as TypedArrays.
import type { Context, Device, Stream } from './index';
import type { CudaArray } from './array';

// ---- shapes, dtypes, buffers, pointers ----

/** The TypedArray each dtype name stands for. */
export interface DTypeArrays {
  int8: Int8Array;
  uint8: Uint8Array;
  uint8clamped: Uint8ClampedArray;
  int16: Int16Array;
  uint16: Uint16Array;
  int32: Int32Array;
  uint32: Uint32Array;
  float32: Float32Array;
  float64: Float64Array;
  int64: BigInt64Array;
  uint64: BigUint64Array;
  /** Where the runtime has Float16Array. */
  float16: ArrayBufferView;
}
export type TypedArray =
  | Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array
  | Uint32Array | Float32Array | Float64Array | BigInt64Array | BigUint64Array;
export type TypedArrayConstructor =
  | Int8ArrayConstructor | Uint8ArrayConstructor | Uint8ClampedArrayConstructor
  | Int16ArrayConstructor | Uint16ArrayConstructor | Int32ArrayConstructor
  | Uint32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor
  | BigInt64ArrayConstructor | BigUint64ArrayConstructor;
/** A TypedArray constructor or its dtype name. */
export type DType = keyof DTypeArrays | TypedArrayConstructor;
/** The array a dtype gives. */
export type ArrayOf<D extends DType> = D extends keyof DTypeArrays ? DTypeArrays[D]
  : D extends new (...args: any[]) => infer T ? T : never;
/** A number of elements, or the dimensions whose product it is. */
export type Shape = number | readonly number[];
/** Any host buffer: TypedArray, Buffer, DataView, ArrayBuffer or SharedArrayBuffer. */
export type HostBuffer = ArrayBufferView | ArrayBuffer | SharedArrayBuffer;
/** Anything that stands for device memory: an allocation, an object with getPointer() or a
 * bigint `ptr`, a bigint or a safe-integer address. */
export type DevicePointerLike =
  | bigint
  | number
  | { getPointer(): bigint | number; readonly size?: number }
  | { readonly ptr: bigint; readonly size?: number };

// ---- device memory ----

/** Base class for objects that stand for device memory: implement getPointer(). */
export declare class PointerHolderBase {
  getPointer(): bigint | number;
  /** The device address. */
  readonly ptr: bigint;
  /** An ArrayBuffer over host-accessible memory (managed, mapped); device memory is refused. A
   * view through a holder of your own must not outlive the memory it views. */
  asBuffer(size?: number, offset?: number): ArrayBuffer;
}

/** Device memory from memAlloc() and friends, or a slice() of it. */
export declare class DeviceAllocation extends PointerHolderBase {
  protected constructor();
  /** The device address; LogicError once freed. */
  readonly ptr: bigint;
  /** Bytes. */
  readonly size: number;
  /** The context it lives in (kept alive by it). */
  readonly context: Context | null;
  getPointer(): bigint;
  /** A view of size bytes at offset that keeps this memory alive; copies through it are bounds-checked. */
  slice(offset?: number, size?: number): DeviceAllocation;
  /** Frees now (memory from memAllocAsync: in stream order, on stream). A slice lets its parent go. */
  free(stream?: Stream | null): void;
  [Symbol.dispose](): void;
}

/** Another process's device memory, opened from memGetIpcHandle()'s Buffer. */
export declare class IPCMemoryHandle extends DeviceAllocation {
  constructor(handle: Uint8Array, flags?: number);
  close(): void;
}

/** One of the driver's memory pools, for stream-ordered allocation. */
export declare class MemoryPool {
  private constructor();
  static getDefault(device?: Device): MemoryPool;
  static getCurrent(device?: Device): MemoryPool;
  /** A MemPoolAttribute. */
  getAttribute(attribute: number): number;
  setAttribute(attribute: number, value: number | bigint | boolean): void;
  trimTo(minBytesToKeep: number | bigint): void;
  allocate(bytes: number | bigint, stream?: Stream | null): DeviceAllocation;
}

export declare function memGetInfo(): { free: number; total: number };
/** Device memory; on out-of-memory, collects garbage once and retries, then throws MemoryError. */
export declare function memAlloc(bytes: number | bigint): DeviceAllocation;
export declare function memAllocPitch(widthInBytes: number, height: number, accessSize?: 4 | 8 | 16):
  { allocation: DeviceAllocation; pitch: number };
/** Stream-ordered device memory (cuMemAllocAsync), from the current pool or `pool`. */
export declare function memAllocAsync(bytes: number | bigint, stream?: Stream | null,
  options?: { pool?: MemoryPool | null }): DeviceAllocation;
/** A 64-byte Buffer that another process opens with new IPCMemoryHandle(). */
export declare function memGetIpcHandle(pointer: DevicePointerLike): Buffer;

export declare function toDevice(array: HostBuffer): DeviceAllocation;
export declare function fromDevice<D extends DType>(pointer: DevicePointerLike, shape: Shape, dtype: D): ArrayOf<D>;
export declare function fromDeviceLike<T extends TypedArray>(pointer: DevicePointerLike, array: T): T;

// ---- copies and memsets ----

export declare function memcpyHtoD(dest: DevicePointerLike, src: HostBuffer): void;
export declare function memcpyDtoH(dest: HostBuffer, src: DevicePointerLike): void;
export declare function memcpyHtoDAsync(dest: DevicePointerLike, src: HostBuffer, stream?: Stream | null): void;
export declare function memcpyDtoHAsync(dest: HostBuffer, src: DevicePointerLike, stream?: Stream | null): void;
/** size defaults to all of src where its size is known. */
export declare function memcpyDtoD(dest: DevicePointerLike, src: DevicePointerLike, size?: number | bigint): void;
export declare function memcpyDtoDAsync(dest: DevicePointerLike, src: DevicePointerLike,
  size?: number | bigint, stream?: Stream | null): void;
/** Contexts default to the current one. */
export declare function memcpyPeer(dest: DevicePointerLike, src: DevicePointerLike, size?: number | bigint,
  destContext?: Context | null, srcContext?: Context | null): void;
export declare function memcpyPeerAsync(dest: DevicePointerLike, src: DevicePointerLike, size?: number | bigint,
  destContext?: Context | null, srcContext?: Context | null, stream?: Stream | null): void;

export declare function memsetD8(dest: DevicePointerLike, value: number, count: number | bigint): void;
export declare function memsetD16(dest: DevicePointerLike, value: number, count: number | bigint): void;
export declare function memsetD32(dest: DevicePointerLike, value: number, count: number | bigint): void;
export declare function memsetD8Async(dest: DevicePointerLike, value: number, count: number | bigint, stream?: Stream | null): void;
export declare function memsetD16Async(dest: DevicePointerLike, value: number, count: number | bigint, stream?: Stream | null): void;
export declare function memsetD32Async(dest: DevicePointerLike, value: number, count: number | bigint, stream?: Stream | null): void;
export declare function memsetD2D8(dest: DevicePointerLike, pitch: number, value: number, width: number, height: number): void;
export declare function memsetD2D16(dest: DevicePointerLike, pitch: number, value: number, width: number, height: number): void;
export declare function memsetD2D32(dest: DevicePointerLike, pitch: number, value: number, width: number, height: number): void;
export declare function memsetD2D8Async(dest: DevicePointerLike, pitch: number, value: number, width: number,
  height: number, stream?: Stream | null): void;
export declare function memsetD2D16Async(dest: DevicePointerLike, pitch: number, value: number, width: number,
  height: number, stream?: Stream | null): void;
export declare function memsetD2D32Async(dest: DevicePointerLike, pitch: number, value: number, width: number,
  height: number, stream?: Stream | null): void;

/** A 2D copy: set both sides and the extent, then run() or run(stream). */
export declare class Memcpy2D {
  constructor();
  srcXInBytes: number;
  srcY: number;
  srcPitch: number;
  readonly srcMemoryType: number;
  readonly srcHost: ArrayBufferView | null;
  readonly srcDevice: bigint;
  dstXInBytes: number;
  dstY: number;
  dstPitch: number;
  readonly dstMemoryType: number;
  readonly dstHost: ArrayBufferView | null;
  readonly dstDevice: bigint;
  widthInBytes: number;
  height: number;
  /** The CudaArray of an array side, else null. */
  readonly srcArray: CudaArray | null;
  readonly dstArray: CudaArray | null;
  setSrcHost(buffer: HostBuffer): void;
  setSrcDevice(pointer: DevicePointerLike): void;
  setSrcArray(array: CudaArray): void;
  setDstArray(array: CudaArray): void;
  /** A managed array, or a device pointer. */
  setSrcUnified(memory: HostBuffer | DevicePointerLike): void;
  setDstHost(buffer: HostBuffer): void;
  setDstDevice(pointer: DevicePointerLike): void;
  setDstUnified(memory: HostBuffer | DevicePointerLike): void;
  /** Copies now (2D and aligned: cuMemcpy2D, else cuMemcpy2DUnaligned), or enqueues on stream. */
  run(options?: { aligned?: boolean }): void;
  run(stream: Stream | null): void;
}

export declare class Memcpy3D extends Memcpy2D {
  srcZ: number;
  srcLOD: number;
  /** Rows per slice. */
  srcHeight: number;
  dstZ: number;
  dstLOD: number;
  dstHeight: number;
  depth: number;
}

export declare class Memcpy3DPeer extends Memcpy3D {
  srcContext: Context | null;
  dstContext: Context | null;
  setSrcContext(context: Context): void;
  setDstContext(context: Context): void;
}

// ---- host memory ----

/** Host memory the device can address. */
export declare class HostPointer {
  /** The device address of the first byte; an array over the memory is at
   * getDevicePointer() + BigInt(array.byteOffset - byteOffset). */
  getDevicePointer(): bigint;
  /** Where the memory starts in its ArrayBuffer (0 but on the V8-owned path). */
  readonly byteOffset: number;
  /** The same, so that it goes wherever device memory goes. */
  getPointer(): bigint;
}

export declare class PagelockedHostAllocation extends HostPointer {
  private constructor();
  readonly size: number;
  readonly context: Context | null;
  /** HostAllocFlags. */
  getFlags(): number;
  /** Releases now; its arrays read as empty afterwards. */
  free(): void;
  [Symbol.dispose](): void;
}
/** PyCUDA's deprecated name. */
export declare const HostAllocation: typeof PagelockedHostAllocation;
export type HostAllocation = PagelockedHostAllocation;

export declare class AlignedHostAllocation {
  private constructor();
  readonly size: number;
  readonly byteOffset: number;
  free(): void;
  [Symbol.dispose](): void;
}

export declare class ManagedAllocation extends HostPointer {
  private constructor();
  readonly size: number;
  readonly context: Context | null;
  /** cuStreamAttachMemAsync with MemAttachFlags. */
  attach(flags: number, stream?: Stream | null): void;
  free(): void;
  [Symbol.dispose](): void;
}

export declare class RegisteredHostMemory extends HostPointer {
  private constructor();
  /** The array that was registered. */
  readonly base: ArrayBufferView;
  readonly size: number;
  readonly context: Context | null;
  /** MemHostRegisterFlags. */
  getFlags(): number;
  unregister(): void;
  [Symbol.dispose](): void;
}

export interface PagelockedOptions {
  /** HostAllocFlags. */
  flags?: number;
}
export interface AlignedOptions {
  /** A power of two; 4096 by default. */
  alignment?: number;
}
export interface ManagedOptions {
  /** MemAttachFlags.GLOBAL (default) or HOST. */
  flags?: number;
}

export declare function pagelockedEmpty<D extends DType>(shape: Shape, dtype: D, options?: PagelockedOptions): ArrayOf<D>;
export declare function pagelockedZeros<D extends DType>(shape: Shape, dtype: D, options?: PagelockedOptions): ArrayOf<D>;
export declare function pagelockedEmptyLike<T extends TypedArray>(array: T, options?: PagelockedOptions): T;
export declare function pagelockedZerosLike<T extends TypedArray>(array: T, options?: PagelockedOptions): T;
export declare function alignedEmpty<D extends DType>(shape: Shape, dtype: D, options?: AlignedOptions): ArrayOf<D>;
export declare function alignedZeros<D extends DType>(shape: Shape, dtype: D, options?: AlignedOptions): ArrayOf<D>;
export declare function alignedEmptyLike<T extends TypedArray>(array: T, options?: AlignedOptions): T;
export declare function alignedZerosLike<T extends TypedArray>(array: T, options?: AlignedOptions): T;
export declare function managedEmpty<D extends DType>(shape: Shape, dtype: D, options?: ManagedOptions): ArrayOf<D>;
export declare function managedZeros<D extends DType>(shape: Shape, dtype: D, options?: ManagedOptions): ArrayOf<D>;
export declare function managedEmptyLike<T extends TypedArray>(array: T, options?: ManagedOptions): T;
export declare function managedZerosLike<T extends TypedArray>(array: T, options?: ManagedOptions): T;
/** Page-locks array's memory (page-aligned); returns a new array over the same memory. */
export declare function registerHostMemory<T extends ArrayBufferView>(array: T, flags?: number): T;
/** The allocation behind an array made by the functions above, or undefined. */
export declare function hostAllocationOf(array: ArrayBufferView | ArrayBuffer):
  PagelockedHostAllocation | AlignedHostAllocation | ManagedAllocation | RegisteredHostMemory | undefined;
