#!/usr/bin/env node
'use strict';
// Run-time compilation with NVRTC: PTX and cubins, C++ templates, the cache, compile errors, and
// (where there is a GPU) a SourceModule whose kernel is checked against the CPU.
// Compiling needs no GPU: `node examples/compile.js` works on any machine with NVRTC.
const cuda = require('cudadrv');
const { compile, compileSync, SourceModule } = require('cudadrv/compiler');

const SAXPY = `
__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}`;

async function main() {
  console.log(`NVRTC ${cuda.nvrtcVersion().join('.')}`);

  // PTX for a virtual architecture, compiled on a thread of its own
  const ptx = await compile(SAXPY, { code: 'compute_90' });
  const entries = [...ptx.toString().matchAll(/\.entry (\w+)/g)].map((m) => m[1]);
  console.log(`PTX for ${ptx.target}: ${ptx.length} bytes, entry points ${entries.join(', ')}`);

  // a cubin for a real one; the second compile of the same source comes from the cache
  let start = process.hrtime.bigint();
  const cubin = compileSync(SAXPY, { arch: 'sm_120' });
  const first = Number(process.hrtime.bigint() - start) / 1e6;
  start = process.hrtime.bigint();
  compileSync(SAXPY, { arch: 'sm_120' });
  const again = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(
    `cubin for ${cubin.target}: ${cubin.length} bytes in ${first.toFixed(1)} ms, ` +
      `then ${(again * 1000).toFixed(0)} us from the cache`,
  );

  // C++ templates, looked up by their lowered names
  const templated = compileSync('template <typename T> __global__ void fill(T *x, T v) { x[threadIdx.x] = v; }', {
    code: 'compute_90',
    nameExpressions: ['fill<float>', 'fill<double>'],
  });
  console.log('lowered names:', templated.loweredNames);

  // warnings go to messageHandler (and image.log), errors are CompileErrors with the whole log
  compileSync('__global__ void k(int *x) { int unused; x[0] = 1; }', {
    messageHandler: (log) => console.log(`NVRTC warned: ${log.split('\n')[0]}`),
  });
  try {
    compileSync('__global__ void k(float *x) { x[0] = undefined_name; }', { name: 'broken.cu' });
  } catch (error) {
    if (!(error instanceof cuda.CompileError)) throw error;
    console.log(`${error.name} (${error.codeName}) in ${error.source}:\n${error.log.trim()}`);
  }

  if (!cuda.isAvailable() || cuda.Device.count() === 0) {
    console.log('No GPU here: compiled only.');
    return;
  }
  // compile for this GPU and run: y = a*x + y, checked against the CPU
  const context = new cuda.Device(0).makeContext();
  try {
    const mod = await SourceModule.compile(SAXPY);
    const n = 1 << 20;
    const x = Float32Array.from({ length: n }, () => Math.random());
    const y = Float32Array.from({ length: n }, () => Math.random());
    const a = Math.fround(2.5);
    const expected = y.map((v, i) => Math.fround(a * x[i] + v));
    await mod.getFunction('saxpy')(cuda.float32(a), cuda.In(x), cuda.InOut(y), cuda.int32(n), {
      block: [256, 1, 1],
      grid: [Math.ceil(n / 256), 1],
    });
    const wrong = y.findIndex((v, i) => v !== expected[i]);
    console.log(
      wrong < 0
        ? `saxpy on ${new cuda.Device(0).name()}: all ${n} results match the CPU`
        : `saxpy: element ${wrong} is ${y[wrong]}, the CPU says ${expected[wrong]}`,
    );
  } finally {
    context.detach();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
