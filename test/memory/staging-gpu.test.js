'use strict';
// Staged copies of pageable memory on a GPU: random data through the staging buffers both ways,
// a kernel computing on what was staged in (checked against the CPU), sizes that are no multiple
// of the buffers, a copy ordered after a kernel on a blocking stream (as cuMemcpyHtoD is), and
// the buffers registered again after the context that registered them is gone.
const assert = require('assert');
const cuda = require('../..');
const { SourceModule } = require('../../lib/compiler');
const { describeGpu } = require('../support/gpu');

const KERNELS = `
  // y[i] = 2 * x[i] + 1, after spinning for spin ns (so that the kernel is still running when the
  // host queues a copy behind it)
  extern "C" __global__ void twice(const float *x, float *y, int n, unsigned long long spin) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < spin);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
  }`;
const random = (n) => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);

describeGpu('staged copies of pageable memory on the GPU', function () {
  this.timeout(120000);
  let saved;
  before(() => (saved = cuda.pageableStaging()));
  after(() => cuda.pageableStaging({ ...saved, idleMs: 10000 }));

  it('random data through the buffers both ways; a kernel computes on it as the CPU does; a copy waits for a kernel before it', async function () {
    cuda.pageableStaging({ threshold: 0, bufferBytes: 1 << 20 });
    const twice = new SourceModule(KERNELS).getFunction('twice');
    for (const n of [262144, 262145, 3 * 262144 - 7, 10 * 262144 + 3]) {
      const x = random(n);
      const dx = cuda.toDevice(x);
      const dy = cuda.memAlloc(4 * n);
      const stream = new cuda.Stream(); // blocking: the staged copy, on the legacy stream, waits for it
      twice(dx, dy, cuda.int32(n), cuda.uint64(20_000_000n), { block: 256, grid: Math.ceil(n / 256), stream });
      const y = new Float32Array(n);
      cuda.memcpyDtoH(y, dy);
      assert.deepStrictEqual(
        y,
        x.map((v) => Math.fround(Math.fround(2 * v) + 1)),
        String(n),
      );
      assert.deepStrictEqual(cuda.fromDevice(dx, n, 'float32'), x);
    }
  });

  it('after the context that registered the buffers is detached, they are registered in the next', function () {
    cuda.pageableStaging({ threshold: 0, bufferBytes: 1 << 20 });
    for (let round = 0; round < 3; round++) {
      const ctx = new cuda.Device(0).makeContext();
      try {
        const x = random(1 << 20);
        assert.deepStrictEqual(cuda.fromDevice(cuda.toDevice(x), x.length, 'float32'), x);
      } finally {
        ctx.detach();
      }
    }
  });
});
