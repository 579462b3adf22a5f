'use strict';
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const cuda = require('../..');
const { DeviceData, OccupancyRecord } = require('../../lib/tools');
const devices = require('../support/fixtures/devices');
const { describeGpu, markCudaTest } = require('../support/gpu');

const byName = Object.fromEntries(devices.map((d) => [d.name, new DeviceData(d.attributes)]));

describe('DeviceData from attributes', function () {
  it('reads every field from the attributes and the compute capability', function () {
    const h100 = byName.H100;
    assert.deepStrictEqual(
      { ...h100 },
      {
        computeCapability: [9, 0],
        maxThreads: 1024,
        warpSize: 32,
        maxThreadsPerMp: 2048,
        warpsPerMp: 64,
        threadBlocksPerMp: 32,
        registers: 65536,
        registersPerBlock: 65536,
        sharedMemory: 233472,
        sharedMemoryPerBlock: 49152,
        sharedMemoryPerBlockOptin: 232448,
        reservedSharedMemoryPerBlock: 1024,
        smemGranularity: 32,
        smemAllocGranularity: 128,
        registerAllocationUnit: 'warp',
        registerGranularity: 256,
        maxRegistersPerThread: 256,
        registerSubPartitions: 4,
        multiprocessorCount: 132,
        clusterLaunch: true,
        maxPortableClusterSize: 8,
      },
    );
  });

  it('follows the device: warps and blocks per multiprocessor, granularities by compute capability', function () {
    const rows = Object.entries(byName).map(([name, d]) => [
      name,
      d.warpsPerMp,
      d.threadBlocksPerMp,
      d.smemAllocGranularity,
      d.maxRegistersPerThread,
      d.registerSubPartitions,
    ]);
    assert.deepStrictEqual(rows, [
      ['GTX 980', 64, 32, 256, 255, 4],
      ['P100', 64, 32, 256, 255, 2],
      ['GTX 1080', 64, 32, 256, 255, 4],
      ['V100', 64, 32, 256, 256, 4],
      ['T4', 32, 16, 256, 256, 4],
      ['A100', 64, 32, 128, 256, 4],
      ['RTX 3090', 48, 16, 128, 256, 4],
      ['RTX 4090', 48, 24, 128, 256, 4],
      ['H100', 64, 32, 128, 256, 4],
      ['B200', 64, 32, 128, 256, 4],
      ['RTX 5090', 48, 24, 128, 256, 4],
    ]);
  });

  it('optional attributes default; a missing or bad one is a TypeError naming it', function () {
    const { RESERVED_SHARED_MEMORY_PER_BLOCK, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, ...older } = devices.find(
      (d) => d.name === 'V100',
    ).attributes;
    const d = new DeviceData(older);
    assert.strictEqual(d.reservedSharedMemoryPerBlock, 0);
    assert.strictEqual(d.sharedMemoryPerBlockOptin, 49152);
    const { WARP_SIZE, ...noWarp } = older;
    assert.throws(() => new DeviceData(noWarp), {
      name: 'TypeError',
      message: /attributes\.WARP_SIZE must be a non-negative integer.*not undefined/,
    });
    assert.throws(() => new DeviceData({ ...older, WARP_SIZE: '32' }), { name: 'TypeError', message: /WARP_SIZE/ });
    assert.throws(() => new DeviceData(5), { name: 'TypeError', message: /needs a Device/ });
    assert.throws(() => new DeviceData(null), { name: 'TypeError', message: /needs a Device/ });
  });

  it('alignment helpers as PyCUDA has them', function () {
    const d = byName.A100;
    assert.deepStrictEqual(
      [4, 8, 16].map((w) => d.alignBytes(w)),
      [64, 128, 128],
    );
    assert.strictEqual(d.alignBytes(), 64);
    assert.throws(() => d.alignBytes(2), {
      name: 'RangeError',
      message: /no alignment possible for fetches of size 2/,
    });
    const detached = new Uint16Array(2); // the fuzzer's: its toString() throws the engine's TypeError
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    assert.throws(() => d.alignBytes(detached), { name: 'RangeError', message: /of size an Uint16Array: wordSize/ });
    assert.deepStrictEqual(
      [d.align(0), d.align(1), d.align(64), d.align(65), d.align(65, 8), d.align(129, 16)],
      [0, 64, 64, 128, 128, 256],
    );
    assert.deepStrictEqual([d.alignWords(4), d.alignWords(8), d.alignWords(16)], [16, 16, 8]);
    assert.deepStrictEqual([d.alignDtype(10, 4), d.alignDtype(17, 8), d.alignDtype(9, 16)], [16, 32, 16]);
    assert.deepStrictEqual([d.coalesce(1), d.coalesce(16), d.coalesce(17)], [16, 16, 32]);
    assert.deepStrictEqual(
      [0, 1, 2, 3, 4].map((n) => DeviceData.makeValidTexChannelCount(n)),
      [1, 1, 2, 4, 4],
    );
    assert.strictEqual(d.makeValidTexChannelCount(3), 4);
    assert.throws(() => DeviceData.makeValidTexChannelCount(5), {
      name: 'RangeError',
      message: /valid texture channel count/,
    });
    assert.throws(() => d.align(-1), { name: 'RangeError' });
    assert.throws(() => d.align('8'), { name: 'TypeError', message: /bytes must be an integer/ });
  });
});

