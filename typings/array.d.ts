// CUDA arrays, the copies into and out of them, texture and surface objects, and PyCUDA's helpers
// that turn matrices into arrays.
import type { Stream } from './index';
import type { DType, DevicePointerLike, HostBuffer, TypedArray } from './memory';

/** A 1D or 2D array's shape and element type. */
export declare class ArrayDescriptor {
  /** A descriptor with these fields (0, or 1 channel, where omitted). */
  constructor(fields?: { width?: number; height?: number; format?: number; numChannels?: number });
  /** Elements per row. */
  width: number;
  /** Rows (0 for a 1D array). */
  height: number;
  /** ArrayFormat */
  format: number;
  /** 1, 2 or 4 */
  numChannels: number;
}

/** A 1D, 2D, 3D or layered array's shape, element type and Array3DFlags. */
export declare class ArrayDescriptor3D extends ArrayDescriptor {
  /** A descriptor with these fields (0, or 1 channel, where omitted). */
  constructor(fields?: { width?: number; height?: number; depth?: number; format?: number; numChannels?: number; flags?: number });
  /** Slices, or layers (0 for 1D and 2D arrays). */
  depth: number;
  /** Array3DFlags combined (SURFACE_LDST for arrays surfaces write). */
  flags: number;
}

/** The fields a descriptor needs (an ArrayDescriptor, ArrayDescriptor3D or a plain object). */
export interface ArrayDescriptorFields {
  /** Elements per row. */
  width: number;
  /** Rows; 0 for a 1D array. */
  height?: number;
  /** Slices or layers; 0 for 1D and 2D arrays. */
  depth?: number;
  /** An ArrayFormat member. */
  format: number;
  /** Components per element: 1, 2 or 4; 1 when omitted. */
  numChannels?: number;
  /** Array3DFlags combined. */
  flags?: number;
}

/** A CUDA array (PyCUDA's Array) in the current context. */
export declare class CudaArray {
  /**
   * A new array (cuArray3DCreate) of that shape and element type; out of memory, it collects
   * garbage once and tries again, then throws MemoryError.
   */
  constructor(descriptor: ArrayDescriptorFields);
  /** The CUarray handle. */
  readonly handle: bigint;
  /** Frees now; a second call does nothing. A LogicError while a Graph, a GraphExec or a capture
   * under way copies to or from it (driver 580 crashes on a graph copying a freed array): destroy
   * those first. */
  free(): void;
  /** `using`: frees the array. */
  [Symbol.dispose](): void;
  /** A LogicError for a 3D array. */
  getDescriptor(): ArrayDescriptor;
  /** The array's shape, element type and flags. */
  getDescriptor3D(): ArrayDescriptor3D;
}

/** Copies all of src into a 1D array from byte offset index. */
export declare function memcpyHtoA(array: CudaArray, index: number, src: HostBuffer): void;
/** Fills all of dest from a 1D array, from byte offset index. */
export declare function memcpyAtoH(dest: HostBuffer, array: CudaArray, index: number): void;
/** memcpyHtoA on stream. */
export declare function memcpyHtoAAsync(array: CudaArray, index: number, src: HostBuffer, stream?: Stream | null): void;
/** memcpyAtoH on stream. */
export declare function memcpyAtoHAsync(dest: HostBuffer, array: CudaArray, index: number, stream?: Stream | null): void;
/** Copies bytes of device memory into a 1D array, from byte offset index. */
export declare function memcpyDtoA(array: CudaArray, index: number, src: DevicePointerLike, bytes: number): void;
/** Copies bytes of a 1D array, from byte offset index, into device memory. */
export declare function memcpyAtoD(dest: DevicePointerLike, array: CudaArray, index: number, bytes: number): void;
/** Copies bytes between two 1D arrays, from their byte offsets. */
export declare function memcpyAtoA(dest: CudaArray, destIndex: number, src: CudaArray, srcIndex: number, bytes: number): void;

