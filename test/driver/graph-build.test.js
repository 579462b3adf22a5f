'use strict';
// Graphs built node by node, through the stand-in driver (no GPU needed): its graphs run memset
// and copy nodes on real bytes at cuGraphLaunch, log each node they run and each kernel's
// parameter bytes, and keep the nodes' dependencies, so that what cudadrv gave the driver is
// checked call by call. The GPU runs the same shapes against CPU references in graph.test.js.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');
const { runInChild, ROOT } = require('../support/graph-child');
const { runRefusals } = require('../support/graph-refusals-child');

describe('graphs built node by node (stand-in driver)', function () {
  this.timeout(60000);
  const standIn = standInDriver();
  let dir;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-graph-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const run = (body, extraEnv) => runInChild(standIn, dir, body, extraEnv);

  it('memset and copy nodes run at each launch, after their dependencies, on random data (CPU reference)', function () {
    run(`
      const N = 4096;
      const host = new Uint32Array(N).map(() => (Math.random() * 2 ** 32) >>> 0);
      const a = cuda.memAlloc(N * 4), b = cuda.memAlloc(N * 4);
      cuda.memcpyHtoD(a, host);
      const value = (Math.random() * 2 ** 32) >>> 0;
      const rows = 1 + Math.floor(Math.random() * 8), width = 1 + Math.floor(Math.random() * 64);
      const pitch = width * 4 + 4 * Math.floor(Math.random() * 16);
      const g = new cuda.Graph();
      const set = g.addMemset(a, value, width, { elementSize: 4, pitch, height: rows });
      const copy = g.addMemcpy(b, a, N * 4, { after: set });
      const bytes = g.addMemset(b.slice(8), 0xab, 3, { after: [copy] });
      assert.deepStrictEqual(g.nodes().map((n) => n.type), ['memset', 'memcpy', 'memset']);
      assert.deepStrictEqual(g.edges().map(([f, t]) => [f.index, t.index]), [[0, 1], [1, 2]]);
      const apart = new cuda.Graph();
      apart.addEmpty();
      apart.addEmpty();
      assert.deepStrictEqual(apart.edges(), [], 'nodes without dependencies: no edges (the driver refuses arrays for none)');
      assert.strictEqual(bytes.graph, g);
      const expected = host.slice();
      for (let r = 0; r < rows; r++) expected.fill(value, (r * pitch) / 4, (r * pitch) / 4 + width);
      const expectedBytes = new Uint8Array(expected.buffer);
      expectedBytes.fill(0xab, 8, 11);
      const exec = g.instantiate();
      assert.deepStrictEqual(log(), [], 'building and instantiating ran nothing');
      cuda.memcpyHtoD(b, new Uint32Array(N));
      exec.launch();
      const out = new Uint32Array(N);
      cuda.memcpyDtoH(out, b);
      assert.deepStrictEqual(new Uint8Array(out.buffer), expectedBytes);
      assert.deepStrictEqual(log(), ['graph launch stream=0', 'graph node 0 2', 'graph node 1 1', 'graph node 2 2']);
      // a second launch on a stream runs them all again
      const stream = new cuda.Stream();
      cuda.memcpyHtoD(a, host);
      cuda.memcpyHtoD(b, new Uint32Array(N));
      exec.launch(stream);
      cuda.memcpyDtoH(out, b);
      assert.deepStrictEqual(new Uint8Array(out.buffer), expectedBytes);
      assert.match(log()[4], /^graph launch stream=[1-9]/);
    `);
  });

  it("a kernel node gets the very parameter bytes a call of the kernel gives, and its launch's shape", function () {
    run(`
      const module = new cuda.Module(MODULE);
      const args4 = module.getFunction('args4');
      const a = cuda.memAlloc(64), b = cuda.memAlloc(64);
      const n = (Math.random() * 2 ** 31) | 0, x = Math.fround(Math.random());
      const g = new cuda.Graph();
      const first = g.addKernel(args4, a, b, cuda.int32(n), cuda.float32(x), { grid: [3, 2], block: [32, 4], shared: 256 });
      g.addKernel(module.getFunction('empty'), { block: 1, after: first });
      assert.deepStrictEqual(g.nodes().map((node) => node.type), ['kernel', 'kernel']);
      g.instantiate().launch();
      args4(a, b, cuda.int32(n), cuda.float32(x), { grid: [3, 2], block: [32, 4], shared: 256 });
      const lines = log();
      assert.strictEqual(lines.length, 6, lines.join('\\n'));
      assert.match(lines[2], /^launch args4 grid=3,2,1 block=32,4,1 shared=256 stream=0 params=[0-9a-f]{48}$/);
      assert.strictEqual(lines[2], lines[5], 'the node and the call gave the same bytes');
      assert.strictEqual(lines[4], 'launch empty grid=1,1,1 block=1,1,1 shared=0 stream=0 params=');
    `);
  });

  it('copy nodes to and from page-locked host arrays move the bytes at each launch (CPU reference); the memory cannot be freed meanwhile', function () {
    const counts = path.join(dir, 'counts');
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test/support/stand-in-driver'))});
      const N = 1024;
      const input = cuda.pagelockedEmpty(N, 'uint32'), output = cuda.pagelockedEmpty(N, 'uint32');
      const device = cuda.memAlloc(N * 4);
      const g = new cuda.Graph();
      const up = g.addMemcpy(device, input, N * 4);
      const bump = g.addMemset(device.slice(8), 0xdeadbeef, 3, { elementSize: 4, after: up });
      const half = (N / 2) * 4;
      const down = g.addMemcpy(output.subarray(N / 2), device, half, { after: bump });
      assert.deepStrictEqual(down.params(), { dest: null, src: device.ptr, width: half, height: 1, depth: 1 });
      assert.deepStrictEqual(up.params(), { dest: device.ptr, src: null, width: N * 4, height: 1, depth: 1 });
      const exec = g.instantiate();
      for (let round = 0; round < 3; round++) {
        input.set(new Uint32Array(N).map(() => (Math.random() * 2 ** 32) >>> 0)); // read at each launch
        output.fill(0);
        exec.launch();
        const expected = new Uint32Array(N);
        expected.set(input.subarray(0, N / 2), N / 2);
        expected.fill(0xdeadbeef, N / 2 + 2, N / 2 + 5);
        assert.deepStrictEqual(output, expected, 'round ' + round);
      }
      const refused = { name: 'LogicError', message: 'free(): a Graph or GraphExec, or a capture under way, has copies of this memory; destroy them first' };
      const allocation = cuda.hostAllocationOf(input);
      assert.throws(() => allocation.free(), refused);
      g.destroy();
      assert.throws(() => allocation.free(), refused, 'the GraphExec still copies from it');
      exec.destroy();
      allocation.free();
      cuda.hostAllocationOf(output).free();
      assert.strictEqual(liveCounts(${JSON.stringify(counts)}).host_memory, 0);
      // what a copy node refuses
      const pinned = cuda.pagelockedEmpty(16, 'uint8');
      const detached = new ArrayBuffer(16);
      structuredClone(detached, { transfer: [detached] }); // the fuzzer's seed 878595205 gave one: the engine's TypeError
      const h = new cuda.Graph();
      const cases = [
        [() => h.addMemcpy(device, new Uint8Array(16), 16), 'TypeError', 'src must be device memory or an array of page-locked memory (pagelockedEmpty()): a graph copies at every launch, into or out of memory that must stay where it is'],
        [() => h.addMemcpy(new ArrayBuffer(16), device, 16), 'TypeError', /^dest must be device memory or an array of page-locked memory/],
        [() => h.addMemcpy(pinned, cuda.pagelockedEmpty(16, 'uint8'), 16), 'TypeError', 'a copy node copies to or from device memory; copy between two host arrays on the host'],
        [() => h.addMemcpy(device, pinned, 17), 'RangeError', 'src holds 16 bytes, fewer than the 17 to copy'],
        [() => h.addMemcpy(device, pinned.subarray(8), 9), 'RangeError', 'src holds 8 bytes, fewer than the 9 to copy'],
        [() => h.addMemcpy(device, pinned, 0), 'RangeError', 'a copy node copies at least one byte'],
        [() => h.addMemcpy(device, 'x', 1), 'TypeError', /src/],
        [() => h.addMemcpy(detached, device, 16), 'TypeError', 'dest is over a detached ArrayBuffer (transferred away); pass memory still in use'],
        [() => h.addMemcpy(device, detached, 16), 'TypeError', 'src is over a detached ArrayBuffer (transferred away); pass memory still in use'],
      ];
      for (const [fn, name, message] of cases) assert.throws(fn, { name, message });
      const freed = cuda.pagelockedEmpty(16, 'uint8');
      cuda.hostAllocationOf(freed).free();
      assert.throws(() => h.addMemcpy(device, freed, 16), { name: 'RangeError', message: 'src holds 0 bytes, fewer than the 16 to copy' });
      assert.strictEqual(h.nodeCount, 0, 'no refused copy made a node');
    `,
      { FAKE_CUDA_COUNTS: counts },
    );
  });

  it('2D and 3D copy nodes from a Memcpy2D or Memcpy3D: device, page-locked host and array sides, at each launch (CPU reference)', function () {
    run(`
      const rand = (n) => Math.floor(Math.random() * n);
      // 2D, device to device, with offsets and pitches
      const [sp, dp, w, h] = [64 + rand(64), 64 + rand(64), 1 + rand(60), 1 + rand(16)];
      const [sx, sy, dx, dy] = [rand(4), rand(4), rand(4), rand(4)];
      const srcBytes = new Uint8Array(sp * (h + 4)).map(() => rand(256));
      const src = cuda.toDevice(srcBytes), dst = cuda.memAlloc(dp * (h + 4));
      const copy = new cuda.Memcpy2D();
      copy.setSrcDevice(src);
      copy.setDstDevice(dst);
      Object.assign(copy, { srcXInBytes: sx, srcY: sy, srcPitch: sp, dstXInBytes: dx, dstY: dy, dstPitch: dp, widthInBytes: w, height: h });
      const g = new cuda.Graph();
      const node = g.addMemcpy(copy);
      assert.deepStrictEqual(node.params(), { dest: dst.ptr, src: src.ptr, width: w, height: h, depth: 1 });
      // 3D, page-locked host to device, then device to page-locked host, after it
      const [W, H, D] = [1 + rand(32), 1 + rand(6), 1 + rand(4)];
      const input = cuda.pagelockedEmpty(W * H * D, 'uint8'), output = cuda.pagelockedEmpty(W * H * D, 'uint8');
      const middle = cuda.memAlloc(2 * W * H * D);
      const [up, down] = [new cuda.Memcpy3D(), new cuda.Memcpy3D()];
      up.setSrcHost(input);
      up.setDstDevice(middle);
      Object.assign(up, { srcPitch: W, srcHeight: H, dstPitch: 2 * W, dstHeight: H, widthInBytes: W, height: H, depth: D });
      down.setSrcDevice(middle);
      down.setDstHost(output);
      Object.assign(down, { srcPitch: 2 * W, srcHeight: H, dstPitch: W, dstHeight: H, widthInBytes: W, height: H, depth: D });
      g.addMemcpy(down, { after: g.addMemcpy(up, { after: node }) });
      // the descriptors are read now: later changes reach no node
      copy.widthInBytes = 1;
      const exec = g.instantiate();
      for (let round = 0; round < 2; round++) {
        input.set(new Uint8Array(W * H * D).map(() => rand(256)));
        output.fill(0);
        cuda.memsetD8(dst, 0, dp * (h + 4));
        exec.launch();
        const expected = new Uint8Array(dp * (h + 4));
        for (let r = 0; r < h; r++)
          for (let c = 0; c < w; c++) expected[(dy + r) * dp + dx + c] = srcBytes[(sy + r) * sp + sx + c];
        const got = new Uint8Array(dp * (h + 4));
        cuda.memcpyDtoH(got, dst);
        assert.deepStrictEqual(got, expected, '2D, round ' + round);
        assert.deepStrictEqual(output, input, '3D there and back, round ' + round);
      }
      assert.throws(() => cuda.hostAllocationOf(input).free(), { name: 'LogicError', message: /has copies of this memory/ });
      // an array side
      const array = new cuda.CudaArray(Object.assign(new cuda.ArrayDescriptor(), { width: 16, height: 4, format: cuda.ArrayFormat.UNSIGNED_INT8, numChannels: 1 }));
      const toArray = new cuda.Memcpy2D(), fromArray = new cuda.Memcpy2D();
      const bytes = cuda.pagelockedEmpty(64, 'uint8'), back = cuda.pagelockedEmpty(64, 'uint8');
      bytes.set(new Uint8Array(64).map(() => rand(256)));
      toArray.setSrcHost(bytes);
      toArray.setDstArray(array);
      Object.assign(toArray, { srcPitch: 16, widthInBytes: 16, height: 4 });
      fromArray.setSrcArray(array);
      fromArray.setDstHost(back);
      Object.assign(fromArray, { dstPitch: 16, widthInBytes: 16, height: 4 });
      const a = new cuda.Graph();
      a.addMemcpy(fromArray, { after: a.addMemcpy(toArray) });
      a.instantiate().launch();
      assert.deepStrictEqual(back, bytes);
      // refused
      const pageable = new cuda.Memcpy2D();
      pageable.setSrcHost(new Uint8Array(64));
      pageable.setDstDevice(dst);
      Object.assign(pageable, { srcPitch: 16, dstPitch: 16, widthInBytes: 16, height: 4 });
      const peer = new cuda.Memcpy3DPeer();
      const unset = new cuda.Memcpy2D();
      const far = new cuda.Memcpy2D();
      far.setSrcHost(bytes);
      far.setDstDevice(dst);
      Object.assign(far, { srcPitch: 16, dstPitch: 16, widthInBytes: 16, height: 5 });
      const empty = new cuda.Memcpy2D();
      empty.setSrcDevice(src);
      empty.setDstDevice(dst);
      const b = new cuda.Graph();
      const cases = [
        [() => b.addMemcpy(pageable), 'TypeError', /^src must be device memory or an array of page-locked memory/],
        [() => b.addMemcpy(peer), 'TypeError', 'graph.addMemcpy(): a Memcpy3DPeer cannot be a node; use a Memcpy3D within one context'],
        [() => b.addMemcpy(unset), 'LogicError', /call setSrcHost/],
        [() => b.addMemcpy(far), 'RangeError', /reaches byte 80 of src, which holds 64/],
        [() => b.addMemcpy(empty), 'RangeError', 'a copy node copies at least one byte'],
        [() => b.addMemcpy(copy, { before: node }), 'TypeError', /unknown option 'before'/],
      ];
      for (const [fn, name, message] of cases) assert.throws(fn, { name, message });
      assert.strictEqual(b.nodeCount, 0);
    `);
  });

  it('setMemset() and setMemcpy() change a node in a GraphExec from its next launch, or in the Graph for later instances', function () {
    run(`
      const n = 64 + Math.floor(Math.random() * 64);
      const [v1, v2, v3] = [1, 2, 3].map(() => (Math.random() * 2 ** 32) >>> 0);
      const a = cuda.memAlloc(4 * n), other = cuda.memAlloc(4 * n);
      const out = cuda.pagelockedEmpty(n, 'uint32'), out2 = cuda.pagelockedEmpty(n, 'uint32');
      const g = new cuda.Graph();
      const set = g.addMemset(a, v1, n, { elementSize: 4 });
      const copy = g.addMemcpy(out, a, 4 * n, { after: set });
      const exec = g.instantiate();
      const filled = (v) => new Uint32Array(n).fill(v);
      exec.launch();
      assert.deepStrictEqual(out, filled(v1));
      assert.strictEqual(exec.setMemset(set, a, v2, n, { elementSize: 4 }), exec);
      exec.launch();
      assert.deepStrictEqual(out, filled(v2), 'the exec sets v2 now');
      assert.strictEqual(exec.setMemcpy(copy, out2, a, 4 * n), exec);
      out.fill(0);
      exec.launch();
      assert.deepStrictEqual([out, out2], [filled(0), filled(v2)], 'the exec copies into out2 now');
      assert.throws(() => cuda.hostAllocationOf(out2).free(), { name: 'LogicError', message: /has copies of this memory/ }, 'the exec pins out2');
      // in the graph: later instances only
      assert.strictEqual(g.setMemset(set, other, v3, n, { elementSize: 4 }), g);
      assert.strictEqual(g.setMemcpy(copy, out, other, 4 * n), g);
      assert.deepStrictEqual({ ...set.params(), dest: set.params().dest === other.ptr }, { dest: true, value: v3, elementSize: 4, width: n, height: 1, pitch: 4 * n });
      out.fill(0);
      out2.fill(0);
      exec.launch();
      assert.deepStrictEqual([out, out2], [filled(0), filled(v2)], 'the exec made before is as it was');
      g.instantiate().launch();
      assert.deepStrictEqual(out, filled(v3), 'a new instance sets and copies the new way');
      // refused
      const cases = [
        [() => exec.setMemset(copy, a, 1, n), 'TypeError', 'exec.setMemset(): node is a memcpy node, not a memset node'],
        [() => g.setMemcpy(set, a, a, 4), 'TypeError', 'graph.setMemcpy(): node is a memset node, not a memcpy node'],
        [() => exec.setMemset(set, a, 1, n, { after: copy }), 'TypeError', /exec.setMemset\\(\\): unknown option 'after'/],
        [() => exec.setMemset(set, a, 1, 4 * n + 1), 'RangeError', /exec.setMemset\\(\\): 257|exec.setMemset\\(\\): \\d+ bytes do not fit/],
        [() => exec.setMemset(set, a, 1, 2, { height: 2, pitch: 8 }), 'LogicError', 'cuGraphExecMemsetNodeSetParams failed: invalid argument'],
        [() => exec.setMemcpy(copy, new Uint8Array(4 * n), a, 4 * n), 'TypeError', /^dest must be device memory or an array of page-locked memory/],
        [() => exec.setMemcpy(new cuda.Graph().addEmpty(), a, a, 4), 'LogicError', 'node is a node of another Graph'],
        [() => g.setMemset({}, a, 1, 1), 'TypeError', 'node must be a GraphNode, not an Object'],
      ];
      for (const [fn, name, message] of cases) assert.throws(fn, { name, message });
      exec.launch();
      assert.deepStrictEqual(out2, filled(v2), 'no refused change reached the exec');
    `);
  });

  it('node.params() reads back what the driver holds; graph.setKernelArgs() changes a kernel node for later instantiations', function () {
    run(`
      const binding = require(${JSON.stringify(path.join(ROOT, 'lib/internal/binding'))});
      const module = new cuda.Module(MODULE);
      const args4 = module.getFunction('args4');
      const [a, b] = [cuda.memAlloc(4096), cuda.memAlloc(4096)];
      const n = (Math.random() * 2 ** 31) | 0, x = Math.fround(Math.random());
      const g = new cuda.Graph();
      const kernel = g.addKernel(args4, a, b, cuda.int32(n), cuda.float32(x), { grid: [3, 2], block: [32, 4], shared: 256 });
      const value = (Math.random() * 2 ** 32) >>> 0, width = 1 + Math.floor(Math.random() * 32);
      const set = g.addMemset(a.slice(64), value, width, { elementSize: 4, pitch: 256, height: 3, after: kernel });
      const bytes = 1 + Math.floor(Math.random() * 4000);
      const copy = g.addMemcpy(b, a, bytes, { after: set });
      const { node: alloc, memory } = g.addMemAlloc(1000, { after: copy });
      const address = memory.ptr;
      const free = g.addMemFree(memory, { after: alloc });
      const empty = g.addEmpty({ after: free });
      // the bytes a call gives, from the stand-in's log
      args4(a, b, cuda.int32(n), cuda.float32(x), { block: 1 });
      const hex = (array) => Buffer.from(array).toString('hex');
      const callBytes = log()[0].split('params=')[1];
      const read = kernel.params();
      assert.deepStrictEqual(
        { ...read, args: hex(read.args) },
        { kernel: args4, grid: [3, 2, 1], block: [32, 4, 1], shared: 256, args: callBytes },
      );
      assert.deepStrictEqual(set.params(), { dest: a.ptr + 64n, value, elementSize: 4, width, height: 3, pitch: 256 });
      assert.deepStrictEqual(copy.params(), { dest: b.ptr, src: a.ptr, width: bytes, height: 1, depth: 1 });
      assert.deepStrictEqual(alloc.params(), { ptr: address, bytes: 1000 });
      assert.deepStrictEqual(free.params(), { ptr: address });
      assert.strictEqual(empty.params(), null);
      const s = new cuda.Stream();
      const exec0 = g.instantiate();
      // graph.setKernelArgs: the graph's node changes; GraphExecs made before keep theirs
      const m = (Math.random() * 2 ** 31) | 0;
      assert.strictEqual(g.setKernelArgs(kernel, b, a, cuda.int32(m), cuda.float32(0.5), { grid: 7, block: 64 }), g);
      args4(b, a, cuda.int32(m), cuda.float32(0.5), { block: 1 });
      const changed = kernel.params();
      assert.deepStrictEqual([hex(changed.args), changed.grid, changed.block, changed.shared], [log()[1].split('params=')[1], [7, 1, 1], [64, 1, 1], 0]);
      exec0.launch(s);
      g.instantiate().launch(s);
      const launches = log().filter((line) => line.startsWith('launch args4'));
      assert.match(launches[2], /grid=3,2,1 block=32,4,1 shared=256 .*params=/);
      assert.strictEqual(launches[2].split('params=')[1], callBytes, 'the GraphExec made before keeps the first arguments');
      assert.match(launches[3], /grid=7,1,1 block=64,1,1 shared=0 /);
      assert.strictEqual(launches[3].split('params=')[1], changed.args.length ? hex(changed.args) : '', 'a new GraphExec launches the new ones');
      // bad input
      const cases = [
        [() => g.setKernelArgs(empty, { block: 1 }), 'TypeError', 'graph.setKernelArgs(): node is not a kernel node made by graph.addKernel()'],
        [() => g.setKernelArgs(new cuda.Graph().addEmpty(), { block: 1 }), 'LogicError', 'node is a node of another Graph'],
        [() => g.setKernelArgs({}, { block: 1 }), 'TypeError', 'node must be a GraphNode, not an Object'],
        [() => g.setKernelArgs(kernel, a, { block: 1 }), 'TypeError', /takes 4 parameters/],
      ];
      for (const [fn, name, message] of cases) assert.throws(fn, { name, message });
      // C checks the kernel and the node, whatever lib/ asked
      const [, , , , , setInGraph] = binding.launcherCreate(module.getFunction('empty')._k, 0);
      assert.throws(() => setInGraph(g, kernel.index), { name: 'LogicError', message: "graph.setKernelArgs(): the node runs another kernel; a node's kernel cannot change" });
      assert.throws(() => setInGraph(g, 99), { name: 'RangeError', message: 'no such node in this graph' });
      assert.throws(() => binding.graphNodeParams(g, 99), { name: 'RangeError', message: 'no such node in this graph' });
      // the handle device code launches: the driver's CUgraphExec, distinct per instance
      const small = new cuda.Graph();
      small.addMemset(a, 1, 16);
      const [one, two] = [small.instantiate({ deviceLaunch: true }), small.instantiate({ deviceLaunch: true, upload: s })];
      const uploads = () => log().filter((line) => line.startsWith('graph upload')).length;
      const before = uploads();
      assert.strictEqual(typeof one.deviceHandle, 'bigint');
      assert.strictEqual(uploads(), before + 1, 'deviceHandle uploaded the instance');
      assert.ok(one.deviceHandle !== 0n && one.deviceHandle !== two.deviceHandle && one.deviceHandle === one.deviceHandle);
      assert.strictEqual(uploads(), before + 1, 'once');
      assert.throws(() => small.instantiate().deviceHandle, {
        name: 'LogicError',
        message: 'exec.deviceHandle: this GraphExec was not instantiated for device launch; instantiate the graph with { deviceLaunch: true }',
      });
      one.destroy();
      assert.throws(() => one.deviceHandle, { name: 'LogicError', message: /destroyed/ });
      g.destroy();
      assert.throws(() => kernel.params(), { name: 'LogicError', message: /destroyed/ });
    `);
  });

  it("setKernelArgs() makes a kernel node of an exec launch other bytes and shape; the node's kernel cannot change", function () {
    run(`
      const binding = require(${JSON.stringify(path.join(ROOT, 'lib/internal/binding'))});
      const module = new cuda.Module(MODULE);
      const args4 = module.getFunction('args4');
      const [a, b] = [cuda.memAlloc(64), cuda.memAlloc(64)];
      const g = new cuda.Graph();
      const node = g.addKernel(args4, a, a, cuda.int32(1), cuda.float32(1), { block: 32 });
      const empty = g.addEmpty({ after: node });
      const exec = g.instantiate();
      const n = (Math.random() * 2 ** 31) | 0;
      assert.strictEqual(exec.setKernelArgs(node, b, a, cuda.int32(n), cuda.float32(0.5), { grid: [5, 2], block: 64, shared: 16 }), exec);
      exec.launch();
      args4(b, a, cuda.int32(n), cuda.float32(0.5), { grid: [5, 2], block: 64, shared: 16 });
      const lines = log();
      assert.match(lines[2], /^launch args4 grid=5,2,1 block=64,1,1 shared=16 /);
      assert.strictEqual(lines[2], lines[4], 'the node and the call gave the same bytes');
      // the graph itself is unchanged: a new instantiation launches the first arguments
      g.instantiate().launch();
      assert.notStrictEqual(log()[7], lines[2]);
      assert.throws(() => exec.setKernelArgs(empty, { block: 1 }), {
        name: 'TypeError',
        message: 'exec.setKernelArgs(): node is not a kernel node made by graph.addKernel()',
      });
      assert.throws(() => exec.setKernelArgs(node, a, { block: 1 }), { name: 'TypeError', message: /takes 4 parameters/ });
      assert.throws(() => exec.setKernelArgs(node, new cuda.Out(new Uint8Array(4)), a, cuda.int32(1), cuda.float32(1), { block: 1 }), {
        name: 'TypeError',
        message: /^exec.setKernelArgs.kernel 'args4'.: In, Out and InOut copy at each call/,
      });
      // C checks the kernel too, whatever lib/ asked
      const other = module.getFunction('empty');
      const [, , , , setInGraphExec] = binding.launcherCreate(other._k, 0);
      assert.throws(() => setInGraphExec(exec, g, node.index), {
        name: 'LogicError',
        message: "exec.setKernelArgs(): the node runs another kernel; a node's kernel cannot change",
      });
    `);
  });

  it('a node turned off is skipped at launches, and on again runs; child graphs run a copy made when added', function () {
    run(`
      const a = cuda.memAlloc(64);
      const g = new cuda.Graph();
      const one = g.addMemset(a, 1, 64);
      const two = g.addMemset(a, 2, 64, { after: one });
      const child = new cuda.Graph();
      child.addMemset(a, 3, 64);
      const inner = g.addChildGraph(child, { after: two });
      child.addMemset(a, 4, 64); // after the copy: not in the node
      assert.strictEqual(inner.type, 'graph');
      const exec = g.instantiate();
      assert.strictEqual(exec.isEnabled(two), true);
      assert.strictEqual(exec.setEnabled(two, false), exec);
      assert.strictEqual(exec.isEnabled(two), false);
      exec.launch();
      assert.deepStrictEqual(log(), ['graph launch stream=0', 'graph node 0 2', 'graph node 2 4', 'graph node 2.0 2']);
      exec.setEnabled(two, true);
      exec.launch();
      assert.deepStrictEqual(log().slice(4), [
        'graph launch stream=0',
        'graph node 0 2',
        'graph node 1 2',
        'graph node 2 4',
        'graph node 2.0 2',
      ]);
      const out = new Uint8Array(64);
      cuda.memcpyDtoH(out, a);
      assert.deepStrictEqual(out, new Uint8Array(64).fill(3));
      const onlySome = (method) => ({
        name: 'TypeError',
        message: 'exec.' + method + '(): node is a graph node; only kernel, memset and memcpy nodes can be turned off and on',
      });
      assert.throws(() => exec.setEnabled(inner, false), onlySome('setEnabled'));
      assert.throws(() => exec.isEnabled(inner), onlySome('isEnabled'));
    `);
  });

  it('instantiate options: upload on a stream, device launch refused for nodes it cannot run (saying so)', function () {
    run(`
      const a = cuda.memAlloc(64);
      const g = new cuda.Graph();
      g.addMemset(a, 1, 64);
      const stream = new cuda.Stream();
      g.instantiate({ upload: stream, useNodePriority: true });
      assert.match(log()[0], /^graph upload stream=[1-9]/);
      g.addEmpty();
      assert.throws(() => g.instantiate({ deviceLaunch: true }), {
        name: 'LogicError',
        message: "graph.instantiate(): a node's operation is not supported with these flags",
      });
      assert.throws(() => g.instantiate({ upload: {} }), { name: 'TypeError', message: /Stream/ });
      assert.throws(() => g.instantiate({ autoFreeOnLaunch: 1 }), { name: 'TypeError', message: 'autoFreeOnLaunch must be true or false, not number 1' });
      assert.throws(() => g.instantiate({ priority: true }), { name: 'TypeError', message: /unknown option 'priority'; the options are upload, autoFreeOnLaunch, deviceLaunch, useNodePriority/ });
    `);
  });

  it("toDot() gives the driver's description; edges() needs a 12.3 driver, saying so", function () {
    run(
      `
      const g = new cuda.Graph();
      const e = g.addEmpty();
      g.addEmpty({ after: e });
      assert.strictEqual(g.toDot(), 'digraph standin {\\n  n0 [label="5"];\\n  n1 [label="5"];\\n  n0 -> n1;\\n}\\n');
      assert.deepStrictEqual(fs.readdirSync(process.env.TMPDIR).filter((f) => f !== 'log'), [], 'its file is removed');
    `,
      { TMPDIR: dir },
    );
    // The addon makes the driver's file itself: a path from JS (here a FIFO, which the driver's
    // open waited on for ever) is no argument any more, and a refusal leaves no file behind.
    const fifo = path.join(dir, 'fifo');
    require('child_process').execFileSync('mkfifo', [fifo]);
    run(
      `
      const binding = require(${JSON.stringify(path.join(ROOT, 'lib', 'internal', 'binding'))});
      const g = new cuda.Graph();
      g.addEmpty();
      assert.throws(() => binding.graphDebugDotPrint(g, ${JSON.stringify(fifo)}, 0), { name: 'TypeError', message: 'flags must be a number' });
      assert.match(binding.graphDebugDotPrint(g, 0, ${JSON.stringify(fifo)}).toString(), /^digraph standin/);
      assert.throws(() => g.toDot(), (e) => e instanceof cuda.CudaError && e.api === 'cuGraphDebugDotPrint');
      assert.deepStrictEqual(fs.readdirSync(process.env.TMPDIR).filter((f) => f !== 'fifo' && f !== 'log'), []);
    `,
      { TMPDIR: dir, FAKE_CUDA_FAIL: 'cuGraphDebugDotPrint:2:1' },
    );
    run(
      `
      const g = new cuda.Graph();
      g.addEmpty();
      assert.throws(() => g.edges(), { name: 'RuntimeError', message: /cuGraphGetEdges.*12\\.3/ });
      assert.strictEqual(g.nodes().length, 1);
    `,
      { FAKE_CUDA_DRIVER_VERSION: '12020' },
    );
  });

  it('each bad argument is the error that says what to do', function () {
    run(
      `
      const module = new cuda.Module(MODULE);
      const args4 = module.getFunction('args4');
      const a = cuda.memAlloc(64);
      const g = new cuda.Graph(), other = new cuda.Graph();
      const mine = g.addEmpty(), theirs = other.addEmpty();
      const cases = [
        [() => g.addMemset(a, 1, 16, { elementSize: 3 }), 'RangeError', 'elementSize must be 1, 2 or 4, not number 3'],
        [() => g.addMemset(a, 256, 16), 'RangeError', /value/],
        [() => g.addMemset(a, 1, 0), 'RangeError', 'a memset node sets at least one element'],
        [() => g.addMemset(a, 1, 17, { elementSize: 4 }), 'RangeError', 'graph.addMemset(): 68 bytes do not fit in 64 bytes of device memory'],
        [() => g.addMemset(a, 1, 8, { pitch: 4, height: 2 }), 'RangeError', 'pitch 4 is less than a row of 8 bytes'],
        [() => g.addMemcpy(a, a, 0), 'RangeError', 'a copy node copies at least one byte'],
        [() => g.addMemcpy(a, cuda.memAlloc(16), 32), 'RangeError', /src: 32 bytes do not fit in 16/],
        [() => g.addEmpty({ after: theirs }), 'LogicError', 'after[0] is a node of another Graph'],
        [() => g.addEmpty({ after: [mine, 1] }), 'TypeError', 'after[1] must be a GraphNode, not number 1'],
        [() => g.addEmpty({ after: 'x' }), 'TypeError', /after must be a GraphNode or an array of them/],
        // the fuzzer's: copying this list for C ran the heap out of memory
        [() => g.addChildGraph(g, { after: Array(2 ** 32 - 1) }), 'RangeError', 'after holds 4294967295 items; at most 65536'],
        [() => g.addEmpty({ deps: [] }), 'TypeError', /unknown option 'deps'/],
        [() => g.addKernel({}, { block: 1 }), 'TypeError', /kernel must be a Kernel/],
        [() => g.addKernel(args4, a, a, cuda.int32(1), cuda.float32(1), { block: 1, stream: null }), 'TypeError', /unknown kernel node option 'stream'/],
        [() => g.addKernel(args4, new cuda.In(new Float32Array(4)), a, cuda.int32(1), cuda.float32(1), { block: 1 }), 'TypeError', /In, Out and InOut copy at each call/],
        [() => g.addKernel(args4, a, a, cuda.int32(1), { block: 1 }), 'TypeError', "kernel 'args4' takes 4 parameters, but 3 arguments were given"],
        [() => g.addChildGraph({}), 'TypeError', 'child must be a Graph, not an Object'],
        [() => new cuda.GraphNode({}, 0), 'TypeError', /a GraphNode comes from/],
        [() => new cuda.GraphNode(g, -1), 'RangeError', 'index must be an integer from 0 to 4294967295, not -1'],
        [() => new cuda.GraphNode(g, 99).type, 'RangeError', 'no such node in this graph'],
        [
          () => g.addEmpty({ after: Object.create(cuda.GraphNode.prototype) }),
          'TypeError',
          'after[0] must be a GraphNode, not an object that only inherits from GraphNode',
        ],
        [() => g.setMemset(mine, a, 1, 1), 'TypeError', 'graph.setMemset(): node is an empty node, not a memset node'],
        [() => g.instantiate().setEnabled(theirs, true), 'LogicError', 'node is a node of another Graph'],
        [() => g.instantiate().setEnabled(mine, 1), 'TypeError', 'enabled must be true or false, not number 1'],
        [() => g.toDot(-1), 'RangeError', /flags/],
      ];
      for (const [fn, name, message] of cases) assert.throws(fn, { name, message });
      // the driver refusing a node adds none
      const before = g.nodeCount;
      process.env.FAKE_CUDA_FAIL = 'cuGraphAddKernelNode_v2:1:1';
      assert.throws(() => g.addKernel(args4, a, a, cuda.int32(1), cuda.float32(1), { block: 1 }), {
        name: 'LogicError',
        message: 'cuGraphAddKernelNode failed: invalid argument',
      });
      process.env.FAKE_CUDA_FAIL = '';
      assert.strictEqual(g.nodeCount, before);
      assert.strictEqual(g.addKernel(args4, a, a, cuda.int32(1), cuda.float32(1), { block: 1, after: mine }).index, before);
      // a node of a destroyed graph; a graph destroyed
      const exec = g.instantiate();
      g.destroy();
      assert.throws(() => exec.setEnabled(mine, true), { name: 'LogicError', message: /this Graph has been destroyed/ });
      assert.throws(() => g.addEmpty(), { name: 'LogicError', message: /this Graph has been destroyed/ });
      exec.launch();
    `,
      { FAKE_CUDA_FAIL: '' },
    );
  });

  it('conditional nodes: bodies are Graphs to fill; IF, IF/ELSE and SWITCH pick by the value, set again at each launch', function () {
    const counts = path.join(dir, 'counts');
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test/support/stand-in-driver'))});
      const a = cuda.memAlloc(64);
      const g = new cuda.Graph();
      const set = g.addMemset(a, 1, 64);
      const yes = g.conditionalHandle({ default: 1 });
      const no = g.conditionalHandle({ default: 0 });
      assert.strictEqual(typeof yes.value, 'bigint');
      assert.strictEqual(yes.graph, g);
      const one = g.addConditional(yes, 'if', { after: set });
      assert.strictEqual(one.node.type, 'conditional');
      assert.strictEqual(one.bodies.length, 1);
      assert.ok(one.bodies[0] instanceof cuda.Graph);
      one.bodies[0].addMemset(a, 2, 16);
      const two = g.addConditional(no, 'if', { size: 2, after: one.node });
      two.bodies[0].addMemset(a, 3, 16);
      two.bodies[1].addMemset(a.slice(16), 4, 16);
      const choice = 1 + Math.floor(Math.random() * 4);
      const cases = g.addConditional(g.conditionalHandle({ default: choice }), 'switch', { size: 5, after: two.node });
      cases.bodies.forEach((body, i) => body.addMemset(a.slice(32), 10 + i, 16));
      const loop = cases.bodies[choice].addConditional(g.conditionalHandle(), 'while');
      loop.bodies[0].addEmpty();
      assert.deepStrictEqual(g.nodes().map((n) => n.type), ['memset', 'conditional', 'conditional', 'conditional']);
      assert.deepStrictEqual(cases.bodies[choice].nodes().map((n) => n.type), ['memset', 'conditional']);
      const exec = g.instantiate();
      exec.launch();
      const out = new Uint8Array(64);
      cuda.memcpyDtoH(out, a);
      const expected = new Uint8Array(64).fill(1);
      expected.fill(2, 0, 16);
      expected.fill(4, 16, 32);
      expected.fill(10 + choice, 32, 48);
      assert.deepStrictEqual(out, expected);
      assert.deepStrictEqual(log().filter((line) => / 13$/.test(line)).length, 4, 'four conditional nodes ran');
      // bodies die with their graph; the GraphExec does not
      g.destroy();
      for (const body of [one.bodies[0], two.bodies[1], loop.bodies[0]]) {
        assert.throws(() => body.addEmpty(), { name: 'LogicError', message: /a body of a conditional node of a Graph that has been destroyed/ });
      }
      exec.launch();
      exec.destroy();
      const left = liveCounts(${JSON.stringify(counts)});
      assert.deepStrictEqual([left.graphs, left.graph_execs, left.stale], [0, 0, 0]);
      // each bad argument
      const h = new cuda.Graph();
      const handle = h.conditionalHandle();
      const bad = [
        [() => h.addConditional({}, 'if'), 'TypeError', 'handle must be a ConditionalHandle, not an Object'],
        [() => h.addConditional(handle, 'until'), 'TypeError', /^kind must be 'if', 'while' or 'switch', not the string/],
        [() => h.addConditional(handle, 'while', { size: 2 }), 'RangeError', /size/],
        [() => h.addConditional(handle, 'if', { size: 3 }), 'RangeError', /size/],
        [() => h.addConditional(handle, 'switch', { size: 257 }), 'RangeError', /size/],
        [() => h.addConditional(handle, 'if', { else: true }), 'TypeError', /unknown option 'else'/],
        [() => h.conditionalHandle({ default: -1 }), 'RangeError', /default/],
        [() => h.conditionalHandle({ resetEachLaunch: 1 }), 'TypeError', 'resetEachLaunch must be true or false, not number 1'],
        [() => new cuda.ConditionalHandle(null, 1n), 'TypeError', /comes from graph.conditionalHandle/],
        // the driver refuses these (invalid argument); lib/ says why first
        [
          () => new cuda.Graph().addConditional(handle, 'if'),
          'LogicError',
          'graph.addConditional(): handle was made by another Graph; make it with graph.conditionalHandle() ' +
            'of this graph (or of the graph whose conditional node holds it)',
        ],
      ];
      for (const [fn, name, message] of bad) assert.throws(fn, { name, message });
      // a handle serves one node; a body's handle may serve a node of its graph, and the reverse
      const body = h.addConditional(handle, 'if').bodies[0];
      assert.throws(() => body.addConditional(handle, 'while'), {
        name: 'LogicError',
        message: 'graph.addConditional(): handle is the condition of another conditional node already; ' +
          'make one handle for each node (graph.conditionalHandle())',
      });
      body.addConditional(h.conditionalHandle(), 'while');
      h.addConditional(body.conditionalHandle(), 'if');
      assert.deepStrictEqual(h.nodes().map((n) => n.type), ['conditional', 'conditional']);
    `,
      { FAKE_CUDA_COUNTS: counts },
    );
  });

  it('what the driver crashes on or refuses is refused first, saying what to do; no graph is destroyed under a capture into it, collected or not (the stand-in aborts where a driver would crash)', function () {
    runRefusals({ LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_STALE_ABORT: '1' });
  });

  it('a CudaArray a captured 1D copy names is held until the graph goes, or the capture ends without one', function () {
    run(`
      const HELD = { name: 'LogicError', message: /^array\\.free\\(\\): a Graph or GraphExec that lives, or a capture under way/ };
      const host = cuda.pagelockedZeros(64, 'uint8');
      for (const [copy, ends] of [
        [(array, s) => cuda.memcpyHtoAAsync(array, 0, host, s), 'graph'],
        [(array, s) => cuda.memcpyAtoHAsync(host, array, 0, s), 'graph'],
        [(array, s) => cuda.memcpyHtoAAsync(array, 0, host, s), 'destroy'],
      ]) {
        const array = new cuda.CudaArray({ width: 64, format: cuda.ArrayFormat.UNSIGNED_INT8, numChannels: 1 });
        const s = new cuda.Stream();
        s.beginCapture();
        copy(array, s);
        assert.throws(() => array.free(), HELD);
        if (ends === 'graph') {
          const graph = s.endCapture();
          assert.throws(() => array.free(), HELD);
          graph.destroy();
        } else s.destroy();
        array.free();
        assert.throws(() => array.getDescriptor(), { name: 'LogicError', message: /freed/ });
      }
      // outside a capture the copy holds nothing
      const array = new cuda.CudaArray({ width: 64, format: cuda.ArrayFormat.UNSIGNED_INT8, numChannels: 1 });
      const s = new cuda.Stream();
      cuda.memcpyHtoAAsync(array, 0, host, s);
      s.synchronizeSync();
      array.free();
    `);
  });

  it('capture into a graph of yours after some of its nodes; isCapturing() and captureInfo() say what is under way', function () {
    run(`
      const s = new cuda.Stream();
      assert.strictEqual(s.isCapturing(), false);
      assert.deepStrictEqual(s.captureInfo(), { status: 'none', id: null, graph: null, dependencies: [] });
      s.beginCapture();
      assert.strictEqual(s.isCapturing(), true);
      const first = s.captureInfo();
      assert.deepStrictEqual([first.status, typeof first.id, first.graph, first.dependencies], ['active', 'bigint', null, 0]);
      s.endCapture();
      const g = new cuda.Graph();
      const a = g.addEmpty(), b = g.addEmpty(), c = g.addEmpty();
      assert.strictEqual(s.beginCapture(cuda.StreamCaptureMode.GLOBAL, { into: g, after: [c, a] }), s);
      const info = s.captureInfo();
      assert.strictEqual(info.graph, g);
      assert.ok(info.id > first.id, 'each capture has an id of its own');
      assert.deepStrictEqual(info.dependencies.map((node) => node.index), [2, 0]);
      assert.strictEqual(s.endCapture(), g);
      assert.strictEqual(g.nodeCount, 3, 'the stand-in records nothing: the graph is as it was');
      assert.strictEqual(s.isCapturing(), false);
      s.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: g, after: b });
      assert.deepStrictEqual(s.captureInfo().dependencies.map((node) => node.index), [1]);
      assert.strictEqual(s.endCapture(), g);
      const cases = [
        [() => s.beginCapture(undefined, { after: a }), 'TypeError', 'stream.beginCapture(): after needs into, the graph it names nodes of'],
        [() => s.beginCapture(undefined, { into: {} }), 'TypeError', 'into must be a Graph, not an Object'],
        [() => s.beginCapture(undefined, { into: new cuda.Graph(), after: a }), 'LogicError', 'after[0] is a node of another Graph'],
        [() => s.beginCapture(undefined, { graph: g }), 'TypeError', /unknown option 'graph'/],
      ];
      for (const [fn, name, message] of cases) assert.throws(fn, { name, message });
      assert.strictEqual(s.isCapturing(), false, 'a refused capture did not start');
    `);
    run(
      `
      const s = new cuda.Stream();
      assert.throws(() => s.beginCapture(undefined, { into: new cuda.Graph() }), {
        name: 'RuntimeError',
        message: /cuStreamBeginCaptureToGraph .*CUDA 12\\.3/,
      });
      s.beginCapture();
      assert.strictEqual(s.captureInfo().status, 'active');
      s.endCapture();
    `,
      { FAKE_CUDA_DRIVER_VERSION: '12020' },
    );
  });

  it('an event a captured launch records (a launch attribute) outlives destroy() while the graph lives, as an event node does', function () {
    run(
      `
      const destroys = () => log().filter((l) => /^call cuEventDestroy/.test(l)).length;
      const kernel = new cuda.Module(MODULE).getFunction('empty');
      for (const attribute of ['completionEvent', 'programmaticEvent']) {
        const event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
        const s = new cuda.Stream();
        s.beginCapture();
        kernel({ block: 1, stream: s, [attribute]: event });
        const graph = s.endCapture();
        const before = destroys();
        event.destroy();
        assert.strictEqual(destroys(), before, attribute + ': the graph holds the CUevent');
        graph.destroy();
        assert.strictEqual(destroys(), before + 1, attribute + ': the last to let go destroys it');
      }
      // outside a capture, destroy() destroys at once
      const event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      kernel({ block: 1, completionEvent: event });
      const before = destroys();
      event.destroy();
      assert.strictEqual(destroys(), before + 1);
    `,
      { FAKE_CUDA_TRACE: '1' },
    );
  });

  it("event record and wait nodes: the graph keeps the event's CUevent until it and its GraphExecs are gone, destroy() or not", function () {
    const counts = path.join(dir, 'counts');
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test/support/stand-in-driver'))});
      const events = () => liveCounts(${JSON.stringify(counts)}).events;
      const collect = async () => { for (let i = 0; i < 4; i++) { global.gc(); await new Promise((r) => setImmediate(r)); } };
      const e = new cuda.Event();
      const g = new cuda.Graph();
      const record = g.addEventRecord(e);
      const wait = g.addEventWait(e, { after: record });
      assert.deepStrictEqual([record.type, wait.type], ['eventRecord', 'waitEvent']);
      const exec = g.instantiate();
      e.destroy();
      assert.throws(() => e.query(), { name: 'LogicError', message: /this Event has been destroyed/ });
      assert.strictEqual(events(), 1, 'the graph keeps the CUevent');
      exec.launch();
      assert.deepStrictEqual(log().slice(-2), ['graph node 0 7', 'graph node 1 6']);
      g.destroy();
      exec.launch();
      assert.strictEqual(events(), 1, 'the GraphExec keeps it');
      exec.destroy();
      assert.deepStrictEqual([events(), liveCounts(${JSON.stringify(counts)}).stale], [0, 0]);
      // dropped to the collector: the same
      let keep = (() => {
        const graph = new cuda.Graph();
        graph.addEventRecord(new cuda.Event());
        return graph.instantiate();
      })();
      await collect();
      assert.strictEqual(events(), 1);
      keep.launch();
      keep = null;
      await collect();
      assert.deepStrictEqual([events(), liveCounts(${JSON.stringify(counts)}).stale], [0, 0]);
      assert.throws(() => new cuda.Graph().addEventRecord({}), { name: 'TypeError', message: 'event must be an Event, not an Object' });
      assert.throws(() => new cuda.Graph().addEventWait(e), { name: 'LogicError', message: /this Event has been destroyed/ });
    `,
      { FAKE_CUDA_COUNTS: counts },
    );
  });

  it("a kernel node keeps its module loaded: free() is refused while a Graph or GraphExec uses it, or a child copy of one, a body's included", function () {
    run(`
      const module = new cuda.Module(MODULE);
      const g = new cuda.Graph();
      g.addKernel(module.getFunction('empty'), { block: 1 });
      const exec = g.instantiate();
      const refused = { name: 'LogicError', message: 'module.free(): a Graph or GraphExec, or a capture under way, has kernel nodes of this module; end the capture and destroy them first' };
      assert.throws(() => module.free(), refused);
      g.destroy();
      assert.throws(() => module.free(), refused);
      exec.launch();
      exec.destroy();
      module.free();
      // a copy of a child graph with kernel nodes keeps their module too
      const again = new cuda.Module(MODULE);
      const child = new cuda.Graph();
      child.addKernel(again.getFunction('empty'), { block: 1 });
      const parent = new cuda.Graph();
      parent.addChildGraph(child);
      child.destroy();
      assert.throws(() => again.free(), { name: 'LogicError' });
      parent.destroy();
      again.free();
      // a graph made a child of itself (driver 580 crashes; the stand-in aborts): refused, its pins
      // stay as they were
      const self = new cuda.Module(MODULE);
      const g2 = new cuda.Graph();
      for (let i = 0; i < 5; i++) g2.addEventRecord(new cuda.Event());
      g2.addKernel(self.getFunction('empty'), { block: 1 });
      assert.throws(() => g2.addChildGraph(g2), {
        name: 'LogicError',
        message: 'graph.addChildGraph(child): child is this graph, which cannot hold itself; build the child as another Graph',
      });
      assert.throws(() => self.free(), { name: 'LogicError' });
      g2.destroy();
      self.free();
      // a body's kernel node keeps its module loaded while its graph or a GraphExec of it lives; a
      // body is no child graph (the driver refuses it), and the refused copy keeps nothing loaded
      const inBody = new cuda.Module(MODULE);
      const top = new cuda.Graph();
      const { bodies } = top.addConditional(top.conditionalHandle({ default: 0 }), 'if');
      bodies[0].addKernel(inBody.getFunction('empty'), { block: 1 });
      const other = new cuda.Graph();
      assert.throws(() => other.addChildGraph(bodies[0]), {
        name: 'LogicError',
        message: 'cuGraphAddChildGraphNode failed: operation not supported',
      });
      const run = top.instantiate();
      top.destroy();
      assert.throws(() => inBody.free(), { name: 'LogicError' });
      run.launch();
      run.destroy();
      inBody.free();
    `);
  });

  it('workers that build and launch graphs, terminated mid-work in 20 rounds, then the main thread: no crash, exit 0', function () {
    const out = run(`
      const { Worker } = require('worker_threads');
      const body = \`
        const cuda = require(\${JSON.stringify(${JSON.stringify(ROOT)})});
        const { parentPort } = require('worker_threads');
        cuda.init();
        const ctx = new cuda.Device(0).makeContext();
        const module = new cuda.Module('entry empty\\\\nentry args4 8 8 4 4\\\\n');
        const a = cuda.memAlloc(4096);
        parentPort.postMessage('ready');
        for (;;) {
          const g = new cuda.Graph();
          const set = g.addMemset(a, 1, 4096);
          const h = g.conditionalHandle({ default: 1 });
          const { bodies } = g.addConditional(h, 'if', { after: set });
          bodies[0].addKernel(module.getFunction('args4'), a, a, cuda.int32(1), cuda.float32(1), { block: 32 });
          g.instantiate().launch();
        }\`;
      for (let round = 0; round < 20; round++) {
        const worker = new Worker(body, { eval: true });
        await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
        await worker.terminate();
      }
      const g = new cuda.Graph();
      const a = cuda.memAlloc(64);
      g.addMemset(a, 5, 64);
      g.instantiate().launch();
      const bytes = new Uint8Array(64);
      cuda.memcpyDtoH(bytes, a);
      assert.deepStrictEqual(bytes, new Uint8Array(64).fill(5));
      console.log('rounds done');
    `);
    assert.match(out, /rounds done/);
  });

  it('SIGTERM while graphs are built, captured into (copies of an array and page-locked memory, and a kernel of a module dropped at once, pinned) and launched in a loop ends the process within 1 s, by the signal', function () {
    const script = `
      const cuda = require(${JSON.stringify(ROOT)});
      cuda.init();
      new cuda.Device(0).makeContext();
      const a = cuda.memAlloc(4096);
      const stream = new cuda.Stream();
      const pinned = cuda.pagelockedEmpty(64, 'uint8');
      const array = new cuda.CudaArray({ width: 64, format: cuda.ArrayFormat.UNSIGNED_INT8, numChannels: 1 });
      process.stdout.write('ready\\n');
      const spin = () => {
        for (let i = 0; i < 50; i++) {
          const g = new cuda.Graph();
          const copy = g.addMemcpy(a.slice(2048), a, 2048, { after: g.addMemset(a, 1, 2048) });
          stream.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: g, after: copy });
          cuda.memsetD8Async(a, 2, 64, stream);
          cuda.memcpyHtoAAsync(array, 0, pinned, stream); // pinned for the graph by the capture,
          new cuda.Module('entry empty\\n').getFunction('empty')({ block: 1, stream }); // as this module
          stream.endCapture();
          g.instantiate().launch();
        }
        setImmediate(spin);
      };
      spin();`;
    const { spawn } = require('child_process');
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, LD_LIBRARY_PATH: standIn.dir } });
      let sent = 0;
      child.stdout.once('data', () => {
        setTimeout(() => {
          sent = Date.now();
          child.kill('SIGTERM');
        }, 200);
      });
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error('still running 5 s after SIGTERM'));
      }, 10000);
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        try {
          assert.strictEqual(signal, 'SIGTERM');
          assert.ok(Date.now() - sent < 1000, `${Date.now() - sent} ms`);
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    });
  });

  it('launches take the stream given each time (bound in C until another is given); a bad or destroyed stream, a destroyed or collected exec and a second launcher are errors', function () {
    run(`
      const binding = require(${JSON.stringify(path.join(ROOT, 'lib/internal/binding'))});
      const collect = async () => { for (let i = 0; i < 3; i++) { global.gc(); await new Promise((r) => setImmediate(r)); } };
      const g = new cuda.Graph();
      g.addMemset(cuda.memAlloc(64), 1, 64);
      const exec = g.instantiate();
      const s1 = new cuda.Stream(), s2 = new cuda.Stream();
      for (const s of [s1, s1, s2, undefined, null, s1]) exec.launch(s);
      const streams = () => log().filter((l) => l.startsWith('graph launch')).map((l) => l.split('=')[1]);
      const [first, again, second, none, nulled, back] = streams();
      assert.ok(first !== '0' && second !== '0' && first !== second, streams().join());
      assert.deepStrictEqual([again, none, nulled, back], [first, '0', '0', first]);
      assert.throws(() => exec.launch({}), { name: 'TypeError', message: 'expected a Stream' });
      assert.throws(() => exec.launch(g), { name: 'TypeError', message: 'expected a Stream' });
      exec.launch(s1);
      assert.strictEqual(streams()[6], first, 'a refused stream changed nothing');
      s2.destroy();
      assert.throws(() => exec.launch(s2), { name: 'LogicError', message: /this Stream has been destroyed/ });
      exec.launch(s1);
      s1.destroy();
      assert.throws(() => exec.launch(s1), { name: 'LogicError', message: /this Stream has been destroyed/ });
      assert.throws(() => binding.graphExecLauncher(exec), { name: 'LogicError', message: /has its launcher already/ });
      assert.throws(() => binding.graphExecLauncher(g), { name: 'TypeError', message: 'expected a GraphExec' });
      // C's functions alone, as lib/ holds them: they outlive the exec safely
      const other = g.instantiate();
      const [launch, setStream] = binding.graphExecLauncher(other);
      assert.throws(() => setStream(exec), { name: 'TypeError', message: 'expected a Stream' });
      launch();
      assert.strictEqual(streams()[8], '0');
      other.destroy();
      assert.throws(() => launch(), { name: 'LogicError', message: /this GraphExec has been destroyed/ });
      const [collected, collectedStream] = (() => binding.graphExecLauncher(g.instantiate()))();
      await collect();
      assert.throws(() => collected(), { name: 'LogicError', message: /this GraphExec has been destroyed/ });
      collectedStream(null);
      exec.destroy();
      assert.throws(() => exec.launch(), { name: 'LogicError', message: /this GraphExec has been destroyed/ });
      assert.strictEqual(streams().length, 9, 'no refused launch reached the driver');
    `);
  });

  it('garbage collection frees nothing a live Graph or GraphExec uses, and everything once they are dropped', function () {
    const counts = path.join(dir, 'counts');
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test/support/stand-in-driver'))});
      const counts = () => liveCounts(${JSON.stringify(counts)});
      const collect = async () => { for (let i = 0; i < 4; i++) { global.gc(); await new Promise((r) => setImmediate(r)); } cuda.Context.synchronizeSync(); };
      let exec = (() => {
        const module = new cuda.Module(MODULE);
        const g = new cuda.Graph();
        const a = cuda.memAlloc(4096), b = cuda.memAlloc(4096);
        const set = g.addMemset(a, 9, 4096);
        g.addMemcpy(b, a, 4096, { after: set });
        g.addKernel(module.getFunction('args4'), a, b, cuda.int32(1), cuda.float32(2), { block: 1 });
        return g.instantiate();
      })();
      await collect();
      assert.strictEqual(counts().device_memory, 2, 'the exec holds both allocations');
      assert.strictEqual(counts().modules, 1);
      exec.launch();
      exec = null;
      await collect();
      await collect();
      const left = counts();
      assert.deepStrictEqual([left.device_memory, left.modules, left.graphs, left.graph_execs, left.stale], [0, 0, 0, 0, 0]);
    `,
      { FAKE_CUDA_COUNTS: counts },
    );
  });
});
