// Type declarations for cudadrv/compiler: CUDA C++ compiled at run time by NVRTC.
/// <reference types="node" />

/**
 * CUDA C++ compiled at run time by NVRTC, with an on-disk cache; PyCUDA's SourceModule.
 * @packageDocumentation
 * @module cudadrv/compiler
 */
import * as cuda from './index';

/** Options of compile(), compileSync(), new SourceModule() and SourceModule.compile(). */
export interface CompileOptions {
  /** NVRTC options; default DEFAULT_OPTIONS. */
  options?: string[];
  /** Do not wrap the source in `extern "C" { }`. Default: false, or true when nameExpressions are given. */
  noExternC?: boolean;
  /** The target: `sm_XY` (cubin) or `compute_XY` (PTX), e.g. 'sm_90', 'sm_120', 'sm_90a'. Default: the
   * current context's device as sm_XY; without a context, PTX for compute_75 (see the README). */
  arch?: string;
  /** What to produce: `compute_XY` for PTX, `sm_XY` for a cubin; it must name the same architecture as arch. */
  code?: string;
  /** Directories searched for #include files (each must be a readable directory). */
  includeDirs?: string[];
  /** In-memory headers: { includeName: source }. */
  headers?: Record<string, string>;
  /** C++ name expressions ('kernel<float>') whose lowered (mangled) names the result carries. */
  nameExpressions?: string[];
  /** Keep the source, options, log and output in a new temporary directory, and print where. */
  keep?: boolean;
  /** The cache directory; false (or env CUDADRV_DISABLE_CACHE) disables the cache. Default: env
   * CUDADRV_CACHE_DIR, else $XDG_CACHE_HOME/cudadrv, else ~/.cache/cudadrv. */
  cacheDir?: string | false | null;
  /** The source's name in NVRTC's messages; default 'kernel.cu'. */
  name?: string;
  /** Receives NVRTC's warnings when a compile succeeds with some (instead of stdout). */
  messageHandler?: (log: string) => void;
  /** compile(): rejects with an AbortError when it aborts (a running NVRTC compile still finishes,
   * into the cache). compileSync(): an AbortError when aborted already. */
  signal?: AbortSignal;
  /** compile() only: milliseconds (0 to 2**31-1) before it rejects with an AbortError. */
  timeout?: number;
  /** Relocatable device code (-rdc=true): `extern __device__` functions and variables may be
   * defined in another input of a Linker. The result's kind is 'cubin' or 'ptx'. */
  relocatable?: boolean;
  /** LTO-IR for link-time optimization (-dlto, which implies relocatable): the result's kind is
   * 'ltoir', for a Linker made with { lto: true }. */
  lto?: boolean;
  /** Compile in a helper process that cudadrv starts and reuses (one a processor at most), so
   * that a crash or hang in NVRTC ends the helper, not this process: a crash is a CompileError
   * whose codeName is the signal ('SIGSEGV'), and `signal` or `timeout` ends a compile under way.
   * For sources you do not trust. Costs a process start on first use (compileSync: on every
   * compile). Default: env CUDADRV_ISOLATE=1. */
  isolated?: boolean;
}

/** What an image holds: a cubin, PTX text, LTO-IR (NVVM bitcode for link-time optimization),
 * or a fatbin. */
export type ImageKind = 'cubin' | 'ptx' | 'ltoir' | 'fatbin';

/** A compile's result: a cubin, or PTX text (no NUL terminator), with what NVRTC said. */
export interface CompiledImage extends Buffer {
  /** NVRTC's log: warnings ('' when none). */
  readonly log: string;
  /** { nameExpression: loweredName } for the nameExpressions option. */
  readonly loweredNames: Record<string, string>;
  /** The architecture compiled for: 'sm_90' (a cubin) or 'compute_75' (PTX). */
  readonly target: string;
  /** What the image holds: 'cubin', 'ptx' or (with lto) 'ltoir'. */
  readonly kind: ImageKind;
  /** With keep: the directory holding the source, options, log and output. */
  readonly keptIn?: string;
}

