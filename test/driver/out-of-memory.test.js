'use strict';
// Out of memory while making a driver object: it is made again once after a collection, which
// releases what dropped objects held (as allocations are, after PyCUDA). Each maker on the stand-in,
// its call failing once (the second call makes it) and every time (a MemoryError naming the call).
const assert = require('assert');
const path = require('path');
const { childRunner, ROOT } = require('../support/graph-child');

describe('driver objects made again after a collection when out of memory (stand-in driver)', function () {
  this.timeout(60000);
  const { run } = childRunner('cudadrv-out-of-memory-', { FAKE_CUDA_TRACE: '1', FAKE_CUDA_FAIL: '' });

  it('a Stream, an Event, a made, primary and green Context, a CudaArray, PhysicalMemory, a MemoryPool, a Module and a Library (from data and from a file), a GraphExec: the failed call, a collection that frees a dropped allocation, the call again', function () {
    run(`
      const device = new cuda.Device(0);
      const [group] = device.smResource().split({ minCount: 8 }).groups;
      const file = require('path').join(require('os').tmpdir(), 'cudadrv-oom-' + process.pid + '.module');
      fs.writeFileSync(file, MODULE);
      const graph = new cuda.Graph();
      graph.addEmpty();
      const makers = [
        ['cuStreamCreateWithPriority', () => new cuda.Stream(), cuda.Stream],
        ['cuEventCreate', () => new cuda.Event(), cuda.Event],
        ['cuCtxCreate', () => device.makeContext(), cuda.Context],
        ['cuDevicePrimaryCtxRetain', () => device.retainPrimaryContext(), cuda.Context],
        ['cuGreenCtxCreate', () => device.makeGreenContext(group), cuda.GreenContext],
        ['cuArray3DCreate', () => new cuda.CudaArray({ width: 64, format: cuda.ArrayFormat.FLOAT }), cuda.CudaArray],
        ['cuMemCreate', () => new cuda.PhysicalMemory(cuda.memGetAllocationGranularity()), cuda.PhysicalMemory],
        ['cuMemPoolCreate', () => new cuda.MemoryPool(), cuda.MemoryPool],
        ['cuModuleLoadDataEx', () => new cuda.Module(MODULE), cuda.Module],
        ['cuModuleLoad', () => cuda.moduleFromFile(file), cuda.Module],
        ['cuLibraryLoadData', () => new cuda.Library(MODULE), cuda.Library],
        ['cuLibraryLoadFromFile', () => cuda.libraryFromFile(file), cuda.Library],
        ['cuGraphInstantiateWithFlags', () => graph.instantiate(), cuda.GraphExec],
      ];
      const callsFrom = (start) => log().slice(start).filter((l) => l.startsWith('call ')).map((l) => l.slice(5).replace(/_v\\d+$/, ''));
      const done = (made) => (made instanceof cuda.Context ? made.detach() : made[Symbol.dispose]());
      for (const [symbol, make, Class] of makers) {
        (() => cuda.memAlloc(64))(); // dropped: the collection frees it
        let start = log().length;
        process.env.FAKE_CUDA_FAIL = symbol + ':1:2';
        const made = make();
        process.env.FAKE_CUDA_FAIL = '';
        assert.ok(made instanceof Class, symbol);
        const calls = callsFrom(start);
        const first = calls.indexOf(symbol);
        const second = calls.indexOf(symbol, first + 1);
        assert.ok(first >= 0 && second > first, symbol + ': ' + calls.join(' '));
        assert.ok(calls.slice(first, second).includes('cuMemFree'), symbol + ': ' + calls.join(' '));
        assert.strictEqual(calls.lastIndexOf(symbol), second, symbol + ': ' + calls.join(' '));
        done(made);
        start = log().length;
        process.env.FAKE_CUDA_FAIL = symbol + ':1+:2';
        assert.throws(make, { name: 'MemoryError', api: symbol, message: new RegExp('^' + symbol + ' failed: out of memory') });
        process.env.FAKE_CUDA_FAIL = '';
        assert.strictEqual(callsFrom(start).filter((c) => c === symbol).length, 2, symbol);
      }
      fs.rmSync(file);
    `);
  });

  // rounds green contexts made and dropped, memory and a stream made in each, yielding every 20
  // rounds so that finalizers run; with the stand-in's table small and its releases slow, makers
  // run out of memory while the release thread lags
  const SLOW_RELEASES = { FAKE_CUDA_OBJECTS: '400', FAKE_CUDA_SYNC_MS: '1' };
  const GREEN_ROUNDS = `async function greenRounds(cuda, rounds) {
    const device = new cuda.Device(0);
    const [group] = device.smResource().split({ minCount: 8 }).groups;
    for (let i = 1; i <= rounds; i++) {
      const green = device.makeGreenContext(group);
      green.push();
      cuda.memsetD8Async(cuda.memAlloc(64), 1, 64, new cuda.Stream());
      green.detach();
      if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }`;

  it('green contexts made and dropped in a loop while the release thread lags (the stand-in holds 400 objects, each release waits 1 ms): collections make room, no MemoryError', function () {
    run(
      `
      const binding = require(${JSON.stringify(path.join(ROOT, 'lib', 'internal', 'binding'))});
      const reclaim = binding.memReclaim;
      let collections = 0;
      binding.memReclaim = (collect) => (collections++, reclaim(collect));
      ${GREEN_ROUNDS}
      await greenRounds(cuda, 1000);
      assert.ok(collections > 0, 'the table never filled: the test shows nothing');
    `,
      SLOW_RELEASES,
    );
  });

  it('workers doing so, terminated mid-work (in a collection or not) in 10 rounds, then the main thread: no crash, nothing left behind to fill the table, exit 0', function () {
    const out = run(
      `
      const { Worker } = require('worker_threads');
      ${GREEN_ROUNDS}
      const body = \`
        const cuda = require(\${JSON.stringify(${JSON.stringify(ROOT)})});
        const { parentPort } = require('worker_threads');
        \${greenRounds.toString()}
        cuda.init();
        new cuda.Device(0).makeContext();
        parentPort.postMessage('ready');
        greenRounds(cuda, Infinity);
      \`;
      for (let round = 0; round < 10; round++) {
        const worker = new Worker(body, { eval: true });
        await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
        await worker.terminate();
      }
      await greenRounds(cuda, 500); // a MemoryError where the workers left objects behind
      console.log('rounds done');
    `,
      SLOW_RELEASES,
    );
    assert.match(out, /rounds done/);
  });
});
