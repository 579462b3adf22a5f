// Compiled by `tsc --strict` in npm test: the graph typings accept what the README shows.
import cuda = require('cudadrv');

async function graphs(stream: cuda.Stream, other: cuda.Graph): Promise<void> {
  const same: cuda.Stream = stream.beginCapture(cuda.StreamCaptureMode.RELAXED).beginCapture();
  const graph: cuda.Graph = same.endCapture();
  const nodes: number = graph.nodeCount;
  const exec: cuda.GraphExec = graph.instantiate().upload(stream).launch(stream).launch();
  exec.update(other).launch(null);
  const ctx: cuda.Context = exec.context;
  await stream.synchronize();
  exec.destroy();
  graph[Symbol.dispose]();
  console.log(nodes, ctx);
}

void graphs;

function built(kernel: cuda.Kernel, a: cuda.DeviceAllocation, b: cuda.DeviceAllocation, stream: cuda.Stream): void {
  const graph = new cuda.Graph();
  const set: cuda.GraphNode = graph.addMemset(a, 1, 256, { elementSize: 4, pitch: 1024, height: 2 });
  const copy = graph.addMemcpy(b, a, 1024, { after: set });
  const run = graph.addKernel(kernel, b, cuda.int32(256), { grid: 2, block: [128], after: [set, copy] });
  graph.addChildGraph(new cuda.Graph(), { after: run });
  const event = new cuda.Event();
  graph.addEventWait(event, { after: graph.addEventRecord(event, { after: run }) });
  const kind: cuda.GraphNodeKind = run.type;
  const index: number = run.index;
  const same: cuda.Graph = run.graph;
  const edges: [cuda.GraphNode, cuda.GraphNode][] = graph.edges();
  const dot: string = graph.toDot(cuda.GraphDebugDotFlags.VERBOSE);
  const exec = graph.instantiate({ upload: stream, useNodePriority: true }).setEnabled(run, false);
  const on: boolean = exec.isEnabled(run);
  exec.setKernelArgs(run, a, cuda.int32(128), { grid: 1, block: 128 }).launch(stream);
  // @ts-expect-error: a node's new arguments take no dependencies
  exec.setKernelArgs(run, a, cuda.int32(128), { block: 128, after: run });
  // @ts-expect-error: a kernel node takes no stream
  graph.addKernel(kernel, b, { block: 1, stream });
  graph.setKernelArgs(run, b, cuda.int32(64), { grid: 4, block: 64 }).instantiate();
  const params = run.params();
  if (params !== null && 'args' in params) console.log(params.grid[0], params.kernel, params.args?.byteLength);
  if (params !== null && 'pitch' in params) console.log(params.dest + 1n, params.elementSize);
  graph.addMemAlloc(64).memory.free(stream);
  graph.setMemset(set, a, 2, 256, { elementSize: 4 }).setMemcpy(copy, b, a, 512);
  exec.setMemset(set, a, 3, 256, { elementSize: 4 }).setMemcpy(copy, b, a, 1024);
  const handle: bigint = graph.instantiate({ deviceLaunch: true }).deviceHandle;
  console.log(cuda.uint64(handle));
  graph.addMemcpy(cuda.pagelockedEmpty(256, 'float32'), b, 1024, { after: copy });
  const planar = new cuda.Memcpy2D();
  graph.addMemcpy(planar, { after: graph.addMemcpy(new cuda.Memcpy3D()) });
  const readCopy = copy.params() as cuda.MemcpyNodeParams;
  console.log(readCopy.src, readCopy.width);
  console.log(kind, index, same, edges, dot, on, graph.nodes().length, graph.addEmpty().type);
}

void built;

function captureInto(stream: cuda.Stream, graph: cuda.Graph, node: cuda.GraphNode): void {
  stream.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: graph, after: [node] });
  const info: cuda.CaptureInfo = stream.captureInfo();
  const id: bigint | null = info.id;
  const deps: cuda.GraphNode[] | number = info.dependencies;
  const capturing: boolean = stream.isCapturing();
  const same: cuda.Graph = stream.endCapture();
  console.log(id, deps, capturing, same, info.status === 'active');
}

void captureInto;

function conditional(kernel: cuda.Kernel, left: cuda.DeviceAllocation): void {
  const graph = new cuda.Graph();
  const handle: cuda.ConditionalHandle = graph.conditionalHandle({ default: 1, resetEachLaunch: true });
  const { node, bodies } = graph.addConditional(handle, 'while');
  bodies[0].addKernel(kernel, cuda.uint64(handle.value), left, { block: 1 });
  const cases = graph.addConditional(graph.conditionalHandle(), 'switch', { size: 4, after: node });
  // @ts-expect-error: the kinds are if, while and switch
  graph.addConditional(handle, 'until');
  console.log(cases.bodies.length, handle.graph === graph);
}

void conditional;
