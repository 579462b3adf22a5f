'use strict';
// Staged copies of pageable memory on a GPU: random data through the staging buffers both ways,
// a kernel computing on what was staged in (checked against the CPU), sizes that are no multiple
// of the buffers, a copy ordered after a kernel on a blocking stream (as cuMemcpyHtoD is), async
// copies ordered on their stream behind a running kernel (their arrays collected meanwhile), In
// and Out arguments on a stream, 2D and 3D copies into pitched memory, a stream of another context,
// and the buffers registered again after the context that registered them is gone.
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

  it('async copies wait for the kernel before them on their stream, and read the array before they return; In and Out arguments on a stream go through the buffers', async function () {
    cuda.pageableStaging({ threshold: 0, bufferBytes: 1 << 20 });
    const twice = new SourceModule(KERNELS).getFunction('twice');
    const n = 3 * 262144 + 11;
    const [x, next] = [random(n), random(n)];
    const sent = next.slice();
    const [dx, dy, dz] = [cuda.toDevice(x), cuda.memAlloc(4 * n), cuda.memAlloc(4 * n)];
    const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    const grid = Math.ceil(n / 256);
    twice(dx, dy, cuda.int32(n), cuda.uint64(30_000_000n), { block: 256, grid, stream });
    cuda.memcpyHtoDAsync(dx, next, stream); // after the kernel has read dx
    next.fill(0); // read before memcpyHtoDAsync returned
    // an array dropped as soon as its copy is queued, collected while the kernel still runs
    const dw = cuda.memAlloc(4 * n);
    cuda.memcpyHtoDAsync(dw, Float32Array.from(sent), stream);
    global.gc();
    twice(dx, dz, cuda.int32(n), cuda.uint64(0n), { block: 256, grid, stream });
    const [y, z] = [new Float32Array(n), new Float32Array(n)];
    cuda.memcpyDtoHAsync(y, dy, stream);
    cuda.memcpyDtoHAsync(z, dz, stream); // pageable: filled when it returns
    const cpu = (v) => v.map((e) => Math.fround(Math.fround(2 * e) + 1));
    assert.deepStrictEqual(y, cpu(x));
    assert.deepStrictEqual(z, cpu(sent));
    assert.deepStrictEqual(cuda.fromDevice(dw, n, 'float32'), sent);
    const out = new Float32Array(n);
    await twice(cuda.In(x), cuda.Out(out), cuda.int32(n), cuda.uint64(0n), { block: 256, grid, stream });
    assert.deepStrictEqual(out, cpu(x));
  });

  it('2D and 3D copies between pageable arrays and pitched device memory, both ways, sync and async: every byte where the CPU puts it', function () {
    cuda.pageableStaging({ threshold: 0, bufferBytes: 1 << 20 });
    const stream = new cuda.Stream();
    const bytes = (n) => Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256));
    for (const [width, rows, depth] of [
      [3000, 700, 0],
      [1000, 300, 9],
      [70000, 40, 0],
    ]) {
      const planar = depth === 0;
      const d = Math.max(depth, 1);
      const { allocation, pitch } = cuda.memAllocPitch(width, rows * d);
      const hostPitch = width + 100;
      const host = bytes(hostPitch * rows * d);
      for (const async of [false, true]) {
        const copy = (toDevice, array) => {
          const c = planar ? new cuda.Memcpy2D() : new cuda.Memcpy3D();
          c.widthInBytes = width;
          c.height = rows;
          if (!planar) {
            c.depth = d;
            c.srcHeight = c.dstHeight = rows;
          }
          if (toDevice) {
            c.setSrcHost(array);
            c.srcPitch = hostPitch;
            c.setDstDevice(allocation);
            c.dstPitch = pitch;
          } else {
            c.setSrcDevice(allocation);
            c.srcPitch = pitch;
            c.setDstHost(array);
            c.dstPitch = hostPitch;
          }
          c.run(async ? stream : undefined);
        };
        copy(true, host);
        const back = bytes(host.length); // the gaps between rows keep what they had
        const want = back.slice();
        for (let r = 0; r < rows * d; r++) want.set(host.subarray(r * hostPitch, r * hostPitch + width), r * hostPitch);
        copy(false, back);
        stream.synchronize();
        assert.ok(Buffer.compare(back, want) === 0, JSON.stringify({ width, rows, depth, async }));
      }
    }
  });

  it('an async copy on a stream of another context than the current one is right both ways', function () {
    cuda.pageableStaging({ threshold: 0, bufferBytes: 1 << 20 });
    const stream = new cuda.Stream(); // the current context's
    const x = random(3 * 262144 + 5);
    const memory = cuda.memAlloc(x.byteLength);
    const other = new cuda.Device(0).makeContext(); // current now
    try {
      cuda.memcpyHtoDAsync(memory, x, stream);
      const back = new Float32Array(x.length);
      cuda.memcpyDtoHAsync(back, memory, stream);
      assert.deepStrictEqual(back, x);
    } finally {
      other.detach();
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
