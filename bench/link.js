#!/usr/bin/env node
'use strict';
// The linker's performance targets (issue 15), measured side by side with nvJitLink called from C
// on the same inputs with the same options, in the same run (bench/nvjitlink_floor.c, built here
// with cc, loading the nvJitLink file cudadrv loaded):
//   cold link             ≤ 1.05 × the C time: two small LTO-IR modules, a new Linker given both
//                         and link() (cache on, entry missing: copies, key, link, store)
//   in-process cache hit  ≤ 0.05 ms: the same Linker code, the cubin found in memory
// and, for reference, cold links with the cache off (copies and link only), and what the isolated
// mode (a helper process) adds to a link.
// No GPU needed. Usage: node bench/link.js [--json]. Pinned to one core, the ratio is steadier
// (taskset -c 3 node bench/link.js: both sides link on the same core, taking turns).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { median, now, buildFloor, startFloor, inTurns, isolatedCost, isolatedRows, printRows } = require('./turns');
const binding = require('../lib/internal/binding');
const compiler = require('../lib/compiler');
const { nvJitLinkLibrary } = require('../lib/compiler/linker');

const { Linker, compileSync } = compiler;
const cache = require('../lib/compiler/cache');
const json = process.argv.includes('--json');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-bench-'));
const cacheDir = path.join(work, 'cache');
const ARCH = 'sm_90';
const COLD_SAMPLES = 60;

// Two small modules: device functions in one, the kernels calling them in the other.
const FUNCTIONS = `
extern "C" __device__ float smooth(float x) { return x * x * (3.0f - 2.0f * x); }
extern "C" __device__ float mix(float a, float b, float t) { return a + (b - a) * smooth(t); }
extern "C" __device__ float wave(float x) { return sinf(x) * expf(-0.1f * x * x); }
`;
const KERNELS = `
extern "C" __device__ float smooth(float x);
extern "C" __device__ float mix(float a, float b, float t);
extern "C" __device__ float wave(float x);
extern "C" __global__ void blend(const float *a, const float *b, float *out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = mix(a[i], b[i], wave(a[i] - b[i]));
}
extern "C" __global__ void shape(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = smooth(p[i]) + wave(p[i]);
}
`;

// The inputs, as LTO-IR Buffers and as files for C.
function inputs() {
  return [
    ['functions.ltoir', FUNCTIONS],
    ['kernels.ltoir', KERNELS],
  ].map(([name, source]) => {
    const data = compileSync(source, { arch: ARCH, lto: true, cacheDir });
    const file = path.join(work, name);
    fs.writeFileSync(file, data);
    return { name, data, file };
  });
}

// A user's link: a Linker given both inputs (copied), then link().
const linker = (items, opts) =>
  items.reduce((made, item) => made.add(item.data, { name: item.name }), new Linker(opts));
const link = (items, opts) => linker(items, opts).link();

// The cache's files that a link of items writes: those that appear after one.
function entryFiles(items, opts) {
  const before = new Set(fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir) : []);
  link(items, opts);
  cache.clearMemory(); // once the entry is written
  return fs
    .readdirSync(cacheDir)
    .filter((name) => !before.has(name))
    .map((name) => path.join(cacheDir, name));
}