/** The options a compile uses when it gives none; initially env CUDADRV_DEFAULT_OPTIONS split
 * as a shell would. Change it in place. */
export declare const DEFAULT_OPTIONS: string[];

/** Compiles on a thread of its own; the event loop stays free. Rejects with a CompileError when
 * NVRTC refuses the source, an AbortError when `signal` aborts or `timeout` passes first.
 * @example
 * ```js
 * import { compile } from 'cudadrv/compiler';
 * const source = 'extern "C" __global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }';
 * // NVRTC on a thread of its own: the event loop keeps running; no GPU is needed
 * const cubin = await compile(source, { arch: 'sm_90', timeout: 60000 });
 * console.log(cubin.kind, cubin.length); // 'cubin', its size in bytes
 * ```
 */
export declare function compile(source: string, options?: CompileOptions): Promise<CompiledImage>;
/** Compiles on the calling thread. */
export declare function compileSync(source: string, options?: CompileOptions): CompiledImage;
/** [major, minor] of the NVRTC in use. */
export declare function nvrtcVersion(): [number, number];
/** [major, minor] of the nvJitLink in use; a RuntimeError names the libraries tried when none
 * loads. */
export declare function nvJitLinkVersion(): [number, number];

/** NVRTC refused the source (the class cudadrv exports, here too). */
export declare const CompileError: typeof cuda.CompileError;
/** A link failed (the class cudadrv exports, here too). */
export declare const LinkError: typeof cuda.LinkError;

/** How a Linker links. */
export interface LinkerOptions {
  /** The cubin's architecture: 'sm_90', 'sm_90a'... Default: the current context's device. */
  arch?: string;
  /** Link-time optimization across LTO-IR inputs (nvJitLink's -lto). Default false. */
  lto?: boolean;
  /** nvJitLink's other options: '-O3', '-maxrregcount=N', '-lineinfo', '-g', '-Xptxas=...'. */
  options?: string[];
  /** Link the device runtime (libcudadevrt) in, for kernels that launch kernels. Default false. */
  deviceRuntime?: boolean;
  /** The cache directory for linked cubins (nvJitLink only); as CompileOptions.cacheDir. */
  cacheDir?: string | false | null;
  /** Link with nvJitLink in a helper process, as CompileOptions.isolated: a crash is a LinkError
   * whose codeName is the signal, and what nvJitLink prints to stderr joins the log (an error it
   * prints there fails the link). The driver's linker (cuLink) always links in this process.
   * Default: env CUDADRV_ISOLATE=1. */
  isolated?: boolean;
}

/** What an input of a Linker is. */
export interface LinkInputOptions {
  /** What the bytes hold; default: the image's own `kind` (a compile's result), else its
   * first bytes say (the extension, for addFile). */
  kind?: ImageKind | 'object' | 'library';
  /** The input's name in the linker's messages. */
  name?: string;
}

/** A link's result: the cubin, for moduleFromBuffer or libraryFromBuffer. */
export interface LinkedImage extends Buffer {
  /** The linker's information log ('' when none). */
  readonly log: string;
  /** Always 'cubin'. */
  readonly kind: 'cubin';
  /** The architecture linked for, 'sm_90'. */
  readonly target: string;
}

/**
 * Links relocatable device code (cubin, PTX, LTO-IR, fatbin, static libraries) into one cubin,
 * with nvJitLink (loaded at run time like NVRTC; env CUDADRV_NVJITLINK_PATH names the file), or,
 * where it cannot be loaded, with the driver's linker (cuLink), which links in the current
 * context, without LTO or options.
 * @example
 * ```js
 * const { compileSync, Linker } = require('cudadrv/compiler');
 * const options = { lto: true, arch: 'sm_90' };
 * const helper = compileSync('__device__ float twice(float x) { return 2 * x; }', options);
 * const main = compileSync('__device__ float twice(float x);\n__global__ void apply(float *p) { p[0] = twice(p[0]); }', options);
 * const cubin = new Linker(options).add(helper).add(main).link(); // nvJitLink, no GPU needed
 * console.log(cubin.kind, cubin.length);
 * ```
 */
