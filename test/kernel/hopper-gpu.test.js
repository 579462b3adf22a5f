'use strict';
// Launch attributes on a GPU of compute capability 9.0 or newer: programmatic dependent launch
// shown by the GPU's clock (the secondary starts before the primary's blocks end; without the
// attribute it starts after), the events of a launch, and the other attributes' launches, every
// result checked against the CPU on random data.
const assert = require('assert');
const cuda = require('../..');
const { SourceModule } = require('../../lib/compiler');
const { describeGpu } = require('../support/gpu');

const KERNELS = `
#include <cudadrv/launch.cuh>
// mid = 2 * in, then each block notes when it triggers its dependents in triggered[block], spins
// for spin ns, and notes when it ended in ends[block]
__global__ void primary(const float *in, float *mid, unsigned long long *triggered, unsigned long long *ends,
                        unsigned long long spin) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  mid[i] = 2.0f * in[i];
  __syncthreads();
  if (threadIdx.x == 0) triggered[blockIdx.x] = cudadrv::globalTimer();
  cudadrv::triggerProgrammaticLaunchCompletion();
  unsigned long long t0 = cudadrv::globalTimer();
  while (cudadrv::globalTimer() - t0 < spin) {}
  if (threadIdx.x == 0) ends[blockIdx.x] = cudadrv::globalTimer();
}
// out = mid + 1 once the primary has ended; start[0]: when its first block began
__global__ void secondary(const float *mid, float *out, unsigned long long *start) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *start = cudadrv::globalTimer();
  cudadrv::gridDependencySynchronize();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = mid[i] + 1.0f;
}
// when it began, and nothing else: for kernels on another stream waiting on an event
__global__ void stamp(unsigned long long *start) { *start = cudadrv::globalTimer(); }
// y = a * x + y
__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], y[i]);
}`;

// Each block of 128 threads copies the 16 x 8 tile (x, y) = (16 * blockIdx.x, 8 * blockIdx.y) of
// map's tensor into shared memory with one bulk tensor copy, then to out (rows of width floats).
const TMA_KERNEL = `
#include <cudadrv/tma.cuh>
extern "C" __global__ void tiles(const __grid_constant__ cudadrv::TensorMap map, float *out, int width) {
  __shared__ alignas(128) float tile[8][16];
  __shared__ unsigned long long arrived;
  if (threadIdx.x == 0) cudadrv::barrierInit(&arrived, 1);
  __syncthreads();
  if (threadIdx.x == 0) cudadrv::loadTile2D(tile, &map, 16 * blockIdx.x, 8 * blockIdx.y, &arrived, sizeof tile);
  cudadrv::barrierWait(&arrived, 0);
  int x = threadIdx.x % 16, y = threadIdx.x / 16;
  out[(8 * blockIdx.y + y) * width + 16 * blockIdx.x + x] = tile[y][x];
}`;

const BLOCKS = 64;
const THREADS = 256;
const N = BLOCKS * THREADS;
const SPIN_NS = 2e6; // each primary block runs 2 ms after it triggers
const random = (n) => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);

