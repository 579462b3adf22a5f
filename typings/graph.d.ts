// CUDA graphs: work recorded once (node by node, or captured from a stream), instantiated, and
// launched many times for the cost of one launch.
import type { Context, Event, Stream } from './index';
import type { Dim3, Kernel, KernelArgument } from './kernel';
import type { DevicePointerLike, Memcpy2D, Memcpy3D } from './memory';

/** What a node does (GraphNodeType's names, camelCased). */
export type GraphNodeKind =
  | 'kernel'
  | 'memcpy'
  | 'memset'
  | 'host'
  | 'graph'
  | 'empty'
  | 'waitEvent'
  | 'eventRecord'
  | 'extSemasSignal'
  | 'extSemasWait'
  | 'memAlloc'
  | 'memFree'
  | 'batchMemOp'
  | 'conditional'
  | 'unknown';

/** Where a node goes in its graph: after the nodes named (none when omitted). */
export interface NodeOptions {
  /** The nodes this one runs after: one, or an array (a node named twice counts once). */
  after?: GraphNode | readonly GraphNode[];
}

/** The last argument of graph.addKernel(): a launch's shape and the node's dependencies. */
export interface KernelNodeOptions extends NodeOptions {
  /** Threads per block: required. */
  block: Dim3;
  /** Blocks in the grid; 1 when omitted. */
  grid?: Dim3;
  /** Dynamic shared memory, in bytes. */
  shared?: number;
}

/** graph.addMemset()'s options. */
export interface MemsetNodeOptions extends NodeOptions {
  /** Bytes per element: 1 (the default), 2 or 4. */
  elementSize?: 1 | 2 | 4;
  /** Bytes from one row to the next, for `height` rows; a row's bytes when omitted. */
  pitch?: number;
  /** Rows of `count` elements; 1 when omitted. */
  height?: number;
}

/** graph.instantiate()'s options (CUDA_GRAPH_INSTANTIATE_FLAG_*). */
export interface InstantiateOptions {
  /** Uploads the GraphExec on this stream now, so that its first launch costs no more than later ones. */
  upload?: Stream;
  /** Memory allocated by the graph's memory nodes and not freed by it is freed at the next launch. */
  autoFreeOnLaunch?: boolean;
  /** The GraphExec may be launched from the device (kernels, memsets and copies only). */
  deviceLaunch?: boolean;
  /** Kernel nodes run at the priority of their launch attributes rather than the stream's. */
  useNodePriority?: boolean;
}

/** graph.conditionalHandle()'s options. */
export interface ConditionalHandleOptions {
  /** The value before any kernel sets it; 0 when omitted. */
  default?: number;
  /** Set to `default` again at each launch (true when omitted). */
  resetEachLaunch?: boolean;
}

/** graph.addConditional()'s options. */
export interface ConditionalNodeOptions extends NodeOptions {
  /** Bodies: 1 for 'while'; 1 or 2 (an ELSE body, CUDA 12.8) for 'if'; the cases of a 'switch', up to 256. */
  size?: number;
}

/** What graph.addConditional() makes. */
export interface ConditionalNode {
  /** The conditional node. */
  node: GraphNode;
  /** Its body graphs, to fill with their add methods: one for 'while', one or two for 'if', the
   * cases of a 'switch'. */
  bodies: Graph[];
}

/** A conditional node's condition: kernels take `cuda.uint64(handle.value)` and set it with
 * `cudadrv::setConditional(handle, value)` from `<cudadrv/graph.cuh>`. */
export declare class ConditionalHandle {
  private constructor();
  /** The handle as the kernels take it. */
  readonly value: bigint;
  /** The graph it was made for. */
  readonly graph: Graph;
}

/**
 * Device memory a graph allocates at each launch (graph.addMemAlloc()): its address is fixed when
 * the node is made. Once a free node for it is added, using it in anything new is a LogicError.
 */
export declare class GraphMemory {
  private constructor();
  /** Its device address; a LogicError once a free node frees it. */
  getPointer(): bigint;
  /** Its device address, as getPointer() gives it. */
  readonly ptr: bigint;
  /** Its size in bytes. */
  readonly size: number;
  /** Whether a free node frees it. */
  readonly freed: boolean;
  /** Frees what a launch allocated, outside any graph, on stream (cuMemFreeAsync); the next launch
   * allocates it again. A LogicError once no Graph or GraphExec holds the allocation node. */
  free(stream?: Stream | null): void;
}

