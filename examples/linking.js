'use strict';
// Linking: a kernel in one source calls a device function of another. Both are compiled to LTO-IR,
// linked with link-time optimization into one cubin, and loaded as a Library, whose kernel runs
// in the current context. Run: node examples/linking.js
const cuda = require('cudadrv');
const { compileSync, Linker } = require('cudadrv/compiler');

if (!cuda.isAvailable()) {
  console.error('linking: no CUDA driver or device here');
  process.exit(1);
}
const ctx = new cuda.Device(0).retainPrimaryContext();
ctx.push();
try {
  const library = compileSync('__device__ float twice(float x) { return 2 * x; }', { lto: true, name: 'twice.cu' });
  const main = compileSync(
    '__device__ float twice(float x);\n__global__ void apply(float *p) { p[threadIdx.x] = twice(p[threadIdx.x]); }',
    { lto: true, name: 'apply.cu' },
  );
  const cubin = new Linker({ lto: true }).add(library).add(main).link();
  const code = cuda.libraryFromBuffer(cubin);
  const data = Float32Array.from({ length: 8 }, (_, i) => i + 0.5);
  code
    .getKernel('apply')(cuda.InOut(data), { block: [data.length, 1, 1] })
    .then(() => {
      console.log('doubled:', Array.from(data).join(' '));
      code.unload();
      cuda.Context.pop();
      ctx.detach();
    });
} catch (error) {
  cuda.Context.pop();
  ctx.detach();
  throw error;
}
