// Modules and kernels: loading code, launching it, texture and surface references.
import type { Context, Event, Stream, WaitOptions } from './index';
import type { DevicePointerLike } from './memory';
import type { CudaArray, SurfaceObject, TextureObject } from './array';
import type { FunctionAttributeGetters } from './constants';

/** Grid or block dimensions: a number, or 1 to 3 positive integers. */
export type Dim3 = number | readonly [number] | readonly [number, number] | readonly [number, number, number];

/** JIT options: [[JitOption.X, value], ...] or { X: value } (UPPER_CASE or camelCase names). */
export type JitOptions = ReadonlyArray<readonly [number | string, number | boolean]> | Readonly<Record<string, number | boolean>>;

/** How a Module is loaded. */
export interface ModuleOptions {
  /** The JIT's options, for PTX. */
  options?: JitOptions;
  /** Receives the JIT logs after the load, whether it succeeded or not. */
  messageHandler?: (success: boolean, infoLog: string, errorLog: string) => void;
  /** The CUDA C++ source the image came from: its `__global__` signatures let kernels take bare
   * numbers. */
  source?: string;
}

/** A global variable of a module (`__device__`, `__constant__`), usable as device memory. */
export interface ModuleGlobal {
  /** The variable's device address. */
  readonly ptr: bigint;
  /** Its size in bytes. */
  readonly size: number;
  /** The module it belongs to (kept alive by it). */
  readonly module: Module;
}

/** A variable of a library (`__device__`, `__constant__`, `__managed__`), usable as device memory. */
export interface LibraryVariable {
  /** The variable's device address (a global's: in the context current when it was asked for). */
  readonly ptr: bigint;
  /** Its size in bytes. */
  readonly size: number;
  /** The library it belongs to (kept alive by it). */
  readonly library: Library;
}

/**
 * Code loaded once for every context (cuLibraryLoadData, CUDA 12.0+): PTX (Buffer or string),
 * cubin or fatbin. No context is needed to load it; its kernels launch in whichever context is
 * current.
 */
export declare class Library {
  /**
   * Loads image for every context; a RuntimeError with the JIT's log where it does not load.
   * Out of memory, it collects garbage once and tries again.
   */
  constructor(image: ArrayBufferView | ArrayBuffer | SharedArrayBuffer | string, options?: ModuleOptions);
  /** The kernel `name` (the same object for the same name): each call, method and attribute uses
   * the current context's function (cuKernelGetFunction, once per context). A prepared format is
   * per context: prepare() in each context that makes prepared calls. */
  getKernel(name: string): Kernel;
  /** PyCUDA's name for getKernel. */
  getFunction(name: string): Kernel;
  /** The global `name` in the current context. */
  getGlobal(name: string): LibraryVariable;
  /** The `__managed__` variable `name` (one address for every context). */
  getManaged(name: string): LibraryVariable;
  /** The names of every kernel of the library, as getKernel() takes them (CUDA 12.4+). */
  kernelNames(): string[];
  /** Unloads the library from every context now; its kernels and variables become unusable.
   * LogicError while a Graph, a GraphExec or a capture under way has kernel nodes of it. */
  unload(): void;
  /** unload(). */
  [Symbol.dispose](): void;
}
/** `new Library(image, { options, messageHandler })` (cuLibraryLoadData). */
export declare function libraryFromBuffer(
  image: ArrayBufferView | ArrayBuffer | SharedArrayBuffer | string,
  options?: ModuleOptions,
): Library;
/** Loads the PTX, cubin or fatbin file at path for every context (cuLibraryLoadFromFile); out of
 * memory, it collects garbage once and tries again. */
export declare function libraryFromFile(path: string): Library;

/**
 * Code loaded into the current context: PTX (Buffer or string), cubin or fatbin.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context, current
 * const { compileSync } = require('cudadrv/compiler');
 * const image = compileSync('extern "C" __global__ void zero(int *p) { p[threadIdx.x] = 0; }');
 * const mod = cuda.moduleFromBuffer(image); // or cuda.moduleFromFile('kernels.cubin')
 * const zero = mod.getFunction('zero');
 * zero(cuda.memAlloc(4 * 32), { block: 32 });
 * mod.free();
 * ```
 */
