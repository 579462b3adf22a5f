'use strict';
const assert = require('assert');
const cuda = require('../..');
const { describeGpu } = require('../support/gpu');
const { runRefusals } = require('../support/graph-refusals-child');

describe('CUDA graphs (checked before the driver)', function () {
  it('a GraphExec comes from instantiate(), a GraphNode from a graph, not new', function () {
    assert.throws(() => new cuda.GraphExec(), { name: 'TypeError', message: /graph\.instantiate\(\)/ });
    assert.throws(() => new cuda.GraphNode(null, 0), { name: 'TypeError', message: /graph\.add\.\.\.\(\)/ });
    // what names a node to C is lib/'s own, not a static method the fuzzer reached
    assert.strictEqual(cuda.GraphNode.indexIn, undefined);
  });

  it('beginCapture checks its mode', function () {
    const stream = Object.create(cuda.Stream.prototype);
    assert.throws(() => stream.beginCapture('global'), { name: 'TypeError', message: /mode/ });
    assert.throws(() => stream.beginCapture(9), { name: 'RangeError', message: /cuda\.StreamCaptureMode/ });
  });

  it('the addon refuses objects that are not graphs', function () {
    assert.throws(() => cuda.Graph.prototype.instantiate.call({}), { name: 'TypeError', message: /expected a Graph/ });
    assert.throws(() => cuda.GraphExec.prototype.launch.call({}), {
      name: 'TypeError',
      message: /expected a GraphExec/,
    });
    assert.throws(() => cuda.Stream.prototype.endCapture.call({}), { name: 'TypeError', message: /expected a Stream/ });
  });

  it('ESM exports them', async function () {
    const esm = await import('../../lib/index.mjs');
    assert.strictEqual(esm.Graph, cuda.Graph);
    assert.strictEqual(esm.GraphExec, cuda.GraphExec);
    assert.strictEqual(esm.GraphNode, cuda.GraphNode);
  });
});

const SOURCE = `
__global__ void add_one(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
__global__ void scale(int *a, int k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= k;
}`;

const N = 1000;

function randomInts(n) {
  const values = new Int32Array(n);
  for (let i = 0; i < n; i++) values[i] = Math.floor(Math.random() * 2001) - 1000;
  return values;
}

// values in device memory (new unless given), there before what a NON_BLOCKING stream runs next:
// memcpyHtoD alone is ordered on the legacy default stream, which such a stream does not wait for,
// and returns before the bytes land (on the H200 under load, graphs read stale bytes)
function upload(values, device = cuda.memAlloc(values.byteLength)) {
  cuda.memcpyHtoD(device, values);
  cuda.Context.synchronizeSync();
  return device;
}

// memsetD32, done before what a NON_BLOCKING stream runs next (see upload)
function fill32(device, value, n) {
  cuda.memsetD32(device, value, n);
  cuda.Context.synchronizeSync();
}

