#!/usr/bin/env node
'use strict';
// Where the time of a step goes: inside the driver's calls, or in the code around them.
// bench/call_timer.c, a libcuda.so.1 put in front of the real driver, times each driver call of
// bench/run.js's hot lines, in cudadrv's process and in bench/floor.c's. A side's step less its
// time inside the driver is that side's own cost (for C, its loop and the timer's reading). Where
// cudadrv's step costs more than C's, this tells cudadrv's own code from the same driver calls
// costing more inside a Node process.
//
//   node bench/call-times.js [--only REGEX] [--rounds N] [--stand-in] [--json]
//
// Each of N rounds (3 by default) runs each line in a process of its own: C (floor.c) first, then
// cudadrv, each some 5,000 warm-up steps and 20,000 timed ones in the batches of bench/run.js's
// spec for the line. The timer leaves the warm-up steps' calls out, so that it times the calls of
// the steps timed: a figure is the mean over a round's steps, then the median over rounds.
// --stand-in puts the stand-in driver of the tests behind the timer, to check the machinery
// without a GPU (lines that need kernels then fail, saying why). Pin the run for steadier figures
// (taskset -c 3): both processes inherit it. Exits 1 where a line could not be measured.
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { select, Env, measureJs, cudaRoot, buildFloor, runFloor } = require('./run');
const { markdownTable } = require('./report');
const { buildStandIn } = require('../test/support/stand-in-driver');
const { systemDriverPath } = require('../test/support/system-driver');

const BUILT = path.join(__dirname, '..', 'build', 'bench');
const TIMER_DIR = path.join(BUILT, 'call-timer');
const STAND_IN = path.join(BUILT, 'stand-in');
const DEFAULT_ONLY =
  '^(await\\.complete|launch\\.prepared|graph\\.explicit\\.launch|alloc|alloc\\.async|copy\\.(htod|dtoh)\\.small)$';
const STAND_IN_ONLY = '^(await\\.complete|alloc|alloc\\.async|copy\\.(htod|dtoh)\\.small)$';

// The driver calls that make up each line's step (bench/call_timer.c times these).
const CALLS = {
  'await.complete': ['cuStreamQuery'],
  'launch.empty': ['cuLaunchKernel'],
  'launch.prepared': ['cuLaunchKernel'],
  'graph.launch': ['cuGraphLaunch'],
  'graph.explicit.launch': ['cuGraphLaunch'],
  alloc: ['cuMemAlloc', 'cuMemFree', 'cuCtxGetCurrent'],
  'alloc.async': ['cuMemAllocAsync', 'cuMemFreeAsync'],
  'copy.htod.small': ['cuMemcpyHtoD'],
  'copy.dtoh.small': ['cuMemcpyDtoH'],
};

// ---- in the child: one line, C then cudadrv, the timer in front of the driver ----

const WARMUP_STEPS = 5000;
const STEPS = 20000;

// The line's batches, enough of them for WARMUP_STEPS and STEPS steps (see above).
function timedSpec(op) {
  const batch = op.spec[2];
  return [Math.ceil(WARMUP_STEPS / batch), Math.ceil(STEPS / batch), batch];
}

async function measureLine(id, floor, root) {
  const found = select(`^${id.replace(/\./g, '\\.')}$`)[0];
  const op = { ...found, spec: timedSpec(found) };
  const c = runFloor(floor, root, [op]);
  const cuda = require('..');
  new cuda.Device(0).retainPrimaryContext().push();
  const js = await measureJs(op, new Env(cuda));
  return { c: c.error ? { error: c.error } : c.runs[op.c], js };
}

// ---- in the parent ----

// The real libcuda.so.1's path: CUDADRV_CALL_TIMER_REAL, else the loader's cache.
function realDriver() {
  const found = process.env.CUDADRV_CALL_TIMER_REAL || systemDriverPath();
  if (!found) throw new Error('no libcuda.so.1 in the loader cache (set CUDADRV_CALL_TIMER_REAL, or --stand-in)');
  return found;
}

function buildTimer(root) {
  fs.mkdirSync(TIMER_DIR, { recursive: true });
  const out = path.join(TIMER_DIR, 'libcuda.so.1');
  execFileSync(process.env.CC || 'cc', [
    '-O2',
    '-shared',
    '-fPIC',
    '-fvisibility=hidden',
    '-Wall',
    '-Wextra',
    `-I${path.join(root, 'include')}`,
    path.join(__dirname, 'call_timer.c'),
    '-ldl',
    '-o',
    out,
  ]);
  return TIMER_DIR;
}

