#!/usr/bin/env node
'use strict';
// The fuzzer: `npm run fuzz -- [--calls N] [--seed S] [--mode no-driver|stand-in|driver|mutate]
// [--parallel N] [--print]` (--help says what each does). Runs N seeded random calls
// (test/reliability/fuzz/child.js) in child processes, in chunks of fresh state, two at a time
// unless --parallel says. Passes when every throw and rejection is a TypeError, a RangeError,
// a CudaError subclass or an AbortError, no process dies and no call hangs. A TypeError or
// RangeError in the engine's own words ("Cannot read properties of undefined") fails it too where
// the call was the API's as documented (a public function, a method on its own class's object,
// no hostile subclass involved): cudadrv names the argument. A death or a hang is cut down to the
// shortest call sequence that repeats it, printed with the seed.
const { execFileSync, spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { buildStandIn, cudaInclude } = require('../../support/stand-in-driver');
const { systemDriverPath } = require('../../support/system-driver');
const { shortest } = require('./minimize');

const CHILD = path.join(__dirname, 'child.js');
const CHUNK = Number(process.env.CUDADRV_FUZZ_CHUNK || 2500);
const HANG_MS = Number(process.env.CUDADRV_FUZZ_HANG_MS || 20000); // a call's time before it counts as hung
// a child's set-up (compiles and links in helper processes) before it counts as hung: on a GPU
// host running 15 children at once, it took longer than HANG_MS
const SETUP_MS = Number(process.env.CUDADRV_FUZZ_SETUP_MS || 120000);

// Runs one child; resolves { summary } when it finished, or { died, last, threw, tail } when it
// did not.
function runChild(job, env, cwd) {
  return new Promise((resolve) => {
    // a process group of its own: a hung child is killed with the helper processes it started
    const child = spawn(process.execPath, ['--expose-gc', CHILD, JSON.stringify(job)], {
      cwd,
      env,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let last = null;
    const threw = new Set(); // calls that threw before reaching the driver
    let setupMs = null; // null until the child's set-up is done
    let summary = null;
    let text = '';
    let stderr = '';
    let timer;
    const watchdog = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () => {
          child.hung = true;
          process.kill(-child.pid, 'SIGKILL');
        },
        setupMs === null ? SETUP_MS : HANG_MS,
      );
    };
    watchdog();
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-(1 << 16)); // the end: a replay's last calls, a crash's report
    });
    child.stdio[3].on('data', (d) => {
      text += d;
      const lines = text.split('\n');
      text = lines.pop();
      for (const line of lines) {
        if (line.startsWith('call ')) last = Number(line.slice(5));
        else if (line.startsWith('threw ')) threw.add(Number(line.slice(6)));
        else if (line.startsWith('ready ')) setupMs = Number(line.slice(6));
        else if (line.startsWith('{')) summary = { ...JSON.parse(line), setupMs };
      }
      watchdog();
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (summary && code === 0) resolve({ summary, stderr });
      else {
        const died = child.hung ? (setupMs === null ? 'hang in set-up' : 'hang') : signal || `exit ${code}`;
        resolve({ died, last, threw, tail: stderr });
      }
    });
  });
}

// Whether a replay of the calls listed dies as failure did.
async function diesAgain(job, env, cwd, failure, only) {
  return (await runChild({ ...job, only }, env, cwd)).died === failure.died;
}

// The shortest list of calls (ending at the one that was running) that still kills a child the
// same way (minimize.js), each shorter one said at once in --only's form, so that
// `--only LIST --minimize` goes on from there.
function shortestReplay(job, env, cwd, failure, indices, width) {
  const said = (calls) =>
    process.stderr.write(
      `fuzz ${job.mode}, seed ${job.seed}: ${calls.length} calls repeat it: --only ${asRuns(calls)}\n`,
    );
  const repeats = (only) => diesAgain(job, env, cwd, failure, only);
  return shortest(indices, repeats, { width, droppable: failure.threw, said });
}

// Call indices as --only writes them: runs of consecutive ones as I-J.
function asRuns(calls) {
  const runs = [];
  for (let i = 0; i < calls.length; i++) {
    let j = i;
    while (j + 1 < calls.length && calls[j + 1] === calls[j] + 1) j++;
    runs.push(j > i ? `${calls[i]}-${calls[j]}` : `${calls[i]}`);
    i = j;
  }
  return runs.join(',');
}

function fromRuns(text) {
  const calls = [];
  for (const run of text.split(',')) {
    const [, a, b = a] = /^(\d+)(?:-(\d+))?$/.exec(run) || [];
    const [first, last] = [Number(a), Number(b)];
    if (!(last >= first)) throw new RangeError(`--only takes call indices and runs of them (I,J-K,...), not "${run}"`);
    for (let i = first; i <= last; i++) calls.push(i);
  }
  return calls;
}

