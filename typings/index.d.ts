// Type declarations for cudadrv: the CUDA Driver API for Node.js.
/// <reference types="node" />

/**
 * The CUDA Driver API: devices, contexts, streams, events, graphs, memory, modules, kernels, arrays
 * and textures. `const cuda = require('cudadrv')`.
 * @packageDocumentation
 * @module cudadrv
 */
import { DeviceAttributeGetters } from './constants';
import { Graph, GraphNode } from './graph';

/** stream.beginCapture()'s options: record into a Graph of yours. */
export interface CaptureOptions {
  /** The graph the captured work is added to: one stream at a time (a LogicError for a second),
   * and the graph cannot be destroyed until the capture ends. */
  into?: Graph;
  /** Nodes of `into` the captured work runs after (none when omitted). */
  after?: GraphNode | readonly GraphNode[];
}

/** What stream.captureInfo() says of the capture under way. */
export interface CaptureInfo {
  /** 'none', 'active', or 'invalidated' (endCapture() throws why). */
  status: 'none' | 'active' | 'invalidated' | 'unknown';
  /** The capture's id, unique in the process; null when none is active. */
  id: bigint | null;
  /** The Graph it records into, where beginCapture() was given one; else null. */
  graph: Graph | null;
  /** The nodes the next captured work will follow: GraphNodes of `graph`, or their count where the
   * driver makes the graph. */
  dependencies: GraphNode[] | number;
}

export * from './constants';
export * from './memory';
export * from './pools';
export * from './placement';
export * from './kernel';
export * from './graph';
export * from './array';

/** Subpaths, also reachable from the namespace. */
export declare const compiler: typeof import('./compiler');
/** `cudadrv/tools`, also reachable as `cuda.tools`. */
export declare const tools: typeof import('./tools');

// ---- version and errors ----

/** cudadrv's version, [major, minor, patch]. */
export declare const VERSION: number[];
/** The release status appended to the version: '' for a release. */
export declare const VERSION_STATUS: string;
/** cudadrv's version as text, '0.1.0'. */
export declare const VERSION_TEXT: string;
/** [major, minor, revision] of the CUDA headers cudadrv was built against. */
export declare function getVersion(): [number, number, number];
/** The installed driver's CUDA version, e.g. 13000 for 13.0. */
export declare function getDriverVersion(): number;
/** true when the CUDA driver loads and initialises; never throws. */
export declare function isAvailable(): boolean;
/** cuInit(flags); optional, the first call that needs the driver does it. */
export declare function init(flags?: number): void;
/** Counters of cleanups finalizers could not do, of Node-API calls that failed where nothing could
 * be thrown (nodeApiFailures), the stream captures under way (capturesUnderWay), and the driver
 * objects this thread's JS objects hold (liveHandles). */
export declare function stats(): {
  /** Frees and destroys that finalizers tried and the driver refused. */
  cleanupsFailed: number;
  /** Cleanups left undone because their context was already gone. */
  cleanupsSkipped: number;
  /** Node-API calls that failed where no error could be thrown. */
  nodeApiFailures: number;
  /** Stream captures begun through cudadrv and not yet ended, in every thread of the process (the
   * collector's frees skip their synchronization while there are any). */
  capturesUnderWay: number;
  /** Driver objects that JS objects of this thread hold (Streams, Events, Modules, Kernels,
   * Graphs, page-locked arrays...; not device allocations) and that the collector has not
   * finalized yet, destroyed or not: a count that keeps growing in a loop means objects kept
   * alive. */
  liveHandles: number;
};
/** [major, minor] of the NVRTC cudadrv loads (CUDADRV_NVRTC_PATH, else libnvrtc.so.13, .12,
 * libnvrtc.so); a RuntimeError names the libraries tried when none loads. */
export declare function nvrtcVersion(): [number, number];

/** What a CudaError carries besides its message. */
export interface CudaErrorInfo {
  /** The CUresult (or nvrtcResult) number, or null where the error did not come from a call. */
  code?: number | null;
  /** The code's name, 'CUDA_ERROR_OUT_OF_MEMORY'..., or null. */
  codeName?: string | null;
  /** The driver or NVRTC function that failed, 'cuMemAlloc'..., or null. */
  api?: string | null;
}

