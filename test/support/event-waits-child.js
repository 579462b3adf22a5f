'use strict';
// Run in a child process, on the stand-in (green-context.test.js) and on the GPU (event.test.js):
// driver 580 crashes (SIGSEGV) when a stream or a green context of one context waits for an
// interprocess event of another, made or opened. cudadrv refuses that wait first, saying what to
// do; waits in the event's own context still work, and the way round that the error names (a plain
// event recorded in the event's context) holds the waiting stream back as long as the work before
// the interprocess event runs (checked where streams really wait: not on the stand-in). The
// stand-in aborts where the driver crashes. Exits 0 when every check held; runEventWaits(env,
// ordered) runs it so, and asserts that.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const cuda = require('../..');
const binding = require('../../lib/internal/binding');
const { checksChild } = require('./checks-child');

const IPC = cuda.EventFlags.INTERPROCESS | cuda.EventFlags.DISABLE_TIMING;
const refused = (method) =>
  `${method}: the event is interprocess (EventFlags.INTERPROCESS, or opened from another process) and of ` +
  "another context, a wait the driver crashes on; wait for it on a stream of the event's context, record a " +
  'plain Event there, and wait for that one';
const SLEEP_MS = 150 + Math.floor(Math.random() * 100);

// Opens handle in a second process, in a context made there: waits there, and on a stream of the
// primary context; prints what each did.
const OPENER = `
  const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
  const device = new cuda.Device(0);
  device.retainPrimaryContext().push();
  device.makeContext();
  const event = cuda.Event.fromIpcHandle(Buffer.from(process.argv[1], 'hex'));
  const same = new cuda.Stream();
  same.waitForEvent(event);
  same.synchronizeSync();
  cuda.Context.pop();
  try {
    new cuda.Stream().waitForEvent(event);
    console.log('waited across contexts');
  } catch (error) {
    console.log(error.name + ': ' + error.message);
  }`;

async function main() {
  const device = new cuda.Device(0);
  device.retainPrimaryContext().push();
  const made = device.makeContext();
  const madeStream = new cuda.Stream();
  const ipc = new cuda.Event(IPC);
  cuda.Context.pop();
  const green = device.makeGreenContext(device.smResource().split({ minCount: 8 }).groups);
  const greenStream = green.makeStream();
  const stream = new cuda.Stream();

  // refused: a stream of another context, the null stream of another current one, a green context
  // and its stream
  assert.throws(() => stream.waitForEvent(ipc), { name: 'LogicError', message: refused('stream.waitForEvent()') });
  assert.throws(() => binding.streamWaitEvent(null, ipc), {
    name: 'LogicError',
    message: refused('stream.waitForEvent()'),
  });
  assert.throws(() => green.waitEvent(ipc), { name: 'LogicError', message: refused('greenContext.waitEvent()') });
  assert.throws(() => greenStream.waitForEvent(ipc), { name: 'LogicError', message: refused('stream.waitForEvent()') });
  // allowed: the event's own context; plain events of any context; a green context's own event
  made.push();
  madeStream.waitForEvent(ipc);
  binding.streamWaitEvent(null, ipc);
  const plainOfMade = new cuda.Event(cuda.EventFlags.DISABLE_TIMING).record(madeStream);
  cuda.Context.pop();
  stream.waitForEvent(plainOfMade);
  green.waitEvent(plainOfMade);
  green.push();
  const ipcOfGreen = new cuda.Event(IPC);
  cuda.Context.pop();
  green.waitEvent(ipcOfGreen);
  greenStream.waitForEvent(ipcOfGreen);

  // the way round: the waiting stream is held back until the work before the event is done
  const ordered = process.argv[2] === 'ordered';
  binding.streamEnqueueSleep(madeStream, SLEEP_MS);
  ipc.record(madeStream);
  made.push();
  const bridge = new cuda.Stream();
  bridge.waitForEvent(ipc);
  const plain = new cuda.Event(cuda.EventFlags.DISABLE_TIMING).record(bridge);
  cuda.Context.pop();
  stream.waitForEvent(plain);
  const done = new cuda.Event(cuda.EventFlags.DISABLE_TIMING).record(stream);
  const start = Date.now();
  if (ordered) assert.strictEqual(done.query(), false, 'the waiting stream is held back');
  await done.synchronize();
  const waited = Date.now() - start;
  if (ordered) assert.ok(waited >= SLEEP_MS - 20, `held back ${waited} ms of the ${SLEEP_MS} ms before the event`);
  assert.strictEqual(ipc.query(), true);

  // an event opened in another process: refused across its contexts there too
  const opener = spawnSync(process.execPath, ['-e', OPENER, ipc.ipcHandle().toString('hex')], { encoding: 'utf8' });
  assert.strictEqual(opener.status, 0, opener.stderr);
  assert.strictEqual(opener.stdout.trim(), `LogicError: ${refused('stream.waitForEvent()')}`);
  green.detach();
  made.detach();
}

const run = checksChild(module, main, 'event waits');

/** Runs the checks in a child process with env added to this one's, the ordering too where
 * ordered; asserts it exits 0. */
const runEventWaits = (env, ordered) => run(env, [ordered ? 'ordered' : 'unordered']);

module.exports = { runEventWaits };
