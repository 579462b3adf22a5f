'use strict';
// Launch attributes on the GPU: thread block clusters (compute capability 9.0 and up) and
// cooperative launches (grid-wide synchronization through cooperative_groups), through
// cuLaunchKernelEx from callable and prepared calls. Each block writes what it sees to memory,
// compared exactly with what the grid and cluster shapes imply. The CPU side (the exact
// configurations the driver receives, bad input) is tested through the stand-in driver in
// test/kernel/kernel-driver.test.js; the kernels' NVRTC compile is tested here without a GPU.
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const cuda = require('../..');
const { compileSync } = require('../../lib/compiler');
const { describeGpu } = require('../support/gpu');
const { randomInt } = require('../support/kernel-data');

const SOURCE = String.raw`
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define SREG(name, out) asm volatile("mov.u32 %0, %%" #name ";" : "=r"(out))

// Per block, at 6 * its linear index in the grid: its rank in its cluster and the cluster's size
// (%cluster_ctarank, %cluster_nctarank), its cluster's linear index in the grid (%clusterid,
// %nclusterid), its rank as cooperative_groups tells it, and, read through distributed shared
// memory, the value the next block of its cluster put in its own shared memory (7 * rank + 3),
// and the number of blocks cooperative_groups counts in the cluster.
extern "C" __global__ void cluster_info(unsigned int *out)
{
  __shared__ unsigned int mine;
  unsigned int rank, size, cx, cy, cz, nx, ny;
  SREG(cluster_ctarank, rank);
  SREG(cluster_nctarank, size);
  SREG(clusterid.x, cx);
  SREG(clusterid.y, cy);
  SREG(clusterid.z, cz);
  SREG(nclusterid.x, nx);
  SREG(nclusterid.y, ny);
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) mine = 7 * cluster.block_rank() + 3;
  cluster.sync();
  unsigned int next = *cluster.map_shared_rank(&mine, (int)((cluster.block_rank() + 1) % cluster.num_blocks()));
  cluster.sync(); // the next block's shared memory must outlive the read
  if (threadIdx.x == 0) {
    unsigned int *o = out + 6 * (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
    o[0] = rank;
    o[1] = size;
    o[2] = cx + nx * (cy + ny * cz);
    o[3] = cluster.block_rank();
    o[4] = next;
    o[5] = cluster.num_blocks();
  }
}

// Every thread of the grid writes 3 * in[i] to tmp[i], the whole grid synchronizes, then each
// reads the value a thread of the next block wrote: out[i] = tmp[(i + blockDim.x + 1) % n].
// valid[block] tells whether the launch gave the grid a workspace to synchronize with (only a
// cooperative launch does); without one the kernel stops before grid.sync().
extern "C" __global__ void grid_rotate(const int *in, int *tmp, int *out, unsigned int *valid)
{
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) valid[blockIdx.x] = grid.is_valid() ? 1u : 0u;
  if (!grid.is_valid()) return;
  unsigned int n = (unsigned int)grid.size(), i = (unsigned int)grid.thread_rank();
  tmp[i] = 3 * in[i];
  grid.sync();
  out[i] = tmp[(i + blockDim.x + 1) % n];
}
`;

// The toolkit's headers that cooperative_groups.h needs (CUDA 13 keeps libcu++ in include/cccl).
function toolkitIncludeDirs() {
  const include = execFileSync(process.execPath, [path.join(__dirname, '..', '..', 'scripts', 'find-cuda.js')], {
    encoding: 'utf8',
  });
  return [include, path.join(include, 'cccl')].filter((dir) => fs.existsSync(dir));
}

function compile(options = {}) {
  return compileSync(SOURCE, { noExternC: true, includeDirs: toolkitIncludeDirs(), ...options });
}

// What cluster_info writes for a grid and cluster shape ([x, y, z] each).
function expectedClusters(grid, cluster) {
  const size = cluster[0] * cluster[1] * cluster[2];
  const clusters = grid.map((g, d) => g / cluster[d]);
  const out = [];
  for (let z = 0; z < grid[2]; z++) {
    for (let y = 0; y < grid[1]; y++) {
      for (let x = 0; x < grid[0]; x++) {
        const rank = (x % cluster[0]) + cluster[0] * ((y % cluster[1]) + cluster[1] * (z % cluster[2]));
        const id =
          Math.floor(x / cluster[0]) +
          clusters[0] * (Math.floor(y / cluster[1]) + clusters[1] * Math.floor(z / cluster[2]));
        out.push(rank, size, id, rank, 7 * ((rank + 1) % size) + 3, size);
      }
    }
  }
  return Uint32Array.from(out);
}

