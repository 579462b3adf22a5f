#!/usr/bin/env node
'use strict';
// The compiler's performance targets (issue 4), measured side by side with NVRTC called from C
// on the same source with the same options, in the same run (bench/nvrtc_floor.c, built here
// with cc):
//   cold compile          ≤ 1.05 × the C time (cache on, entry missing: key, compile, store; the
//                         entry's file is written by the addon's writer thread, as for a user)
//   in-process cache hit  ≤ 0.05 ms
//   on-disk hit           ≤ 2 ms, the first compile of a new process (after require), which
//                         finds the entry an earlier process left on disk
//   timer lag             ≤ 5 ms while a one-second compile runs asynchronously
// and, for reference, what the isolated mode (a helper process) adds to a compile.
// Lateness is also measured with nothing running, to show the machine's own timer jitter.
// No GPU needed. Usage: node bench/compile.js [--json]. Pinned to one core, the ratios are steadier
// (taskset -c 3 node bench/compile.js: both sides compile on the same core, taking turns), and the
// timer lag is left out, since the event loop and the compile then share that core.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { median, now, buildFloor, startFloor, inTurns, isolatedCost, isolatedRows, printRows } = require('./turns');
const binding = require('../lib/internal/binding');
const compiler = require('../lib/compiler');

const cache = require('../lib/compiler/cache');
const { request } = require('../lib/compiler/request');
const json = process.argv.includes('--json');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-bench-'));
const cacheDir = path.join(work, 'cache');
const ARCH = 'sm_90'; // a cubin, as on an H100; NVRTC 12 and 13 both compile it
const COLD_SAMPLES = 60;

// A typical source: a tiled matrix multiply, a reduction and an elementwise kernel.
const SOURCE = `
#define TILE 16
__global__ void matmul(const float *a, const float *b, float *c, int n) {
  __shared__ float as[TILE][TILE], bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float sum = 0;
  for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
    as[threadIdx.y][threadIdx.x] = row < n && t * TILE + threadIdx.x < n ? a[row * n + t * TILE + threadIdx.x] : 0;
    bs[threadIdx.y][threadIdx.x] = col < n && t * TILE + threadIdx.y < n ? b[(t * TILE + threadIdx.y) * n + col] : 0;
    __syncthreads();
    for (int k = 0; k < TILE; k++) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = sum;
}
__global__ void reduce(const float *in, float *out, int n) {
  extern __shared__ float s[];
  int i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  float v = i < n ? in[i] : 0;
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 32; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] = v = v + s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    for (int k = 32; k > 0; k >>= 1) v += __shfl_down_sync(0xffffffff, v, k);
    if (threadIdx.x == 0) atomicAdd(out, v);
  }
}
__global__ void saxpy(float a, const float *x, float *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i] + sinf(x[i]) * expf(-y[i]);
}
`;

// A source NVRTC takes about a second over (unrolled transcendental arithmetic), with a constant
// of this run's own: on the H100 host a second run's compile of the very same text once took 20 ms.
const HEAVY = `
__global__ void heavy(float *out, const float *in) {
  float acc = in[threadIdx.x];
  #pragma unroll
  for (int i = 0; i < 50; i++) acc = acc * in[(i * 7) & 255] + sinf(acc + i) * ${Math.random().toFixed(9)}f;
  out[threadIdx.x] = acc;
}`;

// Cold compiles: cudadrv (cache on, the entry removed before each: key, compile, store) and C,
// in turns (turns.js).
async function coldCompile(floorExe) {
  const opts = { arch: ARCH, cacheDir };
  const req = request(SOURCE, opts);
  const sourceFile = path.join(work, 'source.cu');
  fs.writeFileSync(sourceFile, req.source);
  const entry = path.join(cacheDir, cache.entryName(req.key));
  const floor = startFloor(floorExe, [sourceFile, req.name, req.cubin ? '1' : '0', ...req.options]);
  // cudadrv's own part of a compile: all but the time inside the addon's call to NVRTC
  const nvrtcCompile = binding.nvrtcCompile;
  let inside = 0;
  binding.nvrtcCompile = (...args) => {
    const start = now();
    try {
      return nvrtcCompile(...args);
    } finally {
      inside = now() - start;
    }
  };
  const own = [];
  compiler.compileSync(SOURCE, opts); // NVRTC warm in this process
  await floor.step(); // and in the C one
  const times = await inTurns(
    COLD_SAMPLES,
    () => {
      cache.clearMemory(); // once the last entry is written
      fs.rmSync(entry, { force: true });
      const start = now();
      compiler.compileSync(SOURCE, opts);
      const time = now() - start;
      own.push(time - inside);
      return time;
    },
    async () => (await floor.step())[0],
  );
  binding.nvrtcCompile = nvrtcCompile;
  floor.end();
  return { ...times, own: median(own) };
}

function memoryHit() {
  const opts = { arch: ARCH, cacheDir };
  compiler.compileSync(SOURCE, opts);
  for (let i = 0; i < 1000; i++) compiler.compileSync(SOURCE, opts);
  const n = 20000;
  const start = now();
  for (let i = 0; i < n; i++) compiler.compileSync(SOURCE, opts);
  return (now() - start) / n;
}

