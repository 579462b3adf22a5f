#!/usr/bin/env node
'use strict';
// What cudadrv itself costs on the memory hot paths, measured without a GPU: bench/run.js's
// operations, its cudadrv side and bench/floor.c, run against the stand-in driver of the tests
// (test/support/fake-driver/), whose calls cost next to nothing. The time cudadrv takes beyond C
// there is what it adds to every such call on a real driver. The stand-in's call trace also
// counts the driver calls each operation makes on both sides, which must be the same but for the
// ones EXTRA_CALLS allows, and says why.
//
//   node bench/overhead.js [--only REGEX] [--rounds N] [--json]
//
// Each of N rounds (5 by default) is a process measuring both sides; a figure is the median of
// the rounds' medians. Prints `operation | cudadrv | C | overhead | driver calls`, then the calls
// of each operation where they differ; exits 1 when cudadrv makes other driver calls than C.
// --json prints the figures and the calls instead.
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { select, Env, measureJs, cudaRoot, buildFloor, runFloor } = require('./run');
const { markdownTable } = require('./report');
const { buildStandIn, tracedCalls } = require('../test/support/stand-in-driver');

const STAND_IN = path.join(__dirname, '..', 'build', 'bench', 'stand-in');
const DEFAULT_ONLY = '^(alloc|alloc\\.async|copy\\.(htod|dtoh)\\.small)$';
// Longer than bench/run.js's specs: the stand-in's calls are short, this machine's noise is not.
const SPEC = [20, 200, 100];
const TRACED_STEPS = 10;

// Calls cudadrv makes beyond C's, on purpose: { operation: { calls: [symbol, ...], why } }.
const EXTRA_CALLS = {
  alloc: {
    calls: ['cuCtxGetCurrent'],
    why:
      'which context owns the memory, in which a dropped allocation is freed (stream-ordered ' +
      "memory takes its stream's)",
  },
};

// ---- in the child, whose libcuda.so.1 is the stand-in ----

// The device's primary context, current, as bench/run.js runs.
function setUp() {
  const cuda = require('..');
  new cuda.Device(0).retainPrimaryContext().push();
  return new Env(cuda);
}

// Medians (µs) of both sides of each operation.
async function timeBoth(ops, floor, root) {
  const env = setUp();
  const c = runFloor(floor, root, ops).runs;
  const medians = {};
  for (const op of ops) {
    const js = await measureJs(op, env);
    const side = (run) => (run && run.samples ? median(run.samples) : null);
    medians[op.id] = { cudadrv: side(js), C: side(c[op.c]), error: js.error || (c[op.c] || {}).error };
  }
  return medians;
}

