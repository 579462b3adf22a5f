'use strict';
// Two devices: peer access, peer copies, IPC between Node processes on different devices, and a
// worker thread per device. Skipped, saying why, where fewer than two devices can be used; failed
// instead where CUDADRV_REQUIRE_GPU=2. (The argument handling of these calls runs on the stand-in
// driver's two devices: two-devices-driver.test.js.)
const assert = require('assert');
const { fork } = require('child_process');
const path = require('path');
const { Worker } = require('worker_threads');
const { describeTwoGpus } = require('../support/gpu');
const { random, peerBoxCopy, peerBoxReference } = require('../support/copy-data');
const cuda = require('../..');

// Runs fn with ctx current, then pops it.
function within(ctx, fn) {
  ctx.push();
  try {
    return fn();
  } finally {
    cuda.Context.pop();
  }
}

describeTwoGpus('two devices', function () {
  this.timeout(120000);
  let contexts;
  before(function () {
    contexts = this.devices.map((device) => {
      const ctx = device.makeContext();
      cuda.Context.pop();
      return ctx;
    });
  });
  after(function () {
    for (const ctx of contexts ?? []) ctx.detach();
  });

  it('canAccessPeer both ways; enable and disable peer access, and each done twice is a LogicError', function () {
    const [a, b] = this.devices;
    assert.strictEqual(a.canAccessPeer(b), true, 'device 0 cannot reach device 1');
    assert.strictEqual(b.canAccessPeer(a), true, 'device 1 cannot reach device 0');
    const [first, second] = contexts;
    for (const [from, to] of [
      [first, second],
      [second, first],
    ]) {
      from.enablePeerAccess(to);
      assert.throws(() => from.enablePeerAccess(to), {
        name: 'LogicError',
        codeName: 'CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED',
      });
      from.disablePeerAccess(to);
      assert.throws(() => from.disablePeerAccess(to), {
        name: 'LogicError',
        codeName: 'CUDA_ERROR_PEER_ACCESS_NOT_ENABLED',
      });
    }
  });

  it('memcpyPeer and memcpyPeerAsync both ways, with and without peer access: every byte', function () {
    const [first, second] = contexts;
    const size = 64 << 20;
    const data = random(size);
    const onFirst = within(first, () => cuda.toDevice(data));
    const onSecond = within(second, () => cuda.memAlloc(size));
    const back = within(first, () => cuda.memAlloc(size));
    for (const peer of [false, true]) {
      if (peer) {
        first.enablePeerAccess(second);
        second.enablePeerAccess(first);
      }
      within(first, () => cuda.memsetD8(back, 0, size));
      within(first, () => cuda.memcpyPeer(onSecond, onFirst, size, second, first));
      const stream = within(second, () => new cuda.Stream());
      within(second, () => cuda.memcpyPeerAsync(back, onSecond, size, first, second, stream));
      within(second, () => stream.synchronizeSync());
      const got = within(first, () => cuda.fromDevice(back, size, 'uint8'));
      assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(data), `peer access ${peer}`);
    }
    first.disablePeerAccess(second);
    second.disablePeerAccess(first);
    within(first, () => [onFirst.free(), back.free()]);
    within(second, () => onSecond.free());
  });

  it('Memcpy3DPeer copies a box from one device to the other exactly', function () {
    const [first, second] = contexts;
    const source = random(64 * 10 * 5);
    const before = random(32 * 8 * 2);
    const onFirst = within(first, () => cuda.toDevice(source));
    const onSecond = within(second, () => cuda.toDevice(before));
    within(first, () => peerBoxCopy(onFirst, first, onSecond, second).run());
    const expected = peerBoxReference(source, Buffer.from(before));
    const got = within(second, () => cuda.fromDevice(onSecond, 32 * 8 * 2, 'uint8'));
    assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(expected));
    within(first, () => onFirst.free());
    within(second, () => onSecond.free());
  });

  it('IPC: a process on device 0 writes through a kernel and records an event; one on device 1 waits for it and reads', async function () {
    const seed = Math.floor(Math.random() * 2 ** 31);
    const child = path.join(__dirname, '..', 'support', 'ipc-peer-child.js');
    const writer = fork(child, ['writer', '0', String(seed)], { stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    const reader = fork(child, ['reader', '1'], { stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    const exits = new Map(
      [writer, reader].map((proc) => {
        let stderr = '';
        proc.stderr.on('data', (d) => (stderr += d));
        return [proc, new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal, stderr })))];
      }),
    );
    // the next message of proc, or an Error where it exits first
    const message = (proc) =>
      Promise.race([
        new Promise((resolve) => proc.once('message', resolve)),
        exits.get(proc).then(({ code, signal, stderr }) => {
          throw new Error(`the ${proc === writer ? 'writer' : 'reader'} exited (${signal ?? code}):\n${stderr}`);
        }),
      ]);
    let read;
    try {
      const { handles } = await message(writer);
      reader.send({ handles });
      ({ read } = await message(reader));
      writer.send('done');
    } catch (error) {
      for (const proc of [writer, reader]) proc.kill('SIGKILL'); // none left waiting
      throw error;
    }
    for (const proc of [reader, writer])
      assert.deepStrictEqual(await exits.get(proc), { code: 0, signal: null, stderr: '' });
    const bytes = Buffer.from(read, 'base64');
    const values = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    const expected = Int32Array.from({ length: values.length }, (_, i) => Math.imul(i, 2654435761) ^ seed);
    assert.deepStrictEqual(values, expected);
  });

  it('a worker thread per device, each with its own context, launching and waiting at once', async function () {
    const script = `
      const { parentPort, workerData } = require('worker_threads');
      const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
      const { SourceModule } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'compiler'))});
      const ctx = new cuda.Device(workerData.ordinal).makeContext();
      const axpy = new SourceModule(\`__global__ void axpy(float a, const float *x, float *y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
      }\`).getFunction('axpy');
      (async () => {
        const x = new Float32Array(workerData.x);
        const y = new Float32Array(workerData.y);
        for (let round = 0; round < 20; round++) {
          await axpy(cuda.float32(workerData.a), cuda.In(x), cuda.InOut(y), cuda.int32(x.length), { block: 256, grid: Math.ceil(x.length / 256) });
        }
        parentPort.postMessage({ device: cuda.Context.getDevice().pciBusId(), y: Array.from(y) });
        ctx.detach();
      })();`;
    const n = 1 << 16;
    const jobs = [0, 1].map((ordinal) => {
      const x = Float32Array.from({ length: n }, () => Math.fround(Math.random() * 2 - 1));
      const y = Float32Array.from({ length: n }, () => Math.fround(Math.random() * 2 - 1));
      const a = Math.fround(Math.random());
      const worker = new Worker(script, { eval: true, workerData: { ordinal, x: Array.from(x), y: Array.from(y), a } });
      const done = new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      let expected = y;
      for (let round = 0; round < 20; round++)
        expected = expected.map((v, i) => Math.fround(Math.fround(a * x[i]) + v));
      return { ordinal, done, expected };
    });
    const results = await Promise.all(jobs.map((job) => job.done));
    assert.notStrictEqual(results[0].device, results[1].device, 'the workers ran on two devices');
    jobs.forEach((job, i) => {
      const got = Float32Array.from(results[i].y);
      const worst = got.reduce((m, v, k) => Math.max(m, Math.abs(v - job.expected[k])), 0);
      assert.ok(worst <= 1e-4, `device ${job.ordinal}: off by ${worst}`);
    });
  });
});
