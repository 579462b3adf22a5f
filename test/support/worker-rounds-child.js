'use strict';
// Rounds of worker threads that alone load cudadrv, each terminated mid-compile, mid-link,
// mid-wait (Context.synchronize() on a thread, FAKE_CUDA_SYNC_MS long on the stand-in), idle
// (holding memory, registered host memory, one registration only the addon holds, async copies
// of page-locked arrays the addon keeps, a graph), or
// idle holding Hopper's objects (a green context with a stream, a tensor map, launch events, and a
// detached green context whose stream and memory are still held);
// then the main thread loads cudadrv, compiles, and copies through the driver. Run by
// test/reliability/workers.test.js; argument: the number of rounds. Prints a JSON summary.
const { Worker } = require('worker_threads');
const path = require('path');
const root = path.join(__dirname, '..', '..');
const rounds = Number(process.argv[2]) || 100;

const MODES = {
  compile: `compile(source(), { arch: 'compute_90', cacheDir: false }).then(done);`,
  link: `const input = compileSync(source(), { arch: 'sm_90', relocatable: true, lto: true, cacheDir: false });
    new Linker({ arch: 'sm_90', lto: true, cacheDir: false }).add(input).linkAsync().then(done);`,
  wait: `const context = new cuda.Device(0).makeContext();
    cuda.Context.synchronize().then(done);`,
  idle: `const context = new cuda.Device(0).makeContext();
    const memory = cuda.memAlloc(1 << 20);
    const stream = new cuda.Stream();
    const registered = cuda.registerHostMemory(cuda.alignedEmpty(8192, 'uint8'));
    cuda.registerHostMemory(cuda.alignedEmpty(8192, 'uint8')); // dropped: the addon holds its buffer
    cuda.memcpyDtoHAsync(registered, memory, stream);
    cuda.memcpyHtoDAsync(memory, cuda.pagelockedEmpty(1 << 16, 'uint8'), stream); // dropped: kept by the addon
    const graph = new cuda.Graph();
    graph.addEmpty();
    if (!graph.toDot().startsWith('digraph')) throw new Error('toDot() gave ' + graph.toDot());`,
  hopper: `const device = new cuda.Device(0);
    const context = device.makeContext();
    const green = device.makeGreenContext(device.smResource().split({ minCount: 8 }).groups);
    const stream = green.makeStream();
    const memory = cuda.memAlloc(1 << 16);
    const map = cuda.TensorMap.tiled({ memory, dataType: 'float32', globalDim: [64, 64], boxDim: [16, 8] });
    const event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
    new cuda.Module('entry tma 128 8\\n').getFunction('tma')(map, memory,
      { block: 1, grid: 4, stream, completionEvent: event, programmaticStreamSerialization: true });
    green.waitEvent(event);
    // a green context detached with a stream and memory of it held: destroyed at their release,
    // which the worker's teardown makes
    const detached = device.makeGreenContext(device.smResource().split({ minCount: 8 }).groups);
    detached.push();
    const heldStream = new cuda.Stream();
    const heldMemory = cuda.memAlloc(4096);
    cuda.memsetD8Async(heldMemory, 1, 4096, heldStream);
    cuda.Context.pop();
    detached.detach();`,
};

function workerCode(mode) {
  return `
    const { parentPort } = require('worker_threads');
    const cuda = require(${JSON.stringify(root)});
    const { compile, compileSync, Linker } = require(${JSON.stringify(path.join(root, 'lib', 'compiler'))});
    // a compile of about 0.1 s, new to each round
    const source = () => \`__global__ void k(float *x) { float a = x[threadIdx.x] * \${Math.random()}f;
      #pragma unroll
      for (int i = 0; i < 8; i++) a = a * x[(i * 7) & 255] + sinf(a + i);
      x[threadIdx.x] = a; }\`;
    const done = () => parentPort.postMessage('done');
    ${MODES[mode]}
    parentPort.postMessage('started');`;
}

async function main() {
  const seen = { compile: 0, link: 0, wait: 0, idle: 0, hopper: 0 };
  const finishedFirst = { compile: 0, link: 0, wait: 0, idle: 0, hopper: 0 }; // done before terminate()
  const modes = Object.keys(MODES);
  for (let round = 0; round < rounds; round++) {
    const mode = modes[round % modes.length];
    const worker = new Worker(workerCode(mode), { eval: true });
    let finished = false;
    worker.on('message', (message) => (finished ||= message === 'done'));
    worker.on('error', (error) => {
      console.error(`round ${round} (${mode}): ${error.stack}`);
      process.exit(1);
    });
    await new Promise((resolve) => worker.once('message', resolve));
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
    await worker.terminate();
    seen[mode]++;
    if (finished) finishedFirst[mode]++;
  }
  const cuda = require(root);
  const { compileSync } = require(path.join(root, 'lib', 'compiler'));
  const image = compileSync('__global__ void after() {}', { arch: 'compute_90', cacheDir: false });
  const context = new cuda.Device(0).makeContext();
  const data = Float64Array.from({ length: 4096 }, Math.random);
  const back = new Float64Array(data.length);
  const memory = cuda.toDevice(data);
  cuda.memcpyDtoH(back, memory);
  memory.free();
  context.detach();
  const copied = back.every((x, i) => x === data[i]);
  console.log(JSON.stringify({ terminated: seen, finishedFirst, ptx: image.length > 0, copied }));
}

main();
