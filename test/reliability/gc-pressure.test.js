'use strict';
// Garbage collection is invisible: no release it causes runs on the main thread where it could
// wait for the device, or makes other streams wait. With a 400 ms kernel running, collecting 20
// dropped alignedEmpty arrays took the main thread 403 ms (free() unmaps pages the GPU may map),
// and collecting 20 managedEmpty arrays held a copy on another stream until the kernel ended
// (cuMemFree of managed memory waits for the device while holding other streams' work back).
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const cuda = require('../..');
const { describeGpu } = require('../support/gpu');
const { tracedCalls } = require('../support/stand-in-driver');

const ticks = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('collecting dropped memory (stand-in driver)', function () {
  this.timeout(60000);
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  it('releases on the reaper thread: the main thread stays free, and managed memory waits for the context first', function () {
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-gc-')), 'trace');
    const script = `
      const fs = require('fs');
      const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
      const context = new cuda.Device(0).makeContext();
      const stream = new cuda.Stream();
      let kept = [
        ...Array.from({ length: 3 }, () => cuda.managedEmpty(1024, 'float32')),
        ...Array.from({ length: 3 }, () => cuda.alignedEmpty(1 << 20, 'uint8')),
        ...Array.from({ length: 2 }, () => cuda.pagelockedEmpty(1024, 'float32')),
        ...Array.from({ length: 2 }, () => cuda.memAlloc(4096)),
        cuda.memAllocAsync(4096, stream), stream, new cuda.Event(),
      ];
      fs.appendFileSync(process.env.FAKE_CUDA_LOG, 'mark collect\\n');
      kept = null;
      const start = performance.now();
      global.gc();
      setImmediate(() => setImmediate(() => {
        const elapsed = performance.now() - start;
        setTimeout(() => { // the reaper's releases, each waiting ${'${'}FAKE_CUDA_SYNC_MS} ms in cuCtxSynchronize
          fs.appendFileSync(process.env.FAKE_CUDA_LOG, 'end\\n');
          console.log(JSON.stringify({ elapsed }));
        }, 3000);
      }));`;
    const run = spawnSync(process.execPath, ['--expose-gc', '-e', script], {
      encoding: 'utf8',
      env: {
        ...process.env,
        LD_LIBRARY_PATH: standIn.dir,
        FAKE_CUDA_TRACE: '1',
        FAKE_CUDA_LOG: log,
        FAKE_CUDA_SYNC_MS: '200',
      },
    });
    assert.strictEqual(run.status, 0, run.stderr);
    const { elapsed } = JSON.parse(run.stdout);
    assert.ok(elapsed < 100, `the collection took the main thread ${elapsed.toFixed(1)} ms (each sync takes 200)`);
    const calls = tracedCalls(log).collect;
    fs.rmSync(path.dirname(log), { recursive: true });
    const count = (name) => calls.filter((c) => c === name).length;
    // 3 managed + 2 device + 1 ordered cuMemFree and 2 cuMemFreeHost, each after a synchronize
    // (cuMemFree waiting for the device held other streams' work back; cuCtxSynchronize did not)
    assert.strictEqual(count('cuMemFree_v2'), 6, calls.join(' '));
    assert.strictEqual(count('cuMemFreeHost'), 2);
    // The main thread's own calls (the event's destroy) may land between a sync and its free in
    // the log, so only the reaper's two kinds of call are read: each free follows its own sync.
    const reaper = calls.filter((c) => /^cuMemFree|^cuCtxSynchronize$/.test(c)).join(' ');
    assert.match(reaper, /^(cuCtxSynchronize cuMemFree(_v2|Host) ?){8}$/, calls.join(' '));
  });
});

describeGpu('collecting dropped memory while a kernel runs', function () {
  this.timeout(60000);
  let spin;
  before(function () {
    const { SourceModule } = require('../../lib/compiler');
    spin = new SourceModule(`__global__ void spin(unsigned long long ns) {
      unsigned long long start; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
      for (unsigned long long now = start; now - start < ns;) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }`).getFunction('spin');
  });

  const KINDS = {
    alignedEmpty: () => cuda.alignedEmpty(1 << 20, 'float32'),
    managedEmpty: () => cuda.managedEmpty(1 << 18, 'float32'),
    pagelockedEmpty: () => cuda.pagelockedEmpty(1 << 18, 'float32'),
    memAlloc: () => cuda.memAlloc(4 << 20),
    memAllocAsync: () => cuda.memAllocAsync(4 << 20),
    registered: () => cuda.registerHostMemory(cuda.alignedEmpty(1 << 18, 'float32', { alignment: 4096 })),
    objects: () => [new cuda.Stream(), new cuda.Event(), cuda.memAlloc(64).slice(16)],
  };
  for (const [kind, make] of Object.entries(KINDS)) {
    it(`20 dropped ${kind}: the main thread is free at once, and another stream's copy is not held back`, async function () {
      const busy = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
      const other = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
      const source = cuda.memAlloc(64 << 20);
      const dest = cuda.memAlloc(64 << 20);
      const dropped = new Set(Array.from({ length: 20 }, make));
      await cuda.Context.synchronize();
      // the collector's own time over this heap, the dropped objects still held: the baseline
      const before = performance.now();
      global.gc();
      const baseline = performance.now() - before;
      spin(cuda.uint64(400_000_000n), { block: [1], grid: [1], stream: busy });
      dropped.clear(); // unreachable from here on
      const start = performance.now();
      global.gc(); // marking and sweeping the whole heap: the collector's own time
      const swept = performance.now();
      await ticks(); // the finalizers, and the releases they start
      const collected = performance.now() - start;
      const finalized = performance.now() - swept;
      cuda.memcpyDtoDAsync(dest, source, 64 << 20, other);
      await other.synchronize();
      const copied = performance.now() - start;
      const kernelStillRunning = !busy.isDone();
      await busy.synchronize();
      // nothing of this test is left for the next one's collection
      [source, dest, busy, other].forEach((o) => (o.free ?? o.destroy).call(o));
      global.gc();
      await ticks();
      await cuda.Context.synchronize();
      console.log(
        `      ${kind}: gc() and finalizers ${collected.toFixed(1)} ms (finalizers ${finalized.toFixed(1)}, ` +
          `gc() before dropping ${baseline.toFixed(1)}), ` +
          `copy done after ${copied.toFixed(1)} ms`,
      );
      assert.ok(finalized < 5, `the finalizers took the main thread ${finalized.toFixed(1)} ms`);
      // a collection that waited for the 400 ms kernel would take far more than one of this heap
      assert.ok(
        collected - baseline < 50,
        `the collection took the main thread ${collected.toFixed(1)} ms, ${baseline.toFixed(1)} ms without the dropped objects`,
      );
      assert.ok(
        kernelStillRunning,
        `the copy on another stream finished only after the 400 ms kernel (${copied.toFixed(0)} ms)`,
      );
    });
  }
});
