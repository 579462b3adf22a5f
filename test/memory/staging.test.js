'use strict';
// Staged copies of pageable host memory through the stand-in driver: which copies take the
// staging buffers (the driver's calls, traced) and which the driver's own path, every byte of
// random data through chunks of every shape, async copies, 2D and 3D copies, the settings and
// their refusals, a driver failure in the middle of a staged copy, the buffers freed when idle,
// and workers copying at once. The stand-in defers the copies of page-locked memory until a call
// waits for them (FAKE_CUDA_DEFER), so that a buffer filled or drained too early gives wrong bytes.
const path = require('path');
const { childRunner } = require('../support/graph-child');
const { endsBySignal } = require('../support/signal-exit');

const ROOT = path.join(__dirname, '..', '..');

describe('staged copies of pageable memory through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run, standIn } = childRunner('cudadrv-staging-', { FAKE_CUDA_TRACE: '1', FAKE_CUDA_DEFER: '1' });

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

  it('copies of threshold bytes or more go through the buffers in chunks, every byte right; smaller, page-locked and disabled ones take the driver', function () {
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
      // the driver's own path: fewer bytes, page-locked memory, staging off
      const memory = cuda.memAlloc(200000);
      calls();
      cuda.memcpyHtoD(memory, random(99999));
      assert.deepStrictEqual(calls(), { cuMemcpyHtoD_v2: 1 });
      const pinned = cuda.pagelockedEmpty([200000], 'uint8');
      calls();
      cuda.memcpyHtoD(memory, pinned);
      cuda.memcpyDtoH(pinned, memory);
      assert.deepStrictEqual(calls(), { cuPointerGetAttributes: 2, cuMemcpyHtoD_v2: 1, cuMemcpyDtoH_v2: 1 });
      assert.strictEqual(cuda.pageableStaging({ enabled: false }).enabled, false);
      cuda.memcpyDtoH(new Uint8Array(200000), memory);
      assert.deepStrictEqual(calls(), { cuMemcpyDtoH_v2: 1 });
    `);
  });

  it('async copies: to the device, returns once the array is read (its last transfers queued); from the device, once the bytes are there; on another stream meanwhile, the driver; on the same, after them; in a capture, refused', async function () {
    run(`${PRELUDE}
      const chunk = 65536;
      cuda.pageableStaging({ threshold: 0, bufferBytes: chunk, helpers: 2, idleMs: 50 });
      const n = 3 * chunk + 5; // in halves, within a buffer: chunks of 65536, 65536, 65536, 5
      const [one, two, three] = [cuda.memAlloc(n), cuda.memAlloc(n), cuda.memAlloc(n)];
      cuda.fromDevice(one, n, 'uint8'); // the buffers registered
      const a = new cuda.Stream();
      const b = new cuda.Stream();
      const data = random(n);
      const sent = data.slice();
      calls();
      cuda.memcpyHtoDAsync(one, data, a);
      // buffer 0 waited for before chunk 2; chunks 2 and 3 left queued
      assert.deepStrictEqual(calls(), { cuPointerGetAttributes: 2, cuStreamIsCapturing: 1, cuEventCreate: 2, cuMemcpyHtoDAsync_v2: 4, cuEventRecord: 4, cuEventSynchronize: 2 });
      data.fill(7); // the array is the caller's again
      // another stream: its transfers queued, the buffers are not to be had
      const other = random(n);
      cuda.memcpyHtoDAsync(two, other, b);
      // (a second query: the addon asks whether the driver may still read the array, to keep it)
      assert.deepStrictEqual(calls(), { cuPointerGetAttributes: 2, cuStreamIsCapturing: 1, cuEventQuery: 1, cuMemcpyHtoDAsync_v2: 1 });
      // the driver's own copy after it on its stream (rows wider than a buffer) sees its bytes
      const wide = new cuda.Memcpy2D();
      const readBack = new Uint8Array(2 * chunk + 2);
      wide.setSrcDevice(one);
      wide.setDstHost(readBack);
      Object.assign(wide, { srcPitch: chunk + 1, dstPitch: chunk + 1, widthInBytes: chunk + 1, height: 2 });
      wide.run(a);
      assert.ok(same(readBack, sent.subarray(0, 2 * chunk + 2)));
      const wideCalls = calls();
      assert.strictEqual(wideCalls.cuMemcpy2DAsync_v2, 1);
      assert.strictEqual(wideCalls.cuEventSynchronize, undefined, 'no wait for a copy it does not stage');
      // the same stream: after them
      const third = random(n);
      cuda.memcpyHtoDAsync(three, third, a);
      const c = calls();
      assert.strictEqual(c.cuEventSynchronize, 4);
      assert.strictEqual(c.cuEventDestroy_v2, 2);
      assert.strictEqual(c.cuMemcpyHtoDAsync_v2, 4);
      a.synchronize();
      b.synchronize();
      for (const [memory, want] of [[one, sent], [two, other], [three, third]]) {
        const into = new Uint8Array(n);
        cuda.memcpyDtoHAsync(into, memory, b); // staged: the bytes are there when it returns
        assert.ok(same(into, want));
      }
      assert.strictEqual(calls().cuMemcpyDtoHAsync_v2, 12);
      // the In and InOut arguments of a call on a stream: through the buffers both ways
      const kernel = new cuda.Module('entry k 8 8').getFunction('k');
      const input = random(n);
      const both = random(n);
      const kept = both.slice();
      await kernel(cuda.In(input), cuda.InOut(both), { block: 1, stream: b });
      const launched = calls();
      assert.strictEqual(launched.cuMemcpyHtoDAsync_v2, 8, JSON.stringify(launched));
      assert.strictEqual(launched.cuMemcpyDtoHAsync_v2, 4, JSON.stringify(launched));
      assert.ok(same(both, kept));
      // the idle release waits while a transfer is queued, and frees the buffers after it
      cuda.memcpyHtoDAsync(one, data, a);
      calls();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const idle = calls();
      assert.ok(idle.cuEventQuery >= 2 && !idle.cuMemHostUnregister, JSON.stringify(idle));
      a.synchronize();
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.strictEqual(calls().cuMemHostUnregister, 2);
      assert.ok(same(cuda.fromDevice(one, n, 'uint8'), data));
      // a stream of another context than the current one: the driver's (the buffers' events are
      // the current context's, and cannot be recorded on it)
      const elsewhere = new cuda.Device(0).makeContext();
      calls();
      const away = random(n);
      cuda.memcpyHtoDAsync(two, away, a);
      const foreign = calls();
      assert.strictEqual(foreign.cuMemcpyHtoDAsync_v2, 1, JSON.stringify(foreign));
      assert.strictEqual(foreign.cuEventCreate, undefined, JSON.stringify(foreign));
      elsewhere.detach();
      assert.ok(same(cuda.fromDevice(two, n, 'uint8'), away));
      // a capture: refused (its graph would copy the array at every launch, freed or moved by then)
      b.beginCapture();
      calls();
      assert.throws(() => cuda.memcpyHtoDAsync(one, random(n), b), { name: 'LogicError', message: /^a capture records a copy of host memory/ });
      assert.deepStrictEqual(calls(), { cuPointerGetAttributes: 1, cuStreamIsCapturing: 1, cuStreamGetCaptureInfo_v2: 1 });
      b.endCapture();
    `);
  });

  it('2D and 3D copies between pageable memory and device memory or arrays: cut between rows or slices, every byte where the CPU puts it, sync and async; rows wider than a buffer take the driver', function () {
    run(`${PRELUDE}
      const cap = 16384;
      cuda.pageableStaging({ threshold: 0, bufferBytes: cap, helpers: 2 });
      const stream = new cuda.Stream();
      // width x rows x depth bytes from (x, y, z) of a side with pitch and height, done by the CPU
      const cpuCopy = (src, s, dst, d, width, rows, depth) => {
        for (let z = 0; z < depth; z++)
          for (let y = 0; y < rows; y++) {
            const from = s.x + ((s.z + z) * s.height + s.y + y) * s.pitch;
            dst.set(src.subarray(from, from + width), d.x + ((d.z + z) * d.height + d.y + y) * d.pitch);
          }
      };
      const extent = (g, width, rows, depth) => g.x + ((g.z + depth - 1) * g.height + g.y + rows - 1) * g.pitch + width;
      const chunksOf = (width, rows, depth) => {
        const slice = width * rows;
        return slice <= cap ? Math.ceil(depth / Math.floor(cap / slice)) : depth * Math.ceil(rows / Math.floor(cap / width));
      };
      const setSide = (copy, side, g, depth) => {
        copy[side + 'XInBytes'] = g.x;
        copy[side + 'Y'] = g.y;
        copy[side + 'Pitch'] = g.pitch;
        if (depth) {
          copy[side + 'Z'] = g.z;
          copy[side + 'Height'] = g.height;
        }
      };
      for (const [width, rows, depth] of [[1000, 50, 0], [100, 30, 20], [3000, 7, 3], [cap, 2, 0], [777, 77, 1]]) {
        const planar = depth === 0;
        const d = Math.max(depth, 1);
        for (const toDevice of [true, false])
          for (const async of [false, true]) {
            const h = { x: 5, y: 1, z: planar ? 0 : 1, pitch: width + 13, height: rows + 2 };
            const g = { x: 3, y: 2, z: planar ? 0 : 2, pitch: width + 64, height: rows + 3 };
            const host = random(extent(h, width, rows, d) + 9);
            const deviceBytes = random(extent(g, width, rows, d) + 5);
            const memory = cuda.toDevice(deviceBytes);
            const copy = planar ? new cuda.Memcpy2D() : new cuda.Memcpy3D();
            copy.widthInBytes = width;
            copy.height = rows;
            if (!planar) copy.depth = depth;
            setSide(copy, toDevice ? 'src' : 'dst', h, !planar);
            setSide(copy, toDevice ? 'dst' : 'src', g, !planar);
            if (toDevice) {
              copy.setSrcHost(host);
              copy.setDstDevice(memory);
            } else {
              copy.setSrcDevice(memory);
              copy.setDstHost(host);
            }
            const want = toDevice ? deviceBytes.slice() : host.slice();
            if (toDevice) cpuCopy(host, h, want, g, width, rows, d);
            else cpuCopy(deviceBytes, g, want, h, width, rows, d);
            calls();
            copy.run(async ? stream : undefined);
            const what = JSON.stringify({ width, rows, depth, toDevice, async });
            assert.strictEqual(calls()[planar ? 'cuMemcpy2DAsync_v2' : 'cuMemcpy3DAsync_v2'], chunksOf(width, rows, d), what);
            if (toDevice) host.fill(1); // read before run() returned
            stream.synchronize();
            assert.ok(same(toDevice ? cuda.fromDevice(memory, deviceBytes.length, 'uint8') : host, want), what);
          }
      }
      // an array on the device side: in 2D, and back out in 3D to another layout
      const [w, r] = [1500, 40];
      const array = new cuda.CudaArray(new cuda.ArrayDescriptor({ width: w, height: r, format: cuda.ArrayFormat.UNSIGNED_INT8, numChannels: 1 }));
      const values = random((w + 11) * r);
      const into = new cuda.Memcpy2D();
      into.setSrcHost(values);
      into.srcPitch = w + 11;
      into.setDstArray(array);
      into.widthInBytes = w;
      into.height = r;
      calls();
      into.run();
      assert.strictEqual(calls().cuMemcpy2DAsync_v2, Math.ceil(r / Math.floor(cap / w)));
      const back = new Uint8Array(w * r);
      const out = new cuda.Memcpy3D();
      out.setSrcArray(array);
      out.setDstHost(back);
      out.widthInBytes = out.dstPitch = w;
      out.height = out.dstHeight = r;
      out.depth = 1;
      out.run();
      assert.strictEqual(calls().cuMemcpy3DAsync_v2, Math.ceil(r / Math.floor(cap / w)));
      const expected = new Uint8Array(w * r);
      cpuCopy(values, { x: 0, y: 0, z: 0, pitch: w + 11, height: r }, expected, { x: 0, y: 0, z: 0, pitch: w, height: r }, w, r, 1);
      assert.ok(same(back, expected));
      // a row wider than a buffer: the driver's own copy
      const wide = new cuda.Memcpy2D();
      const memory = cuda.memAlloc(2 * (cap + 1));
      wide.setSrcHost(random(2 * (cap + 1)));
      wide.setDstDevice(memory);
      wide.widthInBytes = wide.srcPitch = wide.dstPitch = cap + 1;
      wide.height = 2;
      calls();
      wide.run();
      assert.deepStrictEqual(calls(), { cuPointerGetAttributes: 1, cuMemcpy2DUnaligned_v2: 1 });
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

  for (const signal of ['SIGINT', 'SIGTERM']) {
    it(`${signal} while staged copies run on every path (sync, async with transfers queued, 2D, helpers copying) and the collector drops arrays ends the process within 1 s, by the signal`, function () {
      const script = `
        const cuda = require(${JSON.stringify(ROOT)});
        cuda.init();
        new cuda.Device(0).makeContext();
        cuda.pageableStaging({ threshold: 0, bufferBytes: 65536, helpers: 3 });
        const streams = [new cuda.Stream(), new cuda.Stream()];
        const memory = cuda.memAlloc(1 << 20);
        process.stdout.write('ready\\n');
        let round = 0;
        const spin = () => {
          const data = new Uint8Array(1 << 20).fill(round);
          cuda.memcpyHtoD(memory, data);
          cuda.memcpyHtoDAsync(memory, data, streams[round++ % 2]);
          const plane = new cuda.Memcpy2D();
          plane.setSrcDevice(memory);
          plane.setDstHost(new Uint8Array(1 << 20));
          Object.assign(plane, { srcPitch: 1024, dstPitch: 1024, widthInBytes: 1000, height: 1024 });
          plane.run(streams[round % 2]);
          global.gc();
          setImmediate(spin);
        };
        spin();`;
      const env = { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_DEFER: '1' };
      return endsBySignal({ script, signal, env, args: ['--expose-gc'] });
    });
  }

  it('workers and the main thread copying at once, sync, async and 2D: every byte right (one stages at a time, the others take the driver meanwhile); workers terminated mid-copy with transfers queued; copies after are right; exit 0', function () {
    run(`${PRELUDE}
      const { Worker } = require('worker_threads');
      cuda.pageableStaging({ threshold: 0, bufferBytes: 65536, helpers: 2 });
      const code = \`
        const { parentPort } = require('worker_threads');
        const cuda = require(${JSON.stringify(ROOT)});
        const ctx = new cuda.Device(0).makeContext();
        const stream = new cuda.Stream();
        let wrong = 0;
        for (let i = 0; i < 30; i++) {
          const data = Float32Array.from({ length: 50000 + i * 999 }, Math.random);
          const memory = cuda.toDevice(data);
          if (cuda.fromDevice(memory, data.length, 'float32').some((v, j) => v !== data[j])) wrong++;
          const next = data.map((v) => v + 1);
          cuda.memcpyHtoDAsync(memory, next, stream);
          const plane = new cuda.Memcpy2D(); // its rows back, 40 bytes apart in the host array
          const rows = Math.floor(next.byteLength / 20);
          const back = new Uint8Array(40 * rows);
          plane.setSrcDevice(memory);
          plane.setDstHost(back);
          Object.assign(plane, { srcPitch: 20, dstPitch: 40, widthInBytes: 20, height: rows });
          plane.run(stream);
          const sent = new Uint8Array(next.buffer);
          for (let r = 0; r < rows && !wrong; r++)
            if (Buffer.compare(back.subarray(40 * r, 40 * r + 20), sent.subarray(20 * r, 20 * r + 20))) wrong++;
        }
        parentPort.postMessage(wrong);
        const memory = cuda.memAlloc(1200000);
        for (;;) cuda.memcpyHtoDAsync(memory, new Float32Array(300000), stream); // never synchronized
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
      // what the dead workers left queued in the buffers is waited for or forgotten, never reused
      for (let i = 0; i < 5; i++) {
        const data = random(300000 + i);
        const memory = cuda.memAlloc(data.length);
        cuda.memcpyHtoDAsync(memory, data, new cuda.Stream());
        assert.ok(same(cuda.fromDevice(memory, data.length, 'uint8'), data));
      }
    `);
  });
});
