#!/usr/bin/env node
'use strict';
// Copies of pageable host memory (issue 32) over sizes from 64 KiB to 1 GiB, host to device and
// device to host: cudadrv (memcpyHtoD / memcpyDtoH of an ordinary Uint8Array, staged from
// pageableStaging().threshold bytes) and C (bench/copy_floor.c: cuMemcpyHtoD / cuMemcpyDtoH of
// malloc'd memory) taking turns in the same run; then at some sizes the Async forms on a stream
// (then synchronized) and 2D copies of 64 KiB rows out of host rows 64 bytes longer (Memcpy2D,
// C's cuMemcpy2D). Targets: 256 MiB host→device ≥ 2.5× C's bandwidth, device→host ≥ 1.8×, sync
// and async alike, and no size slower than C (≥ 0.95×, for noise). Where python3 has CuPy, its
// copies of NumPy arrays are measured after (bench/cupy_copies.py), for reference.
// Usage: node bench/staging.js [--json] [--threshold BYTES] [--helpers N] [--bufferBytes BYTES]
// [--stand-in]; exits 1 when a target is missed. --threshold, --helpers, --bufferBytes:
// pageableStaging's, for finding where staging pays and what its defaults should be. --stand-in:
// the tests' stand-in driver, which checks the machinery, not the figures.
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { now, buildFloor, startFloor, inTurns, printRows } = require('./turns');

const KIB = 1024;
const SIZES = [64 * KIB, 256 * KIB, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30];
const ROW = 65536; // bytes of a 2D copy's rows (copy_floor.c's ROW)
// the copies measured: what each does, at which sizes, and its target at 256 MiB
const MODES = [
  { key: 'H', name: 'host→device', target: 2.5 },
  { key: 'D', name: 'device→host', target: 1.8 },
  { key: 'h', name: 'host→device async', sizes: [1 << 20, 16 << 20, 256 << 20], target: 2.5 },
  { key: 'd', name: 'device→host async', sizes: [1 << 20, 16 << 20, 256 << 20], target: 1.8 },
  { key: 'p', name: '2D host→device', sizes: [16 << 20, 256 << 20], target: 0.95 },
  { key: 'q', name: '2D device→host', sizes: [16 << 20, 256 << 20], target: 0.95 },
];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-bench-'));

if (process.argv.includes('--stand-in')) {
  const { buildStandIn } = require('../test/support/stand-in-driver');
  const dir = path.join(work, 'stand-in');
  buildStandIn(dir);
  const args = process.argv.slice(1).filter((arg) => arg !== '--stand-in');
  const env = { ...process.env, LD_LIBRARY_PATH: dir, CUDADRV_BENCH_MOST: String(64 << 20) };
  const { status } = spawnSync(process.execPath, args, { stdio: 'inherit', env });
  fs.rmSync(work, { recursive: true, force: true });
  process.exit(status ?? 1);
}

const cuda = require('..');

// Samples for a size: about 2 GiB moved each way, at least 5 and at most 41.
const samplesFor = (bytes) => Math.max(5, Math.min(41, Math.round(2 ** 31 / bytes)));
const gbps = (bytes, ms) => bytes / ms / 1e6;

