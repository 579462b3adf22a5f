#!/usr/bin/env node
'use strict';
// Hello, GPU: compiles a kernel with NVRTC, multiplies two random arrays with it, and checks
// every product against the CPU's. In and Out copy the arrays to the device and back.
const cuda = require('cudadrv');
const { SourceModule } = require('cudadrv/compiler');

async function main() {
  if (!cuda.isAvailable() || cuda.Device.count() === 0) {
    console.error('hello-gpu: no CUDA device here (cuda.isAvailable() is false)');
    process.exit(1);
  }
  const ctx = new cuda.Device(0).makeContext();
  try {
    const module = new SourceModule(`
      __global__ void multiply_them(float *dest, const float *a, const float *b, int n)
      {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) dest[i] = a[i] * b[i];
      }`);
    const multiplyThem = module.getFunction('multiply_them');

    const n = 1 << 20;
    const a = Float32Array.from({ length: n }, () => Math.random() - 0.5);
    const b = Float32Array.from({ length: n }, () => Math.random() - 0.5);
    const dest = new Float32Array(n);

    // Out/In make the call return a Promise that resolves once dest has been copied back.
    await multiplyThem(cuda.Out(dest), cuda.In(a), cuda.In(b), cuda.int32(n), {
      block: [256],
      grid: [Math.ceil(n / 256)],
    });

    let wrong = 0;
    for (let i = 0; i < n; i++) if (dest[i] !== Math.fround(a[i] * b[i])) wrong++;
    console.log(`${ctx.device.name()}: ${n - wrong} of ${n} products equal the CPU's`);
    process.exitCode = wrong === 0 ? 0 : 1;
  } finally {
    ctx.detach();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
