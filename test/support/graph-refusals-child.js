'use strict';
// Run in a child process, on the stand-in (graph-build.test.js) and on the GPU (graph.test.js):
// what the driver crashes on, refuses, or would go on with after freeing it, cudadrv refuses first
// and says what to do, and what the driver allows still computes what the CPU does. A crash fails
// the test: driver 580 crashed on a graph made its own child, and the stand-in aborts where a
// driver would use freed memory (a graph destroyed under a capture into it, or freed by the driver
// when a capture into it failed). Exits 0 when every
// check held. runRefusals(env) runs it so, and asserts that.
const assert = require('assert');
const cuda = require('../..');
const binding = require('../../lib/internal/binding');
const { checksChild } = require('./checks-child');
const { SourceModule } = require('../../lib/compiler');

const RELAXED = cuda.StreamCaptureMode.RELAXED;
const NOT_SUPPORTED = { name: 'LogicError', message: 'cuGraphAddChildGraphNode failed: operation not supported' };
// the LogicError of call on a graph captured into (the stream named it as name)
const capturedInto = (call, name = 'this graph') => ({
  name: 'LogicError',
  message:
    `${call}: a stream is capturing into ${name} or into a body of its conditional nodes; ` +
    'end that capture first (stream.endCapture())',
});
const DESTROY_REFUSED = capturedInto('graph.destroy()');
// Neither read whole while a capture into it is under way: what the capture pins (here a module)
// is not the graph's until the capture ends, and driver 580 instantiates such a graph and copies
// it as a child, the copies outliving the module.
function notReadWhole(graph, exec) {
  assert.throws(() => graph.instantiate(), capturedInto('graph.instantiate()'));
  assert.throws(() => new cuda.Graph().addChildGraph(graph), capturedInto('graph.addChildGraph(child)', 'child'));
  assert.throws(() => exec.update(graph), capturedInto('exec.update(graph)', 'graph'));
}

