#!/usr/bin/env node
'use strict';
// `npm run test:leaks [-- --cycles N] [--kinds a,b]`: each kind of resource made and dropped N
// times (100,000 unless given) in a process of its own on the stand-in driver
// (test/reliability/leaks/child.js). Passes when, for every kind, the resident set after the last cycle is
// within 8 MiB of where it was after 10,000 (a quarter of a shorter run), or within 4 MiB of where it
// was half-way (a leak grows in both halves; malloc's and V8's heaps settling, as a million compile
// results showed, only early), and the stand-in's live counts are back where they were before the
// first. A kind whose resident set grew is run once more, and passes if it does not grow again.
const { execFile } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { buildStandIn } = require('../../support/stand-in-driver');

const KINDS = [
  'deviceMemory',
  'slices',
  'streamOrderedMemory',
  'pinned',
  'aligned',
  'managed',
  'registered',
  'streams',
  'events',
  'modules',
  'launches',
  'attributeLaunches',
  'arrays',
  'textureObjects',
  'graphs',
  'contexts',
  'greenContexts',
  'pools',
  'madePools',
  'growableBuffers',
  'batchCopies',
  'compileResults',
  'stagedCopies',
];
const SLACK = 8 * 2 ** 20;

function runKind(kind, cycles, dir) {
  const counts = path.join(dir, `${kind}.counts`);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--expose-gc', path.join(__dirname, 'child.js'), kind, String(cycles)],
      {
        cwd: dir,
        env: {
          ...process.env,
          LD_LIBRARY_PATH: dir,
          FAKE_CUDA_COUNTS: counts,
          CUDADRV_CACHE_DIR: path.join(dir, 'cache'),
        },
        maxBuffer: 1 << 24,
      },
      (error, stdout, stderr) => {
        if (error) resolve({ kind, error: `${error.message}\n${stderr.slice(-2000)}` });
        else resolve(JSON.parse(stdout.trim().split('\n').pop()));
      },
    );
  });
}

// How one kind's resident set grew past the slack, or null.
function growth(r) {
  const grew = r.late - r.early;
  const lateGrowth = r.late - r.mid;
  const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
  // Under AddressSanitizer freed memory stays resident in its quarantine: only the counts tell.
  if (grew > SLACK && lateGrowth > SLACK / 2 && !process.env.CUDADRV_SANITIZED)
    return `the resident set grew by ${mib(grew)} MiB after the early sample, ${mib(lateGrowth)} MiB in the second half`;
  return null;
}

// What is wrong with one kind's result, or null.
function problem(r) {
  if (r.error) return r.error;
  const grew = growth(r);
  if (grew) return grew;
  const changed = Object.keys(r.after).filter((k) => r.after[k] !== r.before[k]);
  if (changed.length)
    return `live counts changed: ${changed.map((k) => `${k} ${r.before[k]} -> ${r.after[k]}`).join(', ')}`;
  return null;
}

/** Runs every kind (two at a time); resolves the results, each with its problem (or null). */
async function leaks({ cycles = 100000, kinds = KINDS } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-leaks-'));
  try {
    buildStandIn(dir);
    const queue = [...kinds];
    const results = [];
    const work = async () => {
      for (let kind = queue.shift(); kind; kind = queue.shift()) {
        let r = await runKind(kind, cycles, dir);
        // The resident set also moves with where malloc's heap fragments (aligned host memory grew
        // 33 and 9 MiB in one CI run each, never again): a kind whose set grew, its counts back, is
        // run once more, and a leak grows again.
        if (!r.error && growth(r)) {
          const again = await runKind(kind, cycles, dir);
          if (again.error || !growth(again)) r = { ...again, first: growth(r) };
        }
        results.push({ ...r, problem: problem(r) });
      }
    };
    await Promise.all([work(), work()]);
    return results.sort((a, b) => kinds.indexOf(a.kind) - kinds.indexOf(b.kind));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function table(results) {
  const mib = (b) => (b / 2 ** 20).toFixed(1);
  return results
    .map((r) =>
      r.error
        ? `${r.kind}: ${r.error}`
        : `${r.kind.padEnd(20)} ${r.cycles} cycles  RSS ${mib(r.early)} -> ${mib(r.late)} MiB (${r.late >= r.early ? '+' : ''}${mib(r.late - r.early)})  ${r.problem || 'live counts back'}` +
          (r.first ? ` (a second run; in the first, ${r.first})` : ''),
    )
    .join('\n');
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined);
  const results = await leaks({
    cycles: option('cycles') ? Number(option('cycles')) : undefined,
    kinds: option('kinds') ? option('kinds').split(',') : undefined,
  });
  console.log(table(results));
  process.exitCode = results.some((r) => r.problem) ? 1 : 0;
}

if (require.main === module) main();

module.exports = { leaks, table, KINDS };