async function main() {
  const most = Number(process.env.CUDADRV_BENCH_MOST) || SIZES[SIZES.length - 1];
  const sizes = SIZES.filter((n) => n <= most);
  const floor = startFloor(buildFloor('copy_floor', work), [String(most)]);
  const ctx = new cuda.Device(0).retainPrimaryContext();
  ctx.push();
  const device = cuda.memAlloc(most);
  const host = new Uint8Array(most + (most / ROW) * 64 + ROW).fill(1);
  const stream = new cuda.Stream();
  const option = (name) => {
    const at = process.argv.indexOf(`--${name}`);
    return at > 0 ? { [name]: Number(process.argv[at + 1]) } : {};
  };
  const staging = cuda.pageableStaging({ ...option('threshold'), ...option('helpers'), ...option('bufferBytes') });
  const rows = [];
  const results = [];
  for (const mode of MODES) {
    for (const bytes of sizes.filter((n) => !mode.sizes || mode.sizes.includes(n))) {
      const copy = copier(mode.key, device, host, bytes, stream);
      const js = () => {
        const start = now();
        copy();
        return now() - start;
      };
      const c = async () => (await floor.step(`${mode.key} ${bytes}`))[0];
      await js();
      await c();
      const t = await inTurns(samplesFor(bytes), js, c);
      const ratio = 1 / t.ratio; // bandwidth: C's time over ours
      const min = bytes === 256 << 20 ? mode.target : 0.95;
      const name = `${bytes >= 1 << 20 ? `${bytes / 2 ** 20} MiB` : `${bytes / KIB} KiB`} ${mode.name}`;
      const staged = bytes >= staging.threshold && staging.enabled;
      const direction = mode.key.toUpperCase() === 'D' || mode.key === 'q' ? 'D' : 'H';
      results.push({
        mode: mode.key,
        direction,
        bytes,
        staged,
        cudadrv: gbps(bytes, t.js),
        c: gbps(bytes, t.c),
        ratio,
        min,
      });
      rows.push([
        `${name}${staged ? '' : ' (driver)'}`,
        `${gbps(bytes, t.js).toFixed(2)} GB/s vs C ${gbps(bytes, t.c).toFixed(2)} GB/s = ${ratio.toFixed(2)}×`,
        `≥ ${min}×`,
        ratio >= min,
      ]);
    }
  }
  floor.end();
  cuda.Context.pop();
  const cupy = cupyFigures(sizes);
  results.forEach((result, i) => {
    if (!'HD'.includes(result.mode)) return; // CuPy's are its synchronous copies
    result.cupy = cupy.figures?.[result.direction][result.bytes];
    if (result.cupy) rows[i][1] += `, CuPy ${result.cupy.toFixed(2)}`;
  });
  if (process.argv.includes('--json')) console.log(JSON.stringify({ staging, cupy: cupy.version, results }));
  printRows(`pageable copies, cudadrv (staging ${JSON.stringify(staging)}) and C in turns; ${cupy.note}`, rows);
  return rows.every((row) => row[3]);
}

// The copy of bytes that mode (a key of MODES) makes, as a function.
function copier(mode, device, host, bytes, stream) {
  const view = host.subarray(0, bytes);
  if (mode === 'H') return () => cuda.memcpyHtoD(device, view);
  if (mode === 'D') return () => cuda.memcpyDtoH(view, device);
  if (mode === 'h') return () => (cuda.memcpyHtoDAsync(device, view, stream), stream.synchronize());
  if (mode === 'd') return () => (cuda.memcpyDtoHAsync(view, device, stream), stream.synchronize());
  const plane = new cuda.Memcpy2D();
  if (mode === 'p') {
    plane.setSrcHost(host);
    plane.setDstDevice(device);
  } else {
    plane.setSrcDevice(device);
    plane.setDstHost(host);
  }
  plane.srcPitch = mode === 'p' ? ROW + 64 : ROW;
  plane.dstPitch = mode === 'p' ? ROW : ROW + 64;
  plane.widthInBytes = ROW;
  plane.height = bytes / ROW;
  return () => plane.run({ aligned: true });
}

// CuPy's GB/s for each size and direction, where python3 has it: { figures, version, note }.
function cupyFigures(sizes) {
  const run = spawnSync('python3', [path.join(__dirname, 'cupy_copies.py'), ...sizes.map(String)], {
    encoding: 'utf8',
    timeout: 600000,
  });
  if (run.status !== 0) {
    const why = run.error ? run.error.message : run.stderr.trim().split('\n').pop();
    return { note: `CuPy not measured (${why})` };
  }
  const { cupy: version, ...figures } = JSON.parse(run.stdout);
  return { figures, version, note: `CuPy ${version} after, in the same process of its own` };
}

main()
  .then((ok) => {
    fs.rmSync(work, { recursive: true, force: true });
    process.exitCode = ok ? 0 : 1;
  })
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