// Each operation's steps, TRACED_STEPS of them between marks in the trace log.
async function traceJs(ops, log) {
  const env = setUp();
  for (const op of ops) {
    const made = op.js(env);
    const step = async () => (made.async ? made.step() : made.step());
    await step(); // what the first steps set up is not counted
    await step();
    if (made.after) made.after();
    fs.appendFileSync(log, `mark ${op.id}\n`);
    for (let i = 0; i < TRACED_STEPS; i++) await step();
    fs.appendFileSync(log, 'end\n');
    if (made.after) made.after();
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

// ---- in the parent ----

function child(args, extraEnv) {
  const run = spawnSync(process.execPath, ['--expose-gc', __filename, ...args], {
    encoding: 'utf8',
    timeout: 600000,
    maxBuffer: 64 * 2 ** 20,
    env: { ...process.env, LD_LIBRARY_PATH: STAND_IN, ...extraEnv },
  });
  if (run.status !== 0) throw new Error(`the measuring process failed:\n${run.stderr}`);
  return run.stdout;
}

// The driver calls per step of floor.c's operation: a run of 1 step and one of 1 + TRACED_STEPS,
// the same but for those steps.
function traceFloor(op, floor, root, dir) {
  const count = (steps) => {
    const log = path.join(dir, `floor-${op.c}-${steps}.log`);
    const run = spawnSync(
      floor,
      [
        '--cuda',
        root,
        '--kernels',
        path.join(__dirname, 'kernels.cu'),
        '--compile',
        path.join(__dirname, 'compile.cu'),
        `${op.c}:0:1:${steps}`,
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, LD_LIBRARY_PATH: STAND_IN, FAKE_CUDA_TRACE: '1', FAKE_CUDA_LOG: log },
      },
    );
    if (run.status !== 0) throw new Error(`floor.c failed: ${run.stderr}`);
    const counts = {};
    for (const line of fs.readFileSync(log, 'utf8').split('\n')) {
      if (line.startsWith('call ')) counts[line.slice(5)] = (counts[line.slice(5)] || 0) + 1;
    }
    return counts;
  };
  const one = count(1);
  const more = count(1 + TRACED_STEPS);
  const calls = [];
  for (const [symbol, n] of Object.entries(more)) {
    for (let i = 0; i < (n - (one[symbol] || 0)) / TRACED_STEPS; i++) calls.push(symbol);
  }
  return calls.sort();
}

function perStep(calls) {
  const counts = {};
  for (const symbol of calls) counts[symbol] = (counts[symbol] || 0) + 1;
  const each = [];
  for (const [symbol, n] of Object.entries(counts)) for (let i = 0; i < n / TRACED_STEPS; i++) each.push(symbol);
  return each.sort();
}

const ns = (us) => (us === null ? 'n/a' : `${Math.round(us * 1000)} ns`);

function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    const [, mode, only, ...rest] = argv;
    const ops = select(only).map((op) => ({ ...op, spec: SPEC }));
    if (mode === 'time') {
      const [floor, root] = rest;
      return timeBoth(ops, floor, root).then((medians) => process.stdout.write(JSON.stringify(medians)));
    }
    return traceJs(ops, rest[0]);
  }
  const onlyAt = argv.indexOf('--only');
  const only = onlyAt >= 0 ? argv[onlyAt + 1] : DEFAULT_ONLY;
  const roundsAt = argv.indexOf('--rounds');
  const rounds = roundsAt >= 0 ? Number(argv[roundsAt + 1]) : 5;
  if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error('--rounds wants a positive integer');
  const json = argv.includes('--json');
  const ops = select(only);
  buildStandIn(STAND_IN);
  const root = cudaRoot();
  const floor = buildFloor(root);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-overhead-'));
  try {
    const runs = Array.from({ length: rounds }, () => JSON.parse(child(['--child', 'time', only, floor, root])));
    const medians = {};
    for (const op of ops) {
      const of = (side) => {
        const values = runs.map((run) => run[op.id][side]).filter((v) => v !== null);
        return values.length ? median(values) : null;
      };
      medians[op.id] = { cudadrv: of('cudadrv'), C: of('C'), error: runs[0][op.id].error };
    }
    const log = path.join(dir, 'cudadrv.log');
    child(['--child', 'trace', only, log], { FAKE_CUDA_TRACE: '1', FAKE_CUDA_LOG: log });
    const traced = tracedCalls(log);
    const rows = ops.map((op) => {
      const calls = { cudadrv: perStep(traced[op.id] || []), C: op.c ? traceFloor(op, floor, root, dir) : [] };
      const extra = EXTRA_CALLS[op.id] || { calls: [], why: null };
      return {
        id: op.id,
        title: op.title,
        ...medians[op.id],
        calls,
        extra,
        same: JSON.stringify(calls.cudadrv) === JSON.stringify([...calls.C, ...extra.calls].sort()),
      };
    });
    if (json) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    } else {
      const table = [
        ['operation', 'cudadrv', 'C', 'overhead', 'driver calls (cudadrv / C)'],
        ...rows.map((r) => [
          r.title,
          ns(r.cudadrv),
          ns(r.C),
          r.cudadrv === null || r.C === null ? 'n/a' : ns(r.cudadrv - r.C),
          `${r.calls.cudadrv.length} / ${r.calls.C.length}${r.same ? (r.extra.why ? ' (*)' : '') : ' DIFFER'}`,
        ]),
      ];
      process.stdout.write(`${markdownTable(table)}\n`);
      for (const r of rows) {
        if (r.error) process.stdout.write(`\n${r.id}: ${r.error}\n`);
        if (r.same && r.extra.why) {
          process.stdout.write(`\n(*) ${r.id}: cudadrv also calls ${r.extra.calls.join(', ')}: ${r.extra.why}\n`);
        }
        if (!r.same) {
          process.stdout.write(
            `\n${r.id}: cudadrv calls ${r.calls.cudadrv.join(', ') || 'nothing'}\n` +
              `${' '.repeat(r.id.length)}        C calls ${r.calls.C.join(', ') || 'nothing'}\n`,
          );
        }
      }
      process.stdout.write(
        `\n(stand-in driver, ${os.cpus().length} × ${os.cpus()[0].model.trim()}; ` +
          `the median of ${rounds} rounds' medians of ${SPEC[1]} batches of ${SPEC[2]} steps)\n`,
      );
    }
    return rows.every((r) => r.same && !r.error) ? 0 : 1;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  Promise.resolve()
    .then(main)
    .then(
      (status) => {
        if (typeof status === 'number') process.exitCode = status;
      },
      (error) => {
        process.stderr.write(`overhead: ${error.message}\n`);
        process.exitCode = 1;
      },
    );
}