// New processes whose first compile finds its entry on disk (the first of them left out: it warms
// the page cache); also a second source's disk hit in the same process (Node and V8 warm by then),
// and how long the require took.
function diskHit() {
  const other = `${SOURCE}\n// another source\n`;
  compiler.compileSync(other, { arch: ARCH, cacheDir });
  const script = `
    const now = () => Number(process.hrtime.bigint()) / 1e6;
    let start = now();
    const compiler = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'compiler'))});
    const required = now() - start;
    const opts = { arch: ${JSON.stringify(ARCH)}, cacheDir: ${JSON.stringify(cacheDir)} };
    start = now();
    compiler.compileSync(${JSON.stringify(SOURCE)}, opts);
    const first = now() - start;
    start = now();
    compiler.compileSync(${JSON.stringify(other)}, opts);
    const second = now() - start;
    const { diskHits, compiles } = cache.stats;
    console.log(JSON.stringify({ required, first, second, diskHits, compiles }));`;
  const required = [];
  const first = [];
  const second = [];
  for (let i = 0; i < 12; i++) {
    const run = JSON.parse(execFileSync(process.execPath, ['-e', script]).toString());
    if (run.diskHits !== 2 || run.compiles !== 0) throw new Error(`expected two disk hits: ${JSON.stringify(run)}`);
    if (i === 0) continue;
    required.push(run.required);
    first.push(run.first);
    second.push(run.second);
  }
  return { required: median(required), first: median(first), second: median(second) };
}

// Timers every millisecond while work() runs: the largest and the 99th-percentile lateness.
async function timerLag(work) {
  const lags = [];
  let expected = now() + 1;
  const timer = setInterval(() => {
    const t = now();
    lags.push(t - expected);
    expected = t + 1;
  }, 1);
  const start = now();
  await work();
  const seconds = (now() - start) / 1000;
  clearInterval(timer);
  lags.sort((a, b) => a - b);
  return { seconds, ticks: lags.length, max: lags[lags.length - 1], p99: lags[Math.floor(lags.length * 0.99)] };
}

async function main() {
  const floor = buildFloor('nvrtc_floor', work);
  const cold = await coldCompile(floor);
  const hit = memoryHit();
  const disk = diskHit();
  const uncached = { arch: ARCH, cacheDir: false };
  const isolated = await isolatedCost(
    20,
    () => compiler.compile(SOURCE, uncached),
    () => compiler.compile(SOURCE, { ...uncached, isolated: true }),
    () => compiler.compileSync(SOURCE, { ...uncached, isolated: true }),
  );
  // The event loop stays free while a compile runs on a thread of its own, given a processor for
  // each: pinned to one (as for steady ratios), they share it, and lateness says nothing of cudadrv.
  const cpus = os.availableParallelism ? os.availableParallelism() : os.cpus().length;
  const lag = cpus > 1 ? await timerLag(() => compiler.compile(HEAVY, { arch: ARCH, cacheDir: false })) : null;
  // the same timers with nothing else running: the machine's own jitter
  const idle = lag && (await timerLag(() => new Promise((resolve) => setTimeout(resolve, lag.seconds * 1000))));
  fs.rmSync(work, { recursive: true, force: true });
  const rows = [
    [
      'cold compile, cudadrv / C (median of paired ratios)',
      `${cold.ratio.toFixed(3)}x`,
      '<= 1.05x',
      cold.ratio <= 1.05,
    ],
    [
      'cold compile, medians (cudadrv, C)',
      `${cold.js.toFixed(2)} ms, ${cold.c.toFixed(2)} ms`,
      '(for reference)',
      true,
    ],
    [
      'cold compile, fastest (cudadrv, C)',
      `${cold.jsMin.toFixed(2)} ms, ${cold.cMin.toFixed(2)} ms`,
      '(for reference)',
      true,
    ],
    [
      "cold compile, cudadrv's own work (key, cache, copies)",
      `${cold.own.toFixed(3)} ms = ${((cold.own / cold.c) * 100).toFixed(2)}% of C`,
      '(for reference)',
      true,
    ],
    ['in-process cache hit', `${(hit * 1000).toFixed(1)} us`, '<= 50 us', hit <= 0.05],
    ['on-disk hit, new process (first compile)', `${disk.first.toFixed(2)} ms`, '<= 2 ms', disk.first <= 2],
    ['on-disk hit, same new process (second source)', `${disk.second.toFixed(2)} ms`, '(for reference)', true],
    ["require('cudadrv/compiler'), new process", `${disk.required.toFixed(2)} ms`, '(for reference)', true],
    ...isolatedRows(isolated, 'compile()', 'compileSync'),
    ...(lag
      ? [
          [
            `timer lag during a ${lag.seconds.toFixed(2)} s compile()`,
            `max ${lag.max.toFixed(2)} ms, p99 ${lag.p99.toFixed(2)} ms (${lag.ticks} ticks)`,
            '<= 5 ms',
            lag.max <= 5,
          ],
          [
            "timer lag, idle (the machine's own jitter)",
            `max ${idle.max.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms (${idle.ticks} ticks)`,
            '(for reference)',
            true,
          ],
        ]
      : [['timer lag during a compile()', 'not measured: one processor (run unpinned)', '<= 5 ms', true]]),
  ];
  const nvrtc = compiler.nvrtcVersion().join('.');
  if (json) {
    console.log(JSON.stringify({ nvrtc, arch: ARCH, cold, hitMs: hit, disk, isolated, lag, idle }));
    return;
  }
  printRows(
    `cudadrv compiler benchmarks: NVRTC ${nvrtc}, ${ARCH}, ${os.cpus()[0].model}, Node ${process.version}`,
    rows,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
