'use strict';
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const cuda = require('../..');
const binding = require('../../lib/internal/binding');
const { describeGpu } = require('../support/gpu');

describe('Stream and Event arguments (checked before the driver)', function () {
  it('reject wrong flag and priority types', function () {
    assert.throws(() => new cuda.Stream('fast'), { name: 'TypeError', message: /flags/ });
    assert.throws(() => new cuda.Stream(-1), { name: 'RangeError', message: /flags/ });
    assert.throws(() => new cuda.Stream(0, 1.5), { name: 'RangeError', message: /priority/ });
    assert.throws(() => new cuda.Event('x'), { name: 'TypeError', message: /flags/ });
  });

  it("the tests' stream sleep takes at most 10 s (the fuzzer's 65,536 ms held its process's exit past its limit)", function () {
    assert.throws(() => binding.streamEnqueueSleep(null, 10001), {
      name: 'RangeError',
      message: "ms must be at most 10000 (a test's sleep)",
    });
  });

  it('the addon reads IPC handles as host buffers of exactly 64 bytes, whatever lib/ passed', function () {
    const made = new ArrayBuffer(8 * binding.layouts.made.count);
    for (const open of [(h) => binding.eventFromIpcHandle({}, h), (h) => binding.ipcOpenMemHandle({}, h, 0, made)]) {
      assert.throws(() => open('x'.repeat(64)), { name: 'TypeError', message: /^handle must be a TypedArray/ });
      for (const bad of [new Uint8Array(63), new BigInt64Array(64), new Uint8Array(65)]) {
        assert.throws(() => open(bad), { name: 'RangeError', message: 'handle must be 64 bytes long' });
      }
    }
  });
});