/** Base of every cudadrv error. */
export declare class CudaError extends Error {
  /** Makes an error of this class; cudadrv's own errors come from the calls that fail. */
  constructor(message: string, info?: CudaErrorInfo);
  /** The CUresult (or nvrtcResult) number. */
  readonly code: number | null;
  /** 'CUDA_ERROR_OUT_OF_MEMORY'... */
  readonly codeName: string | null;
  /** The driver call that failed, 'cuMemAlloc'... */
  readonly api: string | null;
}
/**
 * The driver ran out of memory (CUDA_ERROR_OUT_OF_MEMORY), after cudadrv collected garbage and
 * tried again.
 */
export declare class MemoryError extends CudaError {}
/**
 * A call made at the wrong time: no current context, an object already freed or destroyed, a stream
 * capturing.
 */
export declare class LogicError extends CudaError {}
/**
 * A kernel failed (CUDA_ERROR_LAUNCH_FAILED, an illegal address...); the context is unusable
 * afterwards.
 */
export declare class LaunchError extends CudaError {}
/** Any other failure of the driver or NVRTC, or a feature the installed driver is too old for. */
export declare class RuntimeError extends CudaError {}
/** NVRTC refused the source; `log` says why. */
export declare class CompileError extends CudaError {
  /** Makes a CompileError; compile() and compileSync() throw them. */
  constructor(message: string, info?: CudaErrorInfo & { log?: string; options?: string[]; source?: string });
  /** NVRTC's whole program log. */
  readonly log: string;
  /** The options NVRTC was given. */
  readonly options: string[];
  /** The source's name. */
  readonly source: string;
}
/** A link failed (nvJitLink, or the driver's linker); `log` says why. */
export declare class LinkError extends CudaError {
  /** Makes a LinkError; Linker's link() and linkAsync() throw them. */
  constructor(message: string, info?: CudaErrorInfo & { log?: string; infoLog?: string; input?: string | null });
  /** The linker's whole error log. */
  readonly log: string;
  /** The linker's information log. */
  readonly infoLog: string;
  /** The name of the input the linker refused, or null. */
  readonly input: string | null;
}
/** A compile given up through its `signal` or `timeout`; `cause` is the signal's reason. */
export declare class AbortError extends CudaError {
  /** Makes an AbortError; waits and compiles given up throw them. */
  constructor(message: string, info?: { cause?: unknown });
  /** Always 'AbortError', as for the AbortErrors of fetch and timers. */
  readonly name: 'AbortError';
}

// ---- devices and contexts ----

/** A device's attributes, one getter each (DeviceAttributeGetters). */
export interface Device extends DeviceAttributeGetters {}
/**
 * A CUDA device by ordinal or PCI bus id.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * cuda.init();
 * for (let i = 0; i < cuda.Device.count(); i++) {
 *   const dev = new cuda.Device(i);
 *   console.log(i, dev.name(), dev.computeCapability(), dev.totalMemory(), dev.multiprocessorCount);
 * }
 * ```
 */
export declare class Device {
  /** The device of that ordinal (0 to Device.count() - 1) or PCI bus id ('0000:65:00.0'). */
  constructor(ordinalOrPciBusId: number | string);
  /** How many devices the driver sees. */
  static count(): number;
  /** The CUdevice handle. */
  readonly handle: number;
  /** The device's ordinal. */
  readonly ordinal: number;
  /** The device's name, 'NVIDIA H100 80GB HBM3'. */
  name(): string;
  /** The PCI bus id, 'domain:bus:device.function'. */
  pciBusId(): string;
  /** [major, minor]: [9, 0] for an H100. */
  computeCapability(): [number, number];
  /** The device's memory, in bytes. */
  totalMemory(): number;
  /** The device's 16-byte UUID. */
  uuid(): Buffer;
  /** One attribute: a DeviceAttribute member. */
  getAttribute(attribute: number): number;
  /** Every attribute the driver reports, keyed by DeviceAttribute name. */
  getAttributes(): Record<string, number>;
  /** A new context on this device, made current; out of memory, tried once more after a collection. */
  makeContext(flags?: number): Context;
  /** The device's primary context, retained (not made current); out of memory, as makeContext(). */
  retainPrimaryContext(): Context;
  /** The device's streaming multiprocessors as a resource to split for green contexts (CUDA 12.4+). */
  smResource(): SmResource;
  /**
   * A green context on the given SM resources: not made current (call push() or setCurrent());
   * out of memory, as makeContext().
   */
  makeGreenContext(resources: SmResource | readonly SmResource[]): GreenContext;
  /** The primary context's flags, and whether it is active. */
  primaryContextState(): {
    /** Its CtxFlags. */
    flags: number;
    /** Whether it is retained by anyone at present. */
    active: boolean;
  };
  /** Sets the flags (CtxFlags) the primary context is made with; on one already active, those the
   * driver lets change. */
  setPrimaryContextFlags(flags: number): void;
  /** Destroys every allocation and all state of the primary context. A LogicError while cudadrv
   * still uses it (a Context on it not detached, a green context of the device, or what was made
   * in them). */
  resetPrimaryContext(): void;
  /** An attribute of the link from this device to peer: a member of cuda.P2PAttribute. */
  p2pAttribute(peer: Device, attribute: number): number;
  /** Whether contexts on this device can address memory on peer (cuDeviceCanAccessPeer). */
  canAccessPeer(peer: Device): boolean;
  /** Whether other is a Device of the same handle. */
  equals(other: unknown): boolean;
}