export declare class Module {
  /**
   * Loads image into the current context (cuModuleLoadDataEx); a RuntimeError with the JIT's log
   * where it does not load. Out of memory, it collects garbage once and tries again.
   */
  constructor(image: ArrayBufferView | ArrayBuffer | SharedArrayBuffer | string, options?: ModuleOptions);
  /** The Context the module was loaded in. */
  readonly context: Context;
  /** The kernel of that name (`extern "C"`, or the mangled name); one Kernel per name. */
  getFunction(name: string): Kernel;
  /** The `__device__` or `__constant__` variable of that name. */
  getGlobal(name: string): ModuleGlobal;
  /** The texture reference of that name. */
  getTexref(name: string): TextureReference;
  /** The surface reference of that name. */
  getSurfref(name: string): SurfaceReference;
  /** Unloads now; its kernels, globals and references become unusable. LogicError while a Graph,
   * a GraphExec or a capture under way (from the kernel's captured launch on) has kernel nodes of it. */
  free(): void;
  /** `using`: unloads the module. */
  [Symbol.dispose](): void;
}

/** cuModuleLoad: a PTX, cubin or fatbin file, into the current context; out of memory, it
 * collects garbage once and tries again. */
export declare function moduleFromFile(path: string): Module;
/** PyCUDA's module_from_buffer: `new Module(image, { options, messageHandler })`. */
export declare function moduleFromBuffer(
  image: ArrayBufferView | ArrayBuffer | SharedArrayBuffer | string,
  options?: Pick<ModuleOptions, 'options' | 'messageHandler'>,
): Module;

// ---- kernel arguments ----

/** A value with its C type, from cuda.int32(5), cuda.float32(x), cuda.uint64(1n), ... */
export declare class TypedScalar {
  private constructor();
  /** 'int8' ... 'uint64', 'float16', 'float32', 'float64', 'bool', 'pointer'. */
  readonly type: string;
  /** The struct format character: 'b', 'B', 'h', 'H', 'i', 'I', 'q', 'Q', 'e', 'f', 'd', '?', 'P'. */
  readonly format: string;
  /** The value, as given. */
  readonly value: number | bigint | boolean;
  /** The value, so that scalars compare and add as their values. */
  valueOf(): number | bigint | boolean;
}

/** A C `signed char` argument. */
export declare function int8(value: number): TypedScalar;
/** A C `unsigned char` argument. */
export declare function uint8(value: number): TypedScalar;
/** A C `short` argument. */
export declare function int16(value: number): TypedScalar;
/** A C `unsigned short` argument. */
export declare function uint16(value: number): TypedScalar;
/** A C `int` argument. */
export declare function int32(value: number): TypedScalar;
/** A C `unsigned int` argument. */
export declare function uint32(value: number): TypedScalar;
/** A C `long long` argument. */
export declare function int64(value: bigint | number): TypedScalar;
/** A C `unsigned long long` argument. */
export declare function uint64(value: bigint | number): TypedScalar;
/** A CUDA `__half` argument (rounded to nearest even). */
export declare function float16(value: number): TypedScalar;
/** A C `float` argument. */
export declare function float32(value: number): TypedScalar;
/** A C `double` argument. */
export declare function float64(value: number): TypedScalar;
/** A C++ `bool` argument. */
export declare function bool(value: boolean | 0 | 1): TypedScalar;
/** A device address as an argument (the memory is kept alive). */
export declare function pointer(value: DevicePointerLike): TypedScalar;

/** Base of In, Out and InOut: host memory copied around a launch. */
export declare class ArgumentHandler {
  /** Wraps array for one call. */
  constructor(array: ArrayBufferView);
  /** The host array copied. */
  readonly array: ArrayBufferView;
}
/** In, Out and InOut: classes that also work without `new`, as in `cuda.In(a)`. */
export interface HandlerClass<T> {
  /** Wraps array for one call. */
  new (array: ArrayBufferView): T;
  /** The same, without `new`. */
  (array: ArrayBufferView): T;
}
/** Copied to the device before the launch. */
export interface In extends ArgumentHandler {}
/** Copied back from the device after the launch. */
export interface Out extends ArgumentHandler {}
/** Copied to the device before the launch, and back after. */
export interface InOut extends ArgumentHandler {}
/** Copies array to the device before the launch. */
export declare const In: HandlerClass<In>;
/** Copies the device's data into array after the launch. */
export declare const Out: HandlerClass<Out>;
/** Copies array to the device before the launch, and back after. */
export declare const InOut: HandlerClass<InOut>;

/** What a kernel call takes: typed scalars, device memory, In/Out/InOut, TypedArrays copied
 * verbatim (structs, vector types), booleans; bare numbers only where the signature is known. */
