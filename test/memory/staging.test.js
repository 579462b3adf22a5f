'use strict';
// Staged copies of pageable host memory through the stand-in driver: which copies take the
// staging buffers (the driver's calls, traced) and which the driver's own path, every byte of
// random data through chunks of every shape, the settings and their refusals, a driver failure in
// the middle of a staged copy, the buffers freed when idle, and workers copying at once.
const path = require('path');
const { childRunner } = require('../support/graph-child');

const ROOT = path.join(__dirname, '..', '..');

describe('staged copies of pageable memory through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run } = childRunner('cudadrv-staging-', { FAKE_CUDA_TRACE: '1' });

  const PRELUDE = `
    let seen = 0;
    // the driver calls since the last look, as { name: count }
    const calls = () => {
      const lines = log().filter((l) => l.startsWith('call '));
      const counts = {};
      for (const l of lines.slice(seen)) if (l !== 'call cuCtxGetCurrent') counts[l.slice(5)] = (counts[l.slice(5)] || 0) + 1;
      seen = lines.length;
      return counts;
    };
    const random = (n) => Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256));
    const same = (a, b) => Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;
  `;

  it('copies of threshold bytes or more go through the buffers in chunks, every byte right; smaller, page-locked, async and disabled ones take the driver', function () {
    run(`${PRELUDE}
      const defaults = cuda.pageableStaging();
      assert.deepStrictEqual({ ...defaults, helpers: 0 }, { enabled: true, threshold: 16 << 20, bufferBytes: 16 << 20, helpers: 0, idleMs: 10000 });
      assert.ok(defaults.helpers >= 0 && defaults.helpers <= 7, String(defaults.helpers));
      const chunk = 65536;
      assert.deepStrictEqual(cuda.pageableStaging({ threshold: 100000, bufferBytes: chunk, helpers: 3 }),
        { enabled: true, threshold: 100000, bufferBytes: chunk, helpers: 3, idleMs: 10000 });
      calls();
      // sizes around the chunk's multiples, and an odd offset into a larger buffer
      for (const n of [100000, 2 * chunk, 2 * chunk + 1, 3 * chunk - 1, 5 * chunk + 4099, 40 * chunk + 3]) {
        const host = random(n + 7).subarray(7);
        const memory = cuda.toDevice(host);
        const chunks = Math.ceil(n / chunk);
        assert.deepStrictEqual(calls(), { cuMemAlloc_v2: 1, cuPointerGetAttributes: 2, cuEventCreate: 2, cuMemcpyHtoDAsync_v2: chunks, cuEventRecord: chunks, cuEventSynchronize: chunks, cuEventDestroy_v2: 2, ...(n === 100000 ? { cuMemHostRegister_v2: 2 } : {}) }, String(n));
        const back = cuda.fromDevice(memory, n, 'uint8');
        const into = new Uint8Array(n);
        cuda.memcpyDtoH(into, memory);
        assert.ok(same(back, host) && same(into, host), String(n));
        assert.strictEqual(calls().cuMemcpyDtoHAsync_v2, 2 * chunks);
        const other = random(n);
        cuda.memcpyHtoD(memory, other);
        assert.ok(same(cuda.fromDevice(memory, n, 'uint8'), other));
        calls();
      }
      // helpers 0: the calling thread alone; Float64Array data
      cuda.pageableStaging({ helpers: 0 });
      const doubles = Float64Array.from({ length: 70000 }, Math.random);
      assert.deepStrictEqual(cuda.fromDevice(cuda.toDevice(doubles), doubles.length, 'float64'), doubles);
      calls();
      // the driver's own path: fewer bytes, page-locked memory, async copies, staging off
      const memory = cuda.memAlloc(200000);
      calls();
      cuda.memcpyHtoD(memory, random(99999));
      assert.deepStrictEqual(calls(), { cuMemcpyHtoD_v2: 1 });
      const pinned = cuda.pagelockedEmpty([200000], 'uint8');
      calls();
      cuda.memcpyHtoD(memory, pinned);
      cuda.memcpyDtoH(pinned, memory);
      assert.deepStrictEqual(calls(), { cuPointerGetAttributes: 2, cuMemcpyHtoD_v2: 1, cuMemcpyDtoH_v2: 1 });
      cuda.memcpyHtoDAsync(memory, random(200000));
      assert.deepStrictEqual(calls(), { cuMemcpyHtoDAsync_v2: 1 });
      assert.strictEqual(cuda.pageableStaging({ enabled: false }).enabled, false);
      cuda.memcpyDtoH(new Uint8Array(200000), memory);
      assert.deepStrictEqual(calls(), { cuMemcpyDtoH_v2: 1 });
    `);
  });

  it('bad settings are refused with what to pass, and change nothing', function () {
    run(`${PRELUDE}
      const before = cuda.pageableStaging();
      for (const [settings, name, message] of [
        [null, 'TypeError', 'pageableStaging(): the options must be an object, not null'],
        [{ chunk: 1 }, 'TypeError', /^pageableStaging\\(\\): unknown option 'chunk'/],
        [{ enabled: 1 }, 'TypeError', 'enabled must be true or false, not number 1'],
        [{ threshold: -1 }, 'RangeError', /^threshold must be/],
        [{ bufferBytes: 4095 }, 'RangeError', 'bufferBytes must be an integer from 4096 to 268435456, not 4095'],
        [{ helpers: 16 }, 'RangeError', 'helpers must be an integer from 0 to 15, not 16'],
        [{ helpers: 1.5 }, 'RangeError', 'helpers must be an integer from 0 to 15, not 1.5'],
        [{ idleMs: -1 }, 'RangeError', 'idleMs must be an integer from 0 to 2147483647, not -1'],
      ]) assert.throws(() => cuda.pageableStaging(settings), { name, message });
      assert.deepStrictEqual(cuda.pageableStaging(), before);
      // the binding checks what reaches it, whoever calls it
      const binding = require(${JSON.stringify(require.resolve('../../lib/internal/binding'))});
      assert.throws(() => binding.stagingSettings(true, 0, 100, 0), { name: 'RangeError', message: 'staging: bufferBytes from 4096 to 2**28, helpers from 0 to 15' });
      assert.throws(() => binding.stagingSettings(true, 0, 4096, 99), { name: 'RangeError' });
      assert.throws(() => binding.stagingSettings(true, -5, 4096, 0), { name: 'RangeError' });
      assert.deepStrictEqual(cuda.pageableStaging(), before);
    `);
  });

  it("a driver failure in a staged copy is the copy's error, after what was queued is done; the next copies are right; idle buffers are freed", async function () {
    run(
      `${PRELUDE}
      const chunk = 65536;
      cuda.pageableStaging({ threshold: 0, bufferBytes: chunk, idleMs: 50 });
      const n = 6 * chunk;
      const memory = cuda.memAlloc(n);
      for (const [call, nth] of [['cuMemcpyHtoDAsync_v2', 3], ['cuEventRecord', 2], ['cuEventSynchronize', 4], ['cuMemcpyDtoHAsync_v2', 2]]) {
        process.env.FAKE_CUDA_FAIL = call + ':' + nth + ':2';
        const up = call !== 'cuMemcpyDtoHAsync_v2';
        assert.throws(() => (up ? cuda.memcpyHtoD(memory, random(n)) : cuda.memcpyDtoH(new Uint8Array(n), memory)), { name: 'MemoryError', api: call.replace(/_v2$/, ''), code: 2 });
        process.env.FAKE_CUDA_FAIL = '';
        const c = calls();
        assert.strictEqual(c.cuEventCreate, c.cuEventDestroy_v2, call + ': events destroyed');
        const data = random(n);
        cuda.memcpyHtoD(memory, data);
        assert.ok(same(cuda.fromDevice(memory, n, 'uint8'), data), call);
      }
      // a failing registration or event: the driver's own path, and the copy is right
      cuda.pageableStaging({ bufferBytes: 2 * chunk }); // new buffers to register
      for (const call of ['cuMemHostRegister_v2', 'cuEventCreate']) {
        process.env.FAKE_CUDA_FAIL = call + ':1:2';
        calls();
        const data = random(n);
        cuda.memcpyHtoD(memory, data);
        process.env.FAKE_CUDA_FAIL = '';
        assert.strictEqual(calls().cuMemcpyHtoD_v2, 1, call);
        assert.ok(same(cuda.fromDevice(memory, n, 'uint8'), data), call);
      }
      calls();
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepStrictEqual(calls(), { cuPointerGetAttributes: 2, cuMemHostUnregister: 2 });
      cuda.fromDevice(memory, n, 'uint8');
      assert.strictEqual(calls().cuMemHostRegister_v2, 2, 'registered again');
    `,
      { FAKE_CUDA_FAIL: '' },
    );
  });

  it('workers and the main thread copying at once: every byte right (one stages at a time, the others take the driver meanwhile); workers terminated mid-copy; exit 0', function () {
    run(`${PRELUDE}
      const { Worker } = require('worker_threads');
      cuda.pageableStaging({ threshold: 0, bufferBytes: 65536, helpers: 2 });
      const code = \`
        const { parentPort } = require('worker_threads');
        const cuda = require(${JSON.stringify(ROOT)});
        const ctx = new cuda.Device(0).makeContext();
        let wrong = 0;
        for (let i = 0; i < 30; i++) {
          const data = Float32Array.from({ length: 50000 + i * 999 }, Math.random);
          if (cuda.fromDevice(cuda.toDevice(data), data.length, 'float32').some((v, j) => v !== data[j])) wrong++;
        }
        parentPort.postMessage(wrong);
        for (;;) { const d = cuda.toDevice(new Float32Array(300000)); d.free(); }
      \`;
      const workers = Array.from({ length: 3 }, () => new Worker(code, { eval: true }));
      const wrongs = workers.map((w) => new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); }));
      for (let i = 0; i < 30; i++) {
        const data = random(100000 + i * 4097);
        assert.ok(same(cuda.fromDevice(cuda.toDevice(data), data.length, 'uint8'), data));
      }
      assert.deepStrictEqual(await Promise.all(wrongs), [0, 0, 0]);
      await Promise.all(workers.map((w) => w.terminate()));
      // which copies found the buffers busy is the scheduler's: staged ones there were
      assert.ok(calls().cuMemcpyHtoDAsync_v2 > 0);
    `);
  });
});
