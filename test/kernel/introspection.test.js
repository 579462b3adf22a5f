'use strict';
// Cluster occupancy, the shared memory left per block, a library's kernel names, peer attributes
// and the primary context's flags and reset, through the stand-in driver: the values it computes
// come back, bad input is refused before it, and an old driver's missing calls say so.
const { childRunner } = require('../support/graph-child');

describe('occupancy of clusters, library and device introspection through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run } = childRunner('cudadrv-introspection-');

  it("cluster occupancy and the shared memory left per block are the driver's; bad configurations are refused", function () {
    run(`
      const k = new cuda.Module(MODULE).getFunction('empty');
      // the stand-in: 132 multiprocessors of 2048 threads and 64 KiB, clusters of at most 8 blocks
      const blocks = Math.floor(Math.random() * 4) + 1; // blocks in a cluster
      const perSm = (threads, shared) => Math.min(Math.floor(2048 / threads), shared ? Math.floor(65536 / shared) : Infinity);
      assert.strictEqual(k.maxActiveClusters({ grid: 8 * blocks, block: 128, cluster: blocks }), Math.floor((132 * perSm(128, 0)) / blocks));
      assert.strictEqual(k.maxActiveClusters({ grid: [4, 2], block: [16, 16], shared: 8192, cluster: [2, 2] }), Math.floor((132 * perSm(256, 8192)) / 4));
      assert.strictEqual(k.maxPotentialClusterSize({ block: 128 }), 8);
      assert.strictEqual(k.availableDynamicSharedMemoryPerBlock(4, 256), 16384);
      assert.strictEqual(k.availableDynamicSharedMemoryPerBlock(8, 512), 0, 'the threads do not fit');
      assert.deepStrictEqual(log().filter((l) => l.startsWith('occupancy')), [
        'occupancy clusters empty block=128 shared=0 cluster=' + blocks,
        'occupancy clusters empty block=256 shared=8192 cluster=4',
        'occupancy cluster size empty block=128 shared=0',
      ]);
      for (const [call, name, message] of [
        [() => k.maxActiveClusters(), 'TypeError', 'maxActiveClusters() takes { grid, block, shared, cluster }, not undefined'],
        [() => k.maxActiveClusters({ block: 1, clusters: 2 }), 'TypeError', "maxActiveClusters(): unknown option 'clusters' (the options are grid, block, shared and cluster)"],
        [() => k.maxActiveClusters({ block: 0 }), 'RangeError', 'block must be an integer from 1 to 4294967295, not 0'],
        [() => k.maxActiveClusters({ block: 1, shared: -1 }), 'RangeError', 'shared must be an integer from 0 to 4294967295, not -1'],
        [() => k.maxPotentialClusterSize({ grid: 'x', block: 1 }), 'TypeError', 'grid must be a number or an array of 1 to 3 numbers, not the string "x"'],
        [() => k.availableDynamicSharedMemoryPerBlock(0, 32), 'RangeError', 'numBlocks must be an integer from 1 to 2147483647, not 0'],
        [() => k.availableDynamicSharedMemoryPerBlock(1, 1.5), 'RangeError', 'blockSize must be an integer from 1 to 2147483647, not 1.5'],
      ]) assert.throws(call, { name, message });
      // what only the driver knows: a cluster that does not divide the grid, or none at all
      assert.throws(() => k.maxActiveClusters({ grid: 6, block: 32, cluster: 4 }), { name: 'LogicError', code: 912, api: 'cuOccupancyMaxActiveClusters' });
      assert.throws(() => k.maxActiveClusters({ grid: 6, block: 32 }), { name: 'LogicError', code: 912 });
      // the binding checks what reaches it, whoever calls it
      const binding = require(${JSON.stringify(require.resolve('../../lib/internal/binding'))});
      assert.throws(() => binding.occupancyMaxActiveClusters(k._k, new Uint32Array(9)), { name: 'TypeError' });
      assert.throws(() => binding.occupancyMaxActiveClusters(k._k, new Int32Array(10)), { name: 'TypeError' });
      assert.throws(() => binding.occupancyMaxActiveClusters(k._k, new Uint32Array(10)), { name: 'RangeError' });
    `);
  });

  it('library.kernelNames() lists every kernel, as getKernel() takes them; an unloaded library refuses', function () {
    run(`
      const names = Array.from({ length: 1 + Math.floor(Math.random() * 5) }, (_, i) => 'k' + i + '_' + Math.random().toString(36).slice(2, 8));
      const library = new cuda.Library(names.map((n) => 'entry ' + n + ' 8 8').join('\\n') + '\\nglobal table 64\\n');
      assert.deepStrictEqual(library.kernelNames(), names);
      for (const name of library.kernelNames()) library.getKernel(name);
      assert.deepStrictEqual(new cuda.Library('global only 16\\n').kernelNames(), []);
      library.unload();
      assert.throws(() => library.kernelNames(), { name: 'LogicError', message: 'this Library has been unloaded; load it again' });
    `);
  });

  it('on a driver for CUDA 12.3, kernelNames() is a RuntimeError naming the call and CUDA 12.4', function () {
    run(
      `
      const library = new cuda.Library('entry a\\n');
      assert.throws(() => library.kernelNames(), {
        name: 'RuntimeError',
        message: /^cuLibraryGetKernelCount is not provided by the installed CUDA driver \\(version 12\\.3\\); it needs a driver for CUDA 12\\.4 or newer/,
      });
    `,
      { FAKE_CUDA_DRIVER_VERSION: '12030' },
    );
  });

  it("peer attributes are the driver's; bad peers and attributes are refused", function () {
    run(
      `
      const [a, b] = [new cuda.Device(0), new cuda.Device(1)];
      assert.strictEqual(a.p2pAttribute(b, cuda.P2PAttribute.PERFORMANCE_RANK), 1);
      assert.strictEqual(b.p2pAttribute(a, cuda.P2PAttribute.ACCESS_SUPPORTED), 1);
      assert.strictEqual(a.p2pAttribute(b, cuda.P2PAttribute.CUDA_ARRAY_ACCESS_SUPPORTED), 0);
      assert.throws(() => a.p2pAttribute(a, cuda.P2PAttribute.ACCESS_SUPPORTED), { api: 'cuDeviceGetP2PAttribute', code: 101 });
      assert.throws(() => a.p2pAttribute(b, 99), { name: 'RangeError', message: 'attribute must be a member of cuda.P2PAttribute, not 99' });
      assert.throws(() => a.p2pAttribute(1, cuda.P2PAttribute.ACCESS_SUPPORTED), { name: 'TypeError', message: /^peer must be a Device/ });
    `,
      { FAKE_CUDA_DEVICES: '2' },
    );
  });

  it('the primary context: flags set before it is made; reset refused while cudadrv uses it (a Context, or a green context of the device not yet destroyed), done once it is detached', function () {
    run(`
      const dev = new cuda.Device(0);
      dev.setPrimaryContextFlags(cuda.CtxFlags.SCHED_BLOCKING_SYNC);
      assert.deepStrictEqual(dev.primaryContextState(), { flags: cuda.CtxFlags.SCHED_BLOCKING_SYNC, active: false });
      assert.throws(() => dev.setPrimaryContextFlags(-1), { name: 'RangeError' });
      assert.throws(() => dev.setPrimaryContextFlags(1 << 20), { api: 'cuDevicePrimaryCtxSetFlags' });
      const primary = dev.retainPrimaryContext();
      primary.push();
      const memory = cuda.memAlloc(256);
      cuda.Context.pop();
      assert.strictEqual(dev.primaryContextState().active, true);
      const refused = { name: 'LogicError', message: /^resetPrimaryContext\\(\\): cudadrv still uses this device's primary context/ };
      assert.throws(() => dev.resetPrimaryContext(), refused);
      primary.detach();
      dev.resetPrimaryContext(); // released: nothing of cudadrv's is in it
      assert.deepStrictEqual(dev.primaryContextState(), { flags: 0, active: false });
      assert.ok(log().includes('primary reset 0'));
      memory.free(); // its context went: freeing it does nothing
      // a green context holds the primary context, and what is made in it is the primary's: the
      // reset waits for its destroy, after its detach() and the last of what was made in it
      const green = dev.makeGreenContext(dev.smResource().split({ minCount: 8 }).groups[0]);
      green.push();
      const inGreen = cuda.memAlloc(256);
      cuda.Context.pop();
      assert.throws(() => dev.resetPrimaryContext(), refused);
      green.detach();
      assert.throws(() => dev.resetPrimaryContext(), refused);
      inGreen.free();
      dev.resetPrimaryContext();
      assert.strictEqual(log().filter((l) => l === 'primary reset 0').length, 2);
    `);
  });
});