export type KernelArgument = TypedScalar | ArgumentHandler | DevicePointerLike | ArrayBufferView | boolean | TextureObject | SurfaceObject | TensorMap;

/** A launch configuration for the cluster occupancy queries. */
export interface ClusterOccupancyConfig {
  /** Blocks in the grid; 1 when omitted. */
  grid?: Dim3;
  /** Threads per block. */
  block: Dim3;
  /** Dynamic shared memory per block, in bytes. */
  shared?: number;
  /** The cluster shape; may be left out where the kernel fixes its own (`__cluster_dims__`). */
  cluster?: Dim3;
}

/** The event of a programmatic launch attribute, with when it fires. */
export interface ProgrammaticEventOption {
  /** An Event made with EventFlags.DISABLE_TIMING. */
  event: Event;
  /** Each block triggers the event as it starts, instead of where it calls
   * `cudaTriggerProgrammaticLaunchCompletion()`. */
  triggerAtBlockStart?: boolean;
}

/**
 * Launch attributes (cuLaunchKernelEx), for calls and prepared calls alike. A launch with none of
 * them goes through cuLaunchKernel. Those newer than CUDA 12.0 are a RuntimeError naming the driver
 * they need where it is older.
 */
export interface LaunchAttributes {
  /** Thread block clusters of this shape (compute capability 9.0+); it must divide the grid. */
  cluster?: Dim3;
  /** A cooperative launch: the whole grid is resident at once and can synchronize
   * (cooperative_groups' `this_grid().sync()`). */
  cooperative?: boolean;
  /** The kernel's priority over other work (lower numbers are higher priority; the device's range
   * is `Context.getStreamPriorityRange()`). */
  priority?: number;
  /** A larger cluster shape the driver may use where it fits (a multiple of `cluster`, which must
   * be given; CUDA 12.8+). */
  preferredCluster?: Dim3;
  /** How clusters are spread over the GPU's processing clusters. */
  clusterSchedulingPolicy?: 'default' | 'spread' | 'load-balancing';
  /** The memory synchronization domain of the kernel's fences: 'remote' for kernels that talk to
   * other GPUs, so that their fences do not wait for local traffic. */
  memSyncDomain?: 'default' | 'remote';
  /** The preferred shared memory carveout, in percent of the most shared memory (0 to 100; leave
   * it out for the kernel's own setting: the driver refuses -1 here) (CUDA 12.4+). */
  sharedMemoryCarveout?: number;
  /** Programmatic dependent launch: this kernel may start before the previous kernel in the stream
   * ends, and waits for it with `cudaGridDependencySynchronize()` (compute capability 9.0+). */
  programmaticStreamSerialization?: boolean;
  /** An event recorded once every block of the kernel has triggered it (or started, with
   * triggerAtBlockStart): other streams can wait for it before the kernel ends. */
  programmaticEvent?: Event | ProgrammaticEventOption;
  /** An event recorded once every block of the kernel has started (CUDA 12.3+); an Event made with
   * EventFlags.DISABLE_TIMING. */
  completionEvent?: Event;
}

export interface LaunchOptions extends LaunchAttributes {
  /** Threads per block: required. */
  block: Dim3;
  /** Blocks in the grid; 1 when omitted. */
  grid?: Dim3;
  /** The stream to launch on; the default stream when omitted or null. */
  stream?: Stream | null;
  /** Dynamic shared memory, in bytes. */
  shared?: number;
  /** The call returns a Promise of the kernel's time in seconds. */
  timeKernel?: boolean;
  /** Accepted: the driver binds a module's texture references at launch by itself. */
  texrefs?: TextureReference[];
  /** An AbortSignal: already aborted, the call launches nothing and throws an AbortError; aborted
   * later, a call's Promise (In/Out arguments, timeKernel) rejects at once with an AbortError, the
   * kernel runs on, and Out data not yet copied back is not. */
  signal?: AbortSignal;
}

/** The optional last argument of a prepared call. */
export interface PreparedOptions extends LaunchAttributes {
  /** Dynamic shared memory, in bytes. */
  shared?: number;
}

/** What a prepared call takes per argument, and its optional last PreparedOptions. */
export type PreparedArgument = number | bigint | boolean | TypedScalar | DevicePointerLike | ArrayBufferView | TextureObject | SurfaceObject | TensorMap | PreparedOptions | undefined;