// A shared library built with cc from a C file of this folder.
function buildLibrary(out, name) {
  const source = path.join(__dirname, name);
  const include = cudaInclude(); // driver-trace.c's sizes
  const args = ['-shared', '-fPIC', '-O1', `-I${include}`, '-o', out, source, '-ldl', '-lpthread'];
  execFileSync(process.env.CC || 'cc', args);
  return out;
}

// --trace-driver DIR: driver-trace.c, built into workdir as a libcuda.so.1 put before the driver
// (driver mode: the system's; stand-in mode: the stand-in), logging every driver call of each
// child to DIR/trace.<pid> beside the fuzzer's labels of its calls.
function traceDriver(env, mode, workdir, dir) {
  if (mode !== 'driver' && mode !== 'stand-in')
    throw new RangeError('--trace-driver traces a driver: use --mode driver or stand-in');
  const real = mode === 'stand-in' ? path.join(workdir, 'stand-in', 'libcuda.so.1') : systemDriverPath();
  if (!real) throw new Error('--trace-driver: the loader cache names no libcuda.so.1');
  const lib = path.join(workdir, 'driver-trace');
  fs.mkdirSync(lib);
  fs.mkdirSync(dir, { recursive: true });
  buildLibrary(path.join(lib, 'libcuda.so.1'), 'driver-trace.c');
  env.LD_LIBRARY_PATH = [lib, env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  env.DRIVER_TRACE_REAL = real;
  env.CUDADRV_FUZZ_TRACE = path.resolve(dir);
}

function environment(mode, workdir, backtrace = false, trace = null) {
  // NVRTC and nvJitLink isolated: nvJitLink 13.0 crashes in the process on states the calls reach
  // (a link after others, of inputs every check passes), which only the isolated mode contains;
  // what the fuzzer asks is that cudadrv itself never does.
  const env = { ...process.env, CUDADRV_CACHE_DIR: path.join(workdir, 'cache'), CUDADRV_ISOLATE: '1' };
  // a FIFO where the values' '#include "fifo"' finds it (the child's working directory)
  execFileSync('mkfifo', [path.join(workdir, 'fifo')]);
  delete env.FAKE_CUDA_FAIL;
  if (mode === 'stand-in') {
    const dir = path.join(workdir, 'stand-in');
    buildStandIn(dir);
    env.LD_LIBRARY_PATH = [dir, env.LD_LIBRARY_PATH].filter(Boolean).join(':');
    // A handle the addon no longer owns, handed to the driver, may crash it: here it is a death.
    env.FAKE_CUDA_STALE_ABORT = '1';
  } else if (mode === 'no-driver') {
    // Where the system has a driver, a libcuda.so.1 with no entry points goes before it.
    const dir = path.join(workdir, 'no-driver');
    fs.mkdirSync(dir, { recursive: true });
    if (systemDriverPath()) {
      execFileSync(process.env.CC || 'cc', ['-shared', '-x', 'c', '-', '-o', path.join(dir, 'libcuda.so.1')], {
        input: '',
      });
    }
    env.LD_LIBRARY_PATH = dir;
  }
  // after what is preloaded already: a sanitizer's runtime must load first
  if (backtrace) {
    // --backtrace: fault-report.c, preloaded into every child
    const report = buildLibrary(path.join(workdir, 'fault-report.so'), 'fault-report.c');
    env.LD_PRELOAD = [env.LD_PRELOAD, report].filter(Boolean).join(' ');
  }
  if (trace) traceDriver(env, mode, workdir, trace);
  return env;
}

/** Runs `calls` calls of run `seed` in `mode`; resolves { counts, unexpected, failures }. */
async function fuzz({ mode, seed, calls, parallel = 2, print = false, backtrace = false }) {
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), `cudadrv-fuzz-${mode}-`));
  try {
    const env = environment(mode, workdir, backtrace);
    const counts = {};
    const unexpected = [];
    const failures = [];
    let slowestSetUp = 0;
    const chunks = [];
    for (let from = 0; from < calls; from += CHUNK) chunks.push({ from, to: Math.min(calls, from + CHUNK) });
    const work = async () => {
      for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
        const job = { mode, seed, ...chunk, print };
        const result = await runChild(job, env, workdir);
        if (result.summary) {
          slowestSetUp = Math.max(slowestSetUp, result.summary.setupMs);
          for (const [k, v] of Object.entries(result.summary.counts)) counts[k] = (counts[k] || 0) + v;
          unexpected.push(...result.summary.unexpected);
          for (const h of result.summary.hung)
            failures.push({ died: 'Promise never settled', sequence: [h.index], calls: [h.call] });
          continue;
        }
        // said at once: minimizing takes many children, and a run stopped meanwhile still tells
        process.stderr.write(
          `fuzz ${mode}, seed ${seed}: ${result.died} in calls ${chunk.from}..${chunk.to - 1}, at call ${result.last}` +
            `${result.last === null ? '' : '; minimizing'}\n`,
        );
        if (result.last === null) {
          // before the first call: nothing to cut down; the chunk replays it
          failures.push({ died: result.died, chunk, last: null, sequence: null, calls: [], tail: result.tail });
          continue;
        }
        const upTo = Array.from({ length: result.last - chunk.from + 1 }, (_, i) => chunk.from + i);
        const sequence = await shortestReplay(job, env, workdir, result, upTo, parallel);
        const labels = sequence ? await callLabels(job, env, workdir, sequence) : [];
        failures.push({ died: result.died, chunk, last: result.last, sequence, calls: labels, tail: result.tail });
      }
    };
    await Promise.all(Array.from({ length: parallel }, work));
    return { counts, unexpected, failures, slowestSetUp };
  } finally {
    fs.rmSync(workdir, { recursive: true, force: true });
  }
}

