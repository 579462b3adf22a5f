// Type declarations for cudadrv's memory: device memory, copies and memsets, the 2D/3D copy
// descriptors, the driver's memory pools, IPC memory, and host memory as TypedArrays.
import type { Context, Device, Stream } from './index';
import type { CudaArray } from './array';

// ---- shapes, dtypes, buffers, pointers ----

/** The TypedArray each dtype name stands for. */
export interface DTypeArrays {
  /** 8-bit signed integers. */
  int8: Int8Array;
  /** 8-bit unsigned integers. */
  uint8: Uint8Array;
  /** 8-bit unsigned integers, clamped on assignment. */
  uint8clamped: Uint8ClampedArray;
  /** 16-bit signed integers. */
  int16: Int16Array;
  /** 16-bit unsigned integers. */
  uint16: Uint16Array;
  /** 32-bit signed integers. */
  int32: Int32Array;
  /** 32-bit unsigned integers. */
  uint32: Uint32Array;
  /** 32-bit floats (C float). */
  float32: Float32Array;
  /** 64-bit floats (C double). */
  float64: Float64Array;
  /** 64-bit signed integers, as bigint. */
  int64: BigInt64Array;
  /** 64-bit unsigned integers, as bigint. */
  uint64: BigUint64Array;
  /** Where the runtime has Float16Array. */
  float16: ArrayBufferView;
}
/** Every TypedArray class's instances. */
export type TypedArray =
  | Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array
  | Uint32Array | Float32Array | Float64Array | BigInt64Array | BigUint64Array;
/** Every TypedArray class. */
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
  | {
      /** The device address. */
      getPointer(): bigint | number;
      /** Bytes, where known: copies are checked against it. */
      readonly size?: number;
    }
  | {
      /** The device address. */
      readonly ptr: bigint;
      /** Bytes, where known: copies are checked against it. */
      readonly size?: number;
    };

// ---- device memory ----

/** Base class for objects that stand for device memory: implement getPointer(). */
export declare class PointerHolderBase {
  /** The device address: what a subclass implements. */
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
  /** The device address, as `ptr`. */
  getPointer(): bigint;
  /** A view of size bytes at offset that keeps this memory alive; copies through it are bounds-checked. */
  slice(offset?: number | bigint, size?: number | bigint): DeviceAllocation;
  /** Frees now (memory from memAllocAsync: in stream order, on stream). A slice lets its parent go. */
  free(stream?: Stream | null): void;
  /** `using`: frees the memory. */
  [Symbol.dispose](): void;
}

/** Another process's device memory, opened from memGetIpcHandle()'s Buffer. */
export declare class IPCMemoryHandle extends DeviceAllocation {
  /** Opens another process's memory; flags: IpcMemFlags (LAZY_ENABLE_PEER_ACCESS). */
  constructor(handle: Uint8Array, flags?: number);
  /** Closes the handle (cuIpcCloseMemHandle); the memory stays the other process's. */
  close(): void;
}

/** The current context's device memory, free and total bytes. */
export declare function memGetInfo(): {
  /** Bytes free. */
  free: number;
  /** Bytes in all. */
  total: number;
};
/**
 * Device memory; on out-of-memory, collects garbage once and retries, then throws MemoryError.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context, current
 * const a = cuda.memAlloc(4 * 1024);                 // a DeviceAllocation of 4 KiB
 * cuda.memsetD32(a, 0x3f800000, 1024);               // 1024 floats of 1.0
 * console.log(cuda.fromDevice(a, [1024], 'float32')[0]); // 1
 * a.free();                                          // or let the garbage collector do it
 * ```
 */
export declare function memAlloc(bytes: number | bigint): DeviceAllocation;
/**
 * 2D device memory whose rows are padded to pitch bytes for aligned access by elements of
 * accessSize bytes.
 */
export declare function memAllocPitch(widthInBytes: number, height: number, accessSize?: 4 | 8 | 16):
  {
    /** The memory, height rows of pitch bytes. */
    allocation: DeviceAllocation;
    /** Bytes from one row to the next. */
    pitch: number;
  };
/** Stream-ordered device memory (cuMemAllocAsync), from the current pool or `pool`. */
export declare function memAllocAsync(bytes: number | bigint, stream?: Stream | null,
  options?: { pool?: import('./pools').MemoryPool | null }): DeviceAllocation;
