'use strict';
// Events (lib/driver/event.js): recording, waits, timing and IPC handles.
const assert = require('assert');
const path = require('path');
const cuda = require('../..');
const binding = require('../../lib/internal/binding');
const { describeGpu } = require('../support/gpu');
const { runEventWaits } = require('../support/event-waits-child');

describeGpu('Event', function () {
  it('records, queries, synchronizes and times', async function () {
    const stream = new cuda.Stream();
    const start = new cuda.Event().record(stream);
    binding.streamEnqueueSleep(stream, 60);
    const end = new cuda.Event();
    assert.strictEqual(end.record(stream), end);
    assert.strictEqual(end.query(), false);
    assert.strictEqual(await end.synchronize(), end);
    assert.strictEqual(end.query(), true);
    const ms = end.timeSince(start);
    assert.ok(ms >= 50 && ms < 1000, `timeSince ${ms}`);
    assert.ok(Math.abs(start.timeTill(end) - ms) < 1e-3);
    assert.strictEqual(end.synchronizeSync(), end);
  });

  it('synchronize() waits for the event to complete', async function () {
    // (The driver runs host functions one at a time, so a sleeping host function after the event
    // would also delay the callback that settles this wait: kernels test the upper bound.)
    const stream = new cuda.Stream();
    binding.streamEnqueueSleep(stream, 60);
    const mid = new cuda.Event().record(stream);
    const t = Date.now();
    await mid.synchronize();
    assert.ok(Date.now() - t >= 50, `waited ${Date.now() - t} ms`);
    assert.strictEqual(mid.query(), true);
  });

  it('synchronize() waits for the event, not for later work on its stream', async function () {
    const { SourceModule } = require('../../lib/compiler');
    const spin = new SourceModule(`__global__ void spin(unsigned long long ns) {
      unsigned long long start, now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
      do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
    }`).getFunction('spin');
    const stream = new cuda.Stream();
    spin(40e6, { block: [1], grid: [1], stream });
    const mid = new cuda.Event().record(stream);
    spin(400e6, { block: [1], grid: [1], stream });
    const t = Date.now();
    await mid.synchronize();
    const waited = Date.now() - t;
    assert.ok(waited >= 30 && waited < 300, `waited ${waited} ms`);
    assert.strictEqual(stream.isDone(), false);
    await stream.synchronize();
  });

  it('timeSince with an unrecorded event is a LogicError', function () {
    const a = new cuda.Event();
    const b = new cuda.Event().record();
    assert.throws(() => b.timeSince(a), { name: 'LogicError', message: /never recorded/ });
    assert.throws(() => b.timeSince({}), { name: 'TypeError' });
  });

  it("DISABLE_TIMING events cannot be timed (the driver's error)", function () {
    const a = new cuda.Event(cuda.EventFlags.DISABLE_TIMING).record();
    const b = new cuda.Event(cuda.EventFlags.DISABLE_TIMING).record();
    b.synchronizeSync();
    assert.throws(
      () => b.timeSince(a),
      (e) => e instanceof cuda.CudaError && e.api === 'cuEventElapsedTime',
    );
  });

  it('a destroyed event refuses use with a LogicError', function () {
    const e = new cuda.Event();
    e.destroy();
    e.destroy();
    assert.throws(() => e.record(), { name: 'LogicError', message: /Event has been destroyed/ });
    assert.throws(() => e.query(), { name: 'LogicError' });
  });

  it("IPC handles: 64 bytes; opening in the same process is the driver's error", function () {
    const e = new cuda.Event(cuda.EventFlags.INTERPROCESS | cuda.EventFlags.DISABLE_TIMING);
    const handle = e.ipcHandle();
    assert.strictEqual(handle.length, 64);
    assert.throws(
      () => cuda.Event.fromIpcHandle(handle),
      (err) => err instanceof cuda.CudaError && err.api === 'cuIpcOpenEventHandle',
    );
    assert.throws(() => cuda.Event.fromIpcHandle('x'), { name: 'TypeError' });
    assert.throws(
      () => new cuda.Event().ipcHandle(),
      (err) => err instanceof cuda.CudaError,
    );
  });

  it('a wait for an interprocess event of another context is refused before driver 580 crashes on it; the way round the error names orders the streams (in a child process)', function () {
    this.timeout(60000);
    runEventWaits({}, true);
  });

  it('IPC handles open in a second process', function () {
    const { spawnSync } = require('child_process');
    const e = new cuda.Event(cuda.EventFlags.INTERPROCESS | cuda.EventFlags.DISABLE_TIMING).record();
    e.synchronizeSync();
    const script = `
      const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
      new cuda.Device(0).makeContext();
      const ev = cuda.Event.fromIpcHandle(Buffer.from(process.argv[1], 'hex'));
      console.log(ev.query());`;
    const child = spawnSync(process.execPath, ['-e', script, e.ipcHandle().toString('hex')]);
    assert.strictEqual(child.stderr.toString(), '');
    assert.strictEqual(child.stdout.toString().trim(), 'true');
  });
});
