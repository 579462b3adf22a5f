#!/usr/bin/env node
'use strict';
// CUDA graphs: a chain of 100 small kernel launches captured once from a stream, then replayed as
// one graph launch. Prints what enqueueing the chain costs the host both ways, and checks that
// both give the same result. Without a GPU or driver it says so in one line and exits 1.
const cuda = require('cudadrv');
const { SourceModule } = require('cudadrv/compiler');

const N = 1 << 16;
const STEPS = 100;
let context;
try {
  context = new cuda.Device(0).makeContext();
} catch (error) {
  console.error(`No CUDA device to run on: ${error.message}`);
  process.exit(1);
}
const axpy = new SourceModule(`
__global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}`).getFunction('axpy');

const x = Float32Array.from({ length: N }, (_, i) => (i % 7) * 0.5);
const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
// on the stream: a NON_BLOCKING stream does not wait for the legacy stream, where memcpyHtoD goes
const dx = cuda.memAlloc(N * 4);
cuda.memcpyHtoDAsync(dx, x, stream);
const dy = cuda.memAlloc(N * 4);
const launch = { block: [256, 1, 1], grid: [N / 256, 1], stream };
const chain = () => {
  for (let step = 0; step < STEPS; step++) axpy(dy, dx, cuda.float32(0.25), cuda.int32(N), launch);
};

async function run(label, enqueue) {
  cuda.memsetD32Async(dy, 0, N, stream);
  await stream.synchronize();
  const start = process.hrtime.bigint();
  enqueue();
  const hostUs = Number(process.hrtime.bigint() - start) / 1e3;
  await stream.synchronize();
  const y = cuda.fromDevice(dy, N, Float32Array);
  console.log(`${label}: ${hostUs.toFixed(1)} µs of host time to enqueue ${STEPS} kernels; y[13] = ${y[13]}`);
  return y;
}

async function main() {
  chain(); // the first launches, outside the capture, settle the argument formats
  await stream.synchronize();

  stream.beginCapture(); // from here the stream records instead of running
  chain();
  const graph = stream.endCapture();
  const exec = graph.instantiate().upload(stream);
  console.log(`captured ${graph.nodeCount} kernel launches`);

  const oneByOne = await run('one launch at a time', chain);
  const replayed = await run('one graph launch    ', () => exec.launch(stream));
  const same = oneByOne.every((value, i) => value === replayed[i]);
  console.log(same ? 'the graph gives the same result' : 'MISMATCH between the graph and the launches');

  exec.destroy();
  graph.destroy();
  context.detach();
  process.exitCode = same ? 0 : 1;
}

main();