/** A 64-byte Buffer that another process opens with new IPCMemoryHandle(). */
export declare function memGetIpcHandle(pointer: DevicePointerLike): Buffer;

/**
 * New device memory holding a copy of array (PyCUDA's to_device).
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context, current
 * const onDevice = cuda.toDevice(Float64Array.from([1, 2, 3])); // allocated and copied
 * console.log(cuda.fromDevice(onDevice, [3], 'float64'));    // Float64Array(3) [1, 2, 3]
 * ```
 */
export declare function toDevice(array: HostBuffer): DeviceAllocation;
/** A new array of shape and dtype, copied from device memory (PyCUDA's from_device). */
export declare function fromDevice<D extends DType>(pointer: DevicePointerLike, shape: Shape, dtype: D): ArrayOf<D>;
/** A new array like array, copied from device memory. */
export declare function fromDeviceLike<T extends TypedArray>(pointer: DevicePointerLike, array: T): T;

// ---- copies and memsets ----

/** Copies all of src to device memory dest, checked against dest's size where known. From
 * pageable memory of pageableStaging().threshold bytes or more, through cudadrv's staging, which
 * returns when the bytes are there; below it, as cuMemcpyHtoD, once src has been read: the bytes
 * may still be landing, on the legacy default stream, which a NON_BLOCKING stream does not wait
 * for (use memcpyHtoDAsync on that stream, or synchronize first).
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context, current
 * const data = Float32Array.from({ length: 1024 }, Math.random);
 * const device = cuda.memAlloc(data.byteLength);
 * cuda.memcpyHtoD(device, data);      // ordered on the legacy default stream
 * const back = new Float32Array(1024);
 * cuda.memcpyDtoH(back, device);      // and when they are back
 * console.log(back.every((x, i) => x === data[i])); // true
 * ```
 */
export declare function memcpyHtoD(dest: DevicePointerLike, src: HostBuffer): void;
/** Fills all of dest from device memory src, checked against src's size where known. Into
 * pageable memory of pageableStaging().threshold bytes or more, through cudadrv's staging. */
export declare function memcpyDtoH(dest: HostBuffer, src: DevicePointerLike): void;
/** How copies of pageable host memory (an ordinary TypedArray) are staged. */
export interface PageableStaging {
  /** Whether copies are staged at all (true by default). */
  enabled: boolean;
  /** The least bytes a copy has to be staged (16 MiB by default: below, the driver's own path was
   * as fast on an H100 host). */
  threshold: number;
  /** The bytes of each of the two page-locked buffers (16 MiB by default; 4096 to 2**28). */
  bufferBytes: number;
  /** Threads that copy beside the calling one (the cores less one, at most 7, by default; at
   * most 15). */
  helpers: number;
  /** Milliseconds after the last staged copy that the buffers are freed (10000 by default); each
   * thread's own (the others are the process's). */
  idleMs: number;
}
/**
 * The settings of staged copies; given some of them, changes those and returns all. A copy of
 * `threshold` bytes or more between device memory (or an array) and pageable host memory goes
 * through two page-locked buffers of cudadrv's own: helper threads fill one while the copy engine
 * moves the other, which beats the driver's own pageable path. That is memcpyHtoD, memcpyDtoH,
 * their Async forms, toDevice, fromDevice, the In, Out and InOut arguments of a kernel call, and
 * Memcpy2D and Memcpy3D with a host side. The copies keep the driver's meaning, but for a
 * synchronous one, which returns when the bytes are there (the driver's to the device returns once
 * the TypedArray has been read, the bytes still landing on the legacy stream); an async one to the
 * device returns once the TypedArray has been read (its transfers queued on the stream), and one
 * from the device when the bytes are there, as the driver does for pageable memory. In a stream capture, on a stream of another
 * context than the current one, or while another stream's async copy still moves through the
 * buffers, a copy takes the driver's path. The buffers are freed `idleMs` after the last staged
 * copy.
 */
export declare function pageableStaging(settings?: Partial<PageableStaging>): PageableStaging;
/**
 * memcpyHtoD on stream; from pageable memory the driver stages the copy, so page-locked memory is
 * the asynchronous case. In a stream capture, src must be page-locked or managed memory (whose
 * free() the graph then refuses); pageable memory is a LogicError there, as for every async copy.
 */
