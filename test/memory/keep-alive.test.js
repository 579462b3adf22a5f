'use strict';
// Async copies keep their page-locked buffers alive until the stream has passed them, with a
// stream callback, which the driver holds the stream up at. On a Stream of the user's at most one
// is in flight: buffers kept meanwhile ride on the next one, enqueued when it settles (or when the
// stream is destroyed). The stand-in's trace counts the callbacks; the bytes must still arrive and
// every buffer be let go.
const { childRunner } = require('../support/graph-child');

describe('keep-alives of async copies through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run } = childRunner('cudadrv-keep-', { FAKE_CUDA_TRACE: '1' });
  const callbacks = `log().filter((line) => line === 'call cuStreamAddCallback').length`;

  it('100 copies on a Stream: two callbacks (the first, and one for the rest once it settled); every buffer arrives and is let go', function () {
    run(`
      const stream = new cuda.Stream();
      const device = cuda.memAlloc(100 * 64);
      const kept = new FinalizationRegistry((i) => released.add(i));
      const released = new Set();
      const expected = new Uint8Array(100 * 64);
      (() => {
        for (let i = 0; i < 100; i++) {
          const pinned = cuda.pagelockedEmpty(64, 'uint8').fill(i + 1);
          expected.fill(i + 1, i * 64, (i + 1) * 64);
          cuda.memcpyHtoDAsync(device.slice(i * 64, 64), pinned, stream);
          kept.register(pinned, i);
        }
      })();
      assert.strictEqual(${callbacks}, 1, 'one in flight; the other 99 wait for it');
      globalThis.gc();
      await new Promise((resolve) => setImmediate(resolve));
      assert.strictEqual(${callbacks}, 2, 'the first settled: one more for the 99');
      for (let i = 0; i < 20 && released.size < 100; i++) {
        globalThis.gc();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.strictEqual(released.size, 100, 'every kept buffer was let go');
      assert.deepStrictEqual(cuda.fromDevice(device, 100 * 64, 'uint8'), expected);
      // the default stream keeps one callback a copy, as before
      const before = ${callbacks};
      const pinned = cuda.pagelockedEmpty(64, 'uint8');
      for (let i = 0; i < 5; i++) cuda.memcpyHtoDAsync(device, pinned);
      assert.strictEqual(${callbacks} - before, 5);
    `);
  });

  it('a Stream destroyed while buffers wait hands them to the driver first; one dropped with them too; the process exits', function () {
    run(`
      const device = cuda.memAlloc(64);
      const stream = new cuda.Stream();
      for (let i = 0; i < 10; i++) cuda.memcpyHtoDAsync(device, cuda.pagelockedEmpty(64, 'uint8'), stream);
      stream.destroy();
      const calls = log().filter((line) => line.startsWith('call ')).map((line) => line.slice(5).replace(/_v\\d+$/, ''));
      const between = (list, from, to) => list.slice(list.lastIndexOf(from), list.lastIndexOf(to));
      assert.ok(between(calls, 'cuMemcpyHtoDAsync', 'cuStreamDestroy').includes('cuStreamAddCallback'), 'the waiting buffers went on the stream before it was destroyed');
      (() => {
        const dropped = new cuda.Stream();
        for (let i = 0; i < 10; i++) cuda.memcpyHtoDAsync(device, cuda.pagelockedEmpty(64, 'uint8'), dropped);
      })();
      for (let i = 0; i < 5; i++) {
        globalThis.gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
      const after = log().filter((line) => line.startsWith('call ')).map((line) => line.slice(5).replace(/_v\\d+$/, ''));
      assert.strictEqual(after.filter((c) => c === 'cuStreamDestroy').length, 2, 'the dropped stream was destroyed');
      assert.ok(between(after, 'cuMemcpyHtoDAsync', 'cuStreamDestroy').includes('cuStreamAddCallback'));
    `);
  });

  describe('with copies of page-locked memory queued (FAKE_CUDA_DEFER)', function () {
    const deferred = childRunner('cudadrv-keep-defer-', { FAKE_CUDA_DEFER: '1' });

    // One process a copy: a collected array's free (the reaper thread's cuMemFreeHost) waits for
    // the queued copies, as the driver's would, so an earlier case's would run the next one's.
    const cases = {
      'binding.memcpyDtoHAsync, page-locked dest': 'binding.memcpyDtoHAsync(host, device.ptr, stream)',
      'binding.memcpyHtoDAsync, page-locked src': 'binding.memcpyHtoDAsync(device.ptr, host, stream)',
      'binding.memcpyAtoH on a stream, page-locked dest': `binding.memcpyAtoH(host, new cuda.CudaArray({ width: 256, format: cuda.ArrayFormat.UNSIGNED_INT8, numChannels: 1 }), 0, stream)`,
      'Memcpy2D.run(stream), page-locked dest': `const copy = new cuda.Memcpy2D();
        copy.setSrcDevice(device);
        copy.setDstHost(host);
        Object.assign(copy, { srcPitch: 64, dstPitch: 64, widthInBytes: 64, height: 4 });
        copy.run(stream)`,
      'memcpyBatchAsync, page-locked src': 'cuda.memcpyBatchAsync([{ dest: device, src: host }], stream)',
    };
    for (const [name, enqueue] of Object.entries(cases)) {
      it(`${name}: the addon keeps the array while its copy is queued and lets it go once the stream passed it, whoever calls it (lib/ names nothing to keep: an array collected under a queued copy was written after it was freed)`, function () {
        deferred.run(`
          const binding = require(${JSON.stringify(require('path').join(__dirname, '..', '..', 'lib', 'internal', 'binding'))});
          const settle = async () => {
            for (let i = 0; i < 3; i++) {
              globalThis.gc();
              await new Promise((resolve) => setImmediate(resolve));
            }
          };
          const stream = new cuda.Stream();
          const device = cuda.memAlloc(4096);
          let weak;
          (() => {
            const host = cuda.pagelockedEmpty(256, 'uint8');
            weak = new WeakRef(host.buffer);
            ${enqueue};
          })();
          await settle();
          assert.ok(weak.deref(), 'kept while its copy is queued');
          stream.synchronize(); // runs the queued copy, then the callback that lets the array go
          await settle();
          assert.strictEqual(weak.deref(), undefined, 'let go once the stream passed it');
        `);
      });
    }
  });
});