describe('launch attribute kernels (NVRTC, no GPU needed)', function () {
  it("the cluster and cooperative kernels compile for sm_90 with the toolkit's cooperative_groups", function () {
    const cubin = compile({ arch: 'sm_90', cacheDir: false });
    assert.strictEqual(cubin.subarray(0, 4).toString('latin1'), '\x7fELF');
    const ptx = compile({ arch: 'compute_90', cacheDir: false }).toString();
    assert.match(ptx, /\.entry cluster_info\(/);
    assert.match(ptx, /%cluster_ctarank/);
    assert.match(ptx, /barrier\.cluster\.arrive/);
    assert.match(ptx, /mapa/);
    assert.match(ptx, /\.entry grid_rotate\(/);
    assert.match(ptx, /%envreg1/, 'grid.sync() finds its workspace in the environment registers');
  });
});

describeGpu('launch attributes: clusters and cooperative launches', function () {
  let module;
  let dev;
  before(function () {
    dev = cuda.Context.getDevice();
    module = new cuda.Module(compile());
  });

  function clusterInfo(grid, options, prepared = false) {
    const blocks = grid[0] * grid[1] * grid[2];
    const out = cuda.memAlloc(blocks * 6 * 4);
    cuda.memsetD32(out, 0xdeadbeef, blocks * 6);
    const kernel = module.getFunction('cluster_info');
    if (prepared) kernel.prepare('P').preparedCall(grid, [64], out, options);
    else kernel(out, { block: [64], grid, ...options });
    const result = new Uint32Array(blocks * 6);
    cuda.memcpyDtoH(result, out);
    out.free();
    return result;
  }

  it('cluster: [x, y, z] groups blocks into clusters that share distributed shared memory', function () {
    if (!dev.clusterLaunch) this.skip(); // before compute capability 9.0
    for (const [grid, cluster] of [
      [
        [8, 4, 2],
        [2, 2, 2],
      ],
      [
        [12, 2, 1],
        [4, 1, 1],
      ],
      [
        [6, 3, 4],
        [2, 1, 2],
      ],
    ]) {
      assert.deepStrictEqual(
        clusterInfo(grid, { cluster }),
        expectedClusters(grid, cluster),
        `grid ${grid}, cluster ${cluster}`,
      );
    }
    assert.deepStrictEqual(clusterInfo([16, 1, 1], { cluster: 8 }), expectedClusters([16, 1, 1], [8, 1, 1]));
    assert.deepStrictEqual(
      clusterInfo([10, 1, 1], { cluster: [2], shared: 1024 }, true),
      expectedClusters([10, 1, 1], [2, 1, 1]),
    );
  });

  it('without cluster, every block is a cluster of its own', function () {
    if (!dev.clusterLaunch) this.skip();
    assert.deepStrictEqual(clusterInfo([4, 2, 2], {}), expectedClusters([4, 2, 2], [1, 1, 1]));
    assert.deepStrictEqual(clusterInfo([3, 1, 1], undefined, true), expectedClusters([3, 1, 1], [1, 1, 1]));
  });

  it("a cluster that does not divide the grid is the driver's error", function () {
    if (!dev.clusterLaunch) this.skip();
    const out = cuda.memAlloc(6 * 4 * 6);
    const kernel = module.getFunction('cluster_info');
    for (const launch of [
      () => kernel(out, { block: 32, grid: 6, cluster: 4 }),
      () => kernel.prepare('P').preparedCall([4, 3], 32, out, { cluster: [2, 2] }),
    ]) {
      let error = null;
      try {
        launch();
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof cuda.CudaError, String(error));
      assert.strictEqual(error.api, 'cuLaunchKernelEx');
      assert.ok(error.message.startsWith('cuLaunchKernelEx failed: '), error.message);
    }
    cuda.Context.synchronizeSync(); // the refusals left the context usable
    out.free();
  });

  it('cooperative: true lets the whole grid synchronize, on a stream and through a prepared call', async function () {
    if (!dev.cooperativeLaunch) this.skip();
    const kernel = module.getFunction('grid_rotate');
    const block = 128;
    const capacity = kernel.maxActiveBlocksPerMultiprocessor(block) * dev.multiprocessorCount;
    const blocks = Math.min(capacity, 2 * dev.multiprocessorCount);
    const n = blocks * block;
    const input = Int32Array.from({ length: n }, () => randomInt(-(2 ** 29), 2 ** 29));
    const expected = Int32Array.from({ length: n }, (_, i) => 3 * input[(i + block + 1) % n]);
    const [inGpu, tmp, out, valid] = [
      cuda.toDevice(input),
      cuda.memAlloc(4 * n),
      cuda.memAlloc(4 * n),
      cuda.memAlloc(4 * blocks),
    ];
    const stream = new cuda.Stream();
    const check = async (launch) => {
      cuda.memsetD32(out, 0, n);
      cuda.memsetD32(valid, 7, blocks);
      launch();
      await stream.synchronize();
      const got = new Int32Array(n);
      const validity = new Uint32Array(blocks);
      cuda.memcpyDtoH(got, out);
      cuda.memcpyDtoH(validity, valid);
      assert.deepStrictEqual(validity, new Uint32Array(blocks).fill(1), 'every block had a grid workspace');
      assert.deepStrictEqual(got, expected);
    };
    await check(() => kernel(inGpu, tmp, out, valid, { block, grid: blocks, stream, cooperative: true }));
    kernel.prepare('PPPP');
    await check(() => kernel.preparedAsyncCall(blocks, block, stream, inGpu, tmp, out, valid, { cooperative: true }));
    for (const m of [inGpu, tmp, out, valid]) m.free();
  });

  it("a cooperative grid larger than the device holds at once is the driver's LaunchError", function () {
    if (!dev.cooperativeLaunch) this.skip();
    const kernel = module.getFunction('grid_rotate');
    const block = 1024;
    const capacity = kernel.maxActiveBlocksPerMultiprocessor(block) * dev.multiprocessorCount;
    const buffers = [0, 1, 2, 3].map(() => cuda.memAlloc(4 * 1024 * (capacity + 1)));
    assert.throws(() => kernel(...buffers, { block, grid: capacity + 1, cooperative: true }), {
      name: 'LaunchError',
      code: 720,
      api: 'cuLaunchKernelEx',
    });
    cuda.Context.synchronizeSync();
    for (const m of buffers) m.free();
  });
});