export declare function memcpyHtoDAsync(dest: DevicePointerLike, src: HostBuffer, stream?: Stream | null): void;
/** memcpyDtoH on stream; dest must stay untouched until the stream has passed the copy. In a
 * stream capture, dest must be page-locked or managed memory. */
export declare function memcpyDtoHAsync(dest: HostBuffer, src: DevicePointerLike, stream?: Stream | null): void;
/** size defaults to all of src where its size is known. On the legacy default stream, as
 * cuMemcpyDtoD: it may return before the copy is done (see memsetD8). */
export declare function memcpyDtoD(dest: DevicePointerLike, src: DevicePointerLike, size?: number | bigint): void;
/** memcpyDtoD on stream. */
export declare function memcpyDtoDAsync(dest: DevicePointerLike, src: DevicePointerLike,
  size?: number | bigint, stream?: Stream | null): void;
/** Contexts default to the current one. */
export declare function memcpyPeer(dest: DevicePointerLike, src: DevicePointerLike, size?: number | bigint,
  destContext?: Context | null, srcContext?: Context | null): void;
/** memcpyPeer on stream. */
export declare function memcpyPeerAsync(dest: DevicePointerLike, src: DevicePointerLike, size?: number | bigint,
  destContext?: Context | null, srcContext?: Context | null, stream?: Stream | null): void;

/** Sets count bytes at dest to value, on the legacy default stream, as cuMemsetD8: it may return
 * before the bytes are set, and a NON_BLOCKING stream does not wait for it (memsetD8Async on that
 * stream does; so do memsetD16 and memsetD32). */
export declare function memsetD8(dest: DevicePointerLike, value: number, count: number | bigint): void;
/** Sets count 16-bit words at dest to value. */
export declare function memsetD16(dest: DevicePointerLike, value: number, count: number | bigint): void;
/**
 * Sets count 32-bit words at dest to value (a float's bits through a Float32Array/Uint32Array
 * pair).
 */
export declare function memsetD32(dest: DevicePointerLike, value: number, count: number | bigint): void;
/** memsetD8 on stream. */
export declare function memsetD8Async(dest: DevicePointerLike, value: number, count: number | bigint, stream?: Stream | null): void;
/** memsetD16 on stream. */
export declare function memsetD16Async(dest: DevicePointerLike, value: number, count: number | bigint, stream?: Stream | null): void;
/** memsetD32 on stream. */
export declare function memsetD32Async(dest: DevicePointerLike, value: number, count: number | bigint, stream?: Stream | null): void;
/** Sets width bytes of height rows, pitch bytes apart, to value. */
export declare function memsetD2D8(dest: DevicePointerLike, pitch: number, value: number, width: number, height: number): void;
/** Sets width 16-bit words of height rows, pitch bytes apart, to value. */
export declare function memsetD2D16(dest: DevicePointerLike, pitch: number, value: number, width: number, height: number): void;
/** Sets width 32-bit words of height rows, pitch bytes apart, to value. */
export declare function memsetD2D32(dest: DevicePointerLike, pitch: number, value: number, width: number, height: number): void;
/** memsetD2D8 on stream. */
export declare function memsetD2D8Async(dest: DevicePointerLike, pitch: number, value: number, width: number,
  height: number, stream?: Stream | null): void;
/** memsetD2D16 on stream. */
export declare function memsetD2D16Async(dest: DevicePointerLike, pitch: number, value: number, width: number,
  height: number, stream?: Stream | null): void;
/** memsetD2D32 on stream. */
export declare function memsetD2D32Async(dest: DevicePointerLike, pitch: number, value: number, width: number,
  height: number, stream?: Stream | null): void;