describeGpu('Stream', function () {
  it("has its flags and a priority within the context's range", function () {
    const [least, greatest] = cuda.Context.getStreamPriorityRange();
    const plain = new cuda.Stream();
    assert.strictEqual(plain.flags, cuda.StreamFlags.DEFAULT);
    assert.strictEqual(plain.priority, least);
    const urgent = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING, greatest);
    assert.strictEqual(urgent.flags, cuda.StreamFlags.NON_BLOCKING);
    assert.strictEqual(urgent.priority, greatest);
    assert.strictEqual(urgent.context, cuda.Context.getCurrent());
    plain.destroy();
    urgent.destroy();
  });

  it('synchronize({ signal }) gives up waiting when the signal aborts; the work goes on', async function () {
    const stream = new cuda.Stream();
    binding.streamEnqueueSleep(stream, 400);
    const started = Date.now();
    await assert.rejects(stream.synchronize({ signal: AbortSignal.timeout(30) }), { name: 'AbortError' });
    assert.ok(Date.now() - started < 300, `gave up after ${Date.now() - started} ms`);
    assert.strictEqual(stream.isDone(), false);
    assert.strictEqual(await stream.synchronize(), stream);
    assert.ok(Date.now() - started >= 350);
  });

  it('Symbol.asyncDispose (await using) waits for the stream, then destroys it', async function () {
    const stream = new cuda.Stream();
    const started = Date.now();
    binding.streamEnqueueSleep(stream, 100);
    await stream[Symbol.asyncDispose]();
    assert.ok(Date.now() - started >= 90, 'waited for the work');
    assert.throws(() => stream.isDone(), { name: 'LogicError', message: /destroyed/ });
  });

  it('isDone() follows queued work; synchronize() resolves to the stream after it', async function () {
    const stream = new cuda.Stream();
    assert.strictEqual(stream.isDone(), true);
    binding.streamEnqueueSleep(stream, 80);
    assert.strictEqual(stream.isDone(), false);
    const start = process.hrtime.bigint();
    const resolved = await stream.synchronize();
    assert.strictEqual(resolved, stream);
    assert.ok(Number(process.hrtime.bigint() - start) / 1e6 >= 70);
    assert.strictEqual(stream.isDone(), true);
    binding.streamEnqueueSleep(stream, 30);
    assert.strictEqual(stream.synchronizeSync(), stream);
    assert.strictEqual(stream.isDone(), true);
  });

  it('a wait on a complete stream resolves without a thread hop', async function () {
    const stream = new cuda.Stream();
    let ticks = 0;
    const timer = setImmediate(() => ticks++);
    await stream.synchronize();
    assert.strictEqual(ticks, 0, 'resolved in the microtask queue, before any macrotask');
    clearImmediate(timer);
  });

  it('waitForEvent orders one stream after another', async function () {
    const a = new cuda.Stream();
    const b = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    binding.streamEnqueueSleep(a, 80);
    const marker = new cuda.Event().record(a);
    b.waitForEvent(marker);
    assert.strictEqual(b.isDone(), false, 'b waits for a');
    await b.synchronize();
    assert.strictEqual(a.isDone(), true);
    assert.throws(() => b.waitForEvent({}), { name: 'TypeError', message: /expected an Event/ });
  });

  it('launchHostFunc calls back on the main thread once the stream gets there', async function () {
    const stream = new cuda.Stream();
    binding.streamEnqueueSleep(stream, 30);
    const start = process.hrtime.bigint();
    let calledAfterMs = null;
    const pending = stream.launchHostFunc(() => {
      calledAfterMs = Number(process.hrtime.bigint() - start) / 1e6;
      return 42;
    });
    assert.strictEqual(calledAfterMs, null, 'not called before the stream gets there');
    assert.strictEqual(await pending, 42);
    assert.ok(calledAfterMs >= 25, `called after ${calledAfterMs} ms, before the 30 ms sleep ended`);
    assert.throws(() => stream.launchHostFunc('no'), { name: 'TypeError' });
  });

  it('launchHostFunc({ signal }) gives up at the abort; the function is not called, the stream goes on', async function () {
    const stream = new cuda.Stream();
    binding.streamEnqueueSleep(stream, 300);
    let called = false;
    const started = Date.now();
    await assert.rejects(
      stream.launchHostFunc(() => (called = true), { signal: AbortSignal.timeout(30) }),
      {
        name: 'AbortError',
      },
    );
    assert.ok(Date.now() - started < 250, `gave up after ${Date.now() - started} ms`);
    assert.strictEqual(stream.isDone(), false);
    assert.strictEqual(await stream.launchHostFunc(() => 7), 7);
    assert.strictEqual(called, false);
  });

  it('a destroyed stream refuses use with a LogicError; destroy twice does nothing', function () {
    const stream = new cuda.Stream();
    stream.destroy();
    stream.destroy();
    assert.throws(() => stream.isDone(), { name: 'LogicError', message: /Stream has been destroyed/ });
    assert.throws(() => stream.synchronize(), { name: 'LogicError' });
    assert.throws(() => new cuda.Event().record(stream), { name: 'LogicError' });
  });

  it('Symbol.dispose destroys it', function () {
    const stream = new cuda.Stream();
    stream[Symbol.dispose]();
    assert.throws(() => stream.isDone(), { name: 'LogicError' });
  });

  it('32 pending waits on long work leave the thread pool free: readFile takes milliseconds', async function () {
    const file = path.join(os.tmpdir(), `cudadrv-wait-${process.pid}.txt`);
    fs.writeFileSync(file, 'hello');
    const streams = Array.from({ length: 32 }, () => new cuda.Stream(cuda.StreamFlags.NON_BLOCKING));
    for (const s of streams) binding.streamEnqueueSleep(s, 200);
    const waits = streams.map((s) => s.synchronize());
    const ctxWait = cuda.Context.synchronize();
    const start = process.hrtime.bigint();
    const text = await fs.promises.readFile(file, 'utf8');
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    assert.strictEqual(text, 'hello');
    assert.ok(ms < 50, `readFile took ${ms.toFixed(2)} ms with 33 waits pending`);
    const lagStart = Date.now();
    await new Promise((r) => setTimeout(r, 10));
    assert.ok(Date.now() - lagStart < 60, 'timers keep firing');
    await Promise.all([...waits, ctxWait]);
    for (const s of streams) assert.strictEqual(s.isDone(), true);
    fs.unlinkSync(file);
  });

  it('keeps waiting streams alive through garbage collection', async function () {
    let waits = [];
    for (let i = 0; i < 8; i++) {
      const s = new cuda.Stream();
      binding.streamEnqueueSleep(s, 20);
      waits.push(s.synchronize());
    }
    global.gc();
    const streams = await Promise.all(waits);
    for (const s of streams) assert.strictEqual(s.isDone(), true);
    waits = null;
  });
});
