#!/usr/bin/env node
'use strict';
// Streams and events: two streams working at once, one ordered after the other with an event,
// timed with events, and waited for with Promises while the event loop stays free.
const cuda = require('cudadrv');
const { SourceModule } = require('cudadrv/compiler');

async function main() {
  if (!cuda.isAvailable() || cuda.Device.count() === 0) {
    console.error('streams-events: no CUDA device here (cuda.isAvailable() is false)');
    process.exit(1);
  }
  const { context } = require('cudadrv/autoprimaryctx');
  const module = new SourceModule(`
    __global__ void fill(float *out, float value, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = value;
    }
    __global__ void add(float *out, const float *a, const float *b, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = a[i] + b[i];
    }`);
  const fill = module.getFunction('fill');
  const add = module.getFunction('add');

  const n = 1 << 24;
  const launch = { block: [256], grid: [Math.ceil(n / 256)] };
  const [a, b, sum] = [0, 1, 2].map(() => cuda.memAlloc(n * 4));

  // Two streams fill a and b at the same time; the second waits for the first's event before
  // adding, so the sum sees both.
  const first = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
  const second = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
  const start = new cuda.Event().record(second);
  fill(a, 1.5, n, { ...launch, stream: first });
  const aReady = new cuda.Event().record(first);
  fill(b, 2.25, n, { ...launch, stream: second });
  second.waitForEvent(aReady);
  add(sum, a, b, n, { ...launch, stream: second });
  const end = new cuda.Event().record(second);

  let ticks = 0;
  const ticker = setInterval(() => ticks++, 1);
  await end.synchronize(); // a Promise: timers keep firing meanwhile
  clearInterval(ticker);
  await second.launchHostFunc(() => console.log('the second stream has passed its work'));

  const result = cuda.fromDevice(sum, n, 'float32');
  const right = result.every((x) => x === 3.75);
  console.log(
    `${context.device.name()}: fill, fill and add of ${n} floats took ` +
      `${end.timeSince(start).toFixed(3)} ms on the GPU; ${ticks} timer ticks ran while waiting; ` +
      `every sum is 3.75: ${right}`,
  );
  process.exitCode = right ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
