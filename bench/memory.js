#!/usr/bin/env node
'use strict';
// Host↔device copy bandwidth through cudadrv, beside the same copies made from C
// (bench/memcpy_floor.c, built here with cc at bench time) in the same run: pageable and pinned
// host memory, both directions, synchronous (memcpyHtoD/DtoH) and on a non-blocking stream
// (memcpy*Async, then one synchronize). Each line is the median of SAMPLES batches of REPS copies
// on the device's primary context, as the C side does.
//
//   node bench/memory.js [--json] [--quick]
//
// --json prints every sample; --quick measures fewer sizes and samples.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const cuda = require('..');

const ROOT = path.join(__dirname, '..');
const SOURCE = path.join(__dirname, 'memcpy_floor.c');
const BINARY = path.join(ROOT, 'build', 'bench', 'memcpy_floor');
const quick = process.argv.includes('--quick');
const json = process.argv.includes('--json');
const SAMPLES = quick ? 3 : 7;
const SIZES = quick ? [1 << 20, 64 << 20] : [64 << 10, 1 << 20, 16 << 20, 128 << 20];
// about 1 GiB a batch, at least 4 copies
const repsFor = (size) => Math.max(4, Math.min(2000, Math.floor(2 ** 30 / size)));

function buildFloor() {
  const include = execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'find-cuda.js')]).toString();
  fs.mkdirSync(path.dirname(BINARY), { recursive: true });
  execFileSync('cc', ['-O2', '-Wall', `-I${include}`, SOURCE, '-ldl', '-o', BINARY], { stdio: 'inherit' });
}

function runFloor() {
  const args = [String(SAMPLES), ...SIZES.map((size) => `${size}:${repsFor(size)}`)];
  return JSON.parse(execFileSync(BINARY, args, { maxBuffer: 1 << 24 }).toString());
}

// The same measurements through cudadrv.
function runCudadrv() {
  const results = [];
  const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
  for (const size of SIZES) {
    const reps = repsFor(size);
    const device = cuda.memAlloc(size);
    const memories = { pageable: new Uint8Array(size).fill(0x5a), pinned: cuda.pagelockedEmpty(size, 'uint8').fill(0xa5) };
    const copies = {
      HtoD: { sync: (host) => cuda.memcpyHtoD(device, host), async: (host) => cuda.memcpyHtoDAsync(device, host, stream) },
      DtoH: { sync: (host) => cuda.memcpyDtoH(host, device), async: (host) => cuda.memcpyDtoHAsync(host, device, stream) },
    };
    for (const direction of ['HtoD', 'DtoH']) {
      for (const memory of ['pageable', 'pinned']) {
        for (const mode of ['sync', 'async']) {
          const copy = copies[direction][mode];
          const host = memories[memory];
          const batch = (count) => {
            const start = process.hrtime.bigint();
            for (let i = 0; i < count; i++) copy(host);
            if (mode === 'async') stream.synchronizeSync();
            return Number(process.hrtime.bigint() - start) / 1e9;
          };
          batch(1); // warm-up
          const seconds = Array.from({ length: SAMPLES }, () => batch(reps));
          results.push({ size, direction, memory, mode, reps, seconds });
        }
      }
    }
    cuda.hostAllocationOf(memories.pinned).free();
    device.free();
  }
  stream.destroy();
  return results;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const gbps = (line) => (line.size * line.reps) / median(line.seconds) / 1e9;
const label = (size) => (size >= 1 << 20 ? `${size / (1 << 20)} MiB` : `${size / 1024} KiB`);

function main() {
  if (!cuda.isAvailable()) {
    console.error('memory bench: no CUDA driver or device here');
    process.exit(1);
  }
  buildFloor();
  const floor = runFloor();
  const device = new cuda.Device(0);
  const context = device.retainPrimaryContext();
  context.push();
  let ours;
  try {
    ours = runCudadrv();
  } finally {
    cuda.Context.pop();
    context.detach();
  }
  const key = (line) => `${line.size} ${line.direction} ${line.memory} ${line.mode}`;
  const c = new Map(floor.results.map((line) => [key(line), line]));
  const rows = ours.map((line) => {
    const theirs = c.get(key(line));
    return {
      size: line.size, direction: line.direction, memory: line.memory, mode: line.mode,
      cudadrv: gbps(line), c: theirs ? gbps(theirs) : NaN,
      samples: { cudadrv: line.seconds, c: theirs ? theirs.seconds : [] }, reps: line.reps,
    };
  });
  if (json) {
    console.log(JSON.stringify({ device: device.name(), floorDevice: floor.device, rows }, null, 2));
    return;
  }
  console.log(`${device.name()}: host↔device copies, GB/s (median of ${SAMPLES} batches of ~1 GiB); ratio = cudadrv time / C time`);
  console.log('| size | direction | host memory | mode | cudadrv | C | ratio |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) {
    console.log(`| ${label(row.size)} | ${row.direction} | ${row.memory} | ${row.mode} | ` +
      `${row.cudadrv.toFixed(2)} | ${row.c.toFixed(2)} | ${(row.c / row.cudadrv).toFixed(3)} |`);
  }
}

main();