/** A 2D copy: set both sides and the extent, then run() or run(stream). */
export declare class Memcpy2D {
  /** An empty descriptor. */
  constructor();
  /** Where the copy starts in a source row, in bytes. */
  srcXInBytes: number;
  /** The source row it starts at. */
  srcY: number;
  /** Bytes from one source row to the next. */
  srcPitch: number;
  /** The source's MemoryType, set by the setSrc methods. */
  readonly srcMemoryType: number;
  /** The host buffer of a host source, else null. */
  readonly srcHost: ArrayBufferView | null;
  /** The device address of a device source, else 0n. */
  readonly srcDevice: bigint;
  /** Where the copy starts in a destination row, in bytes. */
  dstXInBytes: number;
  /** The destination row it starts at. */
  dstY: number;
  /** Bytes from one destination row to the next. */
  dstPitch: number;
  /** The destination's MemoryType, set by the setDst methods. */
  readonly dstMemoryType: number;
  /** The host buffer of a host destination, else null. */
  readonly dstHost: ArrayBufferView | null;
  /** The device address of a device destination, else 0n. */
  readonly dstDevice: bigint;
  /** Bytes copied per row. */
  widthInBytes: number;
  /** Rows copied. */
  height: number;
  /** The CudaArray of an array side, else null. */
  readonly srcArray: CudaArray | null;
  /** The CudaArray of an array destination, else null. */
  readonly dstArray: CudaArray | null;
  /** The source is host memory (checked against the extent at run()). */
  setSrcHost(buffer: HostBuffer): void;
  /** The source is device memory. */
  setSrcDevice(pointer: DevicePointerLike): void;
  /** The source is a CudaArray. */
  setSrcArray(array: CudaArray): void;
  /** The destination is a CudaArray. */
  setDstArray(array: CudaArray): void;
  /** A managed array, or a device pointer. */
  setSrcUnified(memory: HostBuffer | DevicePointerLike): void;
  /** The destination is host memory. */
  setDstHost(buffer: HostBuffer): void;
  /** The destination is device memory. */
  setDstDevice(pointer: DevicePointerLike): void;
  /** A managed array, or a device pointer. */
  setDstUnified(memory: HostBuffer | DevicePointerLike): void;
  /** Copies now (2D and aligned: cuMemcpy2D, else cuMemcpy2DUnaligned), or enqueues on stream. */
  run(options?: { aligned?: boolean }): void;
  /** Enqueues the copy on stream (cuMemcpy2DAsync). */
  run(stream: Stream | null): void;
}

/** A 3D copy: Memcpy2D's fields, plus depth and the z of each side. */
export declare class Memcpy3D extends Memcpy2D {
  /** The source slice it starts at. */
  srcZ: number;
  /** The source's level of detail: 0 (the driver knows no other). */
  srcLOD: number;
  /** Rows per slice. */
  srcHeight: number;
  /** The destination slice it starts at. */
  dstZ: number;
  /** The destination's level of detail: 0. */
  dstLOD: number;
  /** Rows per destination slice. */
  dstHeight: number;
  /** Slices copied. */
  depth: number;
}