/** The bytes of a parameter list as cudadrv lays it out (C alignment). */
export declare function packArguments(args: readonly KernelArgument[]): Buffer;
export declare function packArguments(format: string | ReadonlyArray<string | Function>, values: readonly unknown[]): Buffer;

export interface Kernel extends FunctionAttributeGetters {
  /** Launches; with timeKernel, a Promise of the kernel's time in seconds. */
  (...args: [...KernelArgument[], LaunchOptions & { timeKernel: true }]): Promise<number>;
  /** Launches; with In/Out/InOut arguments, a Promise that resolves once the Out data is back. */
  (...args: [...KernelArgument[], LaunchOptions]): void | Promise<void>;
}

/**
 * A kernel (PyCUDA's Function), from module.getFunction(name); callable.
 * @example
 * ```js
 * import cuda from 'cudadrv';
 * import 'cudadrv/autoprimaryctx'; // device 0's primary context, current
 * import { SourceModule } from 'cudadrv/compiler';
 * const add = new SourceModule(`
 *   __global__ void add(float *x, float a, int n) {
 *     int i = blockIdx.x * blockDim.x + threadIdx.x;
 *     if (i < n) x[i] += a;
 *   }`).getFunction('add');
 * const x = new Float32Array(1000).fill(1);
 * // the signature is known, so plain numbers work; InOut copies x there and back
 * await add(cuda.InOut(x), 0.5, x.length, { block: 256, grid: 4 });
 * console.log(x[999]); // 1.5
 * ```
 */
export declare class Kernel {
  private constructor();
  /** The kernel's name. */
  readonly name: string;
  /** The module (or library) the kernel belongs to (kept alive by it). */
  readonly module: Module | Library;
  /** The driver's layout of the kernel's parameters, or null where it cannot tell. */
  paramInfo(): Array<{
    /** Where the parameter starts in the parameter buffer, in bytes. */
    offset: number;
    /** Its size in bytes. */
    size: number;
  }> | null;
  /** Fixes the argument types: 'PPi', ['float32', 'P'], ...; returns the kernel. */
  prepare(format: string | ReadonlyArray<string | Function>, options?: { texrefs?: TextureReference[] }): this;
  /** preparedCall(grid, block, ...args, { shared, cluster, cooperative }?) */
  preparedCall(grid: Dim3, block: Dim3, ...args: PreparedArgument[]): void;
  /** preparedAsyncCall(grid, block, stream, ...args, { shared, cluster, cooperative }?) */
  preparedAsyncCall(grid: Dim3, block: Dim3, stream: Stream | null, ...args: PreparedArgument[]): void;
  /** preparedTimedCall(grid, block, ...args, { shared, cluster, cooperative }?): a function giving a
   * Promise of seconds, which takes `{ signal }` as every wait does. */
  preparedTimedCall(grid: Dim3, block: Dim3, ...args: PreparedArgument[]): (options?: WaitOptions) => Promise<number>;
  /** cuFuncGetAttribute: a FunctionAttribute of the kernel. */
  getAttribute(attribute: number): number;
  /**
   * cuFuncSetAttribute: sets a FunctionAttribute (maxDynamicSharedSizeBytes,
   * preferredSharedMemoryCarveout...).
   */
  setAttribute(attribute: number, value: number): void;
  /** The kernel's preferred L1/shared split: a FuncCache member. */
  setCacheConfig(config: number): void;
  /** The kernel's shared memory bank size: a SharedConfig member. */
  setSharedConfig(config: number): void;
  /**
   * How many blocks of blockSize threads (and dynamicSmem bytes of shared memory) fit on one
   * multiprocessor at once.
   */
  maxActiveBlocksPerMultiprocessor(blockSize: number, dynamicSmem?: number, flags?: number): number;
  /**
   * The block size that gives the most occupancy, and the smallest grid that reaches it;
   * dynamicSmem may depend on the block size.
   */
  maxPotentialBlockSize(
    dynamicSmem?: number | ((blockSize: number) => number),
    blockSizeLimit?: number,
    flags?: number,
  ): {
    /** The fewest blocks that reach the best occupancy on the whole device. */
    minGridSize: number;
    /** The block size that gives it. */
    blockSize: number;
  };
  /** The dynamic shared memory, in bytes, each block may use for numBlocks blocks of blockSize
   * threads to fit on one multiprocessor together. */
  availableDynamicSharedMemoryPerBlock(numBlocks: number, blockSize: number): number;
  /** The most clusters of this launch configuration that can be resident on the device at once
   * (compute capability 9.0+). */
  maxActiveClusters(config: ClusterOccupancyConfig): number;
  /** The largest cluster size, in blocks, the kernel can launch with for this configuration
   * (compute capability 9.0+; above 8 only with FunctionAttribute.NON_PORTABLE_CLUSTER_SIZE_ALLOWED). */
  maxPotentialClusterSize(config: Omit<ClusterOccupancyConfig, 'cluster'>): number;
  /** @deprecated pass { block } to the call */
  setBlockShape(x: number, y?: number, z?: number): void;
  /** @deprecated pass { shared } to the call */
  setSharedSize(bytes: number): void;
  /** @deprecated pass the arguments to the call */
  paramSetSize(bytes: number): void;
  /** @deprecated pass cuda.int32(value) to the call */
  paramSeti(offset: number, value: number): void;
  /** @deprecated pass cuda.float32(value) to the call */
  paramSetf(offset: number, value: number): void;
  /** @deprecated pass the arguments to the call */
  paramSet(...args: KernelArgument[]): void;
  /** @deprecated the driver binds texture references by itself */
  paramSetTexref(texref: TextureReference): void;
  /** @deprecated call the kernel */
  launch(): void;
  /** @deprecated call the kernel */
  launchGrid(width: number, height?: number): void;
  /** @deprecated call the kernel */
  launchGridAsync(width: number, height: number, stream: Stream | null): void;
}