describeGpu('CUDA graphs', function () {
  let addOne, scale, stream, launch;

  before(function () {
    const { SourceModule } = require('../../lib/compiler');
    const module = new SourceModule(SOURCE);
    addOne = module.getFunction('add_one');
    scale = module.getFunction('scale');
    stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    launch = { block: [128, 1, 1], grid: [Math.ceil(N / 128), 1], stream };
    // the first calls of each kernel happen outside any capture
    const scratch = cuda.memAlloc(N * 4);
    addOne(scratch, cuda.int32(N), launch);
    scale(scratch, cuda.int32(2), cuda.int32(N), launch);
    stream.synchronizeSync();
    scratch.free();
  });

  async function download(device, n = N) {
    await stream.synchronize();
    const values = new Int32Array(n);
    cuda.memcpyDtoH(values, device);
    return values;
  }

  function capture(enqueue) {
    assert.strictEqual(stream.beginCapture(), stream);
    try {
      enqueue();
    } catch (error) {
      try {
        stream.endCapture();
      } catch {
        // the capture was invalidated: the first error says why
      }
      throw error;
    }
    return stream.endCapture();
  }

  it('captures kernel launches without running them, then replays them exactly', async function () {
    const host = randomInts(N);
    const device = upload(host);
    const graph = capture(() => {
      addOne(device, cuda.int32(N), launch);
      scale(device, cuda.int32(3), cuda.int32(N), launch);
      addOne(device, cuda.int32(N), launch);
    });
    assert.ok(graph instanceof cuda.Graph);
    assert.strictEqual(graph.nodeCount, 3);
    const captured = graph.nodes()[0].params();
    assert.deepStrictEqual(
      [captured.kernel, captured.grid, captured.block, captured.shared],
      [null, [Math.ceil(N / 128), 1, 1], [128, 1, 1], 0],
    );
    assert.deepStrictEqual(await download(device), host, 'capturing ran nothing');

    const exec = graph.instantiate();
    assert.ok(exec instanceof cuda.GraphExec);
    assert.strictEqual(exec.context, cuda.Context.getCurrent());
    assert.strictEqual(exec.launch(stream), exec);
    exec.launch(stream);
    const step = (x) => (Math.imul(x + 1, 3) + 1) | 0;
    assert.deepStrictEqual(
      await download(device),
      host.map((x) => step(step(x))),
    );
    exec.destroy();
    graph.destroy();
    device.free();
  });

  it('captures memsets and device-to-device copies', async function () {
    const value = 1 + Math.floor(Math.random() * 2 ** 30);
    const a = cuda.memAlloc(N * 4);
    const b = upload(randomInts(N));
    const graph = capture(() => {
      cuda.memsetD32Async(a, value, N, stream);
      cuda.memcpyDtoDAsync(b, a, N * 4, stream);
      addOne(b, cuda.int32(N), launch);
    });
    assert.strictEqual(graph.nodeCount, 3);
    const exec = graph.instantiate();
    exec.launch(stream);
    assert.deepStrictEqual(await download(a), new Int32Array(N).fill(value));
    assert.deepStrictEqual(await download(b), new Int32Array(N).fill(value + 1));
  });

  it("a captured graph keeps the module, memory and page-locked buffer its work used, a joined stream's too, once they are dropped and collected", async function () {
    const host = randomInts(N);
    const result = cuda.memAlloc(N * 4);
    const [exec, moduleRef] = (() => {
      const { SourceModule } = require('../../lib/compiler');
      const own = new SourceModule(SOURCE);
      const input = cuda.pagelockedEmpty(N, 'int32');
      input.set(host);
      const a = cuda.memAlloc(N * 4);
      const side = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
      const fork = new cuda.Event();
      const join = new cuda.Event();
      stream.beginCapture();
      cuda.memcpyHtoDAsync(a, input, stream);
      side.waitForEvent(fork.record(stream)); // side joins the capture
      own.getFunction('scale')(a, cuda.int32(3), cuda.int32(N), { ...launch, stream: side });
      stream.waitForEvent(join.record(side));
      own.getFunction('add_one')(a, cuda.int32(N), launch);
      cuda.memcpyDtoDAsync(result, a, N * 4, stream);
      return [stream.endCapture().instantiate(), new WeakRef(own)];
    })();
    for (let i = 0; i < 4; i++) {
      global.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    // memory freed under the graph would be handed out again here, and overwritten
    const churn = Array.from({ length: 8 }, () => cuda.memAlloc(N * 4));
    for (const memory of churn) cuda.memsetD32(memory, 0x5a5a5a5a, N);
    cuda.Context.synchronizeSync();
    assert.ok(moduleRef.deref(), "the graph's GraphExec keeps the module");
    assert.throws(() => moduleRef.deref().free(), { name: 'LogicError', message: /destroy them first/ });
    exec.launch(stream);
    assert.deepStrictEqual(
      await download(result),
      host.map((x) => (Math.imul(x, 3) + 1) | 0),
    );
    exec.destroy();
    for (const memory of churn) memory.free();
  });

  it('a GraphExec launches many times, on any stream, and outlives its Graph and its stream', async function () {
    const host = randomInts(N);
    const device = upload(host);
    const capturing = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    assert.strictEqual(capturing.beginCapture(), capturing);
    addOne(device, cuda.int32(N), { ...launch, stream: capturing });
    const graph = capturing.endCapture();
    capturing.destroy();
    const exec = graph.instantiate();
    graph.destroy();
    assert.strictEqual(exec.upload(stream), exec);
    for (let i = 0; i < 50; i++) exec.launch(stream);
    assert.deepStrictEqual(
      await download(device),
      host.map((x) => x + 50),
    );
    exec.launch();
    cuda.Context.synchronizeSync();
    assert.deepStrictEqual(
      await download(device),
      host.map((x) => x + 51),
    );
  });

  it("update() makes an instance run another graph's arguments", async function () {
    const host = randomInts(N);
    const device = upload(host);
    const byTwo = capture(() => scale(device, cuda.int32(2), cuda.int32(N), launch));
    const byFive = capture(() => scale(device, cuda.int32(5), cuda.int32(N), launch));
    const exec = byTwo.instantiate();
    exec.launch(stream);
    assert.deepStrictEqual(
      await download(device),
      host.map((x) => x * 2),
    );
    assert.strictEqual(exec.update(byFive), exec);
    exec.launch(stream);
    assert.deepStrictEqual(
      await download(device),
      host.map((x) => x * 10),
    );
  });

  it('update() with a graph of another shape is a LogicError saying why', function () {
    const device = cuda.memAlloc(N * 4);
    const one = capture(() => addOne(device, cuda.int32(N), launch));
    const two = capture(() => {
      addOne(device, cuda.int32(N), launch);
      addOne(device, cuda.int32(N), launch);
    });
    const exec = one.instantiate();
    assert.throws(
      () => exec.update(two),
      (error) =>
        error instanceof cuda.LogicError &&
        /topology differs/.test(error.message) &&
        /graph\.instantiate\(\)/.test(error.message) &&
        error.code === 910 &&
        error.api === 'cuGraphExecUpdate',
    );
  });

  it('endCapture() without beginCapture() is a LogicError', function () {
    assert.throws(() => stream.endCapture(), {
      name: 'LogicError',
      message: 'stream.endCapture(): the stream is not capturing; call stream.beginCapture() first',
    });
  });

  it('destroyed graphs and instances refuse use with a LogicError; destroy twice does nothing', function () {
    const device = cuda.memAlloc(N * 4);
    const graph = capture(() => addOne(device, cuda.int32(N), launch));
    const exec = graph.instantiate();
    exec.destroy();
    exec.destroy();
    assert.throws(() => exec.launch(stream), { name: 'LogicError', message: /GraphExec has been destroyed/ });
    assert.throws(() => exec.update(graph), { name: 'LogicError', message: /GraphExec has been destroyed/ });
    graph[Symbol.dispose]();
    graph.destroy();
    assert.throws(() => graph.instantiate(), { name: 'LogicError', message: /Graph has been destroyed/ });
    assert.throws(() => graph.nodeCount, { name: 'LogicError' });
    const other = capture(() => addOne(device, cuda.int32(N), launch)).instantiate();
    assert.throws(() => other.update(graph), { name: 'LogicError', message: /Graph has been destroyed/ });
    other[Symbol.dispose]();
    assert.throws(() => other.launch(stream), { name: 'LogicError' });
  });

  it('the collector freeing memory around captures breaks none of them, and the captured work runs right', async function () {
    // 292 of 300 broke on an H200 before the reaper left captures alone (one synchronization beside
    // a capture, on any thread, ends it in an error)
    const device = cuda.memAlloc(N * 4);
    fill32(device, 0, N);
    const rounds = 100;
    const dropAndCollect = async () => {
      global.gc();
      await new Promise((resolve) => setImmediate(resolve)); // finalizers hand the frees to the reaper
    };
    for (let i = 0; i < rounds; i++) {
      let dropped = Array.from({ length: 10 }, () => cuda.memAlloc(1 << 20));
      const during = i % 2 === 1; // dropped during the capture, or just before it begins
      if (during) stream.beginCapture();
      dropped = null;
      await dropAndCollect();
      if (!during) stream.beginCapture();
      addOne(device, cuda.int32(N), launch);
      stream.endCapture().instantiate().launch(stream);
      void dropped;
    }
    await stream.synchronize();
    const values = new Int32Array(N);
    cuda.memcpyDtoH(values, device);
    assert.deepStrictEqual(values, new Int32Array(N).fill(rounds)); // one add_one a round
  });

  it('wrong arguments are TypeErrors', function () {
    const device = cuda.memAlloc(N * 4);
    const graph = capture(() => addOne(device, cuda.int32(N), launch));
    const exec = graph.instantiate();
    assert.throws(() => exec.launch({}), { name: 'TypeError', message: /expected a Stream/ });
    assert.throws(() => exec.upload(graph), { name: 'TypeError', message: /expected a Stream/ });
    assert.throws(() => exec.update(stream), { name: 'TypeError', message: /expected a Graph/ });
    assert.throws(() => stream.beginCapture(7), { name: 'RangeError' });
  });

  it('graphs and instances dropped without destroy() are freed by the garbage collector', async function () {
    const device = cuda.memAlloc(N * 4);
    const before = cuda.stats().cleanupsFailed;
    for (let i = 0; i < 200; i++) {
      capture(() => addOne(device, cuda.int32(N), launch))
        .instantiate()
        .launch(stream);
    }
    await stream.synchronize();
    global.gc();
    await new Promise((resolve) => setImmediate(resolve));
    global.gc();
    assert.strictEqual(cuda.stats().cleanupsFailed, before);
  });

  it('captures 100 prepared launches into one graph', async function () {
    const host = randomInts(N);
    const device = upload(host);
    addOne.prepare('Pi');
    const graph = capture(() => {
      for (let i = 0; i < 100; i++) addOne.preparedAsyncCall(launch.grid, launch.block, stream, device, N);
    });
    assert.strictEqual(graph.nodeCount, 100);
    graph.instantiate().launch(stream);
    assert.deepStrictEqual(
      await download(device),
      host.map((x) => x + 100),
    );
  });
});

describeGpu('graphs built node by node', function () {
  let module, addOne, scale, stream;
  const grid = Math.ceil(N / 128);

  before(function () {
    const { SourceModule } = require('../../lib/compiler');
    module = new SourceModule(SOURCE);
    addOne = module.getFunction('add_one');
    scale = module.getFunction('scale');
    stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
  });

  async function read(device) {
    await stream.synchronize();
    const values = new Int32Array(N);
    cuda.memcpyDtoH(values, device);
    return values;
  }

  // Launches exec, whose graph copies page-locked input in, scales it by k and copies it out to
  // output, rounds times on new random data (the nodes read input at each launch).
  async function roundsOfScale(exec, input, output, k, rounds) {
    for (let round = 0; round < rounds; round++) {
      input.set(randomInts(N));
      output.fill(0);
      exec.launch(stream);
      await stream.synchronize();
      assert.deepStrictEqual(
        output,
        input.map((x) => Math.imul(x, k)),
        `round ${round}`,
      );
    }
  }

  // a = value; then b = a and a += 1 (in parallel); then b *= k after the copy; c = b after both.
  function diamond(a, b, c, value, k) {
    const graph = new cuda.Graph();
    const set = graph.addMemset(a, value, N, { elementSize: 4 });
    const copy = graph.addMemcpy(b, a, N * 4, { after: set });
    const add = graph.addKernel(addOne, a, cuda.int32(N), { grid, block: 128, after: copy });
    const times = graph.addKernel(scale, b, cuda.int32(k), cuda.int32(N), { grid, block: 128, after: copy });
    const last = graph.addMemcpy(c, b, N * 4, { after: [add, times] });
    return { graph, set, copy, add, times, last };
  }

  it('kernel, memset and copy nodes with dependencies compute what the CPU does, at every launch', async function () {
    const [a, b, c] = [cuda.memAlloc(N * 4), cuda.memAlloc(N * 4), cuda.memAlloc(N * 4)];
    const value = (Math.random() * 2 ** 20) | 0;
    const k = 2 + Math.floor(Math.random() * 50);
    const { graph, set, copy, add, times, last } = diamond(a, b, c, value, k);
    assert.deepStrictEqual(
      graph.nodes().map((node) => node.type),
      ['memset', 'memcpy', 'kernel', 'kernel', 'memcpy'],
    );
    const edges = graph.edges().map(([from, to]) => `${from.index}->${to.index}`);
    assert.deepStrictEqual(edges.sort(), ['0->1', '1->2', '1->3', '2->4', '3->4']);
    const apart = new cuda.Graph();
    apart.addEmpty();
    apart.addMemset(a, 1, 4);
    assert.deepStrictEqual(
      apart.edges(),
      [],
      'nodes without dependencies: no edges (the driver refuses arrays for none)',
    );
    assert.ok([set, copy, add, times, last].every((node, i) => node.index === i));
    const exec = graph.instantiate({ upload: stream });
    for (let launch = 0; launch < 3; launch++) {
      fill32(c, 0, N);
      exec.launch(stream);
      assert.deepStrictEqual(await read(a), new Int32Array(N).fill(value + 1));
      assert.deepStrictEqual(await read(c), new Int32Array(N).fill(value * k));
    }
    // random data in: a kernel node reads what a copy node wrote
    const host = randomInts(N);
    const g2 = new cuda.Graph();
    const src = cuda.memAlloc(N * 4);
    upload(host, src);
    const moved = g2.addMemcpy(a, src, N * 4);
    g2.addKernel(scale, a, cuda.int32(k), cuda.int32(N), { grid, block: 128, after: moved });
    g2.instantiate().launch(stream);
    assert.deepStrictEqual(
      await read(a),
      host.map((x) => Math.imul(x, k)),
    );
  });

  it('a node turned off is skipped until turned on; a child graph runs a copy made when added', async function () {
    const [a, b, c] = [cuda.memAlloc(N * 4), cuda.memAlloc(N * 4), cuda.memAlloc(N * 4)];
    const { graph, add, times } = diamond(a, b, c, 7, 3);
    const child = new cuda.Graph();
    child.addKernel(addOne, c, cuda.int32(N), { grid, block: 128 });
    graph.addChildGraph(child, { after: graph.nodes()[4] });
    child.addKernel(addOne, c, cuda.int32(N), { grid, block: 128 }); // not in the copy
    const exec = graph.instantiate();
    exec.setEnabled(times, false).setEnabled(add, false);
    assert.strictEqual(exec.isEnabled(times), false);
    exec.launch(stream);
    assert.deepStrictEqual(await read(a), new Int32Array(N).fill(7));
    assert.deepStrictEqual(await read(c), new Int32Array(N).fill(8));
    exec.setEnabled(times, true);
    exec.launch(stream);
    assert.deepStrictEqual(await read(c), new Int32Array(N).fill(22));
    assert.match(graph.toDot(), /digraph[\s\S]*add_one/);
  });

  it('setKernelArgs() changes one kernel node of an instance: other arguments, computed from then on', async function () {
    const host = randomInts(N);
    const a = cuda.memAlloc(N * 4);
    const graph = new cuda.Graph();
    const copy = graph.addMemcpy(a, upload(host), N * 4);
    const node = graph.addKernel(scale, a, cuda.int32(2), cuda.int32(N), { grid, block: 128, after: copy });
    const exec = graph.instantiate();
    exec.launch(stream);
    assert.deepStrictEqual(
      await read(a),
      host.map((x) => Math.imul(x, 2)),
    );
    const k = 3 + Math.floor(Math.random() * 100);
    exec.setKernelArgs(node, a, cuda.int32(k), cuda.int32(N), { grid, block: 128 });
    exec.launch(stream);
    assert.deepStrictEqual(
      await read(a),
      host.map((x) => Math.imul(x, k)),
    );
  });

  it('device-side launch: a kernel launches a GraphExec instantiated for it, which computes what the CPU does', async function () {
    const { DynamicSourceModule } = require('../../lib/compiler');
    const launcher = new DynamicSourceModule(`
      extern "C" __global__ void launch_graph(cudaGraphExec_t exec, int *status) {
        status[0] = (int)cudaGraphLaunch(exec, cudaStreamGraphFireAndForget);
      }`).getFunction('launch_graph');
    const host = randomInts(N);
    const a = upload(host);
    const graph = new cuda.Graph();
    const k = 2 + Math.floor(Math.random() * 50);
    const times = graph.addKernel(scale, a, cuda.int32(k), cuda.int32(N), { grid, block: 128 });
    graph.addKernel(addOne, a, cuda.int32(N), { grid, block: 128, after: times });
    const exec = graph.instantiate({ deviceLaunch: true }); // deviceHandle uploads it
    assert.strictEqual(typeof exec.deviceHandle, 'bigint');
    // device code launching an instance not made for it faults (the context is lost): refused
    assert.throws(() => graph.instantiate().deviceHandle, { name: 'LogicError', message: /deviceLaunch: true/ });
    const status = cuda.memAlloc(4);
    fill32(status, 0xffff, 1);
    // a graph launches from a kernel that runs in a graph itself
    const outer = new cuda.Graph();
    outer.addKernel(launcher, cuda.uint64(exec.deviceHandle), status, { block: 1 });
    const run = outer.instantiate();
    const rounds = 1 + Math.floor(Math.random() * 3);
    for (let i = 0; i < rounds; i++) run.launch(stream);
    let expected = host;
    for (let i = 0; i < rounds; i++) expected = expected.map((x) => (Math.imul(x, k) + 1) | 0);
    assert.deepStrictEqual(await read(a), expected);
    const got = new Int32Array(1);
    cuda.memcpyDtoH(got, status);
    assert.strictEqual(got[0], 0, 'cudaGraphLaunch returned cudaSuccess');
    exec.destroy();
    assert.throws(() => exec.deviceHandle, { name: 'LogicError', message: /destroyed/ });
  });

  it('copy nodes between page-locked host arrays and the device: in, a kernel, out, at every launch (CPU reference)', async function () {
    const input = cuda.pagelockedEmpty(N, 'int32');
    const output = cuda.pagelockedEmpty(N, 'int32');
    const a = cuda.memAlloc(N * 4);
    const graph = new cuda.Graph();
    const up = graph.addMemcpy(a, input, N * 4);
    const k = 2 + Math.floor(Math.random() * 50);
    const times = graph.addKernel(scale, a, cuda.int32(k), cuda.int32(N), { grid, block: 128, after: up });
    graph.addMemcpy(output, a, N * 4, { after: times });
    const exec = graph.instantiate();
    await roundsOfScale(exec, input, output, k, 3);
    assert.throws(() => cuda.hostAllocationOf(input).free(), {
      name: 'LogicError',
      message: /has copies of this memory/,
    });
    graph.destroy();
    exec.destroy();
    cuda.hostAllocationOf(input).free();
  });

  it('2D and 3D copy nodes: page-locked host to pitched device memory, a kernel, a 3D copy back (CPU reference)', async function () {
    const [cols, rows, depth] = [100, 5, 2]; // N = 1000 ints
    const input = cuda.pagelockedEmpty(N, 'int32');
    const output = cuda.pagelockedEmpty(N, 'int32');
    const pitch = 512;
    const pitched = cuda.memAlloc(pitch * rows * depth);
    const up = new cuda.Memcpy2D();
    up.setSrcHost(input);
    up.setDstDevice(pitched);
    Object.assign(up, { srcPitch: cols * 4, dstPitch: pitch, widthInBytes: cols * 4, height: rows * depth });
    const down = new cuda.Memcpy3D();
    down.setSrcDevice(pitched);
    down.setDstHost(output);
    Object.assign(down, { srcPitch: pitch, srcHeight: rows, dstPitch: cols * 4, dstHeight: rows });
    Object.assign(down, { widthInBytes: cols * 4, height: rows, depth });
    const graph = new cuda.Graph();
    const k = 2 + Math.floor(Math.random() * 50);
    const times = graph.addKernel(scale, pitched, cuda.int32(k), cuda.int32((pitch / 4) * rows * depth), {
      grid: Math.ceil(((pitch / 4) * rows * depth) / 128),
      block: 128,
      after: graph.addMemcpy(up),
    });
    graph.addMemcpy(down, { after: times });
    const exec = graph.instantiate();
    await roundsOfScale(exec, input, output, k, 2);
    exec.destroy();
    graph.destroy();
  });

  it('graph memory left allocated by a launch is used outside the graph, then freed by memory.free(stream) for the next launch', async function () {
    const host = randomInts(N);
    const input = upload(host);
    const graph = new cuda.Graph();
    const { node, memory } = graph.addMemAlloc(N * 4);
    const copy = graph.addMemcpy(memory, input, N * 4, { after: node });
    graph.addKernel(addOne, memory, cuda.int32(N), { grid, block: 128, after: copy });
    const exec = graph.instantiate();
    for (let round = 1; round <= 3; round++) {
      exec.launch(stream);
      addOne(memory, cuda.int32(N), { grid, block: 128, stream }); // outside the graph
      assert.deepStrictEqual(
        await read(memory),
        host.map((x) => x + 2),
        `round ${round}`,
      );
      memory.free(stream); // else the next launch is refused: the memory is still allocated
    }
    await stream.synchronize();
    exec.destroy();
    graph.destroy();
    assert.throws(() => memory.free(stream), { name: 'LogicError', message: /no Graph or GraphExec/ });
  });

  it('setMemset() and setMemcpy() change an instance from its next launch, and the graph for later ones (CPU reference)', async function () {
    const [v1, v2, v3] = [1, 2, 3].map(() => Math.floor(Math.random() * 2 ** 30));
    const a = cuda.memAlloc(N * 4);
    const out = cuda.pagelockedEmpty(N, 'int32');
    const out2 = cuda.pagelockedEmpty(N, 'int32');
    const graph = new cuda.Graph();
    const set = graph.addMemset(a, v1, N, { elementSize: 4 });
    const add = graph.addKernel(addOne, a, cuda.int32(N), { grid, block: 128, after: set });
    const copy = graph.addMemcpy(out, a, N * 4, { after: add });
    const exec = graph.instantiate();
    const run = async (e) => {
      e.launch(stream);
      await stream.synchronize();
    };
    await run(exec);
    assert.deepStrictEqual(out, new Int32Array(N).fill(v1 + 1));
    exec.setMemset(set, a, v2, N, { elementSize: 4 }).setMemcpy(copy, out2, a, N * 4);
    await run(exec);
    assert.deepStrictEqual([out[0], out2], [v1 + 1, new Int32Array(N).fill(v2 + 1)]);
    graph.setMemset(set, a, v3, N, { elementSize: 4 });
    await run(graph.instantiate());
    assert.deepStrictEqual(out, new Int32Array(N).fill(v3 + 1), 'a new instance of the changed graph');
    await run(exec);
    assert.deepStrictEqual(out2, new Int32Array(N).fill(v2 + 1), 'the instance made before is as it was');
  });

  it('node.params() reads back what the driver holds; graph.setKernelArgs() changes what later instances compute', async function () {
    const host = randomInts(N);
    const a = cuda.memAlloc(N * 4);
    const src = upload(host);
    const graph = new cuda.Graph();
    const copy = graph.addMemcpy(a, src, N * 4);
    const node = graph.addKernel(scale, a, cuda.int32(2), cuda.int32(N), { grid, block: 128, shared: 64, after: copy });
    const value = (Math.random() * 2 ** 31) | 0;
    const set = graph.addMemset(cuda.memAlloc(4 * N), value, 16, { elementSize: 4, after: node });
    assert.deepStrictEqual(copy.params(), { dest: a.ptr, src: src.ptr, width: N * 4, height: 1, depth: 1 });
    assert.deepStrictEqual(
      { ...set.params(), dest: null },
      { dest: null, value, elementSize: 4, width: 16, height: 1, pitch: 64 },
    );
    const read0 = node.params();
    assert.deepStrictEqual(
      [read0.kernel, read0.grid, read0.block, read0.shared],
      [scale, [grid, 1, 1], [128, 1, 1], 64],
    );
    const expected = new DataView(new ArrayBuffer(16));
    expected.setBigUint64(0, a.ptr, true);
    expected.setInt32(8, 2, true);
    expected.setInt32(12, N, true);
    assert.deepStrictEqual(read0.args, new Uint8Array(expected.buffer), 'the parameter bytes the driver holds');
    const before = graph.instantiate();
    const k = 3 + Math.floor(Math.random() * 100);
    graph.setKernelArgs(node, a, cuda.int32(k), cuda.int32(N), { grid, block: 128 });
    assert.strictEqual(new DataView(node.params().args.buffer).getInt32(8, true), k);
    graph.instantiate().launch(stream);
    assert.deepStrictEqual(
      await read(a),
      host.map((x) => Math.imul(x, k)),
    );
    before.launch(stream);
    assert.deepStrictEqual(
      await read(a),
      host.map((x) => Math.imul(x, 2)),
      'an instance made before keeps the first arguments',
    );
  });

  it('what the driver crashes on or refuses is refused first, saying what to do; no graph is destroyed under a capture into it, collected or not, nor used once a failed capture into it freed it (in a child process: driver 580 crashed on a graph made its own child)', function () {
    this.timeout(120000);
    // freed heap memory filled, and not cached for reuse: a read of what the driver freed (a graph
    // a failed capture freed) crashes the child rather than going unseen
    runRefusals({ GLIBC_TUNABLES: 'glibc.malloc.perturb=165:glibc.malloc.tcache_count=0' });
  });

  it('a capture into a built graph adds its work after the nodes named, and captureInfo() lists them', async function () {
    const host = randomInts(N);
    const a = cuda.memAlloc(N * 4);
    const graph = new cuda.Graph();
    const copy = graph.addMemcpy(a, upload(host), N * 4);
    stream.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: graph, after: copy });
    assert.deepStrictEqual(
      stream.captureInfo().dependencies.map((node) => node.index),
      [0],
    );
    scale(a, cuda.int32(3), cuda.int32(N), { grid, block: 128, stream });
    const info = stream.captureInfo();
    assert.strictEqual(info.graph, graph);
    assert.deepStrictEqual(
      info.dependencies.map((node) => node.type),
      ['kernel'],
    );
    addOne(a, cuda.int32(N), { grid, block: 128, stream });
    assert.strictEqual(stream.endCapture(), graph);
    assert.deepStrictEqual(
      graph.nodes().map((node) => node.type),
      ['memcpy', 'kernel', 'kernel'],
    );
    graph.instantiate().launch(stream);
    assert.deepStrictEqual(
      await read(a),
      host.map((x) => Math.imul(x, 3) + 1),
    );
  });

  it('conditional nodes: a WHILE loop runs until a kernel clears its condition; IF/ELSE and SWITCH pick by a kernel-set value', async function () {
    const { SourceModule } = require('../../lib/compiler');
    const cond = new SourceModule(
      `#include <cudadrv/graph.cuh>
      // one step of a loop of *left steps: x[i] = 3 x[i] + 1 (mod 2^32), then the count down
      __global__ void step(cudadrv::ConditionalHandle h, unsigned *x, int *left, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] = 3 * x[i] + 1;
      }
      __global__ void count_down(cudadrv::ConditionalHandle h, int *left) {
        if (--*left <= 0) cudadrv::setConditional(h, 0);
      }
      __global__ void choose(cudadrv::ConditionalHandle h, const int *value) {
        cudadrv::setConditional(h, (unsigned) *value);
      }`,
    );
    const [step, countDown, choose] = ['step', 'count_down', 'choose'].map((name) => cond.getFunction(name));
    const host = new Uint32Array(N).map(() => (Math.random() * 2 ** 32) >>> 0);
    const x = upload(host);
    const steps = 1 + Math.floor(Math.random() * 40);
    const left = upload(new Int32Array([steps]));
    const graph = new cuda.Graph();
    const loop = graph.conditionalHandle({ default: 1 });
    const { node: whileNode, bodies } = graph.addConditional(loop, 'while');
    const h = cuda.uint64(loop.value);
    const body = bodies[0].addKernel(step, h, x, left, cuda.int32(N), { grid, block: 128 });
    bodies[0].addKernel(countDown, h, left, { block: 1, after: body });
    // then IF/ELSE and SWITCH on a value a kernel sets
    const value = upload(new Int32Array([0]));
    const pick = graph.conditionalHandle();
    const chosen = graph.addKernel(choose, cuda.uint64(pick.value), value, { block: 1, after: whileNode });
    const ifElse = graph.addConditional(pick, 'if', { size: 2, after: chosen });
    const out = cuda.memAlloc(16);
    ifElse.bodies[0].addMemset(out, 111, 1, { elementSize: 4 });
    ifElse.bodies[1].addMemset(out, 222, 1, { elementSize: 4 });
    const which = graph.conditionalHandle();
    const chosen2 = graph.addKernel(choose, cuda.uint64(which.value), value, { block: 1, after: ifElse.node });
    const cases = graph.addConditional(which, 'switch', { size: 3, after: chosen2 });
    cases.bodies.forEach((b, i) => b.addMemset(out.slice(4), 10 + i, 1, { elementSize: 4 }));
    const exec = graph.instantiate();
    exec.launch(stream);
    await stream.synchronize();
    let expected = host.slice();
    for (let i = 0; i < steps; i++) expected = expected.map((v) => (Math.imul(v, 3) + 1) >>> 0);
    assert.deepStrictEqual(cuda.fromDevice(x, N, 'uint32'), expected, `${steps} iterations`);
    assert.deepStrictEqual(Array.from(cuda.fromDevice(out, 2, 'int32')), [222, 10]);
    // another value: the IF branch and switch case 2
    upload(new Int32Array([2]), value);
    upload(new Int32Array([1]), left);
    exec.launch(stream);
    await stream.synchronize();
    assert.deepStrictEqual(Array.from(cuda.fromDevice(out, 2, 'int32')), [111, 12]);
  });

  it('event nodes: a wait node orders the graph after another stream; the host waits on a record node', async function () {
    const host = randomInts(N);
    const [a, b] = [cuda.memAlloc(N * 4), cuda.memAlloc(N * 4)];
    const other = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    const written = new cuda.Event();
    const done = new cuda.Event();
    const graph = new cuda.Graph();
    const wait = graph.addEventWait(written);
    const copy = graph.addMemcpy(b, a, N * 4, { after: wait });
    const twice = graph.addKernel(scale, b, cuda.int32(2), cuda.int32(N), { grid, block: 128, after: copy });
    graph.addEventRecord(done, { after: twice });
    assert.deepStrictEqual(
      graph.nodes().map((node) => node.type),
      ['waitEvent', 'memcpy', 'kernel', 'eventRecord'],
    );
    const exec = graph.instantiate();
    fill32(a, 0, N);
    cuda.memcpyHtoDAsync(a, host, other); // the other stream writes a, then records
    written.record(other);
    exec.launch(stream);
    await done.synchronize();
    assert.deepStrictEqual(
      cuda.fromDevice(b, N, 'int32'),
      host.map((x) => Math.imul(x, 2)),
    );
    // the Events destroyed, the graph's CUevents live on with the GraphExec
    written.destroy();
    done.destroy();
    fill32(b, 0, N);
    exec.launch(stream);
    await stream.synchronize();
    assert.deepStrictEqual(
      cuda.fromDevice(b, N, 'int32'),
      host.map((x) => Math.imul(x, 2)),
    );
  });

  it('host nodes: fn runs on the main thread at each launch, sees the nodes before it done, and is let go once the driver is done with it', async function () {
    const a = cuda.memAlloc(N * 4);
    const k = 2 + Math.floor(Math.random() * 50);
    const seen = [];
    let gone = false;
    const registry = new FinalizationRegistry(() => (gone = true));
    let graph = new cuda.Graph();
    const times = graph.addKernel(scale, a, cuda.int32(k), cuda.int32(N), { grid, block: 128 });
    (() => {
      const fn = () => seen.push(cuda.fromDevice(a, N, 'int32'));
      registry.register(fn, 'fn');
      assert.strictEqual(graph.addHostFunc(fn, { after: times }).type, 'host');
    })();
    let exec = graph.instantiate();
    graph.destroy();
    graph = null;
    for (let launch = 0; launch < 3; launch++) {
      const host = randomInts(N);
      upload(host, a);
      exec.launch(stream);
      await stream.synchronize();
      assert.strictEqual(seen.length, launch + 1, 'the call came before the wait settled');
      assert.deepStrictEqual(
        seen[launch],
        host.map((x) => Math.imul(x, k)),
      );
    }
    exec.destroy();
    exec = null;
    for (let i = 0; i < 50 && !gone; i++) {
      global.gc?.();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (global.gc) assert.ok(gone, 'the driver released the user object, and fn with it');
  });

  it('memory nodes: a kernel works in memory the graph allocates and frees at each launch, on random data (CPU reference)', async function () {
    const out = cuda.memAlloc(N * 4);
    const src = cuda.memAlloc(N * 4);
    const k = 2 + Math.floor(Math.random() * 50);
    const graph = new cuda.Graph();
    const { node, memory } = graph.addMemAlloc(N * 4);
    const copyIn = graph.addMemcpy(memory, src, N * 4, { after: node });
    const times = graph.addKernel(scale, memory, cuda.int32(k), cuda.int32(N), { grid, block: 128, after: copyIn });
    const copyOut = graph.addMemcpy(out, memory, N * 4, { after: times });
    graph.addMemFree(memory, { after: copyOut });
    assert.deepStrictEqual(
      graph.nodes().map((n) => n.type),
      ['memAlloc', 'memcpy', 'kernel', 'memcpy', 'memFree'],
    );
    const exec = graph.instantiate();
    for (let launch = 0; launch < 3; launch++) {
      const host = randomInts(N);
      upload(host, src);
      exec.launch(stream);
      await stream.synchronize();
      assert.deepStrictEqual(
        cuda.fromDevice(out, N, 'int32'),
        host.map((x) => Math.imul(x, k)),
      );
    }
    // left allocated by a graph without a free node: used outside, freed by another graph
    const keep = new cuda.Graph();
    const kept = keep.addMemAlloc(N * 4);
    keep.addMemset(kept.memory, 5, N, { elementSize: 4, after: kept.node });
    const keepExec = keep.instantiate();
    keepExec.launch(stream);
    await stream.synchronize();
    assert.deepStrictEqual(cuda.fromDevice(kept.memory, N, 'int32'), new Int32Array(N).fill(5));
    const freeing = new cuda.Graph();
    freeing.addMemFree(kept.memory);
    freeing.instantiate().launch(stream);
    await stream.synchronize();
    assert.throws(() => kept.memory.getPointer(), { name: 'LogicError' });
  });

  it('what only a GraphExec holds survives garbage collection; a module its kernels use cannot be freed', async function () {
    const host = randomInts(N);
    const result = cuda.memAlloc(N * 4);
    let exec = (() => {
      const { SourceModule } = require('../../lib/compiler');
      const own = new SourceModule(SOURCE);
      const input = cuda.memAlloc(N * 4);
      upload(host, input);
      const graph = new cuda.Graph();
      const copy = graph.addMemcpy(result, input, N * 4);
      graph.addKernel(own.getFunction('add_one'), result, cuda.int32(N), { grid, block: 128, after: copy });
      assert.throws(() => own.free(), { name: 'LogicError', message: /destroy them first/ });
      return graph.instantiate();
    })();
    for (let i = 0; i < 3; i++) {
      global.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    exec.launch(stream);
    assert.deepStrictEqual(
      await read(result),
      host.map((x) => x + 1),
    );
    exec = null;
    global.gc();
  });
});