/** What graph.addMemAlloc() returns. */
export interface MemAllocNode {
  /** The allocation node. */
  node: GraphNode;
  /** The memory it allocates at each launch. */
  memory: GraphMemory;
}

/** The arguments of setMemset() on a Graph or GraphExec: the node, then addMemset()'s. */
export type SetMemsetArgs = [
  node: GraphNode,
  dest: DevicePointerLike,
  value: number,
  count: number,
  options?: Omit<MemsetNodeOptions, 'after'>,
];

/** The arguments of setMemcpy() on a Graph or GraphExec: the node, then addMemcpy()'s (1D). */
export type SetMemcpyArgs = [
  node: GraphNode,
  dest: DevicePointerLike | ArrayBufferView | ArrayBuffer,
  src: DevicePointerLike | ArrayBufferView | ArrayBuffer,
  bytes: number,
];

/** What a kernel node holds, read back by node.params(). */
export interface KernelNodeParams {
  /** The Kernel, where graph.addKernel() made the node; else null. */
  kernel: Kernel | null;
  /** Its grid, [x, y, z]. */
  grid: [number, number, number];
  /** Its block, [x, y, z]. */
  block: [number, number, number];
  /** Dynamic shared memory bytes. */
  shared: number;
  /** The parameter bytes, or null where the node was not given them as one buffer. */
  args: Uint8Array | null;
}

/** What a memset node holds, read back by node.params(). */
export interface MemsetNodeParams {
  /** The device address it sets. */
  dest: bigint;
  /** The value of each element. */
  value: number;
  /** 1, 2 or 4 bytes. */
  elementSize: number;
  /** Elements in a row. */
  width: number;
  /** Rows. */
  height: number;
  /** Bytes from a row to the next. */
  pitch: number;
}

/** What a copy node holds, read back by node.params(). */
export interface MemcpyNodeParams {
  /** The device address it copies to; null for host memory or an array. */
  dest: bigint | null;
  /** The device address it copies from; null for host memory or an array. */
  src: bigint | null;
  /** Bytes in a row. */
  width: number;
  /** Rows. */
  height: number;
  /** Layers. */
  depth: number;
}

/** What a memory node holds, read back by node.params(): an allocation node's address and size,
 * a free node's address. */
export interface MemoryNodeParams {
  /** The device address allocated or freed. */
  ptr: bigint;
  /** An allocation node's size in bytes. */
  bytes?: number;
}

/** A node of a Graph, from graph.addKernel() and the other add methods, or graph.nodes(). */
export declare class GraphNode {
  private constructor(graph: Graph, index: number);
  /** The graph it belongs to. */
  readonly graph: Graph;
  /** Its position in graph.nodes(). */
  readonly index: number;
  /** What it does. */
  readonly type: GraphNodeKind;
  /** What the driver holds for a kernel, memset, copy or memory node, read back; null for a node
   * of another kind. */
  params(): KernelNodeParams | MemsetNodeParams | MemcpyNodeParams | MemoryNodeParams | null;
}

/**
 * Work recorded once and launched many times: `new Graph()` and its add methods, or
 * `stream.beginCapture()` ... `stream.endCapture()`. The graph, and each GraphExec made from it,
 * keep alive what their nodes use.
 * @example
 * ```js
 * import cuda from 'cudadrv';
 * import 'cudadrv/autoprimaryctx'; // device 0's primary context, current
 * const n = 1024;
 * const [a, b] = [cuda.memAlloc(4 * n), cuda.memAlloc(4 * n)];
 * const graph = new cuda.Graph();
 * const set = graph.addMemset(a, 3, n, { elementSize: 4 });  // a = 3
 * graph.addMemcpy(b, a, 4 * n, { after: set });              // then b = a
 * const stream = new cuda.Stream();
 * const exec = graph.instantiate();
 * exec.launch(stream);                                       // as often as needed
 * await stream.synchronize();
 * console.log(cuda.fromDevice(b, [n], 'int32')[n - 1]);      // 3
 * ```
 */
