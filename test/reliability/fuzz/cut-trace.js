#!/usr/bin/env node
'use strict';
// cut-trace: cuts a driver trace (npm run fuzz -- --trace-driver) whose replay by replay-trace.c
// dies in the trace's last call down to the fewest of its calls whose replay still does: what a
// report of a driver defect needs. --help says how.
const { execFile } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { buildAgainstDriver } = require('../../support/stand-in-driver');
const { shortest } = require('./minimize');
const { buildLibrary } = require('./run');

const HELP = `node test/reliability/fuzz/cut-trace.js TRACE [options]

Replays TRACE (a --trace-driver trace, one file) with replay-trace.c, built with cc against the
driver, fault-report.c preloaded to name a faulting instruction; where the trace's last call
never returns in the replay (a fault, another signal, or a hang: CUT_TRACE_HANG_MS, 60000),
cuts the calls it made down to the fewest whose replay ends so twice (in up to --tries replays
each time; candidates --parallel at once), writing each shorter trace found to the output at
once. A call cut that made something stays as a line "<thread> - name(first argument) *a0=X":
the replay leaves out the calls taking X (or an address in X's allocation). Any such ending counts: a driver that follows a pointer it never set faults at one
instruction or another, aborts or spins, as the heap's bytes fall. The environment goes to the
replays: GLIBC_TUNABLES=glibc.malloc.perturb=165:glibc.malloc.tcache_count=0 makes a driver's
read of memory it never wrote fail far more often.

  --out FILE      where the cut trace goes (default: TRACE.cut)
  --parallel N    replays at once (default 2)
  --tries N       replays of a trace before its last call counts as returning (default 3)
  --driver DIR    the libcuda.so.1 in DIR (the stand-in), not the system's driver
  --help          this text`;