describeGpu('launch attributes on a Hopper or newer GPU', function () {
  this.timeout(120000);
  let mod, input, inDevice, mid, out, triggered, ends, start, stream;
  before(function () {
    const [major] = cuda.Context.getDevice().computeCapability();
    if (major < 9) {
      console.log(`      (skipped: compute capability ${major}.x; these attributes need 9.0 or newer)`);
      this.skip();
    }
    mod = new SourceModule(KERNELS);
    input = random(N);
    inDevice = cuda.toDevice(input);
    mid = cuda.memAlloc(4 * N);
    out = cuda.memAlloc(4 * N);
    triggered = cuda.memAlloc(8 * BLOCKS);
    ends = cuda.memAlloc(8 * BLOCKS);
    start = cuda.memAlloc(8);
    stream = new cuda.Stream();
    cuda.memcpyHtoD(mid, new Float32Array(N));
    // A kernel's first launch loads it (CUDA loads lazily), which waits for the work running on
    // the device: a dependent's first launch could not overlap. Launch each once first.
    mod.getFunction('secondary')(mid, out, start, { block: THREADS, grid: BLOCKS, stream });
    mod.getFunction('stamp')(start, { block: 1, stream });
    primary();
  });

  const expected = () => input.map((v) => Math.fround(Math.fround(2 * v) + 1));
  const primary = (options = {}) =>
    mod.getFunction('primary')(inDevice, mid, triggered, ends, cuda.uint64(BigInt(SPIN_NS)), {
      block: THREADS,
      grid: BLOCKS,
      stream,
      ...options,
    });
  const last = (memory) => cuda.fromDevice(memory, BLOCKS, 'uint64').reduce((a, b) => (a > b ? a : b));
  // [when the first dependent began, when the primary's last block ended, when it last triggered]
  async function times() {
    await stream.synchronize();
    return [cuda.fromDevice(start, 1, 'uint64')[0], last(ends), last(triggered)];
  }

  it('programmaticStreamSerialization: the secondary starts before the primary ends, and reads what it wrote; without it, after', async function () {
    for (const overlap of [true, false]) {
      cuda.memsetD8(out, 0, 4 * N);
      primary();
      mod.getFunction('secondary')(mid, out, start, {
        block: THREADS,
        grid: BLOCKS,
        stream,
        programmaticStreamSerialization: overlap,
      });
      const [began, ended] = await times();
      if (overlap) assert.ok(began < ended, `the secondary began ${began - ended} ns after the primary ended`);
      else assert.ok(began >= ended, `without the attribute, the secondary began ${ended - began} ns early`);
      assert.deepStrictEqual(cuda.fromDevice(out, N, 'float32'), expected());
    }
  });

  // A programmatic event fires once every block has triggered; the driver allows a kernel waiting
  // on it to start then, but does not promise to (580 on an H100 starts it after the primary ends).
  // A launch completion event fires once every block has started: that kernel starts early.
  for (const [key, option, early] of [
    ['programmaticEvent', (event) => ({ programmaticEvent: { event } }), false],
    ['completionEvent', (event) => ({ completionEvent: event }), true],
  ]) {
    const when = early ? 'before the primary ends' : 'after every block of the primary triggered';
    it(`${key}: a kernel on another stream waiting on it starts ${when}`, async function () {
      const other = new cuda.Stream();
      const event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      primary(option(event));
      other.waitForEvent(event);
      mod.getFunction('stamp')(start, { block: 1, stream: other });
      await other.synchronize();
      const [began, ended, lastTrigger] = await times();
      if (early) assert.ok(began < ended, `the waiting kernel began ${began - ended} ns after the primary ended`);
      else
        assert.ok(began >= lastTrigger, `the waiting kernel began ${lastTrigger - began} ns before the last trigger`);
      assert.deepStrictEqual(
        cuda.fromDevice(mid, N, 'float32'),
        input.map((v) => Math.fround(2 * v)),
      );
    });
  }

  it('cluster occupancy: the largest cluster launches and computes right; the shared memory left per block fits that many blocks', async function () {
    const saxpy = mod.getFunction('saxpy');
    const size = saxpy.maxPotentialClusterSize({ block: THREADS });
    assert.ok(size >= 8, `the portable size at least, not ${size}`);
    const active = saxpy.maxActiveClusters({ grid: 8 * size, block: THREADS, cluster: size });
    assert.ok(active >= 1 && active * size <= 132 * 32, String(active));
    const x = random(N);
    const y = random(N);
    const a = Math.fround(Math.random() * 4 - 2);
    const dy = cuda.toDevice(y);
    const grid = Math.ceil(BLOCKS / size) * size;
    saxpy(cuda.float32(a), cuda.toDevice(x), dy, cuda.int32(N), { block: THREADS, grid, cluster: size, stream });
    await stream.synchronize();
    assert.deepStrictEqual(
      cuda.fromDevice(dy, N, 'float32'),
      y.map((v, i) => Math.fround(a * x[i] + v)),
    );
    for (const blocks of [1, 2, 4]) {
      const bytes = saxpy.availableDynamicSharedMemoryPerBlock(blocks, THREADS);
      assert.ok(saxpy.maxActiveBlocksPerMultiprocessor(THREADS, bytes) >= blocks, `${blocks} blocks of ${bytes} bytes`);
    }
  });

  it("a TMA tensor map: tiles copied by cp.async.bulk.tensor are the CPU's, zeros past the edges; replaceAddress moves it", async function () {
    const tma = new SourceModule(TMA_KERNEL).getFunction('tiles');
    const rows = 40 + Math.floor(Math.random() * 40);
    const cols = 16 * (2 + Math.floor(Math.random() * 6)) + 4; // not a whole number of tiles
    const [gx, gy] = [Math.ceil(cols / 16), Math.ceil(rows / 8)];
    const check = async (host, memory, map) => {
      const out = cuda.memAlloc(4 * gx * 16 * gy * 8);
      tma(map, out, cuda.int32(gx * 16), { block: 128, grid: [gx, gy], stream });
      await stream.synchronize();
      const want = new Float32Array(gx * 16 * gy * 8);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) want[r * gx * 16 + c] = host[r * cols + c];
      assert.deepStrictEqual(cuda.fromDevice(out, want.length, 'float32'), want);
    };
    const a = random(rows * cols);
    const b = random(rows * cols);
    const [da, db] = [cuda.toDevice(a), cuda.toDevice(b)];
    // rows of cols floats are 16-byte multiples only when cols is a multiple of 4: it is
    const map = cuda.TensorMap.tiled({ memory: da, dataType: 'float32', globalDim: [cols, rows], boxDim: [16, 8] });
    await check(a, da, map);
    await check(b, db, map.replaceAddress(db));
  });

  it('priority, cluster scheduling, memory sync domain and carveout: launches compute what the CPU does', async function () {
    const saxpy = mod.getFunction('saxpy');
    const [low, high] = cuda.Context.getStreamPriorityRange();
    const cases = [
      { priority: high },
      { priority: low, memSyncDomain: 'remote' },
      { cluster: 2, clusterSchedulingPolicy: 'spread' },
      { cluster: 2, clusterSchedulingPolicy: 'load-balancing', sharedMemoryCarveout: 50 },
      { sharedMemoryCarveout: 0, memSyncDomain: 'default' },
      { sharedMemoryCarveout: 100, preferredCluster: 4, cluster: 2 },
    ];
    const prepared = mod.getFunction('saxpy').prepare('fPPi');
    for (const attributes of cases) {
      for (const how of ['call', 'prepared']) {
        const x = random(N);
        const y = random(N);
        const a = Math.fround(Math.random() * 4 - 2);
        const [dx, dy] = [cuda.toDevice(x), cuda.toDevice(y)];
        if (how === 'call') {
          saxpy(cuda.float32(a), dx, dy, cuda.int32(N), { block: THREADS, grid: BLOCKS, stream, ...attributes });
        } else {
          prepared.preparedAsyncCall(BLOCKS, THREADS, stream, a, dx, dy, N, attributes);
        }
        await stream.synchronize();
        const want = y.map((v, i) => Math.fround(a * x[i] + v));
        assert.deepStrictEqual(cuda.fromDevice(dy, N, 'float32'), want, `${how} ${JSON.stringify(attributes)}`);
      }
    }
  });
});
