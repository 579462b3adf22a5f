// quick-start.mjs: multiply two arrays on the GPU
import cuda from 'cudadrv';
import { SourceModule } from 'cudadrv/compiler';

if (!cuda.isAvailable()) {
  console.error('quick-start: no CUDA driver or device here');
  process.exit(1);
}
await import('cudadrv/autoprimaryctx'); // device 0's primary context, current until exit

const multiply = new SourceModule(`
  __global__ void multiply(float *dest, const float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dest[i] = a[i] * b[i];
  }`).getFunction('multiply');

const n = 1000;
const a = Float32Array.from({ length: n }, Math.random);
const b = Float32Array.from({ length: n }, Math.random);
const dest = new Float32Array(n);
// In/Out copy host arrays in and out; the call returns a Promise once dest has arrived.
await multiply(cuda.Out(dest), cuda.In(a), cuda.In(b), n, { block: [256], grid: [Math.ceil(n / 256)] });
console.log(dest[0] === Math.fround(a[0] * b[0])); // true