// The trace's lines grouped by call: a call's line ("<thread> > name(...)"), the structures
// dumped after it and its result line, on its thread. unitOf[i] is line i's call, -1 for the
// fuzzer's labels ("#N: ") and a cut's left-out lines; startOf maps a call's first line (1-based,
// as replay-trace.c says it) to the call; leftOut[i], on a call's result line where the call made
// something ("*a0=X"), is the line that stands for the call where a cut leaves it out.
function callsOf(lines) {
  const unitOf = new Int32Array(lines.length).fill(-1);
  const startOf = new Map();
  const leftOut = [];
  const open = new Map();
  lines.forEach((line, i) => {
    const [, thread, what, name, first] = /^(\d+) (>|<| {2}\*a\d)(?: (cu\w+)\((\w+))?/.exec(line) || [];
    if (!thread) return;
    if (what === '>') {
      open.set(thread, { unit: startOf.size, name, first });
      startOf.set(i + 1, startOf.size);
    }
    const call = open.get(thread);
    if (!call) return;
    unitOf[i] = call.unit;
    if (what !== '<') return;
    const made = / = 0 \*a0=(\w+)$/.exec(line)?.[1];
    if (made) leftOut[i] = `${thread} - ${call.name}(${call.first}) *a0=${made}`;
    open.delete(thread);
  });
  return { unitOf, startOf, leftOut };
}

// The trace of the calls kept, with each fuzzer label whose calls include one kept, and the
// left-out line of each call not kept that made something (replay-trace.c then leaves out the
// calls taking what it made, as it does where the call itself fails; the input's own stay).
function traceOf(lines, { unitOf, leftOut }, kept) {
  const keep = new Set(kept);
  const out = [];
  let label = null;
  lines.forEach((line, i) => {
    if (unitOf[i] >= 0 && keep.has(unitOf[i])) {
      if (label) out.push(label);
      label = null;
      out.push(line);
    } else if (leftOut[i] || /^\d+ - cu\w+\(/.test(line)) out.push(leftOut[i] || line);
    else if (unitOf[i] < 0 && line.startsWith('#')) label = line;
  });
  return `${out.join('\n')}\n`;
}

// One replay: { ending, made, stdout }. ending says how the trace's last call ended where it never
// returned (a fault: "fault: signal 11 at libcuda.so.1+0x1d29f8", the instruction as fault-report.c,
// preloaded, names it; another signal; a hang of more than HANG_MS), else null; made is the first
// lines of the calls made.
const HANG_MS = Number(process.env.CUT_TRACE_HANG_MS || 60000);
function replay(program, file, env) {
  return new Promise((resolve) => {
    execFile(program, [file], { env, maxBuffer: 1 << 26, timeout: HANG_MS }, (error, stdout, stderr) => {
      const last = stdout.indexOf("the trace's last call");
      const at = /^\*\*\* fault-report: the instruction at (.*)$/m.exec(stderr)?.[1];
      const fault = at && error?.signal && `fault: signal ${os.constants.signals[error.signal]} at ${at}`;
      const made = [...stdout.matchAll(/^made \w+, line (\d+)$/gm)].map((m) => Number(m[1]));
      const how = error?.killed ? `hang: killed after ${HANG_MS} ms` : fault || (error?.signal ?? null);
      resolve({ ending: last >= 0 && !/^end: /m.test(stdout) ? how : null, made, stdout });
    });
  });
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const file = args[0];
  if (!file || file.startsWith('--') || args.includes('--help')) {
    console.log(HELP);
    process.exitCode = args.includes('--help') ? 0 : 2;
    return;
  }
  const parallel = Number(option('parallel', 2));
  const tries = Number(option('tries', 3));
  if (!(Number.isInteger(parallel) && parallel >= 1 && Number.isInteger(tries) && tries >= 1))
    throw new RangeError('--parallel and --tries take whole numbers of 1 or more');
  const out = option('out', `${file}.cut`);
  const driver = option('driver', null);
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-cut-trace-'));
  try {
    const program = buildAgainstDriver(
      path.join(__dirname, 'replay-trace.c'),
      path.join(workdir, 'replay-trace'),
      driver && path.resolve(driver),
    );
    // after what is preloaded already: a sanitizer's runtime must load first
    const report = buildLibrary(path.join(workdir, 'fault-report.so'), 'fault-report.c');
    const env = { ...process.env, LD_PRELOAD: [process.env.LD_PRELOAD, report].filter(Boolean).join(' ') };
    if (driver) env.LD_LIBRARY_PATH = [path.resolve(driver), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    const calls = callsOf(lines);
    let whole = null;
    for (let i = 0; i < tries && !whole?.ending; i++) whole = await replay(program, file, env);
    if (!whole.ending) {
      console.log(`the replay of ${file} made its last call, which returned, in ${tries} tries`);
      process.exitCode = 1;
      return;
    }
    console.log(`${file}: ${whole.ending}, in the last of ${whole.made.length} calls made`);
    let candidates = 0;
    const repeats = async (kept) => {
      const candidate = path.join(workdir, `candidate-${candidates++}`);
      fs.writeFileSync(candidate, traceOf(lines, calls, kept));
      let ending = null;
      for (let i = 0; i < tries && !ending; i++) ({ ending } = await replay(program, candidate, env));
      fs.rmSync(candidate);
      return ending !== null;
    };
    const said = (kept) => {
      fs.writeFileSync(out, traceOf(lines, calls, kept));
      console.log(`${kept.length} calls end so: ${out}`);
    };
    const made = whole.made.map((line) => calls.startOf.get(line));
    // no bound on the candidates: each shorter trace is written as found, and a run stopped keeps it
    const cut = await shortest(made, repeats, { width: parallel, said, most: Infinity });
    if (!cut) {
      console.log('no shorter trace ends so twice');
      process.exitCode = 1;
      return;
    }
    // how often and how it ends, and the calls it makes
    const again = await Promise.all(Array.from({ length: Math.max(parallel, 4) }, () => replay(program, out, env)));
    const endings = again.map((r) => r.ending).filter(Boolean);
    console.log(
      `${out}: ${cut.length} calls, the last never returned in ${endings.length} of ${again.length} more replays` +
        `${endings.map((e) => `\n  ${e}`).join('')}\n${again[0].stdout}${again[0].ending ?? ''}`,
    );
  } finally {
    fs.rmSync(workdir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
