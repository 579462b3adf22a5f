'use strict';
// What a captured graph keeps alive, on the stand-in driver (no GPU needed): the kernels (their
// modules stay loaded), device memory and page-locked buffers that the captured work used, until
// the graph and its GraphExecs are gone. The GPU runs a captured graph after its inputs were
// dropped and collected, against a CPU reference, in graph.test.js.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');
const { runInChild, ROOT } = require('../support/graph-child');
const { endsBySignal } = require('../support/signal-exit');

describe('captured graphs keep what their work uses (stand-in driver)', function () {
  this.timeout(60000);
  const standIn = standInDriver();
  let dir;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-capture-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const run = (body, env = {}) => {
    const counts = path.join(dir, 'counts');
    return runInChild(
      standIn,
      dir,
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test/support/stand-in-driver'))});
      const { open } = require(${JSON.stringify(path.join(ROOT, 'lib/internal/capture-keep'))});
      const counts = () => liveCounts(${JSON.stringify(counts)});
      const collect = async () => { for (let i = 0; i < 4; i++) { global.gc(); await new Promise((r) => setImmediate(r)); } cuda.Context.synchronizeSync(); };
      ${body}`,
      { FAKE_CUDA_COUNTS: counts, FAKE_CUDA_FAIL: '', ...env },
    );
  };

  it('kernels, device memory and page-locked buffers of captured work outlive their JS references while the graph or a GraphExec lives', function () {
    run(`
      const stream = new cuda.Stream();
      // (a module keeps its kernels, and a kernel its last call's arguments: the module is made here)
      const capture = (into) => {
        const module = new cuda.Module(MODULE);
        const a = cuda.memAlloc(256), b = cuda.memAlloc(256);
        const pinned = cuda.pagelockedEmpty(64, 'float32');
        const kernel = module.getFunction('args4');
        const prepared = module.getFunction('empty').prepare('');
        stream.beginCapture(undefined, into === undefined ? undefined : { into });
        cuda.memsetD32Async(a, 7, 64, stream);
        cuda.memcpyHtoDAsync(b, pinned, stream);
        kernel(a, b, cuda.int32(1), cuda.float32(2), { block: 1, stream });
        prepared.preparedAsyncCall(1, 1, stream);
        cuda.memcpyDtoHAsync(pinned, a, stream);
        return [stream.endCapture(), new WeakRef(module)];
      };
      const refused = { name: 'LogicError', message: 'module.free(): a Graph or GraphExec, or a capture under way, has kernel nodes of this module; end the capture and destroy them first' };
      let [graph, module] = capture();
      assert.strictEqual(open.size, 0, 'the capture is closed');
      await collect();
      let now = counts();
      assert.deepStrictEqual([now.modules, now.device_memory, now.host_memory], [1, 2, 1], 'the graph keeps them');
      assert.throws(() => module.deref().free(), refused);
      let exec = graph.instantiate();
      graph.destroy();
      graph = null;
      await collect();
      now = counts();
      assert.deepStrictEqual([now.modules, now.device_memory, now.host_memory], [1, 2, 1], 'the GraphExec keeps them');
      assert.throws(() => module.deref().free(), refused);
      exec.launch(stream);
      exec = null;
      await collect();
      await collect();
      now = counts();
      assert.deepStrictEqual([now.modules, now.device_memory, now.host_memory, now.graphs, now.graph_execs], [0, 0, 0, 0, 0], 'all let go');
      // into a graph of the user's: that graph keeps them
      const mine = new cuda.Graph();
      [graph, module] = capture(mine);
      assert.strictEqual(graph, mine);
      graph = null;
      await collect();
      now = counts();
      assert.deepStrictEqual([now.modules, now.device_memory, now.host_memory], [1, 2, 1]);
      assert.throws(() => module.deref().free(), refused);
      mine.destroy();
      module.deref().free();
    `);
  });

  it("workers capturing (kernels of modules pinned, contexts detached under a capture), copying through page-locked host nodes and into arrays, freeing graph memory, terminated mid-work in 20 rounds: no crash, the main thread's graphs work after", function () {
    // what each worker does in a loop, and the main thread once after
    const work = `
      const n = 256;
      const input = cuda.pagelockedEmpty(n, 'uint8'), output = cuda.pagelockedEmpty(n, 'uint8');
      const stream = new cuda.Stream();
      const round = () => {
        const device = cuda.memAlloc(n);
        stream.beginCapture();
        cuda.memcpyHtoDAsync(device, input, stream);
        cuda.memcpyDtoHAsync(output, device, stream);
        const captured = stream.endCapture();
        const g = new cuda.Graph();
        const { node, memory } = g.addMemAlloc(n);
        const up = g.addMemcpy(memory, input, n, { after: node });
        const down = g.addMemcpy(output, memory, n, { after: up });
        const exec = g.instantiate();
        exec.launch(stream);
        memory.free(stream);
        exec.setMemcpy(down, output, device, n);
        exec.launch(stream);
        memory.free(stream);
        captured.instantiate().launch(stream);
        // a CudaArray that a capture and a node copy into is held until their graphs go
        const array = new cuda.CudaArray({ width: n, format: cuda.ArrayFormat.UNSIGNED_INT8, numChannels: 1 });
        stream.beginCapture();
        cuda.memcpyHtoAAsync(array, 0, input, stream);
        assert.throws(() => array.free(), { name: 'LogicError', message: /capture under way/ });
        const intoArray = stream.endCapture();
        const toArray = new cuda.Memcpy2D();
        toArray.setSrcDevice(device);
        toArray.setDstArray(array);
        Object.assign(toArray, { widthInBytes: n, height: 1 });
        intoArray.addMemcpy(toArray);
        const arrayExec = intoArray.instantiate();
        arrayExec.launch(stream);
        intoArray.destroy();
        assert.throws(() => array.free(), { name: 'LogicError', message: /GraphExec that lives/ });
        arrayExec.destroy();
        stream.synchronizeSync();
        if (Math.random() < 0.5) array.free(); // else the collector's, or the worker's end
        // captures into a graph and into a conditional node's body, which a termination may cut
        const into = new cuda.Graph();
        const first = into.addMemset(device, 0, n);
        stream.beginCapture(cuda.StreamCaptureMode.RELAXED, { into, after: first });
        cuda.memsetD8Async(device, 1, n, stream);
        // a kernel whose module the capture, then the graph, keep loaded (dropped or freed after)
        const module = new cuda.Module('entry empty\\n');
        module.getFunction('empty')({ block: 1, stream });
        assert.throws(() => module.free(), { name: 'LogicError', message: /capture under way/ });
        stream.endCapture();
        if (Math.random() < 0.5) {
          into.destroy();
          module.free();
        }
        const top = new cuda.Graph();
        const [body] = top.addConditional(top.conditionalHandle(), 'if').bodies;
        stream.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: body });
        cuda.memsetD8Async(device, 2, n, stream);
        stream.endCapture();
        // a capture into a graph broken by a query of its stream: the driver frees the graph when
        // the capture ends, here, at the stream's destroy or collection, or at the worker's end
        const doomed = new cuda.Graph();
        doomed.addEmpty();
        const breaking = new cuda.Stream();
        breaking.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: doomed });
        cuda.memsetD8Async(device, 3, n, breaking);
        assert.throws(() => breaking.isDone(), { code: 900 });
        if (Math.random() < 0.5) {
          assert.throws(() => breaking.endCapture(), { code: 901 });
          assert.throws(() => doomed.instantiate(), { name: 'LogicError', message: /the driver freed the graph/ });
        } else if (Math.random() < 0.5) breaking.destroy();
        // a graph of nodes of another context, instantiated here, then that context destroyed:
        // its GraphExec is refused, and left to the collector or the worker's end
        // a context detached while its stream captures into a graph: detach() ends that capture
        const capturing = new cuda.Device(0).makeContext();
        const inside = new cuda.Stream();
        const target = new cuda.Graph();
        target.addEmpty();
        inside.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: target });
        capturing.detach();
        if (Math.random() < 0.5) target.destroy(); // else the collector's, or the worker's end
        const other = new cuda.Device(0).makeContext();
        const foreign = new cuda.Graph();
        foreign.addMemset(cuda.memAlloc(16), 3, 16);
        cuda.Context.pop();
        const orphaned = foreign.instantiate();
        other.detach();
        assert.throws(() => orphaned.launch(stream), { name: 'LogicError', message: /made in a context that has been destroyed/ });
      };`;
    const body = `
      const assert = require('assert');
      const cuda = require(${JSON.stringify(ROOT)});
      const { parentPort } = require('worker_threads');
      cuda.init();
      new cuda.Device(0).makeContext();
      ${work}
      parentPort.postMessage('ready');
      const spin = () => {
        for (let i = 0; i < 10; i++) round();
        setImmediate(spin);
      };
      spin();`;
    const out = run(
      `
      const { Worker } = require('worker_threads');
      for (let i = 0; i < 20; i++) {
        const worker = new Worker(${JSON.stringify(body)}, { eval: true });
        await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
        let failed = null; // a check of the worker's that failed before its termination
        worker.once('error', (error) => (failed = error));
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
        await worker.terminate();
        if (failed) throw failed;
      }
      ${work}
      input.set(new Uint8Array(n).map(() => Math.floor(Math.random() * 256)));
      round();
      await stream.synchronize();
      assert.deepStrictEqual(output, input);
      // every terminated worker's capture ended with it, and the round's stream left capturing
      // with its collection: the collector's frees synchronize again
      for (let i = 0; i < 4; i++) { global.gc(); await new Promise((r) => setImmediate(r)); }
      assert.strictEqual(cuda.stats().capturesUnderWay, 0);
      assert.deepStrictEqual(log().filter((line) => line.includes('mid-capture')), [], 'no stream was destroyed mid-capture');
      console.log('rounds done');
    `,
      { FAKE_CUDA_STALE_ABORT: '1' },
    ); // a lost graph passed to the stand-in aborts
    assert.match(out, /rounds done/);
  });

  it('the collector freeing memory breaks no capture: its release skips the synchronization during one, and a capture begun during one waits for its end (either broke the capture on driver 580)', function () {
    run(
      `
      const binding = require(${JSON.stringify(path.join(ROOT, 'lib/internal/binding'))});
      const kernel = new cuda.Module(MODULE).getFunction('args4');
      const a = cuda.memAlloc(256);
      const stream = new cuda.Stream();
      const drop = async () => { for (let i = 0; i < 4; i++) { global.gc(); await new Promise((r) => setImmediate(r)); } };
      let dropped = Array.from({ length: 20 }, () => cuda.memAlloc(1 << 20));
      const before = counts().device_memory;
      // dropped during a capture: freed at once, without the synchronization
      stream.beginCapture();
      assert.strictEqual(cuda.stats().capturesUnderWay, 1);
      dropped = null;
      await drop();
      binding.memReclaim(false); // waits for the reaper
      assert.strictEqual(counts().device_memory, before - 20, 'freed during the capture');
      kernel(a, a, cuda.int32(1), cuda.float32(2), { block: 1, stream });
      stream.endCapture().instantiate().launch(stream);
      assert.strictEqual(cuda.stats().capturesUnderWay, 0);
      // dropped before a capture: its synchronization (200 ms here) is under way when it begins
      dropped = [cuda.memAlloc(1 << 20)];
      dropped = null;
      await drop();
      await new Promise((r) => setTimeout(r, 50));
      const start = Date.now();
      stream.beginCapture(); // waits for the synchronization
      const waited = Date.now() - start;
      kernel(a, a, cuda.int32(1), cuda.float32(2), { block: 1, stream });
      stream.endCapture().instantiate().launch(stream);
      assert.ok(waited >= 50 && waited < 1000, 'beginCapture waited ' + waited + ' ms');
    `,
      { FAKE_CUDA_SYNC_MS: '200' },
    );
  });

  for (const signal of ['SIGINT', 'SIGTERM']) {
    it(`${signal} while captures begin and end as the collector frees memory (its synchronizations 20 ms each) ends the process within 1 s, by the signal`, function () {
      const script = `
        const cuda = require(${JSON.stringify(ROOT)});
        cuda.init();
        new cuda.Device(0).makeContext();
        const stream = new cuda.Stream();
        process.stdout.write('ready\\n');
        const spin = () => {
          let dropped = Array.from({ length: 8 }, () => cuda.memAlloc(1 << 16));
          stream.beginCapture(); // may wait for the reaper's synchronization
          dropped = null;
          global.gc();
          cuda.memsetD8Async(cuda.memAlloc(64), 1, 64, stream);
          stream.endCapture().instantiate().launch(stream);
          setImmediate(spin); // finalizers run between rounds: the reaper frees beside captures
        };
        spin();`;
      const env = { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_SYNC_MS: '20', FAKE_CUDA_FAIL: '' };
      return endsBySignal({ script, signal, env, args: ['--expose-gc'] });
    });
  }

  it('work outside any capture keeps nothing, and a failed capture forgets what it kept', function () {
    run(`
      const stream = new cuda.Stream(), other = new cuda.Stream();
      (() => {
        const a = cuda.memAlloc(256);
        stream.beginCapture();
        cuda.memsetD8Async(a, 1, 256, other); // another stream: not captured
        cuda.memcpyDtoDAsync(a, a, 256, other);
        assert.strictEqual(stream.endCapture().nodeCount, 0);
      })();
      await collect();
      assert.strictEqual(counts().device_memory, 0, 'work on a stream outside the capture is not kept by the graph');
      // a capture that cannot end (the stream is not capturing) keeps no record
      assert.throws(() => stream.endCapture(), { name: 'LogicError', message: /not capturing/ });
      assert.strictEqual(open.size, 0);
      // an end the driver refuses leaves the capture going on, and its record with it
      const g = new cuda.Graph();
      stream.beginCapture(undefined, { into: g });
      cuda.memcpyDtoDAsync(cuda.memAlloc(64), cuda.memAlloc(64), 64, stream);
      process.env.FAKE_CUDA_FAIL = 'cuStreamEndCapture:1:700';
      assert.throws(() => stream.endCapture(), { message: /cuStreamEndCapture/ });
      process.env.FAKE_CUDA_FAIL = '';
      assert.deepStrictEqual([stream.isCapturing(), open.size], [true, 1]);
      assert.throws(() => g.destroy(), { name: 'LogicError', message: /: a stream is capturing into this graph/ }); // it was forgotten
      assert.strictEqual(stream.endCapture(), g);
      assert.strictEqual(open.size, 0);
      await collect();
      assert.strictEqual(counts().device_memory, 2, 'the graph keeps the memory its captured copy uses');
      g.destroy();
      await collect();
      assert.strictEqual(counts().device_memory, 0, 'the destroyed graph let go');
    `);
  });

  it("a context detached while its stream captures into a Graph, a wait in it deferring its destruction, ends that capture first: the Graph is then destroyed or collected, not under a capture (the fuzzer's abort: cuGraphDestroy of a graph a stream is capturing into)", function () {
    run(
      `
      const settle = async () => { for (let i = 0; i < 4; i++) { global.gc(); await new Promise((r) => setImmediate(r)); } };
      for (const how of ['collected', 'destroyed']) {
        const made = new cuda.Device(0).makeContext();
        let graph = new cuda.Graph();
        graph.addEmpty();
        let stream = new cuda.Stream();
        const waiting = cuda.Context.synchronize().then(() => 'synchronized', (e) => e.name);
        await new Promise((r) => setTimeout(r, 50)); // the wait (200 ms) is under way in made
        stream.beginCapture(undefined, { into: graph });
        assert.strictEqual(cuda.stats().capturesUnderWay, 1);
        made.detach(); // its destruction waits for the wait's end
        assert.strictEqual(cuda.stats().capturesUnderWay, 0, how + ': the capture was ended at detach');
        stream = null;
        await settle();
        if (how === 'destroyed') graph.destroy();
        graph = null;
        await settle();
        assert.strictEqual(counts().graphs, 0, how);
        await waiting;
      }
      assert.strictEqual(counts().stale, 0);
    `,
      { FAKE_CUDA_SYNC_MS: '200', FAKE_CUDA_STALE_ABORT: '1' },
    );
  });

  it('a stream destroyed, collected or left by its detached context mid-capture (under way, or invalidated by a synchronization beside it) has its capture ended first: no capturing stream reaches cuStreamDestroy, the graph made is discarded, and a Graph captured into keeps the nodes and what they use', function () {
    run(
      `
      const settle = async () => { for (let i = 0; i < 4; i++) { global.gc(); await new Promise((r) => setImmediate(r)); } };
      const invalidate = () => assert.throws(() => cuda.Context.synchronizeSync(), { code: 900 });
      for (const how of ['destroyed', 'invalidated, destroyed', 'queried, destroyed', 'collected', 'invalidated, collected', 'detached']) {
        const made = how === 'detached' ? new cuda.Device(0).makeContext() : null;
        let stream = new cuda.Stream();
        stream.beginCapture();
        cuda.memsetD8Async(cuda.memAlloc(64), 1, 64, stream);
        if (how.startsWith('invalidated')) invalidate();
        if (how.startsWith('queried')) assert.throws(() => stream.isDone(), { code: 900 }); // breaks the capture too
        if (how.includes(', ')) assert.strictEqual(stream.captureInfo().status, 'invalidated', how);
        assert.strictEqual(cuda.stats().capturesUnderWay, 1, how);
        if (how.endsWith('destroyed')) stream.destroy();
        if (made) made.detach();
        stream = null;
        await settle();
        assert.strictEqual(cuda.stats().capturesUnderWay, 0, how + ': the capture ended');
        assert.deepStrictEqual([counts().graphs, counts().stale], [0, 0], how + ': no graph left');
        assert.deepStrictEqual(log().filter((line) => line.includes('mid-capture')), [], how + ': no capturing stream destroyed');
        // the record closes in a FinalizationRegistry callback, then the memory is collected and
        // freed on the reaper thread: under load that takes more than the rounds of settle()
        for (let i = 0; i < 200 && (open.size || counts().device_memory); i++) { global.gc(); await new Promise((r) => setTimeout(r, 5)); }
        assert.deepStrictEqual([open.size, counts().device_memory], [0, 0], how + ': what the captured work used is let go');
      }
      // a capture into a Graph of the caller's: its nodes stay, and the graph keeps what they use
      const graph = new cuda.Graph();
      graph.addEmpty();
      let stream = new cuda.Stream();
      let module = new cuda.Module(MODULE);
      stream.beginCapture(undefined, { into: graph });
      cuda.memcpyHtoDAsync(cuda.memAlloc(64), cuda.pagelockedEmpty(16, 'float32'), stream);
      module.getFunction('empty').prepare('').preparedAsyncCall(1, 1, stream);
      stream.destroy();
      stream = null;
      await settle();
      assert.strictEqual(cuda.stats().capturesUnderWay, 0);
      assert.throws(() => module.free(), { name: 'LogicError', message: /a Graph or GraphExec, or a capture under way, has kernel nodes of this module/ }, 'the graph holds the module its kernel node runs');
      module = null;
      await settle();
      const kept = () => { const now = counts(); return [now.modules, now.device_memory, now.host_memory]; };
      assert.deepStrictEqual(kept(), [1, 1, 1], 'the graph keeps the module, memory and page-locked buffer its captured work uses');
      graph.instantiate().launch(new cuda.Stream()); // the graph is not captured into any more
      graph.destroy();
      await settle();
      cuda.Context.synchronizeSync();
      await settle();
      assert.deepStrictEqual([...kept(), counts().stale], [0, 0, 0, 0]);
      assert.deepStrictEqual(log().filter((line) => line.includes('mid-capture')), []);
      // the same at a detach: the graph keeps the kernel node of the context gone, and refuses to run it
      const made = new cuda.Device(0).makeContext();
      const into = new cuda.Graph();
      into.addEmpty();
      stream = new cuda.Stream();
      stream.beginCapture(undefined, { into });
      new cuda.Module(MODULE).getFunction('empty').prepare('').preparedAsyncCall(1, 1, stream);
      made.detach();
      assert.throws(() => into.instantiate(), { name: 'LogicError', message: /made in a context that has been destroyed/ });
    `,
      { FAKE_CUDA_STALE_ABORT: '1' },
    );
  });

  it('a capture into a Graph that fails (invalidated, then ended, destroyed, collected or left by a detached context; into a body too) loses the graph the driver freed then: each use is a LogicError, destroy() does nothing, and the driver never sees it again', function () {
    // driver 580 frees a graph captured into when its capture ends without a graph: a later call
    // on it (a node read, instantiation, cuGraphDestroy) read freed memory under Electric Fence
    run(
      `
      const settle = async () => { for (let i = 0; i < 4; i++) { global.gc(); await new Promise((r) => setImmediate(r)); } };
      const lost = { name: 'LogicError', message: 'a capture into this Graph (or into a body of its conditional nodes) ended without a graph, and the driver freed the graph then; build a new Graph' };
      const freed = () => log().filter((line) => line === 'graph freed by a failed capture into it').length;
      const cases = ['ended', 'destroyed', 'queried, destroyed', 'collected', 'detached', 'body ended', 'body destroyed'];
      for (const [i, how] of cases.entries()) {
        const made = how === 'detached' ? new cuda.Device(0).makeContext() : null;
        const graph = new cuda.Graph();
        graph.addMemset(cuda.memAlloc(64), 1, 64);
        const exec = graph.instantiate();
        const body = how.startsWith('body') ? graph.addConditional(graph.conditionalHandle(), 'if').bodies[0] : null;
        let stream = new cuda.Stream();
        stream.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: body ?? graph });
        cuda.memsetD8Async(cuda.memAlloc(64), 1, 64, stream);
        if (how.startsWith('queried')) assert.throws(() => stream.isDone(), { code: 900 }, how);
        else assert.throws(() => cuda.Context.synchronizeSync(), { code: 900 }, how);
        const why = /failed: .* \\(a call beside the capture broke it, such as a synchronization of its context or a query of its stream; the driver freed the Graph it recorded into: build a new Graph\\)$/;
        if (how.endsWith('ended')) assert.throws(() => stream.endCapture(), { name: 'LogicError', code: 901, message: why }, how);
        if (how.endsWith('destroyed')) stream.destroy();
        if (made) made.detach();
        stream = null;
        await settle();
        assert.deepStrictEqual([cuda.stats().capturesUnderWay, freed()], [0, i + 1], how + ': the capture ended, and the driver freed the graph');
        const uses = [() => graph.nodeCount, () => graph.nodes(), () => graph.addEmpty(), () => graph.instantiate(), () => graph.toDot()];
        if (!made) uses.push(() => exec.update(graph)); // (an instance of a context gone says so first)
        if (body) uses.push(() => body.addEmpty(), () => body.nodeCount);
        for (const use of uses) assert.throws(use, lost, how + ': ' + use);
        graph.destroy(); // the driver's already: nothing to do
        graph.destroy();
        if (!made) exec.launch(); // an instance is a copy, which the driver keeps
        cuda.Context.synchronizeSync();
      }
      // a plain capture broken, then ended: the error says why, and no graph is lost
      const plain = new cuda.Stream();
      plain.beginCapture(cuda.StreamCaptureMode.RELAXED);
      assert.throws(() => cuda.Context.synchronizeSync(), { code: 900 });
      assert.throws(() => plain.endCapture(), { name: 'LogicError', code: 901, message: /failed: .* \\(a call beside the capture broke it, such as a synchronization of its context or a query of its stream\\)$/ });
      assert.strictEqual(freed(), cases.length);
      // two captures into bodies of one graph, one broken: the other ends, into a graph lost meanwhile
      const graph = new cuda.Graph();
      const [one] = graph.addConditional(graph.conditionalHandle(), 'if').bodies;
      const [two] = graph.addConditional(graph.conditionalHandle(), 'if').bodies;
      const [broken, whole] = [new cuda.Stream(), new cuda.Stream()];
      broken.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: one });
      whole.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: two });
      assert.throws(() => broken.isDone(), { code: 900 }); // breaks that capture only
      assert.throws(() => broken.endCapture(), { code: 901 });
      const info = whole.captureInfo();
      assert.deepStrictEqual([info.status, info.graph, typeof info.dependencies], ['active', null, 'number'], 'no node of the graph lost is read');
      assert.throws(() => whole.endCapture(), lost, 'the other capture ends, its graph not read');
      assert.strictEqual(whole.isCapturing(), false);
      for (const use of [() => two.nodeCount, () => graph.instantiate()]) assert.throws(use, lost);
      await settle();
      assert.deepStrictEqual([counts().graphs, counts().stale], [0, 0]);
      assert.deepStrictEqual(log().filter((line) => line.includes('mid-capture')), []);
    `,
      { FAKE_CUDA_STALE_ABORT: '1' },
    );
  });

  it('the addon refuses to end a capture into a Graph as any other (a second object on the graph, which destroyed it under its owner) and one into another graph, and the capture goes on', function () {
    run(
      `
      const binding = require(${JSON.stringify(path.join(ROOT, 'lib/internal/binding'))});
      const stream = new cuda.Stream(), plain = new cuda.Stream();
      const graph = new cuda.Graph(), other = new cuda.Graph();
      graph.addEmpty();
      stream.beginCapture(undefined, { into: graph });
      plain.beginCapture();
      assert.throws(() => binding.streamEndCapture(stream, Object.create(cuda.Graph.prototype)), {
        name: 'LogicError',
        message: 'stream.endCapture(): the stream is capturing into a Graph of yours; end that capture with the Graph (streamEndCaptureInto)',
      });
      for (const [s, g] of [[stream, other], [plain, graph]])
        assert.throws(() => binding.streamEndCaptureInto(s, g), { name: 'LogicError', message: 'stream.endCapture(): the stream is not capturing into this graph' });
      assert.strictEqual(cuda.stats().capturesUnderWay, 2, 'both captures go on');
      assert.strictEqual(stream.endCapture(), graph);
      assert.strictEqual(graph.nodeCount, 1);
      assert.strictEqual(plain.endCapture().nodeCount, 0);
      graph.instantiate().launch(stream);
      stream.synchronizeSync();
      assert.strictEqual(counts().graphs, 3, 'graph, other and the plain capture: one object each');
      assert.strictEqual(counts().stale, 0);
    `,
      { FAKE_CUDA_STALE_ABORT: '1' },
    );
  });
});
