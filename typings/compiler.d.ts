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
}

/** A compile's result: a cubin, or PTX text (no NUL terminator), with what NVRTC said. */
export interface CompiledImage extends Buffer {
  /** NVRTC's log: warnings ('' when none). */
  readonly log: string;
  /** { nameExpression: loweredName } for the nameExpressions option. */
  readonly loweredNames: Record<string, string>;
  /** The architecture compiled for: 'sm_90' (a cubin) or 'compute_75' (PTX). */
  readonly target: string;
  /** With keep: the directory holding the source, options, log and output. */
  readonly keptIn?: string;
}

/** The options a compile uses when it gives none; initially env CUDADRV_DEFAULT_OPTIONS split
 * as a shell would. Change it in place. */
export declare const DEFAULT_OPTIONS: string[];

/** Compiles on a thread of its own; the event loop stays free. Rejects with a CompileError when
 * NVRTC refuses the source, an AbortError when `signal` aborts or `timeout` passes first. */
export declare function compile(source: string, options?: CompileOptions): Promise<CompiledImage>;
/** Compiles on the calling thread. */
export declare function compileSync(source: string, options?: CompileOptions): CompiledImage;
/** [major, minor] of the NVRTC in use. */
export declare function nvrtcVersion(): [number, number];

// The driver's Module class (typings/kernel.d.ts), or a plain stand-in while it is not declared.
type ModuleClass = typeof cuda extends { Module: infer M extends abstract new (...args: any[]) => object }
  ? M
  : new (image: Buffer, options?: object) => object;
declare const ModuleBase: ModuleClass;

/** A Module compiled from CUDA C++ and loaded into the current context (PyCUDA's SourceModule). */
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

// Only what is marked `export` above is exported (without this, a declaration file exports all).
export {};
