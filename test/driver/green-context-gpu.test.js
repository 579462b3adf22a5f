'use strict';
// Green contexts on the GPU: kernels in two green contexts made of disjoint SM groups run each on
// its own share of SMs (%smid), compute what the CPU does, and one context's work waits for an
// event recorded in the other.
const assert = require('assert');
const cuda = require('../..');
const { SourceModule } = require('../../lib/compiler');
const { describeGpu } = require('../support/gpu');

const KERNEL = `
// out = 2 * in + 1; sms[block] = the SM the block ran on
extern "C" __global__ void work(const float *in, float *out, unsigned *sms, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i] + 1.0f;
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    sms[blockIdx.x] = sm;
  }
}`;
const BLOCKS = 512;
const THREADS = 256;
const N = BLOCKS * THREADS;

describeGpu('green contexts on the GPU', function () {
  this.timeout(120000);

  it('two green contexts on disjoint SM groups: each kernel runs on its own SMs, results are right, events order them', async function () {
    const device = cuda.Context.getDevice();
    const all = device.smResource();
    assert.ok(all.smCount > 0 && all.smCoscheduledAlignment > 0, JSON.stringify({ ...all })); // H100: 132 SMs, aligned by 8
    const { groups } = all.split({ groups: 2, minCount: Math.max(all.minSmPartitionSize, 8) });
    assert.strictEqual(groups.length, 2);
    const greens = groups.map((g) => device.makeGreenContext(g));
    try {
      const input = Float32Array.from({ length: N }, () => Math.random() * 2 - 1);
      const expected = input.map((v) => Math.fround(Math.fround(2 * v) + 1));
      const runs = [];
      for (const green of greens) {
        green.push();
        try {
          assert.strictEqual(green.smResource().smCount, groups[greens.indexOf(green)].smCount);
          const work = new SourceModule(KERNEL).getFunction('work');
          const stream = new cuda.Stream();
          const [din, dout, dsms] = [cuda.toDevice(input), cuda.memAlloc(4 * N), cuda.memAlloc(4 * BLOCKS)];
          work(din, dout, dsms, cuda.int32(N), { block: THREADS, grid: BLOCKS, stream });
          await stream.synchronize();
          runs.push({
            out: cuda.fromDevice(dout, N, 'float32'),
            sms: new Set(cuda.fromDevice(dsms, BLOCKS, 'uint32')),
          });
        } finally {
          cuda.Context.pop();
        }
      }
      for (const [i, { out, sms }] of runs.entries()) {
        assert.deepStrictEqual(out, expected);
        assert.ok(sms.size <= groups[i].smCount, `${sms.size} SMs used, the group has ${groups[i].smCount}`);
      }
      const shared = [...runs[0].sms].filter((sm) => runs[1].sms.has(sm));
      assert.deepStrictEqual(shared, [], 'the two groups share no SM');
      // an event recorded in one green context (made in it), waited for in the other
      greens[0].push();
      const event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      cuda.Context.pop();
      greens[0].recordEvent(event);
      greens[1].waitEvent(event);
      await event.synchronize();
    } finally {
      for (const green of greens) green.detach();
    }
  });
});
