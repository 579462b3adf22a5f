'use strict';
const assert = require('assert');
const path = require('path');
const { Worker } = require('worker_threads');
const { describeGpu } = require('../support/gpu');

const root = path.join(__dirname, '..', '..');

function runWorker(code) {
  return new Worker(`const cuda = require(${JSON.stringify(root)}); ${code}`, { eval: true });
}

function result(worker) {
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`worker exited with ${code} before answering`)));
  });
}

describeGpu('worker_threads', function () {
  it('the addon loads in several workers at once; each makes a context and waits on a stream', async function () {
    const code = `
      const { parentPort, workerData } = require('worker_threads');
      const binding = require(${JSON.stringify(path.join(root, 'lib', 'internal', 'binding'))});
      const ctx = workerData % 2 ? new cuda.Device(0).makeContext()
        : (() => { const p = new cuda.Device(0).retainPrimaryContext(); p.push(); return p; })();
      const stream = new cuda.Stream();
      binding.streamEnqueueSleep(stream, 50);
      stream.synchronize().then((s) => {
        parentPort.postMessage({ done: s.isDone(), same: cuda.Context.getCurrent() === ctx });
        ctx.detach();
      });`;
    const workers = Array.from(
      { length: 4 },
      (_, i) => new Worker(`const cuda = require(${JSON.stringify(root)}); ${code}`, { eval: true, workerData: i }),
    );
    const answers = await Promise.all(workers.map(result));
    for (const a of answers) assert.deepStrictEqual(a, { done: true, same: true });
    await Promise.all(workers.map((w) => w.terminate()));
  });

  it('terminating a worker mid-wait does not crash the process', async function () {
    const workers = Array.from({ length: 3 }, () =>
      runWorker(`
      const { parentPort } = require('worker_threads');
      const binding = require(${JSON.stringify(path.join(root, 'lib', 'internal', 'binding'))});
      new cuda.Device(0).makeContext();
      const streams = [new cuda.Stream(), new cuda.Stream()];
      for (const s of streams) binding.streamEnqueueSleep(s, 300);
      streams.forEach((s) => s.synchronize());
      cuda.Context.synchronize();
      const e = new cuda.Event().record(streams[0]);
      e.synchronize();
      parentPort.postMessage('waiting');`),
    );
    await Promise.all(workers.map(result));
    await Promise.all(workers.map((w) => w.terminate()));
    // The callbacks of the dead workers fire after this: the process must survive them.
    await new Promise((r) => setTimeout(r, 700));
    const again = runWorker(`require('worker_threads').parentPort.postMessage(cuda.Device.count());`);
    assert.ok((await result(again)) >= 1);
    await again.terminate();
  });
});
