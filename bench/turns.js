'use strict';
// What bench/compile.js and bench/link.js share: a C program (the floor) built here with cc,
// driven one step at a time so that C and cudadrv take turns, and the figures made of the pairs.
const { execFileSync, spawn } = require('child_process');
const path = require('path');
const readline = require('readline');

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const now = () => Number(process.hrtime.bigint()) / 1e6; // ms

/** Builds bench/<name>.c into dir (against the CUDA headers, with -ldl); the executable's path. */
function buildFloor(name, dir) {
  const include = execFileSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'find-cuda.js')]).toString();
  const exe = path.join(dir, name);
  execFileSync('cc', [
    '-std=c11',
    '-D_GNU_SOURCE',
    '-O2',
    `-I${include}`,
    path.join(__dirname, `${name}.c`),
    '-o',
    exe,
    '-ldl',
  ]);
  return exe;
}

/** Starts a floor that does its work once for every line it reads and prints a line of numbers
 * for each (its milliseconds first): { step: async (line = '') => numbers, end() }. */
function startFloor(exe, args) {
  const child = spawn(exe, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return {
    async step(line = '') {
      child.stdin.write(`${line}\n`);
      const { value, done } = await lines.next();
      if (done) throw new Error(`${path.basename(exe)} ended with status ${await exited}`);
      return value.split(' ').map(Number);
    },
    end: () => child.stdin.end(),
  };
}

/** Times in turns, C first and last: samples cudadrv steps (js() → ms) between samples + 1 C steps
 * (c() → ms), each cudadrv time set against the mean of the C times on either side of it, so that
 * drift in the machine's speed hits both alike. { js, c, ratio, jsMin, cMin }: medians and the
 * fastest of each. */
async function inTurns(samples, js, c) {
  const jsTimes = [];
  const cTimes = [await c()];
  for (let i = 0; i < samples; i++) {
    jsTimes.push(await js());
    cTimes.push(await c());
  }
  const ratios = jsTimes.map((t, i) => t / ((cTimes[i] + cTimes[i + 1]) / 2));
  return {
    js: median(jsTimes),
    c: median(cTimes),
    ratio: median(ratios),
    jsMin: Math.min(...jsTimes),
    cMin: Math.min(...cTimes),
  };
}

/** The isolated mode's cost (issue 29): inProcess and isolated, async functions doing the same
 * work, in turns after a first run of each (the library loaded, the helper started); and
 * isolatedSync, which starts a helper for each call, a few times. Medians in ms. */
async function isolatedCost(samples, inProcess, isolated, isolatedSync) {
  await inProcess();
  await isolated();
  const [own, helped, sync] = [[], [], []];
  for (let i = 0; i < samples; i++) {
    for (const [work, times] of [
      [inProcess, own],
      [isolated, helped],
    ]) {
      const start = now();
      await work();
      times.push(now() - start);
    }
  }
  for (let i = 0; i < 5; i++) {
    const start = now();
    isolatedSync();
    sync.push(now() - start);
  }
  const extra = median(helped.map((t, i) => t - own[i]));
  return { inProcess: median(own), isolated: median(helped), extra, sync: median(sync) };
}

/** The rows of isolatedCost's result, for `what` ('compile()', 'linkAsync()') and syncWhat. */
function isolatedRows(cost, what, syncWhat) {
  return [
    [
      `isolated ${what}, warm helper: more than in the process`,
      `+${cost.extra.toFixed(2)} ms (medians ${cost.isolated.toFixed(2)}, ${cost.inProcess.toFixed(2)} ms)`,
      '(for reference)',
      true,
    ],
    [`isolated ${syncWhat} (a helper started each call)`, `${cost.sync.toFixed(1)} ms`, '(for reference)', true],
  ];
}

/** Prints a table of [line, value, target, ok] rows under a heading. */
function printRows(heading, rows) {
  console.log(heading);
  for (const [name, value, target, ok] of rows) {
    console.log(`  ${name.padEnd(50)} ${value.padEnd(48)} ${target.padEnd(16)} ${ok ? 'ok' : 'MISSED'}`);
  }
}

module.exports = { median, now, buildFloor, startFloor, inTurns, isolatedCost, isolatedRows, printRows };
