#!/usr/bin/env node
'use strict';
// Launch cost: cudadrv's launches against the same launches from C (bench/launch_floor.c, built
// here with the system's C compiler), in the same run, on the same kernels (hand-written PTX:
// an empty kernel, and one taking two pointers, an int and a float).
//
//   node bench/launch.js [batch] [rounds]
//
// Each figure is the median, over `rounds` batches of `batch` launches, of the time per launch to
// enqueue (the CPU's cost, which cudadrv adds to), and of the time including the synchronize
// that ends each batch. Targets (enqueue): prepared empty launch ≤ 1.03× C, prepared 4-argument
// launch ≤ 1.05×, callable launch with typed arguments ≤ 1.15×.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const cuda = require('..');

const PTX = `
.version 7.8
.target sm_75
.address_size 64
.visible .entry empty()
{
    ret;
}
.visible .entry four(.param .u64 a, .param .u64 b, .param .u32 n, .param .f32 s)
{
    ret;
}
`;

const batch = Number(process.argv[2] || 500);
const rounds = Number(process.argv[3] || 200);

function median(values) {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// { enqueue, synced }: medians in microseconds per launch; run(n) launches n times.
function measure(run) {
  run(10 * batch);
  cuda.Context.synchronizeSync();
  const enqueue = [];
  const synced = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    run(batch);
    const t1 = process.hrtime.bigint();
    cuda.Context.synchronizeSync();
    const t2 = process.hrtime.bigint();
    enqueue.push(Number(t1 - t0) / 1e3 / batch);
    synced.push(Number(t2 - t0) / 1e3 / batch);
  }
  return { enqueue: median(enqueue), synced: median(synced) };
}

function buildFloor(dir) {
  const include = execFileSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'find-cuda.js')], { encoding: 'utf8' });
  const binary = path.join(dir, 'launch_floor');
  execFileSync(process.env.CC || 'cc', ['-O2', `-I${include}`, path.join(__dirname, 'launch_floor.c'), '-ldl', '-o', binary]);
  return binary;
}

function runFloor(binary, ptxFile) {
  return JSON.parse(execFileSync(binary, [ptxFile, String(batch), String(rounds)], { encoding: 'utf8' }));
}

function runJs() {
  const ctx = new cuda.Device(0).retainPrimaryContext();
  ctx.push();
  try {
    const module = new cuda.Module(PTX);
    const empty = module.getFunction('empty').prepare('');
    const four = module.getFunction('four');
    const fourPrepared = module.getFunction('four');
    const a = cuda.memAlloc(1024);
    const b = cuda.memAlloc(1024);
    fourPrepared.prepare('PPif');
    const n = cuda.int32(256);
    const s = cuda.float32(2);
    const options = { block: 1 };
    return {
      emptyPrepared: measure((count) => {
        for (let i = 0; i < count; i++) empty.preparedCall(1, 1);
      }),
      fourPrepared: measure((count) => {
        for (let i = 0; i < count; i++) fourPrepared.preparedCall(1, 1, a, b, 256, 2);
      }),
      fourCallable: measure((count) => {
        for (let i = 0; i < count; i++) four(a, b, n, s, options);
      }),
      fourCallablePerCall: measure((count) => {
        for (let i = 0; i < count; i++) four(a, b, cuda.int32(256), cuda.float32(2), { block: 1 });
      }),
    };
  } finally {
    cuda.Context.pop();
    ctx.detach();
  }
}

function main() {
  if (!cuda.isAvailable() || cuda.Device.count() === 0) {
    console.error('bench/launch: no CUDA device here');
    process.exit(1);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-bench-'));
  try {
    const ptxFile = path.join(dir, 'kernels.ptx');
    fs.writeFileSync(ptxFile, PTX);
    const binary = buildFloor(dir);
    // C, JS, C, JS: the better of two runs each, so that a noisy moment does not decide.
    const c = [runFloor(binary, ptxFile)];
    const js = [runJs()];
    c.push(runFloor(binary, ptxFile));
    js.push(runJs());
    const fastest = (values) => Math.min(...values);
    const rows = [
      ['empty kernel, preparedCall', 'empty', 'emptyPrepared', 1.03],
      ['4 arguments, preparedCall', 'four', 'fourPrepared', 1.05],
      ['4 arguments, callable, typed scalars made once', 'four', 'fourCallable', 1.15],
      ['4 arguments, callable, typed scalars made per call', 'four', 'fourCallablePerCall', null],
    ];
    console.log(`${new cuda.Device(0).name()}, driver ${cuda.getDriverVersion()}, Node ${process.version}; ` +
      `µs per launch, median of ${rounds} batches of ${batch}`);
    console.log(`${'launch'.padEnd(52)}${'C'.padStart(8)}${'JS'.padStart(8)}${'ratio'.padStart(8)}  target   ` +
      `${'C+sync'.padStart(8)}${'JS+sync'.padStart(8)}${'ratio'.padStart(8)}`);
    let met = true;
    for (const [label, cKey, jsKey, target] of rows) {
      const cEnqueue = fastest(c.map((run) => run[`${cKey}Enqueue`]));
      const cSynced = fastest(c.map((run) => run[`${cKey}Synced`]));
      const jsEnqueue = fastest(js.map((run) => run[jsKey].enqueue));
      const jsSynced = fastest(js.map((run) => run[jsKey].synced));
      const ratio = jsEnqueue / cEnqueue;
      if (target !== null && ratio > target) met = false;
      console.log(`${label.padEnd(52)}${cEnqueue.toFixed(3).padStart(8)}${jsEnqueue.toFixed(3).padStart(8)}` +
        `${ratio.toFixed(3).padStart(8)}  ${target === null ? '     ' : `≤${target.toFixed(2)}`}    ` +
        `${cSynced.toFixed(3).padStart(8)}${jsSynced.toFixed(3).padStart(8)}${(jsSynced / cSynced).toFixed(3).padStart(8)}`);
    }
    console.log(met ? 'every target met' : 'a target was missed');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