// The calls of a sequence as text (the child prints them before running each).
async function callLabels(job, env, cwd, only) {
  const result = await runChild({ ...job, only, print: true }, env, cwd);
  return calledIn(result.tail ?? result.stderr);
}

// Lines of a fault report (fault-report.c) shown: the stack and, on x86-64, the registers.
const REPORT_LINES = 48;

// A replay's last calls before its death, then the native stack where --backtrace printed one.
function lastCallsAndStack(stderr) {
  const lines = stderr.split('\n');
  const at = lines.findIndex((l) => l.startsWith('*** fault-report:'));
  return at < 0
    ? lines.slice(-40)
    : [...calledIn(lines.slice(0, at).join('\n')).slice(-40), ...lines.slice(at, at + REPORT_LINES)];
}

function calledIn(stderr) {
  return stderr.split('\n').filter((l) => l.startsWith('#'));
}

// A sanitizer's report or a native stack (--backtrace) from its first line, else the end of what
// the child printed.
function excerpt(stderr) {
  const lines = stderr.split('\n').filter((l) => !/DeprecationWarning|--trace-deprecation/.test(l));
  const at = lines.findIndex((l) => /ERROR: \w+Sanitizer|runtime error:|^\*\*\* fault-report:/.test(l));
  return at >= 0 ? lines.slice(at, at + REPORT_LINES) : lines.slice(-12);
}

function report(mode, seed, { counts, unexpected, failures, slowestSetUp }) {
  const lines = [`fuzz ${mode}, seed ${seed}: ${JSON.stringify(counts)}; set-up took up to ${slowestSetUp} ms`];
  for (const u of unexpected) lines.push(`  unexpected throw at call ${u.index}: ${u.call}\n    ${u.error}`);
  for (const f of failures) {
    const calls =
      f.last === null ? `--from ${f.chunk.from} --to ${f.chunk.to}` : `--only ${asRuns(f.sequence || [f.last])}`;
    lines.push(`  ${f.died} (seed ${seed}, repeat with: npm run fuzz -- --mode ${mode} --seed ${seed} ${calls})`);
    for (const c of f.calls) lines.push(`    ${c}`);
    if (f.tail) lines.push(`    stderr: ${excerpt(f.tail).join('\n    ')}`);
  }
  return lines.join('\n');
}

