'use strict';
// Host-function nodes (graph.addHostFunc) on the stand-in driver, which calls a host node's
// function on the launching thread and runs a user object's destructor when its last reference
// goes: the JS function must be called once per launch on the main thread, in order, and held
// exactly as long as a graph, GraphExec or child copy can reach the node. graph.test.js runs
// them on the GPU.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');
const { runInChild, ROOT } = require('../support/graph-child');

describe('graph host-function nodes (stand-in driver)', function () {
  this.timeout(60000);
  const standIn = standInDriver();
  let dir;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-graph-host-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (body, extraEnv) => runInChild(standIn, dir, body, extraEnv);
  const COUNTS = `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test/support/stand-in-driver'))});
      const counts = () => liveCounts(process.env.FAKE_CUDA_COUNTS);
      const tick = () => new Promise((resolve) => setImmediate(resolve));
      const collect = async () => { for (let i = 0; i < 4; i++) { global.gc(); await tick(); } cuda.Context.synchronizeSync(); await tick(); };`;

  it('calls fn on the main thread once per launch, in launch order, after the nodes before it, before a wait on the stream settles', function () {
    run(`
      const { isMainThread } = require('worker_threads');
      const calls = [];
      const a = cuda.memAlloc(64);
      const g = new cuda.Graph();
      const set = g.addMemset(a, 1, 64);
      let launch = 0;
      const host = g.addHostFunc(function () {
        assert.ok(isMainThread);
        assert.strictEqual(arguments.length, 0);
        calls.push(launch);
      }, { after: set });
      assert.strictEqual(host.type, 'host');
      g.addMemset(a, 2, 64, { after: host });
      const exec = g.instantiate();
      const stream = new cuda.Stream();
      const n = 2 + Math.floor(Math.random() * 6);
      for (; launch < n; launch++) exec.launch(stream);
      assert.deepStrictEqual(calls, [], 'no call runs inside launch()');
      await stream.synchronize();
      assert.strictEqual(calls.length, n);
      // the stand-in ran each launch's nodes in order: memset, host, memset
      const nodes = log().filter((line) => line.startsWith('graph node')).map((line) => line.split(' ')[3]);
      assert.deepStrictEqual(nodes, Array(n).fill(['2', '3', '2']).flat());
      // an event's wait settles after the calls too
      const done = new cuda.Event();
      exec.launch(stream);
      done.record(stream);
      await done.synchronize();
      assert.strictEqual(calls.length, n + 1);
    `);
  });

  it('the driver holds fn through user objects: copies in GraphExecs and child graphs keep it after destroy() and collection; the last goes, fn is let go', function () {
    const counts = path.join(dir, 'counts');
    run(
      `${COUNTS}
      let calls = 0;
      let gone = false;
      const registry = new FinalizationRegistry(() => (gone = true));
      let g = new cuda.Graph();
      (() => {
        const fn = () => calls++;
        registry.register(fn, 'fn');
        g.addHostFunc(fn);
      })();
      assert.strictEqual(counts().user_objects, 1);
      const exec = g.instantiate();
      const parent = new cuda.Graph();
      parent.addChildGraph(g);
      g.destroy();
      g = null;
      exec.launch();
      await collect();
      assert.strictEqual(calls, 1);
      assert.strictEqual(counts().user_objects, 1, 'the exec and the child copy hold it');
      exec.destroy();
      assert.strictEqual(counts().user_objects, 1, 'the child copy holds it');
      const again = parent.instantiate();
      parent.destroy();
      again.launch();
      again.launch();
      await collect();
      assert.strictEqual(calls, 3);
      assert.ok(!gone, 'fn is still held');
      assert.strictEqual(counts().user_objects, 1);
      again.destroy();
      assert.strictEqual(counts().user_objects, 0, 'the last reference ran the destructor');
      assert.ok(log().includes('user object destroyed'));
      for (let i = 0; i < 20 && !gone; i++) await collect();
      assert.ok(gone, 'fn was let go');
      // dropped without destroy(): collection releases graph and exec, and the user object with them
      (() => {
        const dropped = new cuda.Graph();
        dropped.addHostFunc(() => calls++);
        dropped.instantiate().launch();
      })();
      await collect();
      await collect();
      assert.strictEqual(calls, 4);
      const left = counts();
      assert.deepStrictEqual([left.user_objects, left.graphs, left.graph_execs, left.stale], [0, 0, 0, 0]);
    `,
      { FAKE_CUDA_COUNTS: counts },
    );
  });

  it('what fn throws is an uncaught exception; the calls after it still come', function () {
    const out = run(`
      const thrown = [];
      process.on('uncaughtException', (error) => thrown.push(error.message));
      let calls = 0;
      const g = new cuda.Graph();
      g.addHostFunc(() => {
        calls++;
        throw new Error('from the host node ' + calls);
      });
      const exec = g.instantiate();
      const stream = new cuda.Stream();
      exec.launch(stream);
      exec.launch(stream);
      await stream.synchronize();
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepStrictEqual(thrown, ['from the host node 1', 'from the host node 2']);
      console.log('survived');
    `);
    assert.match(out, /survived/);
  });

  it('bad input and driver failures: a TypeError for a non-function, the driver error otherwise, and nothing left held', function () {
    const counts = path.join(dir, 'counts');
    run(
      `${COUNTS}
      const g = new cuda.Graph();
      assert.throws(() => g.addHostFunc(42), { name: 'TypeError', message: /fn must be a function/ });
      assert.throws(() => g.addHostFunc(() => {}, { deps: [] }), { name: 'TypeError', message: /unknown option 'deps'/ });
      for (const [call, api] of [
        ['cuUserObjectCreate', 'cuUserObjectCreate'],
        ['cuGraphRetainUserObject', 'cuGraphRetainUserObject'],
        ['cuGraphAddHostNode', 'cuGraphAddHostNode'],
      ]) {
        process.env.FAKE_CUDA_FAIL = call + ':1:2';
        assert.throws(() => g.addHostFunc(() => {}), { name: 'MemoryError', message: api + ' failed: out of memory' });
        process.env.FAKE_CUDA_FAIL = '';
      }
      assert.strictEqual(g.nodeCount, 0);
      // only the node's failure leaves the user object on the graph, until it goes
      assert.strictEqual(counts().user_objects, 1);
      g.destroy();
      assert.strictEqual(counts().user_objects, 0);
      const destroyed = new cuda.Graph();
      destroyed.destroy();
      assert.throws(() => destroyed.addHostFunc(() => {}), { name: 'LogicError', message: /this Graph has been destroyed/ });
    `,
      { FAKE_CUDA_COUNTS: counts, FAKE_CUDA_FAIL: '' },
    );
  });

  it('workers whose graphs call host functions, terminated mid-launch in 20 rounds: no crash, exit 0', function () {
    const out = run(`
      const { Worker } = require('worker_threads');
      const body = \`
        const cuda = require(\${JSON.stringify(${JSON.stringify(ROOT)})});
        const { parentPort } = require('worker_threads');
        cuda.init();
        new cuda.Device(0).makeContext();
        let calls = 0;
        const g = new cuda.Graph();
        g.addHostFunc(() => calls++);
        const exec = g.instantiate();
        parentPort.postMessage('ready');
        const spin = () => {
          for (let i = 0; i < 100; i++) exec.launch();
          setImmediate(spin);
        };
        spin();\`;
      for (let round = 0; round < 20; round++) {
        const worker = new Worker(body, { eval: true });
        await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
        await worker.terminate();
      }
      let calls = 0;
      const g = new cuda.Graph();
      g.addHostFunc(() => calls++);
      const stream = new cuda.Stream();
      g.instantiate().launch(stream);
      await stream.synchronize();
      assert.strictEqual(calls, 1);
      console.log('rounds done');
    `);
    assert.match(out, /rounds done/);
  });
});