export declare class Graph {
  /** An empty graph. */
  constructor();
  /** How many nodes the graph holds. */
  readonly nodeCount: number;
  /** A node that does nothing: joins its dependencies for the nodes after it. */
  addEmpty(options?: NodeOptions): GraphNode;
  /** A kernel node: the arguments a call of the kernel takes (device memory for pointers; no
   * In/Out/InOut), packed now, then its shape and dependencies. */
  addKernel(kernel: Kernel, ...args: [...KernelArgument[], KernelNodeOptions]): GraphNode;
  /** Makes a memset node set other memory or values in the GraphExecs instantiated from now on. */
  setMemset(...args: SetMemsetArgs): this;
  /** Makes a 1D copy node copy other memory in the GraphExecs instantiated from now on. */
  setMemcpy(...args: SetMemcpyArgs): this;
  /** Makes a kernel node (of graph.addKernel()) launch other arguments and shape in the GraphExecs
   * instantiated from now on; its kernel cannot change. */
  setKernelArgs(node: GraphNode, ...args: [...KernelArgument[], Omit<KernelNodeOptions, 'after'>]): this;
  /** A memset node: count elements of elementSize bytes at dest set to value (height rows, pitch bytes apart). */
  addMemset(dest: DevicePointerLike, value: number, count: number, options?: MemsetNodeOptions): GraphNode;
  /** A copy node: bytes bytes from src to dest, each device memory or an array of page-locked
   * host memory (pagelockedEmpty()), not both host; such an array's allocation refuses free()
   * while the graph or a GraphExec of it lives. */
  /** A copy node: the 2D or 3D copy a Memcpy2D or Memcpy3D describes now (device, page-locked
   * host, unified memory or arrays; not host to host). A CudaArray it names refuses free() while
   * the graph or a GraphExec of it lives (driver 580 crashes on a graph copying a freed array). */
  addMemcpy(copy: Memcpy2D | Memcpy3D, options?: NodeOptions): GraphNode;
  addMemcpy(
    dest: DevicePointerLike | ArrayBufferView | ArrayBuffer,
    src: DevicePointerLike | ArrayBufferView | ArrayBuffer,
    bytes: number,
    options?: NodeOptions,
  ): GraphNode;
  /** A node that records event (as event.record(stream) does); the graph keeps the event's
   * driver object while it or a GraphExec of it lives, even after event.destroy(). */
  addEventRecord(event: Event, options?: NodeOptions): GraphNode;
  /** A node that waits for event's last record: the nodes after it run after the work recorded there. */
  addEventWait(event: Event, options?: NodeOptions): GraphNode;
  /** A node that calls fn on the main thread each time a launch reaches it (CUDA 11.3). The nodes
   * after it do not wait for fn; calls come in launch order, before a wait for the launch's stream
   * settles; what fn throws is an uncaught exception. fn is held until no graph, GraphExec or
   * launch can reach the node. */
  addHostFunc(fn: () => unknown, options?: NodeOptions): GraphNode;
  /** An allocation node (CUDA 11.4): bytes of the current device allocated at each launch when the
   * node runs, at memory's address, fixed now. A free node, here or in another graph, frees it, or
   * the next launch of a GraphExec instantiated with autoFreeOnLaunch. */
  addMemAlloc(bytes: number, options?: NodeOptions): MemAllocNode;
  /** A free node (CUDA 11.4) for an allocation node's memory; memory is a LogicError in anything
   * new from now on. */
  addMemFree(memory: GraphMemory, options?: NodeOptions): GraphNode;
  /** A node that runs a copy of child, made now. child is not this graph (a LogicError); the
   * driver refuses a child with conditional or memory nodes, or a conditional node's body. A
   * LogicError while a stream captures into child. */
  addChildGraph(child: Graph, options?: NodeOptions): GraphNode;
  /** A condition for this graph's conditional nodes (and their bodies'), in the current context (CUDA 12.3). */
  conditionalHandle(options?: ConditionalHandleOptions): ConditionalHandle;
  /** A conditional node (CUDA 12.3): 'while' runs bodies[0] while the condition is not 0, 'if'
   * runs bodies[0] when it is not 0 (and bodies[1] when it is, with size 2), 'switch' runs
   * bodies[value]. Fill the bodies with their add methods; a body keeps this graph alive. handle
   * serves one node, of this graph's family (a LogicError otherwise). */
  addConditional(
    handle: ConditionalHandle,
    kind: 'if' | 'while' | 'switch',
    options?: ConditionalNodeOptions,
  ): ConditionalNode;
  /** Every node, in the order added (the driver's order for a captured graph). */
  nodes(): GraphNode[];
  /** Every dependency as [from, to]; needs a CUDA 12.3 driver. A LogicError while a stream
   * captures into the graph. */
  edges(): [GraphNode, GraphNode][];
  /** The graph in Graphviz's DOT language (cuGraphDebugDotPrint); flags: GraphDebugDotFlags. */
  toDot(flags?: number): string;
  /** A GraphExec of this graph in the current context; a LogicError once a context its nodes were
   * made in has been destroyed (the driver would crash on them), while a stream captures into
   * the graph or one of its bodies, and while a conditional handle of the graph's family is no
   * conditional node's condition. Out of memory, it collects garbage once and tries again. */
  instantiate(options?: InstantiateOptions): GraphExec;
  /** Destroys the graph; GraphExecs made from it stay usable. A second call does nothing. A
   * LogicError while a stream captures into it or into one of its bodies. */
  destroy(): void;
  /** `using`: destroys the graph. */
  [Symbol.dispose](): void;
}