// Cold links in turns with C: with the cache on (its entry removed before each: copies, key,
// link, store) and with it off (copies, link), so that the cache's part shows.
async function coldLinks(floorExe, items) {
  const opts = { arch: ARCH, lto: true, cacheDir };
  const entries = entryFiles(items, opts); // nvJitLink warm in this process too
  if (entries.length !== 1) throw new Error(`expected one cache entry per link, found ${entries.length}`);
  const floor = startFloor(floorExe, [
    nvJitLinkLibrary().path,
    `-arch=${ARCH}`,
    '-lto',
    '--',
    ...items.map((item) => item.file),
  ]);
  const [, cSize] = await floor.step(); // nvJitLink warm in the C process
  // cudadrv's own part of a link: all but the time inside the addon's call that links
  const linkCall = binding.link;
  let inside = 0;
  binding.link = (...args) => {
    const start = now();
    try {
      return linkCall(...args);
    } finally {
      inside = now() - start;
    }
  };
  const inTurnsWithC = async (linkOpts, before) => {
    const own = [];
    let size = 0;
    const times = await inTurns(
      COLD_SAMPLES,
      () => {
        before();
        const start = now();
        size = link(items, linkOpts).length;
        const time = now() - start;
        own.push(time - inside);
        return time;
      },
      async () => (await floor.step())[0],
    );
    // the same work on both sides: cubins of one size
    if (size !== cSize) throw new Error(`cudadrv linked ${size} bytes, C ${cSize}: not the same link`);
    return { ...times, own: median(own), size };
  };
  const cached = await inTurnsWithC(opts, () => {
    cache.clearMemory(); // once the last entry is written
    fs.rmSync(entries[0], { force: true });
  });
  const uncached = await inTurnsWithC({ ...opts, cacheDir: false }, () => {});
  binding.link = linkCall;
  floor.end();
  return { cached, uncached };
}

function memoryHit(items) {
  const opts = { arch: ARCH, lto: true, cacheDir };
  const links = cache.stats.links;
  for (let i = 0; i < 1000; i++) link(items, opts);
  const n = 20000;
  const start = now();
  for (let i = 0; i < n; i++) link(items, opts);
  const each = (now() - start) / n;
  if (cache.stats.links !== links) throw new Error('a cached link linked again');
  return each;
}

async function main() {
  const floor = buildFloor('nvjitlink_floor', work);
  const items = inputs();
  const { cached: cold, uncached } = await coldLinks(floor, items);
  const hit = memoryHit(items);
  const plain = { arch: ARCH, lto: true, cacheDir: false };
  const isolated = await isolatedCost(
    20,
    () => linker(items, plain).linkAsync(),
    () => linker(items, { ...plain, isolated: true }).linkAsync(),
    () => link(items, { ...plain, isolated: true }),
  );
  fs.rmSync(work, { recursive: true, force: true });
  const nvjitlink = nvJitLinkLibrary().version.join('.');
  if (json) {
    console.log(JSON.stringify({ nvjitlink, arch: ARCH, cold, uncached, hitMs: hit, isolated }));
    return;
  }
  const inputBytes = items.map((item) => item.data.length).join(' + ');
  printRows(
    `cudadrv linker benchmarks: nvJitLink ${nvjitlink}, ${ARCH}, LTO-IR of ${inputBytes} bytes into a ` +
      `${cold.size}-byte cubin, ${os.cpus()[0].model}, Node ${process.version}`,
    [
      ['cold link, cudadrv / C (median of paired ratios)', `${cold.ratio.toFixed(3)}x`, '<= 1.05x', cold.ratio <= 1.05],
      ['cold link, medians (cudadrv, C)', `${cold.js.toFixed(2)} ms, ${cold.c.toFixed(2)} ms`, '(for reference)', true],
      [
        'cold link, fastest (cudadrv, C)',
        `${cold.jsMin.toFixed(2)} ms, ${cold.cMin.toFixed(2)} ms`,
        '(for reference)',
        true,
      ],
      [
        "cold link, cudadrv's own work (copies, key, cache)",
        `${cold.own.toFixed(3)} ms = ${((cold.own / cold.c) * 100).toFixed(2)}% of C`,
        '(for reference)',
        true,
      ],
      [
        'cold link, cache off, cudadrv / C',
        `${uncached.ratio.toFixed(3)}x (own work ${uncached.own.toFixed(3)} ms)`,
        '(for reference)',
        true,
      ],
      ['in-process cache hit (new Linker, add, link)', `${(hit * 1000).toFixed(1)} us`, '<= 50 us', hit <= 0.05],
      ...isolatedRows(isolated, 'linkAsync()', 'link()'),
    ],
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
