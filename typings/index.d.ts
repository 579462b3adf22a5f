// Type declarations for cudadrv: the CUDA Driver API for Node.js.
/// <reference types="node" />

import { DeviceAttributeGetters } from './constants';
import { Graph } from './graph';

export * from './constants';
export * from './memory';
export * from './kernel';
export * from './graph';
export * from './array';

/** Subpaths, also reachable from the namespace. */
export declare const compiler: typeof import('./compiler');
export declare const tools: typeof import('./tools');

// ---- version and errors ----

/** cudadrv's version, [major, minor, patch]. */
export declare const VERSION: number[];
export declare const VERSION_STATUS: string;
export declare const VERSION_TEXT: string;
/** [major, minor, revision] of the CUDA headers cudadrv was built against. */
export declare function getVersion(): [number, number, number];
/** The installed driver's CUDA version, e.g. 13000 for 13.0. */
export declare function getDriverVersion(): number;
/** true when the CUDA driver loads and initialises; never throws. */
export declare function isAvailable(): boolean;
/** cuInit(flags); optional, the first call that needs the driver does it. */
export declare function init(flags?: number): void;
/** Counters of cleanups finalizers could not do, and of Node-API calls that failed where nothing
 * could be thrown (nodeApiFailures). */
export declare function stats(): { cleanupsFailed: number; cleanupsSkipped: number; nodeApiFailures: number };
/** [major, minor] of the NVRTC cudadrv loads (CUDADRV_NVRTC_PATH, else libnvrtc.so.13, .12,
 * libnvrtc.so); a RuntimeError names the libraries tried when none loads. */
export declare function nvrtcVersion(): [number, number];

export interface CudaErrorInfo {
  code?: number | null;
  codeName?: string | null;
  api?: string | null;
}

/** Base of every cudadrv error. */
export declare class CudaError extends Error {
  constructor(message: string, info?: CudaErrorInfo);
  /** The CUresult (or nvrtcResult) number. */
  readonly code: number | null;
  /** 'CUDA_ERROR_OUT_OF_MEMORY'... */
  readonly codeName: string | null;
  /** The driver call that failed, 'cuMemAlloc'... */
  readonly api: string | null;
}
export declare class MemoryError extends CudaError {}
export declare class LogicError extends CudaError {}
export declare class LaunchError extends CudaError {}
export declare class RuntimeError extends CudaError {}
export declare class CompileError extends CudaError {
  constructor(message: string, info?: CudaErrorInfo & { log?: string; options?: string[]; source?: string });
  /** NVRTC's whole program log. */
  readonly log: string;
  readonly options: string[];
  /** The source's name. */
  readonly source: string;
}
/** A compile given up through its `signal` or `timeout`; `cause` is the signal's reason. */
export declare class AbortError extends CudaError {
  constructor(message: string, info?: { cause?: unknown });
  readonly name: 'AbortError';
}

// ---- devices and contexts ----

export interface Device extends DeviceAttributeGetters {}
/** A CUDA device by ordinal or PCI bus id. */
export declare class Device {
  constructor(ordinalOrPciBusId: number | string);
  static count(): number;
  readonly handle: number;
  readonly ordinal: number;
  name(): string;
  pciBusId(): string;
  computeCapability(): [number, number];
  totalMemory(): number;
  uuid(): Buffer;
  getAttribute(attribute: number): number;
  /** Every attribute the driver reports, keyed by DeviceAttribute name. */
  getAttributes(): Record<string, number>;
  /** A new context on this device, made current. */
  makeContext(flags?: number): Context;
  /** The device's primary context, retained (not made current). */
  retainPrimaryContext(): Context;
  primaryContextState(): { flags: number; active: boolean };
  canAccessPeer(peer: Device): boolean;
  equals(other: unknown): boolean;
}

/** A CUDA context. */
export declare class Context {
  private constructor();
  /** The CUcontext address. */
  readonly address: bigint;
  readonly device: Device;
  static getCurrent(): Context | null;
  static getDevice(): Device;
  static pop(): Context;
  /** Resolves once the current context's work has finished; `signal` gives up waiting. */
  static synchronize(options?: WaitOptions): Promise<void>;
  static synchronizeSync(): void;
  static setLimit(limit: number, value: number | bigint): void;
  static getLimit(limit: number): number;
  static setCacheConfig(config: number): void;
  static getCacheConfig(): number;
  static setSharedConfig(config: number): void;
  static getSharedConfig(): number;
  static getFlags(): number;
  static getApiVersion(): number;
  static enablePeerAccess(peer: Context, flags?: number): void;
  static disablePeerAccess(peer: Context): void;
  /** [least, greatest] stream priority. */
  static getStreamPriorityRange(): [number, number];
  push(): void;
  setCurrent(): void;
  /**
   * Destroys the context (releases it, for the primary context) and takes it off this thread's
   * context stack wherever it lies there; the contexts above it stay, in their order. A second
   * call does nothing.
   */
  detach(): void;
  getApiVersion(): number;
  enablePeerAccess(peer: Context, flags?: number): void;
  disablePeerAccess(peer: Context): void;
  synchronize(options?: WaitOptions): Promise<void>;
  synchronizeSync(): void;
  equals(other: unknown): boolean;
  [Symbol.dispose](): void;
  /** `await using`: waits for the context's work, then detaches it. */
  [Symbol.asyncDispose](): Promise<void>;
}

// ---- streams and events ----

/** What every wait takes: `signal` rejects the wait's Promise with an AbortError as soon as it
 * aborts (the GPU work goes on; only the caller stops waiting). */
export interface WaitOptions {
  signal?: AbortSignal;
}

export declare class Stream {
  constructor(flags?: number, priority?: number);
  readonly context: Context;
  readonly flags: number;
  readonly priority: number;
  synchronize(options?: WaitOptions): Promise<this>;
  synchronizeSync(): this;
  isDone(): boolean;
  waitForEvent(event: Event): this;
  /** Calls fn on the main thread once the stream reaches this point. A LogicError while the stream
   * is capturing into a graph (the Promise could settle only once). `{ signal }`: an abort rejects
   * the Promise at once with an AbortError and fn is not called; the stream goes on. */
  launchHostFunc<T>(fn: () => T, options?: WaitOptions): Promise<Awaited<T>>;
  /** Records later work on this stream into a graph instead of running it (mode: StreamCaptureMode,
   * RELAXED by default). */
  beginCapture(mode?: number): this;
  /** Ends the capture and returns the recorded work. */
  endCapture(): Graph;
  destroy(): void;
  [Symbol.dispose](): void;
  /** `await using`: waits for the stream's work, then destroys it. */
  [Symbol.asyncDispose](): Promise<void>;
}

export declare class Event {
  constructor(flags?: number);
  static fromIpcHandle(handle: Uint8Array): Event;
  readonly context: Context;
  record(stream?: Stream | null): this;
  query(): boolean;
  synchronize(options?: WaitOptions): Promise<this>;
  synchronizeSync(): this;
  /** Milliseconds from earlier to this event. */
  timeSince(earlier: Event): number;
  /** Milliseconds from this event to later. */
  timeTill(later: Event): number;
  ipcHandle(): Buffer;
  destroy(): void;
  [Symbol.dispose](): void;
}

// ---- profiler ----

export declare function initializeProfiler(configFile: string, outputFile: string, outputMode?: number): void;
export declare function startProfiler(): void;
export declare function stopProfiler(): void;
