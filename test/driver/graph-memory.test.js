'use strict';
// Memory nodes (graph.addMemAlloc, graph.addMemFree) on the stand-in driver, whose graph memory
// has an address from the node's making and counts as live device memory ("graph_memory") from a
// launch's allocation node to its free: what the nodes between write is checked against a CPU
// reference, and every free against the live count. graph.test.js runs them on the GPU.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');
const { runInChild, ROOT } = require('../support/graph-child');

describe('graph memory nodes (stand-in driver)', function () {
  this.timeout(60000);
  const standIn = standInDriver();
  let dir;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-graph-memory-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (body) =>
    runInChild(
      standIn,
      dir,
      `const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test/support/stand-in-driver'))});
      const live = () => liveCounts(process.env.FAKE_CUDA_COUNTS).graph_memory;
      ${body}`,
      { FAKE_CUDA_COUNTS: path.join(dir, 'counts'), FAKE_CUDA_FAIL: '' },
    );

  it('memory allocated by a node is used by the nodes after it and freed by a free node, at each launch', function () {
    run(`
      const n = 64 + Math.floor(Math.random() * 512);
      const value = Math.floor(Math.random() * 256);
      const out = cuda.memAlloc(n);
      const g = new cuda.Graph();
      const { node, memory } = g.addMemAlloc(n);
      assert.ok(memory instanceof cuda.GraphMemory);
      assert.strictEqual(memory.size, n);
      assert.strictEqual(typeof memory.ptr, 'bigint');
      const set = g.addMemset(memory, value, n, { after: node });
      const copy = g.addMemcpy(out, memory, n, { after: set });
      const free = g.addMemFree(memory, { after: copy });
      assert.ok(memory.freed);
      assert.deepStrictEqual(g.nodes().map((x) => x.type), ['memAlloc', 'memset', 'memcpy', 'memFree']);
      assert.deepStrictEqual(g.edges().map(([a, b]) => [a.index, b.index]), [[0, 1], [1, 2], [2, 3]]);
      assert.strictEqual(free.index, 3);
      assert.throws(() => g.addMemset(memory, 1, 1, { after: free }), {
        name: 'LogicError',
        message: 'this GraphMemory is freed by a free node (graph.addMemFree()): use it only in nodes added before that one',
      });
      assert.throws(() => memory.ptr, { name: 'LogicError' });
      const exec = g.instantiate();
      assert.strictEqual(live(), 0, 'nothing is allocated before a launch');
      for (let launch = 0; launch < 3; launch++) {
        cuda.memsetD8(out, 0, n);
        exec.launch();
        assert.strictEqual(live(), 0, 'the free node freed it');
        assert.deepStrictEqual(cuda.fromDevice(out, n, 'uint8'), new Uint8Array(n).fill(value));
      }
    `);
  });

  it('memory a launch leaves allocated is device memory until freed: again by a second launch is refused, unless autoFreeOnLaunch; another graph frees it', function () {
    run(`
      const n = 256;
      const g = new cuda.Graph();
      const { node, memory } = g.addMemAlloc(n);
      g.addMemset(memory, 7, n, { after: node });
      const exec = g.instantiate();
      exec.launch();
      assert.strictEqual(live(), 1);
      assert.deepStrictEqual(cuda.fromDevice(memory, n, 'uint8'), new Uint8Array(n).fill(7), 'used outside the graph');
      assert.throws(() => exec.launch(), { name: 'LogicError', message: /cuGraphLaunch failed/ });
      const freeing = new cuda.Graph();
      freeing.addMemFree(memory);
      freeing.instantiate().launch();
      assert.strictEqual(live(), 0);
      exec.launch();
      assert.strictEqual(live(), 1, 'allocated again');
      exec.destroy();
      g.destroy();
      assert.strictEqual(live(), 1, 'destroying the graph frees nothing');
      const again = new cuda.Graph();
      const other = again.addMemAlloc(n);
      again.addMemset(other.memory, 3, n, { after: other.node });
      const auto = again.instantiate({ autoFreeOnLaunch: true });
      for (let i = 0; i < 3; i++) auto.launch();
      assert.strictEqual(live(), 2, 'each launch freed the last one\\'s allocation');
    `);
  });

  it("memory.free(stream) frees a launch's allocation outside any graph, while a Graph or GraphExec holds its node", function () {
    run(`
      const n = 256;
      const g = new cuda.Graph();
      const { node, memory } = g.addMemAlloc(n);
      const value = 1 + Math.floor(Math.random() * 255);
      g.addMemset(memory, value, n, { after: node });
      const exec = g.instantiate();
      const stream = new cuda.Stream();
      for (let round = 0; round < 3; round++) {
        exec.launch(stream);
        assert.strictEqual(live(), 1);
        assert.deepStrictEqual(cuda.fromDevice(memory, n, 'uint8'), new Uint8Array(n).fill(value));
        memory.free(round === 1 ? null : stream);
        assert.strictEqual(live(), 0, 'freed outside the graph');
      }
      assert.throws(() => memory.free(stream), { name: 'LogicError', message: /cuMemFreeAsync failed/ });
      // no graph with memory nodes is a child (the driver refuses it): the refused copy holds nothing
      const parent = new cuda.Graph();
      assert.throws(() => parent.addChildGraph(g), {
        name: 'LogicError',
        message: 'cuGraphAddChildGraphNode failed: operation not supported',
      });
      g.destroy();
      exec.launch(stream);
      memory.free(stream); // the GraphExec holds the node
      assert.strictEqual(live(), 0);
      exec.destroy();
      assert.throws(() => memory.free(stream), {
        name: 'LogicError',
        message: "memory.free(): no Graph or GraphExec with this memory's allocation node is left, so its address may be another allocation's; free graph memory before destroying its graphs",
      });
      assert.throws(() => g.addMemAlloc(16), { name: 'LogicError', message: /destroyed/ });
      const other = new cuda.Graph().addMemAlloc(16).memory;
      assert.throws(() => other.free({}), { name: 'TypeError', message: /Stream/ });
    `);
  });

  it('bad input is the error that says what to do; a driver failure adds no node', function () {
    run(`
      const g = new cuda.Graph();
      assert.throws(() => g.addMemAlloc(0), { name: 'RangeError', message: 'an allocation node allocates at least one byte' });
      assert.throws(() => g.addMemAlloc(-1), { name: 'RangeError', message: /bytes/ });
      assert.throws(() => g.addMemAlloc('1'), { name: 'TypeError', message: /bytes/ });
      assert.throws(() => g.addMemFree(cuda.memAlloc(16)), { name: 'TypeError', message: /memory must be a GraphMemory/ });
      assert.throws(() => new cuda.GraphMemory(), { name: 'TypeError', message: 'a GraphMemory comes from graph.addMemAlloc()' });
      process.env.FAKE_CUDA_FAIL = 'cuGraphAddMemAllocNode:1:2';
      assert.throws(() => g.addMemAlloc(16), { name: 'MemoryError', message: 'cuGraphAddMemAllocNode failed: out of memory' });
      process.env.FAKE_CUDA_FAIL = '';
      assert.strictEqual(g.nodeCount, 0);
      const { memory } = g.addMemAlloc(16);
      g.addMemFree(memory);
      assert.throws(() => g.addMemFree(memory), { name: 'LogicError', message: /freed by a free node/ });
      const binding = require(${JSON.stringify(path.join(ROOT, 'lib/internal/binding'))});
      assert.throws(() => binding.graphAddMemFree(g, new Uint32Array(0), 4096n), {
        name: 'LogicError',
        message: 'cuGraphAddMemFreeNode failed: invalid argument',
      });
      cuda.Context.pop();
      assert.throws(() => new cuda.Graph().addMemAlloc(16), { name: 'LogicError', message: /context/ });
      ctx.push();
    `);
  });
});