/**
 * An instantiated Graph.
 * @example
 * ```js
 * const cuda = require('cudadrv');
 * require('cudadrv/autoprimaryctx'); // device 0's primary context, current
 * const n = 256;
 * const a = cuda.memAlloc(4 * n);
 * const graph = new cuda.Graph();
 * const set = graph.addMemset(a, 1, n, { elementSize: 4 });
 * const exec = graph.instantiate();
 * exec.setMemset(set, a, 2, n, { elementSize: 4 }); // this exec sets 2 from its next launch
 * exec.launch();
 * cuda.Context.synchronizeSync();
 * console.log(cuda.fromDevice(a, [n], 'int32')[0]); // 2
 * ```
 */
export declare class GraphExec {
  private constructor();
  /** The context it was instantiated in. */
  readonly context: Context;
  /** Enqueues the whole graph on stream (the default stream of the current context when omitted).
   * A stream of another context works; once a made context it ran in is detached, this exec is a
   * LogicError to launch or upload (driver 580 keeps state of that context with the exec, and
   * crashed destroying it): instantiate the graph again. A green context it ran in is not
   * destroyed while the exec lives. */
  launch(stream?: Stream | null): this;
  /** The handle a kernel launches it by (cudaGraphLaunch in a DynamicSourceModule's kernel that
   * runs in a graph): pass `cuda.uint64(exec.deviceHandle)`. A LogicError unless instantiated
   * with `{ deviceLaunch: true }`; uploads it where it was not. Keeps nothing alive. */
  readonly deviceHandle: bigint;
  /** Uploads it ahead of the first launch; in another context's stream, as launch() says. */
  upload(stream?: Stream | null): this;
  /** Later launches run graph's parameters; a LogicError when graph's shape differs, and while a
   * stream captures into graph. */
  update(graph: Graph): this;
  /** Makes a kernel node (of graph.addKernel()) launch other arguments and shape from the next
   * launch on; its kernel cannot change. The graph itself is unchanged. */
  setKernelArgs(node: GraphNode, ...args: [...KernelArgument[], Omit<KernelNodeOptions, 'after'>]): this;
  /** Makes a memset node set other memory or values from the next launch on (1D nodes only: the
   * driver's rule). */
  setMemset(...args: SetMemsetArgs): this;
  /** Makes a 1D copy node copy other memory from the next launch on. */
  setMemcpy(...args: SetMemcpyArgs): this;
  /** Turns a kernel, memset or copy node of the graph it was made from off (skipped at launches) or
   * on again; a TypeError for another kind of node. */
  setEnabled(node: GraphNode, enabled: boolean): this;
  /** Whether the node (a kernel, memset or copy node; a TypeError for another) runs at its launches. */
  isEnabled(node: GraphNode): boolean;
  /** Destroys it; launches already enqueued still run. A second call does nothing. */
  destroy(): void;
  /** `using`: destroys it. */
  [Symbol.dispose](): void;
}