describe('OccupancyRecord on fixtures', function () {
  it('256 threads of 32 registers on an H100: 8 blocks, registers and warps tie, occupancy 1', function () {
    // warps: 64 / 8 = 8; registers: 32 * 32 = 1024 a warp, 16384 / 1024 = 16 warps in each of 4
    // sub-partitions, 64 / 8 = 8 blocks; shared memory: the reserved 1 KiB, 233472 / 1024 = 228.
    const occ = new OccupancyRecord(byName.H100, 256, 0, 32);
    assert.deepStrictEqual(occ.tbPerMpLimits, { device: 32, warps: 8, regs: 8, smem: 228 });
    assert.strictEqual(occ.tbPerMp, 8);
    assert.strictEqual(occ.limitedBy, 'regs');
    assert.strictEqual(occ.warpsPerMp, 64);
    assert.strictEqual(occ.occupancy, 1);
  });

  it('48 KiB of shared memory a block limits an H100 to 4 blocks', function () {
    // (49152 + 1024 reserved) rounded to 128 = 50176; 233472 / 50176 = 4.65
    const occ = new OccupancyRecord(byName.H100, 128, 49152, 64);
    assert.deepStrictEqual(occ.tbPerMpLimits, { device: 32, warps: 16, regs: 8, smem: 4 });
    assert.deepStrictEqual([occ.tbPerMp, occ.limitedBy, occ.warpsPerMp, occ.occupancy], [4, 'smem', 16, 0.25]);
  });

  it('small blocks are limited by the device; register rounding to 256 a warp counts', function () {
    const occ = new OccupancyRecord(byName['RTX 3090'], 32, 0, 0);
    assert.deepStrictEqual(occ.tbPerMpLimits, { device: 16, warps: 48, smem: 100 });
    assert.deepStrictEqual([occ.tbPerMp, occ.limitedBy, occ.warpsPerMp, occ.occupancy], [16, 'device', 16, 1 / 3]);
    // 33 registers: 1056 a warp, allocated 1280; 16384 / 1280 = 12 warps a sub-partition, 48 in all.
    const regs = new OccupancyRecord(byName.A100, 512, 0, 33);
    assert.deepStrictEqual([regs.tbPerMpLimits.regs, regs.tbPerMp, regs.limitedBy], [3, 3, 'regs']);
  });

  it('before compute capability 8.0 nothing is reserved and shared memory goes by 256 bytes', function () {
    const none = new OccupancyRecord(byName.V100, 64, 0, 0);
    assert.deepStrictEqual(none.tbPerMpLimits, { device: 32, warps: 32 });
    assert.strictEqual(none.limitedBy, 'device');
    const some = new OccupancyRecord(byName.V100, 64, 257, 0);
    assert.strictEqual(some.tbPerMpLimits.smem, Math.floor(98304 / 512));
    // sm_60 has 2 register sub-partitions: 168 registers → 5376 a warp, 32768 / 5376 = 6 warps each.
    assert.strictEqual(new OccupancyRecord(byName.P100, 64, 0, 168).tbPerMpLimits.regs, 6);
    assert.strictEqual(new OccupancyRecord(byName['GTX 1080'], 64, 0, 168).tbPerMpLimits.regs, 6);
  });

  it('a block that cannot run is a RangeError saying why', function () {
    const d = byName.H100;
    assert.throws(() => new OccupancyRecord(d, 1025), {
      name: 'RangeError',
      message: /too many threads: 1025 in a block, where the device allows 1024/,
    });
    // 255 registers: 8192 a warp; 288 threads are 9 warps, checked as 12: 98304 > 65536.
    assert.throws(() => new OccupancyRecord(d, 288, 0, 255), { name: 'RangeError', message: /too many registers/ });
    assert.strictEqual(new OccupancyRecord(d, 256, 0, 255).tbPerMp, 1);
    assert.throws(() => new OccupancyRecord(d, 32, 0, 257), { name: 'RangeError', message: /too many registers/ });
    assert.strictEqual(new OccupancyRecord(d, 32, 232448, 0).tbPerMp, 1);
    assert.throws(() => new OccupancyRecord(d, 32, 232449, 0), {
      name: 'RangeError',
      message: /too much shared memory: 232449 bytes in a block .* allows 232448/,
    });
  });

  it('clusters: the multiprocessors one takes follow from the blocks each holds; devices without clusters refuse them', function () {
    const d = byName.H100;
    // 1024 threads: 2 blocks per multiprocessor, so a cluster of 8 takes 4; 128 threads: 16, so 1
    for (const [threads, size, tbPerMp, sms] of [
      [1024, 8, 2, 4],
      [1024, 3, 2, 2],
      [128, 8, 16, 1],
      [128, 16, 16, 1],
      [256, 1, 8, 1],
    ]) {
      const r = new OccupancyRecord(d, threads, 0, 0, size);
      assert.deepStrictEqual(
        [r.tbPerMp, r.clusterSize, r.multiprocessorsPerCluster],
        [tbPerMp, size, sms],
        `${threads} ${size}`,
      );
    }
    // shared memory limits the blocks, and so spreads the cluster: 100 KiB a block is 2 per multiprocessor
    assert.strictEqual(new OccupancyRecord(d, 128, 100 * 1024, 0, 8).multiprocessorsPerCluster, 4);
    assert.strictEqual(new OccupancyRecord(byName.A100, 128).clusterSize, 1);
    assert.throws(() => new OccupancyRecord(byName.A100, 128, 0, 0, 2), {
      name: 'RangeError',
      message: 'clusters of 2 blocks: this device cannot launch clusters (compute capability 9.0 or newer can)',
    });
    assert.throws(() => new OccupancyRecord(d, 128, 0, 0, 17), {
      name: 'RangeError',
      message: 'clusterSize must be an integer from 1 to 16, not 17',
    });
    assert.deepStrictEqual(
      Object.values(byName).map((x) => [x.clusterLaunch, x.maxPortableClusterSize]),
      Object.values(byName).map((x) => (x.computeCapability[0] >= 9 ? [true, 8] : [false, 1])),
    );
  });

  it('checks its arguments', function () {
    assert.throws(() => new OccupancyRecord({}, 32), { name: 'TypeError', message: /devdata must be a DeviceData/ });
    assert.throws(() => new OccupancyRecord(byName.H100, 0), { name: 'RangeError', message: /threads/ });
    assert.throws(() => new OccupancyRecord(byName.H100, 32, -1), { name: 'RangeError', message: /sharedMem/ });
    assert.throws(() => new OccupancyRecord(byName.H100, 32, 0, 1.5), { name: 'RangeError', message: /registers/ });
  });
});