/** A 3D copy between contexts (on different devices). */
export declare class Memcpy3DPeer extends Memcpy3D {
  /** The source's context; the current one when null. */
  srcContext: Context | null;
  /** The destination's context; the current one when null. */
  dstContext: Context | null;
  /** Sets srcContext. */
  setSrcContext(context: Context): void;
  /** Sets dstContext. */
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

/** Page-locked host memory (cuMemHostAlloc), behind the arrays of pagelockedEmpty() and friends. */
export declare class PagelockedHostAllocation extends HostPointer {
  private constructor();
  /** Bytes. */
  readonly size: number;
  /** The context it was allocated in. */
  readonly context: Context | null;
  /** HostAllocFlags. */
  getFlags(): number;
  /** Releases now; its arrays read as empty afterwards. */
  free(): void;
  /** `using`: frees the memory. */
  [Symbol.dispose](): void;
}
/** PyCUDA's deprecated name. */
export declare const HostAllocation: typeof PagelockedHostAllocation;
/** PyCUDA's deprecated name. */
export type HostAllocation = PagelockedHostAllocation;

/** Host memory aligned to a power of two, behind the arrays of alignedEmpty() and friends. */
export declare class AlignedHostAllocation {
  private constructor();
  /** Bytes. */
  readonly size: number;
  /** Where the memory starts in its ArrayBuffer. */
  readonly byteOffset: number;
  /** Releases now; its arrays read as empty afterwards. */
  free(): void;
  /** `using`: frees the memory. */
  [Symbol.dispose](): void;
}

/**
 * Managed (unified) memory, addressed by host and device alike, behind the arrays of managedEmpty()
 * and friends.
 */
export declare class ManagedAllocation extends HostPointer {
  private constructor();
  /** Bytes. */
  readonly size: number;
  /** The context it was allocated in. */
  readonly context: Context | null;
  /** cuStreamAttachMemAsync with MemAttachFlags. */
  attach(flags: number, stream?: Stream | null): void;
  /** Releases now; its arrays read as empty afterwards. */
  free(): void;
  /** `using`: frees the memory. */
  [Symbol.dispose](): void;
}

/** Memory page-locked by registerHostMemory(). */
export declare class RegisteredHostMemory extends HostPointer {
  private constructor();
  /** The array that was registered. */
  readonly base: ArrayBufferView;
  /** Bytes. */
  readonly size: number;
  /** The context it was registered in. */
  readonly context: Context | null;
  /** MemHostRegisterFlags. */
  getFlags(): number;
  /** Unregisters now; the array stays usable as ordinary memory. */
  unregister(): void;
  /** `using`: unregisters. */
  [Symbol.dispose](): void;
}

/** Options of the pagelocked functions. */
export interface PagelockedOptions {
  /** HostAllocFlags. */
  flags?: number;
}
/** Options of the aligned functions. */
export interface AlignedOptions {
  /** A power of two; 4096 by default. */
  alignment?: number;
}
/** Options of the managed functions. */
export interface ManagedOptions {
  /** MemAttachFlags.GLOBAL (default) or HOST. */
  flags?: number;
}

/**
 * A page-locked array of shape and dtype, its contents undefined.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context, current
 * const pinned = cuda.pagelockedEmpty([512, 512], 'float32'); // a Float32Array of page-locked memory
 * pinned.fill(0.5);
 * const device = cuda.memAlloc(pinned.byteLength);
 * const stream = new cuda.Stream();
 * cuda.memcpyHtoDAsync(device, pinned, stream); // truly asynchronous from page-locked memory
 * stream.synchronizeSync();
 * ```
 */
export declare function pagelockedEmpty<D extends DType>(shape: Shape, dtype: D, options?: PagelockedOptions): ArrayOf<D>;
/** A page-locked array of shape and dtype, zeroed. */
export declare function pagelockedZeros<D extends DType>(shape: Shape, dtype: D, options?: PagelockedOptions): ArrayOf<D>;
/** A page-locked array like array (its length and type), contents undefined. */
export declare function pagelockedEmptyLike<T extends TypedArray>(array: T, options?: PagelockedOptions): T;
/** A page-locked array like array, zeroed. */
export declare function pagelockedZerosLike<T extends TypedArray>(array: T, options?: PagelockedOptions): T;
/** An aligned array of shape and dtype, contents undefined. */
export declare function alignedEmpty<D extends DType>(shape: Shape, dtype: D, options?: AlignedOptions): ArrayOf<D>;
/** An aligned array of shape and dtype, zeroed. */
export declare function alignedZeros<D extends DType>(shape: Shape, dtype: D, options?: AlignedOptions): ArrayOf<D>;
/** An aligned array like array, contents undefined. */
export declare function alignedEmptyLike<T extends TypedArray>(array: T, options?: AlignedOptions): T;
/** An aligned array like array, zeroed. */
export declare function alignedZerosLike<T extends TypedArray>(array: T, options?: AlignedOptions): T;
/** A managed array of shape and dtype, contents undefined; needs a current context. */
export declare function managedEmpty<D extends DType>(shape: Shape, dtype: D, options?: ManagedOptions): ArrayOf<D>;
/** A managed array of shape and dtype, zeroed. */
export declare function managedZeros<D extends DType>(shape: Shape, dtype: D, options?: ManagedOptions): ArrayOf<D>;
/** A managed array like array, contents undefined. */
export declare function managedEmptyLike<T extends TypedArray>(array: T, options?: ManagedOptions): T;
/** A managed array like array, zeroed. */
export declare function managedZerosLike<T extends TypedArray>(array: T, options?: ManagedOptions): T;
/** Page-locks array's memory (page-aligned); returns a new array over the same memory. */
export declare function registerHostMemory<T extends ArrayBufferView>(array: T, flags?: number): T;
/** The allocation behind an array made by the functions above, or undefined. */
export declare function hostAllocationOf(array: ArrayBufferView | ArrayBuffer):
  PagelockedHostAllocation | AlignedHostAllocation | ManagedAllocation | RegisteredHostMemory | undefined;