export declare class Linker {
  constructor(options?: LinkerOptions);
  /** The architecture linked for; undefined: the current context's device. */
  readonly arch: string | undefined;
  /** Whether the link optimizes across LTO-IR inputs. */
  readonly lto: boolean;
  /** nvJitLink's options, beside arch and lto. */
  readonly options: string[];
  /** Whether libcudadevrt is linked in. */
  readonly deviceRuntime: boolean;
  /** Whether nvJitLink links in a helper process. */
  readonly isolated: boolean;
  /** The information log of the last link. */
  readonly log: string;
  /** The linker a link uses now: 'nvJitLink', or 'cuLink' where nvJitLink cannot be loaded. */
  readonly backend: 'nvJitLink' | 'cuLink';
  /** Adds an image (copied now); returns the linker. A RangeError where its structure is unsound
   * (a cubin's sections, symbols, relocations; an archive's members): nvJitLink would crash. */
  add(image: ArrayBufferView | ArrayBuffer | SharedArrayBuffer | string, options?: LinkInputOptions): this;
  /** Adds the file at path (read now; a regular file of at most 2 GiB - 1); returns the linker. */
  addFile(path: string, options?: Pick<LinkInputOptions, 'kind'>): this;
  /** Links, waited for; a LinkError carries the linker's log. */
  link(): LinkedImage;
  /** Links on a thread of its own; `signal` gives up waiting (the link runs to its end, but an
   * isolated one's helper is ended). */
  linkAsync(options?: { signal?: AbortSignal }): Promise<LinkedImage>;
}

// The driver's Module class (typings/kernel.d.ts), or a plain stand-in while it is not declared.
type ModuleClass = typeof cuda extends { Module: infer M extends abstract new (...args: any[]) => object }
  ? M
  : new (image: Buffer, options?: object) => object;
declare const ModuleBase: ModuleClass;

/**
 * A Module compiled from CUDA C++ and loaded into the current context (PyCUDA's SourceModule).
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context, current
 * const { SourceModule } = require('cudadrv/compiler');
 * const mod = new SourceModule(`
 *   template <typename T> __global__ void fill(T *x, T value) { x[threadIdx.x] = value; }
 *   template __global__ void fill<int>(int *, int);`, { nameExpressions: ['fill<int>'] });
 * const fill = mod.getFunction('fill<int>');  // by its C++ name
 * const x = cuda.memAlloc(4 * 64);
 * fill(x, cuda.int32(7), { block: 64 }); // a template's parameter types are not known: typed scalars
 * console.log(cuda.fromDevice(x, [64], 'int32')[63]); // 7
 * ```
 */
export declare class SourceModule extends ModuleBase {
  /** Compiles on the calling thread, then loads. */
  constructor(source: string, options?: CompileOptions);
  /** Compiles on a thread of its own, then loads. */
  static compile(source: string, options?: CompileOptions): Promise<SourceModule>;
  /** NVRTC's warnings. */
  readonly log: string;
  /** { nameExpression: loweredName } */
  readonly loweredNames: Record<string, string>;
  /** The symbol for name: its lowered name when name is one of the name expressions. */
  lowered(name: string): string;
}

/** Options of DynamicSourceModule: compile()'s (relocatable is implied, lto refused), and the
 * Linker's options. */
export interface DynamicSourceModuleOptions extends Omit<CompileOptions, 'lto' | 'relocatable'> {
  /** nvJitLink's options for the link. */
  linkOptions?: string[];
}

/** A SourceModule compiled as relocatable code and linked with the device runtime, so that its
 * kernels may launch kernels (PyCUDA's DynamicSourceModule). */
export declare class DynamicSourceModule extends SourceModule {
  /** Compiles and links on the calling thread, then loads. */
  constructor(source: string, options?: DynamicSourceModuleOptions);
  /** Compiles and links off the main thread, then loads. */
  static compile(source: string, options?: DynamicSourceModuleOptions): Promise<DynamicSourceModule>;
}

// Only what is marked `export` above is exported (without this, a declaration file exports all).
export {};