// NVIDIA's occupancy calculator, cuda_occupancy.h, compiled as a filter (test/support/fixtures).
function occupancyReference() {
  const roots = [process.env.CUDA_PATH, process.env.CUDA_HOME, '/usr/local/cuda'].filter(Boolean);
  const include = roots
    .map((r) => path.join(r, 'include'))
    .find((dir) => fs.existsSync(path.join(dir, 'cuda_occupancy.h')));
  if (!include) return { reason: 'cuda_occupancy.h not found' };
  const exe = path.join(os.tmpdir(), `cudadrv-occupancy-${process.pid}`);
  const cc = spawnSync(process.env.CC || 'cc', [
    '-std=c11',
    '-O1',
    `-I${include}`,
    path.join(__dirname, '..', 'support', 'fixtures', 'occupancy-reference.c'),
    '-o',
    exe,
  ]);
  if (cc.error || cc.status !== 0) return { reason: `no C compiler: ${cc.error ? cc.error.message : cc.stderr}` };
  return { exe };
}

function threadCounts() {
  const counts = [1, 2, 31, 33, 63, 65, 100, 127, 129, 200, 255, 257, 500, 513, 1000, 1023, 1025];
  for (let t = 32; t <= 1024; t += 32) counts.push(t);
  return counts;
}