// ---- references ----

/** { width, height, format, numChannels }: an ArrayDescriptor. */
export interface ArrayDescriptorLike {
  /** Elements per row. */
  width: number;
  /** Rows; 0 for a 1D array. */
  height: number;
  /** An ArrayFormat member. */
  format: number;
  /** Components per element: 1, 2 or 4. */
  numChannels: number;
}

/** A texture reference that a module's PTX or cubin declares, from module.getTexref(name). */
export declare class TextureReference {
  private constructor();
  /** The module the reference belongs to. */
  readonly module: Module;
  /** Binds linear memory; returns the byte offset (non-zero only with allowOffset). */
  setAddress(devptr: DevicePointerLike, bytes: number, allowOffset?: boolean): number;
  /** Binds 2D linear memory of pitch bytes per row, described by descriptor. */
  setAddress2D(devptr: DevicePointerLike, descriptor: ArrayDescriptorLike, pitch: number): void;
  /** The format of the elements read: an ArrayFormat member, and 1, 2 or 4 components. */
  setFormat(format: number, numComponents: number): void;
  /** How dimension dim (0 to 2) handles coordinates out of range: an AddressMode member. */
  setAddressMode(dim: number, mode: number): void;
  /** How reads filter: a FilterMode member. */
  setFilterMode(mode: number): void;
  /** TextureFlags: read as integer, normalized coordinates, sRGB. */
  setFlags(flags: number): void;
  /** The bound device address. */
  getAddress(): bigint;
  /** The AddressMode of dimension dim. */
  getAddressMode(dim: number): number;
  /** The FilterMode. */
  getFilterMode(): number;
  /** [ArrayFormat, numComponents] */
  getFormat(): [number, number];
  /** The TextureFlags. */
  getFlags(): number;
  /** Binds a CudaArray, kept alive while bound; flags: TRSA_OVERRIDE_FORMAT. */
  setArray(array: CudaArray, flags?: number): void;
  /** The bound CudaArray, or null. */
  getArray(): CudaArray | null;
}

/** A surface reference that a module's PTX or cubin declares, from module.getSurfref(name). */
export declare class SurfaceReference {
  private constructor();
  /** The module the reference belongs to. */
  readonly module: Module;
  /** Binds a CudaArray made with Array3DFlags.SURFACE_LDST, kept alive while bound. */
  setArray(array: CudaArray, flags?: 0): void;
  /** The bound CudaArray, or null. */
  getArray(): CudaArray | null;
}

// Only what is marked `export` above is exported (without this, a declaration file exports all).
export {};