/** What a texture object reads. */
export type TextureResource =
  | CudaArray
  | {
      /** Linear device memory. */
      linear: DevicePointerLike;
      /** An ArrayFormat member. */
      format: number;
      /** Components per element: 1, 2 or 4; 1 when omitted. */
      numChannels?: number;
      /** Bytes read; the memory's size when omitted. */
      bytes?: number;
    }
  | {
      /** 2D device memory of pitch bytes per row, within one allocation. */
      pitch2D: DevicePointerLike;
      /** An ArrayFormat member: a plain, UNORM_/SNORM_ or UNORM_INT_101010_2 one (a RangeError for
       * block-compressed and video formats, which a CudaArray holds). */
      format: number;
      /** Components per element: 1, 2 or 4; 1 when omitted. */
      numChannels?: number;
      /** Elements per row. */
      width: number;
      /** Rows. */
      height: number;
      /** Bytes from one row to the next. */
      pitch: number;
    };

/** What TextureReference's setters set, given once: a texture object cannot change. */
export interface TextureOptions {
  /** One AddressMode, or one per dimension (CLAMP by default). */
  addressMode?: number | readonly number[];
  /** FilterMode (POINT by default). */
  filterMode?: number;
  /** TRSF_READ_AS_INTEGER, TRSF_NORMALIZED_COORDINATES... combined. */
  flags?: number;
  /** RGBA for AddressMode.BORDER. */
  borderColor?: readonly number[] | Float32Array;
  /** The most anisotropic filtering samples (1 to 16). */
  maxAnisotropy?: number;
}

/** A texture object, passed to kernels as a cudaTextureObject_t argument; keeps its resource alive. */
export declare class TextureObject {
  constructor(resource: TextureResource, options?: TextureOptions);
  /** The CUtexObject; a LogicError once destroyed. */
  readonly handle: bigint;
  /** What it reads (null once destroyed). */
  readonly resource: TextureResource | null;
  /** Destroys now (kernels using it must have finished); a second call does nothing. */
  destroy(): void;
  /** `using`: destroys the texture object. */
  [Symbol.dispose](): void;
}

/** A surface object over a CudaArray made with Array3DFlags.SURFACE_LDST, passed to kernels as a
 * cudaSurfaceObject_t argument. */
export declare class SurfaceObject {
  constructor(array: CudaArray);
  /** The CUsurfObject; a LogicError once destroyed. */
  readonly handle: bigint;
  /** The array it writes (null once destroyed). */
  readonly resource: CudaArray | null;
  /** Destroys now (kernels using it must have finished); a second call does nothing. */
  destroy(): void;
  /** `using`: destroys the surface object. */
  [Symbol.dispose](): void;
}

/** Row-major ('C', as in C) or column-major ('F', as in Fortran). */
export type MatrixOrder = 'C' | 'F';

/** How toArray() and deviceToArray() read and lay out the values. */
export interface ToArrayOptions {
  /** The host array's order; 'C' by default. */
  order?: MatrixOrder;
  /** Makes the array writable through surfaces (a 2D matrix becomes one layer of a layered array). */
  allowSurfaceBind?: boolean;
  /** The values are (re, im) pairs; shape counts pairs. */
  complex?: boolean;
}

/** A 2D array of a host matrix: shape [rows, columns] in 'C' order, [columns, rows] in 'F'. */
export declare function matrixToArray(typedArray: TypedArray, shape: readonly [number, number], order?: MatrixOrder): CudaArray;
/** A 2D or 3D array of a host array (PyCUDA's np_to_array). */
export declare function toArray(typedArray: TypedArray, shape: readonly number[], options?: ToArrayOptions): CudaArray;
/** toArray for values in device memory (PyCUDA's gpuarray_to_array). */
export declare function deviceToArray(ptr: DevicePointerLike, shape: readonly number[], dtype: DType, options?: ToArrayOptions): CudaArray;
/** A 2D array of 1, 2 or 4 channels: shape [rows, columns, channels] in 'C' order. */
export declare function makeMultichannel2DArray(typedArray: TypedArray, shape: readonly [number, number, number], order?: MatrixOrder): CudaArray;

/** PyCUDA's top-level texture constants (TextureArrayFlags / TextureFlags members, and the
 * deprecated launch API's default texture reference). */
export declare const TRSA_OVERRIDE_FORMAT: number;
/** TextureFlags.READ_AS_INTEGER. */
export declare const TRSF_READ_AS_INTEGER: number;
/** TextureFlags.NORMALIZED_COORDINATES. */
export declare const TRSF_NORMALIZED_COORDINATES: number;
/** The deprecated launch API's default texture reference index (-1). */
export declare const TR_DEFAULT: number;