function smemSizes(max) {
  const sizes = [
    1, 127, 128, 129, 255, 256, 257, 1000, 1024, 8191, 48000, 49152, 49153, 65536, 65537, 98304, 101376, 101377, 166912,
    166913, 232448, 232449,
  ];
  for (let s = 0; s <= max + 2000; s += 1531) sizes.push(s);
  return sizes;
}

describe("OccupancyRecord against NVIDIA's cuda_occupancy.h", function () {
  let reference;
  before(function () {
    reference = occupancyReference();
    if (reference.reason) {
      console.log(`      (skipped: ${reference.reason})`);
      this.skip();
    }
  });
  after(function () {
    if (reference && reference.exe) fs.rmSync(reference.exe, { force: true });
  });

  for (const { name, attributes: a } of devices) {
    it(`agrees on every case for ${name}`, function () {
      const data = byName[name];
      const cases = [];
      for (const threads of threadCounts()) {
        for (let regs = 0; regs <= 257; regs++) cases.push([threads, regs, 0]);
        for (const regs of [0, 16, 37, 64, 128, 255]) {
          for (const smem of smemSizes(a.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)) cases.push([threads, regs, smem]);
        }
      }
      const header = [
        a.COMPUTE_CAPABILITY_MAJOR,
        a.COMPUTE_CAPABILITY_MINOR,
        a.MAX_THREADS_PER_BLOCK,
        a.MAX_THREADS_PER_MULTIPROCESSOR,
        a.MAX_REGISTERS_PER_BLOCK,
        a.MAX_REGISTERS_PER_MULTIPROCESSOR,
        a.WARP_SIZE,
        a.MAX_SHARED_MEMORY_PER_BLOCK,
        a.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        a.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        a.RESERVED_SHARED_MEMORY_PER_BLOCK,
      ].join(' ');
      const input = `${header}\n${cases.map((c) => c.join(' ')).join('\n')}\n`;
      const run = spawnSync(reference.exe, { input, maxBuffer: 64 << 20 });
      assert.strictEqual(run.status, 0, String(run.stderr));
      const expected = String(run.stdout).trim().split('\n').map(Number);
      assert.strictEqual(expected.length, cases.length);
      const disagreements = [];
      let runnable = 0;
      cases.forEach(([threads, regs, smem], i) => {
        let ours;
        try {
          ours = new OccupancyRecord(data, threads, smem, regs).tbPerMp;
          runnable++;
        } catch (error) {
          if (!(error instanceof RangeError)) throw error;
          ours = 0;
        }
        if (ours !== expected[i])
          disagreements.push(
            `threads ${threads}, regs ${regs}, smem ${smem}: ours ${ours}, cuda_occupancy.h ${expected[i]}`,
          );
      });
      assert.deepStrictEqual(
        disagreements.slice(0, 20),
        [],
        `${disagreements.length} of ${cases.length} cases disagree`,
      );
      assert.ok(runnable > cases.length / 2 && runnable < cases.length, `${runnable} runnable cases`);
    });
  }
});