/**
 * A CUDA context.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * cuda.init();
 * const ctx = new cuda.Device(0).makeContext(); // current on this thread until detached
 * console.log(cuda.Context.getDevice().name());
 * const memory = cuda.memAlloc(1 << 20);        // made in the current context
 * memory.free();
 * ctx.detach();
 * ```
 */
export declare class Context {
  protected constructor();
  /** The CUcontext address. */
  readonly address: bigint;
  /** The device the context is on. */
  readonly device: Device;
  /** This thread's current context, or null. */
  static getCurrent(): Context | null;
  /** The current context's device. */
  static getDevice(): Device;
  /** Takes the current context off this thread's stack and returns it. */
  static pop(): Context;
  /** Resolves once the current context's work has finished; `signal` gives up waiting. */
  static synchronize(options?: WaitOptions): Promise<void>;
  /** Blocks until the current context's work has finished. */
  static synchronizeSync(): void;
  /** Sets a Limit (stack size, printf FIFO size, malloc heap size...) of the current context. */
  static setLimit(limit: number, value: number | bigint): void;
  /** A Limit of the current context. */
  static getLimit(limit: number): number;
  /** The current context's preferred L1/shared split: a FuncCache member. */
  static setCacheConfig(config: number): void;
  /** The current context's FuncCache preference. */
  static getCacheConfig(): number;
  /** The current context's shared memory bank size: a SharedConfig member. */
  static setSharedConfig(config: number): void;
  /** The current context's SharedConfig. */
  static getSharedConfig(): number;
  /** The current context's CtxFlags. */
  static getFlags(): number;
  /** The API version of the current context, 3020 for contexts of the current API. */
  static getApiVersion(): number;
  /**
   * Lets the current context address memory of peer's context (peer on another device); a
   * LogicError (CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) when already enabled.
   */
  static enablePeerAccess(peer: Context, flags?: number): void;
  /** Stops what enablePeerAccess started; a LogicError (CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) when not enabled. */
  static disablePeerAccess(peer: Context): void;
  /** [least, greatest] stream priority. */
  static getStreamPriorityRange(): [number, number];
  /** Makes this context current, on top of this thread's stack. */
  push(): void;
  /** Replaces the top of this thread's stack with this context. */
  setCurrent(): void;
  /**
   * Destroys the context (releases it, for the primary context) and takes it off this thread's
   * context stack wherever it lies there; the contexts above it stay, in their order. A second
   * call does nothing.
   */
  detach(): void;
  /** This context's API version. */
  getApiVersion(): number;
  /** Lets this context address memory of peer's context (it is made current for the call). */
  enablePeerAccess(peer: Context, flags?: number): void;
  /** Stops what enablePeerAccess started. */
  disablePeerAccess(peer: Context): void;
  /** Resolves once this context's work has finished; `signal` gives up waiting. */
  synchronize(options?: WaitOptions): Promise<void>;
  /** Blocks until this context's work has finished. */
  synchronizeSync(): void;
  /** Whether other is a Context of the same CUcontext. */
  equals(other: unknown): boolean;
  /** `using`: detaches the context. */
  [Symbol.dispose](): void;
  /** `await using`: waits for the context's work, then detaches it. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** A set of a device's streaming multiprocessors, which green contexts are made of (CUDA 12.4+). */
export declare class SmResource {
  private constructor();
  /** SMs in it. */
  readonly smCount: number;
  /** The fewest SMs a group split from it may have. */
  readonly minSmPartitionSize: number;
  /** SMs guaranteed to be scheduled together on one GPC; smCount is a multiple of it. */
  readonly smCoscheduledAlignment: number;
  /** Up to `groups` groups of at least `minCount` SMs each (rounded up as the device needs), and
   * what is left (cuDevSmResourceSplitByCount). */
  split(options?: {
    /** The most groups to make (1 to 256); 1 when omitted. */
    groups?: number;
    /** The fewest SMs in a group; 1 when omitted. */
    minCount?: number;
  }): {
    /** The groups made. */
    groups: SmResource[];
    /** The SMs in no group. */
    remaining: SmResource;
  };
}

/**
 * A green context (CUDA 12.4+): a Context whose work runs only on the SMs it was made with
 * (device.makeGreenContext()). Make it current, and streams, memory and launches work as in any
 * context. detach() ends its use, as a made context's; what was made in it is released as usual
 * (free(), destroy(), collection), and the green context is destroyed after the last of it. Driver
 * 580 keeps a few MiB of every green context made: make them once and keep them.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * cuda.init();
 * const device = new cuda.Device(0);
 * const { groups } = device.smResource().split({ groups: 1, minCount: 16 });
 * const green = device.makeGreenContext(groups[0]); // at least 16 of the device's SMs
 * green.push();
 * const stream = new cuda.Stream();                 // its work runs on those SMs only
 * cuda.memsetD8Async(cuda.memAlloc(1 << 20), 0, 1 << 20, stream);
 * stream.synchronizeSync();
 * cuda.Context.pop();
 * green.detach();
 * ```
 */
export declare class GreenContext extends Context {
  /** The SMs it runs on. */
  smResource(): SmResource;
  /** A stream of this green context, made without making it current (CUDA 12.5+); the driver takes
   * StreamFlags.NON_BLOCKING (the default) only. */
  makeStream(flags?: number, priority?: number): Stream;
  /** Records event where the green context's work, every stream of it, has reached now. */
  recordEvent(event: Event): this;
  /** Makes the green context's later work, every stream of it, wait for event. An interprocess
   * event of another context is a LogicError (driver 580 crashes on that wait). */
  waitEvent(event: Event): this;
}

// ---- streams and events ----

/** What every wait takes: `signal` rejects the wait's Promise with an AbortError as soon as it
 * aborts (the GPU work goes on; only the caller stops waiting). */
export interface WaitOptions {
  /** Gives up the wait when it aborts. */
  signal?: AbortSignal;
}

/**
 * A CUDA stream: work enqueued on it runs in order.
 * @example
 * ```js
 * import cuda from 'cudadrv';
 * import 'cudadrv/autoprimaryctx'; // device 0's primary context, current
 * const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
 * const host = cuda.pagelockedEmpty(1 << 20, 'float32').fill(1);
 * const device = cuda.memAlloc(host.byteLength);
 * cuda.memcpyHtoDAsync(device, host, stream);  // returns at once
 * await stream.synchronize();                   // the event loop runs while the copy does
 * console.log(stream.isDone());                 // true
 * ```
 */
export declare class Stream {
  /**
   * A stream in the current context; flags: StreamFlags; priority: within
   * Context.getStreamPriorityRange(), lower is more urgent. Out of memory, it collects garbage
   * once (what dropped objects held is released) and tries again, then throws MemoryError.
   */
  constructor(flags?: number, priority?: number);
  /** The context the stream was made in. */
  readonly context: Context;
  /** Its StreamFlags. */
  readonly flags: number;
  /** Its priority. */
  readonly priority: number;
  /** Resolves to the stream once its work so far has finished, without blocking the event loop. */
  synchronize(options?: WaitOptions): Promise<this>;
  /** Blocks until the stream's work so far has finished. */
  synchronizeSync(): this;
  /** Whether everything enqueued so far has finished. */
  isDone(): boolean;
  /** Work enqueued later waits until event has completed. An interprocess event (made with
   * EventFlags.INTERPROCESS, or opened) of another context is a LogicError: driver 580 crashes on
   * that wait; wait for it in its own context and record a plain Event there for others. */
  waitForEvent(event: Event): this;
  /** Calls fn on the main thread once the stream reaches this point. A LogicError while the stream
   * is capturing into a graph (the Promise could settle only once). `{ signal }`: an abort rejects
   * the Promise at once with an AbortError and fn is not called; the stream goes on. */
  launchHostFunc<T>(fn: () => T, options?: WaitOptions): Promise<Awaited<T>>;
  /** Records later work on this stream into a graph instead of running it (mode: StreamCaptureMode,
   * RELAXED by default); with `{ into, after }`, into a Graph of yours after those of its nodes
   * (CUDA 12.3). */
  beginCapture(mode?: number, options?: CaptureOptions): this;
  /** Ends the capture and returns the recorded work (the Graph given as `into`, where one was),
   * which keeps alive what the captured work used: kernels and their modules, device memory,
   * page-locked buffers. A capture that a call beside it broke (status 'invalidated') ends with a
   * LogicError of code 901 saying so; the driver frees a Graph given as `into` then, and every use
   * of that graph is a LogicError from then on (docs/graphs.md). */
  endCapture(): Graph;
  /** Whether the stream is capturing (an invalidated capture counts). */
  isCapturing(): boolean;
  /** The capture under way. */
  captureInfo(): CaptureInfo;
  /**
   * Destroys the stream; work already enqueued still runs. A capture under way on it ends first:
   * its graph is discarded, or, for a capture into a Graph of yours, that graph keeps the nodes
   * captured so far. A second call does nothing.
   */
  destroy(): void;
  /** `using`: destroys the stream. */
  [Symbol.dispose](): void;
  /** `await using`: waits for the stream's work, then destroys it. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A CUDA event: a point in a stream to wait for or time.
 * @example
 * ```js
 * import cuda from 'cudadrv';
 * import 'cudadrv/autoprimaryctx'; // device 0's primary context, current
 * const stream = new cuda.Stream();
 * const bytes = 256 << 20;
 * const start = new cuda.Event().record(stream);
 * cuda.memsetD8Async(cuda.memAlloc(bytes), 0, bytes, stream);
 * const end = new cuda.Event().record(stream);
 * await end.synchronize();
 * console.log(`${(bytes / 1e6 / end.timeSince(start)).toFixed(0)} GB/s`);
 * ```
 */
export declare class Event {
  /** An event in the current context; flags: EventFlags. Out of memory, as new Stream(). */
  constructor(flags?: number);
  /**
   * The event another process shared with ipcHandle() (made with EventFlags.INTERPROCESS and
   * DISABLE_TIMING).
   */
  static fromIpcHandle(handle: Uint8Array): Event;
  /** The context the event was made in. */
  readonly context: Context;
  /** The EventFlags it was made with. */
  readonly flags: number;
  /** Records the event at this point of stream (the default stream when omitted). */
  record(stream?: Stream | null): this;
  /** Whether the work before the recorded point has finished. */
  query(): boolean;
  /**
   * Resolves to the event once the work before it has finished, without blocking the event loop.
   */
  synchronize(options?: WaitOptions): Promise<this>;
  /** Blocks until the work before the event has finished. */
  synchronizeSync(): this;
  /** Milliseconds from earlier to this event. */
  timeSince(earlier: Event): number;
  /** Milliseconds from this event to later. */
  timeTill(later: Event): number;
  /** The 64-byte handle another process opens with Event.fromIpcHandle(). */
  ipcHandle(): Buffer;
  /** Destroys the event. A second call does nothing. */
  destroy(): void;
  /** `using`: destroys the event. */
  [Symbol.dispose](): void;
}

// ---- profiler ----

/**
 * cuProfilerInitialize: the profiler's configuration file, output file and ProfilerOutputMode (CUDA
 * 11 drivers and older; a RuntimeError on newer ones).
 */
export declare function initializeProfiler(configFile: string, outputFile: string, outputMode?: number): void;
/**
 * Starts the profiler's collection (cuProfilerStart), for the region a profiler such as Nsight
 * Systems captures.
 */
export declare function startProfiler(): void;
/** Stops it (cuProfilerStop). */
export declare function stopProfiler(): void;