async function collect() {
  for (let i = 0; i < 4; i++) {
    global.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// A random byte other than 0.
const randomByte = () => 1 + Math.floor(Math.random() * 255);

async function main() {
  new cuda.Device(0).retainPrimaryContext().push();
  const bytes = 256;
  const a = cuda.memAlloc(bytes);
  const stream = new cuda.Stream();
  // runs graph on stream; the bytes of a after it, which start as zeros
  const launched = (graph) => {
    cuda.memsetD8(a, 0, bytes);
    const exec = graph.instantiate();
    exec.launch(stream);
    stream.synchronizeSync();
    exec.destroy();
    return cuda.fromDevice(a, bytes, 'uint8');
  };
  const expected = (...fills) => {
    const out = new Uint8Array(bytes);
    for (const [value, start, end] of fills) out.fill(value, start, end);
    return out;
  };

  // a graph made its own child, directly or as a capture into it returned it
  const self = new cuda.Graph();
  self.addEmpty();
  const selfRefused = {
    name: 'LogicError',
    message:
      'graph.addChildGraph(child): child is this graph, which cannot hold itself; build the child as another Graph',
  };
  assert.throws(() => self.addChildGraph(self), selfRefused);
  stream.beginCapture(RELAXED, { into: self });
  cuda.memsetD8Async(a, 1, 16, stream);
  assert.throws(() => self.addChildGraph(stream.endCapture()), selfRefused);

  // a dependency named twice counts once (the driver refuses duplicates)
  const twice = new cuda.Graph();
  const [v1, v2] = [randomByte(), randomByte()];
  const set = twice.addMemset(a, v1, 64);
  const after = twice.addMemset(a.slice(32), v2, 64, { after: [set, set] });
  assert.deepStrictEqual(
    twice.edges().map(([from, to]) => [from.index, to.index]),
    [[set.index, after.index]],
  );
  assert.deepStrictEqual(launched(twice), expected([v1, 0, 32], [v2, 32, 96]));

  // conditional handles: one node each, of the graph's family (its bodies, its top graph)
  const top = new cuda.Graph();
  const yes = top.conditionalHandle({ default: 1 });
  assert.throws(() => new cuda.Graph().addConditional(yes, 'if'), {
    name: 'LogicError',
    message:
      'graph.addConditional(): handle was made by another Graph; make it with graph.conditionalHandle() ' +
      'of this graph (or of the graph whose conditional node holds it)',
  });
  const [body] = top.addConditional(yes, 'if').bodies;
  assert.throws(() => top.addConditional(yes, 'if'), {
    name: 'LogicError',
    message:
      'graph.addConditional(): handle is the condition of another conditional node already; ' +
      'make one handle for each node (graph.conditionalHandle())',
  });
  const [v3, v4] = [randomByte(), randomByte()];
  body.addMemset(a, v3, 16);
  body.addConditional(top.conditionalHandle({ default: 1 }), 'if').bodies[0].addMemset(a.slice(16), v4, 16);
  const fromBody = top.addConditional(body.conditionalHandle({ default: 0 }), 'if', { size: 2 });
  fromBody.bodies[1].addMemset(a.slice(32), v3, 16); // the else branch: the value is 0
  assert.deepStrictEqual(launched(top), expected([v3, 0, 16], [v4, 16, 32], [v3, 32, 48]));

  // a handle that is no node's condition, of the graph or of a body: driver 580 refuses to
  // instantiate the graph ("invalid argument"), which cudadrv says in words first
  const IDLE_HANDLE = {
    name: 'LogicError',
    message:
      "graph.instantiate(): a conditional handle of this graph (graph.conditionalHandle()) is no conditional node's " +
      'condition, which the driver refuses; give it a node (graph.addConditional(handle, kind)) or build the graph without it',
  };
  const idle = new cuda.Graph();
  idle.addMemset(a, v1, 16);
  const spare = idle.conditionalHandle({ default: 1 });
  assert.throws(() => idle.instantiate(), IDLE_HANDLE);
  const [inIdle] = idle.addConditional(spare, 'if').bodies;
  inIdle.addMemset(a.slice(16), v2, 16);
  const inner = inIdle.conditionalHandle({ default: 1 });
  assert.throws(() => idle.instantiate(), IDLE_HANDLE, "a body's handle counts too");
  inIdle.addConditional(inner, 'if').bodies[0].addMemset(a.slice(32), v3, 16);
  assert.deepStrictEqual(launched(idle), expected([v1, 0, 16], [v2, 16, 32], [v3, 32, 48]));

  // what no child graph may be (the driver's own refusal)
  const withMemory = new cuda.Graph();
  const allocation = withMemory.addMemAlloc(64);
  withMemory.addMemFree(allocation.memory, { after: allocation.node });
  for (const child of [top, body, withMemory])
    assert.throws(() => new cuda.Graph().addChildGraph(child), NOT_SUPPORTED);

  // only kernel, memset and copy nodes are turned off and on
  const parent = new cuda.Graph();
  const plain = new cuda.Graph();
  plain.addMemset(a, v1, 16);
  const conditional = parent.addConditional(parent.conditionalHandle(), 'if');
  conditional.bodies[0].addEmpty();
  const nodes = [parent.addEmpty(), parent.addChildGraph(plain), conditional.node];
  const memset = parent.addMemset(a.slice(16), v2, 16);
  const exec = parent.instantiate();
  for (const node of nodes) {
    for (const [method, call] of [
      ['setEnabled', () => exec.setEnabled(node, false)],
      ['isEnabled', () => exec.isEnabled(node)],
    ]) {
      assert.throws(call, {
        name: 'TypeError',
        message: `exec.${method}(): node is ${node.type === 'empty' ? 'an' : 'a'} ${node.type} node; only kernel, memset and memcpy nodes can be turned off and on`,
      });
    }
  }
  assert.strictEqual(exec.setEnabled(memset, false).isEnabled(memset), false);
  exec.destroy();

  // a graph captured into is not destroyed under the capture, nor captured into twice
  const into = new cuda.Graph();
  const first = into.addMemset(a, v1, 32);
  stream.beginCapture(RELAXED, { into, after: first });
  assert.throws(() => into.destroy(), DESTROY_REFUSED);
  const other = new cuda.Stream();
  assert.throws(() => other.beginCapture(RELAXED, { into }), {
    name: 'LogicError',
    message:
      'stream.beginCapture(): another stream is capturing into this graph; end that capture first (stream.endCapture())',
  });
  assert.strictEqual(other.isCapturing(), false);
  for (const options of [undefined, { into: new cuda.Graph() }]) {
    assert.throws(() => stream.beginCapture(RELAXED, options), {
      name: 'LogicError',
      message: 'stream.beginCapture(): the stream is capturing already; end that capture first (stream.endCapture())',
    });
  }
  assert.strictEqual(cuda.stats().capturesUnderWay, 1, 'the capture under way is still counted');
  cuda.memsetD8Async(a.slice(16), v2, 32, stream);
  // no edges during the capture: the captured nodes have no index yet (the driver gives them)
  assert.throws(() => into.edges(), capturedInto('graph.edges()'));
  const sameShape = new cuda.Graph();
  sameShape.addMemset(a, v1, 32);
  const sameShapeExec = sameShape.instantiate();
  notReadWhole(into, sameShapeExec);
  assert.strictEqual(stream.endCapture(), into);
  // the stand-in records nothing captured; the GPU, the memset after the first node
  const captured = into.nodeCount === 2;
  assert.deepStrictEqual(
    into.edges().map(([from, to]) => [from.index, to.index]),
    captured ? [[0, 1]] : [],
  );
  assert.deepStrictEqual(launched(into), captured ? expected([v1, 0, 16], [v2, 16, 48]) : expected([v1, 0, 32]));
  into.destroy();
  // nor its graph, nor the body, under a capture into a body
  const holder = new cuda.Graph();
  const [inside] = holder.addConditional(holder.conditionalHandle(), 'while').bodies;
  stream.beginCapture(RELAXED, { into: inside });
  assert.throws(() => holder.destroy(), DESTROY_REFUSED);
  assert.throws(() => inside.destroy(), DESTROY_REFUSED);
  notReadWhole(holder, sameShapeExec);
  stream.endCapture();
  holder.instantiate().destroy();
  holder.destroy();
  sameShapeExec.destroy();
  sameShape.destroy();

  // a body keeps its graph alive: collecting the graph would take the body with it
  const orphan = (() => {
    const graph = new cuda.Graph();
    return graph.addConditional(graph.conditionalHandle(), 'if').bodies[0];
  })();
  await collect();
  orphan.addEmpty();

  // C alone (lib/ left out, which keeps a captured-into graph): a graph collected under a capture
  // into it, or into its body, has the capture ended first
  for (const target of ['graph', 'body']) {
    (() => {
      const graph = new cuda.Graph();
      const inTo = target === 'graph' ? graph : graph.addConditional(graph.conditionalHandle(), 'if').bodies[0];
      binding.streamBeginCaptureToGraph(stream, inTo, new Uint32Array(0), RELAXED);
    })();
    assert.strictEqual(stream.isCapturing(), true);
    await collect();
    assert.strictEqual(stream.isCapturing(), false, `the capture into a collected ${target} ended`);
    assert.strictEqual(cuda.stats().capturesUnderWay, 0);
  }

  // nodes made in a context destroyed since (the driver crashes reading them): the graph is refused
  // where the driver would read them, and so is a GraphExec of it made in another context
  const made = new cuda.Device(0).makeContext(); // current
  const doomed = new cuda.Graph();
  doomed.addMemset(cuda.memAlloc(64), v1, 64);
  cuda.Context.pop(); // the primary context again
  const mixed = doomed.instantiate();
  mixed.launch(stream);
  stream.synchronizeSync();
  made.detach();
  const goneGraph = {
    name: 'LogicError',
    message:
      'this Graph has nodes made in a context that has been destroyed (context.detach()), which the driver ' +
      'would read; build the graph again',
  };
  assert.throws(() => doomed.instantiate(), goneGraph);
  assert.throws(() => doomed.toDot(), goneGraph);
  assert.throws(() => new cuda.Graph().addChildGraph(doomed).graph.instantiate(), goneGraph);
  const goneExec = {
    name: 'LogicError',
    message:
      'this GraphExec has nodes made in a context that has been destroyed (context.detach()), which the ' +
      'driver would read; instantiate a graph built again',
  };
  assert.throws(() => mixed.launch(stream), goneExec);
  assert.throws(() => mixed.upload(stream), goneExec);
  mixed.destroy();
  doomed.destroy();

  // a GraphExec launched or uploaded in another context destroyed since: driver 580 keeps state of
  // that context with the exec, and crashed destroying one holding a user object (a host function
  // node's) on an H200; the exec is refused then, and left to the process, destroyed or collected.
  // A green context is not destroyed while the exec lives.
  const ranInGone = {
    name: 'LogicError',
    message:
      'this GraphExec was launched or uploaded in another context that has been destroyed since ' +
      '(context.detach()), whose state the driver would read; instantiate its graph again',
  };
  const device = new cuda.Device(0);
  for (const how of ['stream', 'default stream', 'upload', 'green stream', 'green default stream']) {
    let calls = 0;
    const hosted = new cuda.Graph();
    hosted.addHostFunc(() => calls++);
    const exec = hosted.instantiate(); // in the primary context
    const green = how.startsWith('green');
    const other = green
      ? device.makeGreenContext(device.smResource().split({ minCount: 8 }).groups)
      : device.makeContext();
    if (green) other.push();
    const otherStream = new cuda.Stream();
    if (how.endsWith('default stream')) exec.launch(null);
    else if (how === 'upload') exec.upload(otherStream);
    else exec.launch(otherStream);
    cuda.Context.synchronize();
    cuda.Context.pop(); // the primary context again
    exec.launch(stream); // its own context's stream: no other context noted
    stream.synchronizeSync();
    const runs = how === 'upload' ? 1 : 2;
    for (let i = 0; i < 200 && calls < runs; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.strictEqual(calls, runs, `${how}: the host function ran at each launch`);
    other.detach();
    if (green) {
      // a green context is destroyed once nothing made in it is left: this exec holds it
      exec.launch(stream);
      stream.synchronizeSync();
      for (let i = 0; i < 200 && calls < runs + 1; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.strictEqual(calls, runs + 1, `${how}: launched after the green context's detach()`);
    } else {
      assert.throws(() => exec.launch(stream), ranInGone, how);
      assert.throws(() => exec.upload(stream), ranInGone, how);
    }
    if (how.includes('default')) exec.destroy(); // else collected below
  }
  await collect();

  // a CudaArray that a copy node names, built or captured, is not freed under the graph: the driver
  // crashes instantiating, launching or reading a graph whose copy names a freed array
  const ARRAY_HELD = {
    name: 'LogicError',
    message:
      'array.free(): a Graph or GraphExec that lives, or a capture under way, copies to or from this CudaArray; ' +
      'destroy() those first',
  };
  const source = new Uint8Array(bytes).map(randomByte);
  cuda.memcpyHtoD(a, source);
  const newArray = () =>
    new cuda.CudaArray({ width: 64, height: 4, format: cuda.ArrayFormat.UNSIGNED_INT8, numChannels: 1 });
  const copyInto = (array) => {
    const copy = new cuda.Memcpy2D();
    copy.setSrcDevice(a);
    copy.setDstArray(array);
    return Object.assign(copy, { srcPitch: 64, widthInBytes: 64, height: 4 });
  };
  const contents = (array) => {
    const out = new Uint8Array(bytes);
    const copy = new cuda.Memcpy2D();
    copy.setSrcArray(array);
    copy.setDstHost(out);
    Object.assign(copy, { dstPitch: 64, widthInBytes: 64, height: 4 }).run();
    return out;
  };
  const run = (graph) => {
    const exec = graph.instantiate();
    exec.launch(stream);
    stream.synchronizeSync();
    return exec;
  };
  const built = newArray();
  const copier = new cuda.Graph();
  copier.addMemcpy(copyInto(built));
  assert.throws(() => built.free(), ARRAY_HELD);
  const builtExec = run(copier);
  copier.destroy();
  assert.throws(() => built.free(), ARRAY_HELD, 'its GraphExec holds it');
  builtExec.launch(stream);
  stream.synchronizeSync();
  assert.deepStrictEqual(contents(built), source);
  builtExec.destroy();
  built.free();
  const caught = newArray();
  stream.beginCapture();
  copyInto(caught).run(stream);
  assert.throws(() => caught.free(), ARRAY_HELD, 'the capture under way holds it');
  const capturedCopy = stream.endCapture();
  assert.throws(() => caught.free(), ARRAY_HELD);
  run(capturedCopy).destroy();
  if (captured) assert.deepStrictEqual(contents(caught), source); // the stand-in records nothing
  capturedCopy.destroy();
  caught.free();
  const refused = newArray(); // a copy node refused holds nothing
  const toPageable = new cuda.Memcpy2D();
  toPageable.setSrcArray(refused);
  toPageable.setDstHost(new Uint8Array(bytes));
  Object.assign(toPageable, { dstPitch: 64, widthInBytes: 64, height: 4 });
  assert.throws(() => new cuda.Graph().addMemcpy(toPageable), { name: 'TypeError', message: /^dest must be device/ });
  refused.free();
  const unheld = newArray(); // a graph and GraphExec taken by the collector let go
  ((graph) => graph.addMemcpy(copyInto(unheld)) && graph.instantiate())(new cuda.Graph());
  await collect();
  unheld.free();
  // a page-locked allocation that a captured copy names likewise; ordinary memory is refused
  const HOST_HELD = {
    name: 'LogicError',
    message: 'free(): a Graph or GraphExec, or a capture under way, has copies of this memory; destroy them first',
  };
  const PAGEABLE = { name: 'LogicError', message: /^a capture records a copy of host memory for its graph/ };
  const locked = cuda.pagelockedEmpty(bytes, 'uint8');
  locked.set(source);
  stream.beginCapture();
  cuda.memcpyHtoDAsync(a, locked, stream);
  assert.throws(() => cuda.hostAllocationOf(locked).free(), HOST_HELD);
  assert.throws(() => cuda.memcpyDtoHAsync(new Uint8Array(bytes), a, stream), PAGEABLE);
  const download = new cuda.Memcpy2D();
  download.setSrcDevice(a);
  download.setDstHost(new Uint8Array(bytes));
  assert.throws(() => Object.assign(download, { widthInBytes: 64, height: 4 }).run(stream), PAGEABLE);
  const upload = stream.endCapture();
  assert.throws(() => cuda.hostAllocationOf(locked).free(), HOST_HELD);
  cuda.memsetD8(a, 0, bytes);
  run(upload).destroy();
  assert.deepStrictEqual(cuda.fromDevice(a, bytes, 'uint8'), captured ? source : new Uint8Array(bytes));
  upload.destroy();
  cuda.hostAllocationOf(locked).free();
  const dropped = newArray(); // a capture that ends without a graph lets go
  const gone = new cuda.Stream();
  gone.beginCapture();
  copyInto(dropped).run(gone);
  assert.throws(() => dropped.free(), ARRAY_HELD);
  gone.destroy();
  dropped.free();

  // a module whose kernel a capture launched is not unloaded under the capture, its graph or a
  // GraphExec (into a graph of the user's, which keeps the node whatever endCapture() says)
  const MODULE_HELD = {
    name: 'LogicError',
    message:
      'module.free(): a Graph or GraphExec, or a capture under way, has kernel nodes of this module; ' +
      'end the capture and destroy them first',
  };
  const fillModule = () =>
    captured
      ? new SourceModule('extern "C" __global__ void fill(unsigned char *p, int v) { p[threadIdx.x] = v; }')
      : new cuda.Module('entry fill 8 4\n'); // the stand-in's module text
  const v5 = randomByte();
  const filler = fillModule();
  const mine = new cuda.Graph();
  stream.beginCapture(undefined, { into: mine });
  filler.getFunction('fill')(a, cuda.int32(v5), { block: bytes, stream });
  assert.throws(() => filler.free(), MODULE_HELD, 'the capture under way holds it');
  assert.throws(() => mine.instantiate(), capturedInto('graph.instantiate()'), 'no GraphExec outlives the module');
  stream.endCapture();
  assert.throws(() => filler.free(), MODULE_HELD, 'the graph holds it');
  const fillExec = mine.instantiate();
  mine.destroy();
  assert.throws(() => filler.free(), MODULE_HELD, 'its GraphExec holds it');
  cuda.memsetD8(a, 0, bytes);
  fillExec.launch(stream);
  stream.synchronizeSync();
  assert.deepStrictEqual(cuda.fromDevice(a, bytes, 'uint8'), captured ? expected([v5, 0, bytes]) : expected());
  fillExec.destroy();
  filler.free();
  const abandoned = fillModule(); // a capture that ends without a graph lets go
  const lost = new cuda.Stream();
  lost.beginCapture();
  abandoned.getFunction('fill')(a, cuda.int32(v5), { block: bytes, stream: lost });
  assert.throws(() => abandoned.free(), MODULE_HELD);
  lost.destroy();
  abandoned.free();

  // a capture into a graph that fails: driver 580 frees the graph (a body's top graph too) when the
  // capture ends without one, and a later call on it read freed memory (cuGraphDestroy among them)
  const LOST = {
    name: 'LogicError',
    message:
      'a capture into this Graph (or into a body of its conditional nodes) ended without a graph, and the ' +
      'driver freed the graph then; build a new Graph',
  };
  for (const how of ['ended', 'body ended', 'destroyed']) {
    const doomed = new cuda.Graph();
    doomed.addMemset(a, v1, 16);
    const before = doomed.instantiate();
    const into = how.startsWith('body') ? doomed.addConditional(doomed.conditionalHandle(), 'if').bodies[0] : doomed;
    const s = new cuda.Stream();
    s.beginCapture(RELAXED, { into });
    cuda.memsetD8Async(a, v2, 16, s);
    assert.throws(() => cuda.Context.synchronizeSync(), { code: 900 }, 'which breaks the capture beside it');
    if (how === 'destroyed') s.destroy();
    else assert.throws(() => s.endCapture(), { name: 'LogicError', code: 901 });
    for (const use of [
      () => doomed.nodes(),
      () => doomed.instantiate(),
      () => doomed.addEmpty(),
      () => into.addEmpty(),
    ])
      assert.throws(use, LOST, how);
    doomed.destroy(); // nothing left to destroy
    cuda.memsetD8(a, 0, bytes);
    before.launch(stream); // an instance made before is the driver's copy, and runs
    stream.synchronizeSync();
    assert.deepStrictEqual(cuda.fromDevice(a, bytes, 'uint8'), expected([v1, 0, 16]), how);
    before.destroy();
  }
  await collect();

  // all is well after: a capture and a launch
  stream.beginCapture();
  cuda.memsetD8Async(a, v4, bytes, stream);
  const last = stream.endCapture();
  assert.deepStrictEqual(launched(last), captured ? expected([v4, 0, bytes]) : expected());
  cuda.Context.synchronizeSync();
}

/** Runs the checks in a child process with env added to this one's; asserts it exits 0. */
const runRefusals = checksChild(module, main, 'graph refusals');

module.exports = { runRefusals };
