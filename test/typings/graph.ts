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