describeGpu('DeviceData and OccupancyRecord on the GPU', function () {
  it('DeviceData(dev) equals DeviceData(dev.getAttributes()); DeviceData() uses the current device', function () {
    const dev = cuda.Context.getDevice();
    const data = new DeviceData(dev);
    assert.deepStrictEqual(data, new DeviceData(dev.getAttributes()));
    assert.deepStrictEqual(new DeviceData(), data);
    assert.deepStrictEqual(data.computeCapability, dev.computeCapability());
    assert.strictEqual(data.warpsPerMp, dev.maxThreadsPerMultiprocessor / dev.warpSize);
    assert.strictEqual(data.threadBlocksPerMp, dev.maxBlocksPerMultiprocessor);
  });

  // A kernel that uses every register it may (64 live accumulators), and static shared memory.
  const source = (staticSmem) => `
    extern "C" __global__ void hungry(float *out, const float *in, int n) {
      float acc[64];
      #pragma unroll
      for (int i = 0; i < 64; i++) acc[i] = in[threadIdx.x + i * blockDim.x];
      for (int k = 0; k < n; k++) {
        #pragma unroll
        for (int i = 0; i < 64; i++) acc[i] = acc[i] * acc[(i + 7) & 63] + in[k + i];
      }
      float s = 0;
      #pragma unroll
      for (int i = 0; i < 64; i++) s += acc[i];
      ${
        staticSmem
          ? `__shared__ float tile[${staticSmem / 4}];
      tile[threadIdx.x % ${staticSmem / 4}] = s;
      __syncthreads();
      s += tile[(threadIdx.x + 1) % ${staticSmem / 4}];`
          : ''
      }
      out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    }`;

  it('agrees with cuOccupancyMaxActiveBlocksPerMultiprocessor over blocks, shared memory and registers', function () {
    this.timeout(300000);
    const { SourceModule } = require('../../lib/compiler');
    const data = new DeviceData(cuda.Context.getDevice());
    const optin = data.sharedMemoryPerBlockOptin;
    const disagreements = [];
    const registerCounts = new Set();
    let compared = 0;
    for (const staticSmem of [0, 5000]) {
      for (const maxRegs of [0, 24, 33, 40, 64, 72, 96, 128]) {
        const options = maxRegs ? [`--maxrregcount=${maxRegs}`] : [];
        const kernel = new SourceModule(source(staticSmem), { options, noExternC: true }).getFunction('hungry');
        const regs = kernel.numRegs;
        registerCounts.add(regs);
        assert.strictEqual(kernel.sharedSizeBytes, staticSmem);
        kernel.setAttribute(cuda.FunctionAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - staticSmem);
        for (const threads of threadCounts().filter((t) => t <= data.maxThreads)) {
          for (const dynamic of [...smemSizes(optin).filter((s) => s <= optin - staticSmem), optin - staticSmem]) {
            const driver = kernel.maxActiveBlocksPerMultiprocessor(threads, dynamic);
            let ours;
            try {
              ours = new OccupancyRecord(data, threads, staticSmem + dynamic, regs).tbPerMp;
            } catch (error) {
              if (!(error instanceof RangeError)) throw error;
              ours = 0;
            }
            compared++;
            if (ours !== driver) {
              disagreements.push(
                `regs ${regs}, static ${staticSmem}, threads ${threads}, dynamic ${dynamic}: ` +
                  `ours ${ours}, driver ${driver}`,
              );
            }
          }
        }
      }
    }
    assert.ok(registerCounts.size >= 6, `register counts compiled: ${[...registerCounts]}`);
    assert.deepStrictEqual(disagreements.slice(0, 30), [], `${disagreements.length} of ${compared} cases disagree`);
  });

  it(
    'markCudaTest gives the test a current context',
    markCudaTest(function (ctx) {
      assert.strictEqual(cuda.Context.getCurrent(), ctx);
      assert.ok(new DeviceData().warpsPerMp > 0);
    }),
  );
});