const HELP = `npm run fuzz -- [options]

Random calls in child processes, in chunks of fresh state; fails on a throw of a class cudadrv
does not document, on a child that dies, and on a call that hangs (each cut down to the shortest
sequence that repeats it, printed with a command that replays it).

  --mode M[,M...]  no-driver: every export, method and addon function with hostile values, no
                   driver (NVRTC and nvJitLink real where installed, isolated in helper
                   processes: CUDADRV_ISOLATE=1);
                   stand-in: the same through the stand-in driver (test/support/fake-driver);
                   driver: the same on the system's driver (a GPU);
                   mutate: real inputs with bytes changed (cubin, LTO-IR, PTX, fatbin) linked by
                   nvJitLink, and changed sources compiled by NVRTC, isolated: crashes and hangs
                   of NVIDIA's libraries are counted as contained.
                   Default: no-driver,stand-in
  --calls N        calls per mode (default 200000; mutate: use about 2000)
  --seed S         the run's seed (default: random; printed)
  --only I,J-K,... replay only these calls of the seed (J-K: J to K), printing each
  --from F --to T  replay calls F to T - 1 of the seed in one child, as a chunk ran them (a death
                   that only its whole chunk repeats); prints the last calls before a death
  --minimize       with --only or --from: a replay that dies is cut down to the shortest list
                   that dies the same way in two replays (--parallel at once), as a run's deaths
                   are, and says how often that list dies; a minimizing stopped early goes on
                   from the last list it said
  --parallel N     children at once, running chunks and trying shorter sequences (default 2;
                   on a GPU machine of 16 cores, 8 finds and cuts down crashes far sooner)
  --print          print each call before it runs
  --backtrace      a child killed by a fault signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT)
                   prints its native stack first: the driver call a driver-mode death happened in,
                   and cudadrv's function that made it (fault-report.c, built with cc and preloaded;
                   not with the sanitizer build, whose runtime must load first)
  --trace-driver DIR
                   with --only or --from, in driver or stand-in mode: each child writes
                   DIR/trace.<pid>, every driver call it made (the first six arguments, the
                   result, the word at the first argument: the handle a call made) beside the
                   label of the fuzzer's call that made it (driver-trace.c, a libcuda.so.1 built
                   with cc and put before the driver): what a C program needs to repeat a crash
                   (replay-trace.c makes a trace's calls again from C; cut-trace.js cuts a trace
                   whose replay dies down to the calls the death needs)
  --help           this text
Environment: CUDADRV_FUZZ_CHUNK (calls per child, 2500), CUDADRV_FUZZ_HANG_MS (20000),
CUDADRV_FUZZ_SETUP_MS (a child's set-up before it counts as hung, 120000). The children inherit
the rest: GLIBC_TUNABLES=glibc.malloc.perturb=165:glibc.malloc.tcache_count=0 fills freed heap
memory with 0xa5 bytes and memory allocated with 0x5a, so that a read of either (the driver's
too, which no sanitizer sees) crashes at once, most often at the same call; it costs about four
times the run's time (--backtrace's registers tell which of the two was read). Where a
driver-mode death is the driver's reading of memory it freed earlier, a small C program making
the same driver calls under Electric Fence (LD_PRELOAD=libefence.so EF_PROTECT_FREE=1) faults at
that read itself, naming the call (seed 6464: a graph freed by a failed capture into it).
What is known of the driver defects found and still open: test/reliability/fuzz/FINDINGS.md.`;

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--help')) {
    console.log(HELP);
    return;
  }
  const option = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const seed = Number(option('seed', Math.floor(Math.random() * 2 ** 31)));
  const calls = Number(option('calls', 200000));
  const modes = option('mode', 'no-driver,stand-in').split(',');
  const only = option('only', null);
  const backtrace = args.includes('--backtrace');
  const parallel = Number(option('parallel', 2));
  if (!Number.isInteger(parallel) || parallel < 1) throw new RangeError('--parallel takes a whole number of 1 or more');
  if (option('trace-driver', null) !== null && only === null && option('from', null) === null)
    throw new RangeError('--trace-driver traces a replay: give --only or --from too');
  let failed = false;
  for (const mode of modes) {
    const from = option('from', null);
    if (only || from !== null) {
      const calls = only
        ? { only: fromRuns(only) }
        : { from: Number(from), to: Number(option('to', Number(from) + CHUNK)) };
      if (calls.from !== undefined && !(Number.isInteger(calls.from) && calls.to > calls.from)) {
        throw new RangeError('--from takes a whole number, and --to a larger one');
      }
      const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-fuzz-'));
      const env = environment(mode, workdir, backtrace, option('trace-driver', null));
      const result = await runChild({ mode, seed, ...calls, print: true }, env, workdir);
      console.log(
        result.died
          ? `${result.died} at call ${result.last}\n${lastCallsAndStack(result.tail).join('\n')}`
          : [...calledIn(result.stderr), JSON.stringify(result.summary, null, 1)].join('\n'),
      );
      if (result.died && result.last !== null && args.includes('--minimize')) {
        const listed = calls.only || Array.from({ length: calls.to - calls.from }, (_, i) => calls.from + i);
        const upTo = listed.slice(0, listed.indexOf(result.last) + 1);
        const sequence = await shortestReplay({ mode, seed }, env, workdir, result, upTo, parallel);
        if (!sequence) console.log('no shorter list dies the same way twice');
        else {
          // how often it repeats: a list that dies 1 time in 8 needs more than one replay to tell
          const replays = Math.max(parallel, 4);
          const deaths = await Promise.all(
            Array.from({ length: replays }, () => diesAgain({ mode, seed }, env, workdir, result, sequence)),
          );
          const times = deaths.filter(Boolean).length;
          console.log(`shortest: --only ${asRuns(sequence)} (died in ${times} of ${replays} more replays)`);
        }
      }
      if (result.died) failed = true;
      fs.rmSync(workdir, { recursive: true, force: true });
      continue;
    }
    const result = await fuzz({ mode, seed, calls, parallel, print: args.includes('--print'), backtrace });
    console.log(report(mode, seed, result));
    if (result.unexpected.length || result.failures.length) failed = true;
  }
  process.exitCode = failed ? 1 : 0;
}

if (require.main === module) main();

module.exports = { fuzz, report, fromRuns, buildLibrary };
