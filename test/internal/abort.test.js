'use strict';
// Giving up a wait ({ signal }): lib/internal/abort.js, and the waits of streams, events and
// contexts that use it. The GPU work is not interrupted; only the caller stops waiting.
const assert = require('assert');
const { getEventListeners } = require('events');
const cuda = require('../..');
const { abortable } = require('../../lib/internal/abort');

const never = () => new Promise(() => {});

describe('waits given up with { signal }', function () {
  it('an abort rejects a pending wait at once with an AbortError carrying the reason', async function () {
    const controller = new AbortController();
    const wait = abortable(controller.signal, 'stream.synchronize()', never);
    const reason = new Error('user left');
    controller.abort(reason);
    await assert.rejects(wait, (error) => {
      assert.ok(error instanceof cuda.AbortError && error instanceof cuda.CudaError);
      assert.strictEqual(error.name, 'AbortError');
      assert.strictEqual(error.message, 'stream.synchronize() was aborted: user left');
      assert.strictEqual(error.cause, reason);
      return true;
    });
  });

  it('a signal aborted already rejects without starting the wait; none passes the wait through', async function () {
    let started = 0;
    const start = () => {
      started++;
      return Promise.resolve('done');
    };
    await assert.rejects(abortable(AbortSignal.abort(), 'w', start), { name: 'AbortError' });
    assert.strictEqual(started, 0);
    assert.strictEqual(await abortable(undefined, 'w', start), 'done');
    assert.strictEqual(await abortable(new AbortController().signal, 'w', start), 'done');
    await assert.rejects(
      abortable(new AbortController().signal, 'w', () => Promise.reject(new RangeError('x'))),
      { name: 'RangeError' },
    );
  });

  it('waits sharing one signal share one listener, which goes once they settle', async function () {
    const controller = new AbortController();
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    const waits = Array.from({ length: 20 }, () => abortable(controller.signal, 'w', () => gate));
    assert.strictEqual(getEventListeners(controller.signal, 'abort').length, 1);
    release(7);
    assert.deepStrictEqual(await Promise.all(waits), new Array(20).fill(7));
    assert.strictEqual(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('stream, event and context waits check their options before the driver', async function () {
    const stream = Object.create(cuda.Stream.prototype);
    const event = Object.create(cuda.Event.prototype);
    for (const wait of [
      (o) => stream.synchronize(o),
      (o) => event.synchronize(o),
      (o) => cuda.Context.synchronize(o),
    ]) {
      assert.throws(() => wait(5), { name: 'TypeError', message: 'options must be an object, not number 5' });
      assert.throws(() => wait({ signal: {} }), { name: 'TypeError', message: /^signal must be an AbortSignal, not/ });
      await assert.rejects(wait({ signal: AbortSignal.abort() }), { name: 'AbortError', message: /was aborted/ });
    }
  });
});
