#!/usr/bin/env node
'use strict';
// cudadrv's own cost per launch, measured without a GPU: the launches go to the stand-in driver
// (test/support/fake-driver/), whose cuLaunchKernel only checks its arguments, so what is timed is
// cudadrv's path into the driver (the JS checks and packing, the call into C, C's work before
// cuLaunchKernel) plus the stand-in's few tens of nanoseconds. bench/run.js measures the real
// thing beside C on a GPU; this is for seeing the overhead itself move, on any Linux machine.
//
//   node bench/launch-overhead.js [rounds]
//
// Each line is the median over `rounds` batches of 1000 launches (after warm-up batches; the lines
// take turns), in nanoseconds per launch, with the spread (half the 10th-90th percentile range over
// the median).
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const BATCH = 1000;
const WARMUP = 50;

// The stand-in's module text: a kernel without parameters, and one of (float *, float *, int, float).
const IMAGE = 'entry empty\nentry args4 8 8 4 4\n';

function quantile(sorted, q) {
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low] + (sorted[Math.ceil(at)] - sorted[low]) * (at - low);
}

// { name: { median, spread } } of the nanoseconds per launch of each line: the lines take turns,
// one batch each per round, so that a slower moment of the machine falls on all of them alike.
function measure(rounds, lines) {
  const names = Object.keys(lines);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < WARMUP + rounds; i++) {
    for (const name of names) {
      const start = process.hrtime.bigint();
      lines[name](BATCH);
      const ns = Number(process.hrtime.bigint() - start) / BATCH;
      if (i >= WARMUP) samples[name].push(ns);
    }
  }
  return Object.fromEntries(
    names.map((name) => {
      const sorted = samples[name].sort((x, y) => x - y);
      const median = quantile(sorted, 0.5);
      return [name, { median, spread: (quantile(sorted, 0.9) - quantile(sorted, 0.1)) / 2 / median }];
    }),
  );
}

// In the child, whose libcuda.so.1 is the stand-in.
function child(rounds) {
  const cuda = require('..');
  new cuda.Device(0).makeContext();
  const module = new cuda.Module(IMAGE);
  const empty = module.getFunction('empty');
  const args4 = module.getFunction('args4');
  const emptyPrepared = module.getFunction('empty').prepare('');
  const args4Prepared = new cuda.Module(IMAGE).getFunction('args4').prepare('PPif');
  const stream = new cuda.Stream();
  const a = cuda.memAlloc(1024);
  const b = cuda.memAlloc(1024);
  const n = cuda.int32(1000);
  const x = cuda.float32(2.5);
  const grid = [1, 1];
  const block = [1, 1, 1];
  const options = { block, grid, stream };
  const lines = {
    'prepared, empty kernel, on a stream': (count) => {
      for (let i = 0; i < count; i++) emptyPrepared.preparedAsyncCall(grid, block, stream);
    },
    'prepared, empty kernel, default stream': (count) => {
      for (let i = 0; i < count; i++) emptyPrepared.preparedCall(1, 1);
    },
    'prepared, 4 arguments, on a stream': (count) => {
      for (let i = 0; i < count; i++) args4Prepared.preparedAsyncCall(grid, block, stream, a, b, 1000, 2.5);
    },
    'callable, empty kernel, on a stream': (count) => {
      for (let i = 0; i < count; i++) empty({ block, grid, stream });
    },
    'callable, 4 typed arguments, options made once': (count) => {
      for (let i = 0; i < count; i++) args4(a, b, n, x, options);
    },
  };
  return measure(rounds, lines);
}

function main() {
  const rounds = Number(process.argv[2] || 300);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('usage: node bench/launch-overhead.js [rounds]');
  const { buildStandIn } = require('../test/support/stand-in-driver');
  const dir = path.join(__dirname, '..', 'build', 'bench', 'stand-in');
  fs.mkdirSync(dir, { recursive: true });
  buildStandIn(dir);
  const env = { ...process.env, LD_LIBRARY_PATH: dir };
  delete env.FAKE_CUDA_LOG; // the stand-in logs nothing then
  const run = spawnSync(process.execPath, [__filename, '--child', String(rounds)], { encoding: 'utf8', env });
  if (run.status !== 0) throw new Error(`the measuring process failed:\n${run.stderr}`);
  const results = JSON.parse(run.stdout);
  console.log(
    `cudadrv's cost per launch through the stand-in driver (Node ${process.version}), ` +
      `median of ${rounds} batches of ${BATCH}:`,
  );
  for (const [name, { median, spread }] of Object.entries(results)) {
    console.log(`  ${name.padEnd(48)} ${median.toFixed(0).padStart(5)} ns ±${Math.round(spread * 100)}%`);
  }
}

if (process.argv[2] === '--child') {
  process.stdout.write(JSON.stringify(child(Number(process.argv[3]))));
} else {
  try {
    main();
  } catch (error) {
    process.stderr.write(`launch-overhead: ${error.message}\n`);
    process.exit(1);
  }
}