// One round of one line: { c, js } (samples or error) and each process's timer report.
function round(op, { floor, root, real, dir }) {
  const out = path.join(dir, `${op.id}.${process.hrtime.bigint()}.jsonl`);
  const [warmup, , batch] = timedSpec(op);
  const run = spawnSync(process.execPath, [__filename, '--child', op.id, floor, root], {
    encoding: 'utf8',
    timeout: 600000,
    maxBuffer: 64 * 2 ** 20,
    env: {
      ...process.env,
      LD_LIBRARY_PATH: TIMER_DIR,
      CALL_TIMER_REAL: real,
      CALL_TIMER_OUT: out,
      CALL_TIMER_SKIP: String(warmup * batch), // each line's step makes each of its calls once
    },
  });
  if (run.status !== 0) throw new Error(`the process measuring ${op.id} failed:\n${run.stderr}`);
  const reports = fs.existsSync(out) ? fs.readFileSync(out, 'utf8').trim().split('\n').map(JSON.parse) : [];
  const timer = (name) => reports.find((r) => r.process === name) || { calls: {}, clockNs: 0 };
  return { ...JSON.parse(run.stdout), timers: { c: timer('floor'), js: timer('node') } };
}

function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : null;
}

// One side of one round: ns a step, ns of it inside the driver, driver calls a step, and the rest.
function side(op, run, timer) {
  if (!run || run.error || !run.samples) return { error: (run && run.error) || 'not measured' };
  const [, reps, batch] = timedSpec(op);
  const steps = reps * batch;
  const meanStep = run.samples.reduce((sum, v) => sum + v, 0) / run.samples.length;
  const stepNs = meanStep * 1e3 * (op.per || 1); // the lines here are in µs
  let timed = 0; // ns a step in the timed calls, the timer's readings included
  let calls = 0;
  for (const name of CALLS[op.id]) {
    const [count, ns] = timer.calls[name] || [0, 0];
    timed += ns / steps;
    calls += count / steps;
  }
  const inDriverNs = timed - calls * timer.clockNs;
  return { stepNs, inDriverNs, calls, clockNs: timer.clockNs, ownNs: stepNs - timed };
}

function summarizeSide(rounds) {
  const measured = rounds.filter((r) => !r.error);
  if (!measured.length) return { error: rounds[0].error };
  const of = (key) => median(measured.map((r) => r[key]));
  return {
    stepNs: of('stepNs'),
    inDriverNs: of('inDriverNs'),
    calls: of('calls'),
    clockNs: of('clockNs'),
    ownNs: of('ownNs'),
  };
}

function table(rows) {
  const ns = (v) => (v === null || v === undefined ? 'n/a' : `${Math.round(v)} ns`);
  const cells = (s) => (s.error ? ['n/a', 'n/a', 'n/a'] : [ns(s.stepNs), ns(s.inDriverNs), ns(s.ownNs)]);
  const calls = (s) => (s.error ? '?' : s.calls.toFixed(2));
  return markdownTable([
    [
      'operation',
      'cudadrv step',
      'in driver',
      'own',
      'C step',
      'in driver',
      'own',
      'calls a step',
      'in driver: cudadrv ÷ C',
    ],
    ...rows.map((r) => [
      r.title,
      ...cells(r.js),
      ...cells(r.c),
      `${calls(r.js)} / ${calls(r.c)}`,
      r.js.error || r.c.error || !r.c.inDriverNs ? 'n/a' : `${(r.js.inDriverNs / r.c.inDriverNs).toFixed(2)}×`,
    ]),
  ]);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    const [, id, floor, root] = argv;
    process.stdout.write(JSON.stringify(await measureLine(id, floor, root)));
    return 0;
  }
  const valueOf = (flag, fallback) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : fallback);
  const standIn = argv.includes('--stand-in');
  const rounds = Number(valueOf('--rounds', 3));
  if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error('--rounds wants a positive integer');
  const ops = select(valueOf('--only', standIn ? STAND_IN_ONLY : DEFAULT_ONLY)).filter((op) => CALLS[op.id]);
  if (!ops.length)
    throw new Error(`no line to time: those with their calls known are ${Object.keys(CALLS).join(', ')}`);
  const root = cudaRoot();
  const setting = { floor: buildFloor(root), root, dir: fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-calls-')) };
  buildTimer(root);
  setting.real = standIn ? path.join(buildStandIn(STAND_IN), 'libcuda.so.1') : realDriver();
  try {
    const rows = ops.map((op) => {
      const runs = Array.from({ length: rounds }, () => round(op, setting));
      return {
        id: op.id,
        title: op.title,
        c: summarizeSide(runs.map((r) => side(op, r.c, r.timers.c))),
        js: summarizeSide(runs.map((r) => side(op, r.js, r.timers.js))),
      };
    });
    if (argv.includes('--json')) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    } else {
      process.stdout.write(`${table(rows)}\n`);
      for (const r of rows) {
        for (const [name, s] of [
          ['cudadrv', r.js],
          ['C', r.c],
        ]) {
          if (s.error) process.stdout.write(`\n${r.id}, ${name}: ${s.error}\n`);
        }
      }
      process.stdout.write(
        `\n(${standIn ? 'stand-in driver' : setting.real}, ${os.cpus().length} × ${os.cpus()[0].model.trim()}; ` +
          `medians of ${rounds} rounds; "own": the step less its time in the driver and the timer's readings)\n`,
      );
    }
    return rows.every((r) => !r.js.error && !r.c.error) ? 0 : 1;
  } finally {
    fs.rmSync(setting.dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().then(
    (status) => {
      process.exitCode = status;
    },
    (error) => {
      process.stderr.write(`call-times: ${error.message}\n`);
      process.exitCode = 1;
    },
  );
}