/** What every kind of tensor map takes. */
export interface TensorMapOptions {
  /** The tensor: device memory (its address must be 16-byte aligned); kept alive by the map. */
  memory: DevicePointerLike;
  /** A dtype name ('float32', 'uint8', 'bfloat16'...) or a member of cuda.TensorMapDataType. */
  dataType: 'uint8' | 'uint16' | 'uint32' | 'int32' | 'uint64' | 'int64' | 'float16' | 'float32' | 'float64' | 'bfloat16' | number;
  /** The tensor's size in elements along each dimension, innermost (contiguous) first: 1 to 5
   * dimensions. */
  globalDim: readonly number[];
  /** The bytes from one index to the next along dimensions 1 and up (multiples of 16); those of a
   * packed tensor when omitted. */
  globalStrides?: readonly number[];
  /** Steps, in elements, along each dimension (1 to 8); 1 when omitted. */
  elementStrides?: readonly number[];
  /** A member of cuda.TensorMapInterleave; NONE when omitted. */
  interleave?: number;
  /** A member of cuda.TensorMapSwizzle (how rows lie in shared memory); NONE when omitted. */
  swizzle?: number;
  /** A member of cuda.TensorMapL2Promotion; NONE when omitted. */
  l2Promotion?: number;
  /** A member of cuda.TensorMapFloatOOBFill (what elements out of bounds read as); NONE (zeros). */
  oobFill?: number;
}

/** A tiled tensor map's options. */
export interface TiledTensorMapOptions extends TensorMapOptions {
  /** The box (tile) a copy moves, in elements along each dimension (1 to 256 each). */
  boxDim: readonly number[];
}

/** An im2col tensor map's options (rank 3 to 5: channels, the spatial dimensions, images). */
export interface Im2colTensorMapOptions extends TensorMapOptions {
  /** The pixel box's lower corner along each spatial dimension (rank - 2 of them). */
  pixelBoxLowerCorner: readonly number[];
  /** The pixel box's upper corner along each spatial dimension. */
  pixelBoxUpperCorner: readonly number[];
  /** Channels of a pixel a copy moves (1 to 256). */
  channelsPerPixel: number;
  /** Pixels a copy moves (1 to 1024). */
  pixelsPerColumn: number;
}

/** An im2col-wide tensor map's options. */
export interface Im2colWideTensorMapOptions extends TensorMapOptions {
  /** The bounding box's lower corner along the width. */
  pixelBoxLowerCornerWidth: number;
  /** The bounding box's upper corner along the width. */
  pixelBoxUpperCornerWidth: number;
  /** Channels of a pixel a copy moves (1 to 256). */
  channelsPerPixel: number;
  /** Pixels a copy moves (1 to 1024). */
  pixelsPerColumn: number;
  /** A member of cuda.TensorMapIm2ColWideMode; W when omitted. */
  mode?: number;
}

/**
 * A TMA tensor map (compute capability 9.0+): where a tensor lies and which box of it a kernel's
 * bulk tensor copy moves. A kernel takes it as a `const __grid_constant__ CUtensorMap` parameter
 * (`cudadrv::TensorMap` in `<cudadrv/tma.cuh>`); `prepare([..., cuda.TensorMap])` names it in a
 * format. The tensor must lie within the allocation of its address: a RangeError says where not.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context (a Hopper GPU or newer)
 * const [rows, cols] = [64, 128];
 * const memory = cuda.memAlloc(4 * rows * cols);
 * const map = cuda.TensorMap.tiled({ memory, dataType: 'float32', globalDim: [cols, rows], boxDim: [16, 8] });
 * // pass map to a kernel taking `const __grid_constant__ cudadrv::TensorMap` (<cudadrv/tma.cuh>)
 * map.replaceAddress(cuda.memAlloc(4 * rows * cols)); // the same layout over other memory
 * ```
 */
export declare class TensorMap {
  private constructor();
  /** A map of boxes of `boxDim` elements (cuTensorMapEncodeTiled). */
  static tiled(options: TiledTensorMapOptions): TensorMap;
  /** A map for im2col loads of a convolution's input (cuTensorMapEncodeIm2col). */
  static im2col(options: Im2colTensorMapOptions): TensorMap;
  /** im2col bounded along the width only (cuTensorMapEncodeIm2colWide, CUDA 12.8+). */
  static im2colWide(options: Im2colWideTensorMapOptions): TensorMap;
  /** The memory the map points at, kept alive with it. */
  readonly memory: DevicePointerLike;
  /** A copy of the map's 128 bytes. */
  readonly bytes: Uint8Array;
  /** Points the map at another tensor of the same shape (encoded anew, as cuTensorMapReplaceAddress
   * would give, without reading the map's bytes); returns it. */
  replaceAddress(memory: DevicePointerLike): this;
}
