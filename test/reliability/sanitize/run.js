#!/usr/bin/env node
'use strict';
// `npm run test:sanitize`: the addon and the stand-in driver built with AddressSanitizer and
// UndefinedBehaviorSanitizer (every report fatal), in a copy of the package of its own so that
// build/ is untouched; then the CPU suite and the fuzzer (CUDADRV_SANITIZE_FUZZ_CALLS calls, 50,000
// unless set, half in each mode) run under them (the suite without test/package and the fuzzer's
// own Mocha runs: see below). Any report fails the run. Node is not built with
// ASan, so its runtime is preloaded (LD_PRELOAD) and its leak check is off: Node does not free
// everything at exit, which is not ours to report. To reproduce a fuzzer report of CI:
// `node test/reliability/sanitize/run.js --fuzz-only --seed N` (the seed the report printed).
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..', '..');
const NOT_COPIED = new Set(['node_modules', 'build', '.git']);
const FLAGS = '-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer';

function run(command, args, options) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) {
    throw new Error(`${[command, ...args].join(' ')} failed: ${result.signal || `status ${result.status}`}`);
  }
}

function main() {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-sanitize-'));
  try {
    for (const name of fs.readdirSync(ROOT).filter((n) => !NOT_COPIED.has(n))) {
      fs.cpSync(path.join(ROOT, name), path.join(stage, name), { recursive: true });
    }
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(stage, 'node_modules'));
    const build = spawnSync('npm', ['run', 'build:addon', '--', '--sanitize=true'], { cwd: stage, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`the sanitized build failed:\n${build.stdout}${build.stderr}`);
    const runtime = execFileSync(process.env.CC || 'cc', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).trim();
    const env = {
      ...process.env,
      LD_PRELOAD: runtime,
      ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0:exitcode=86',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
      CUDADRV_STAND_IN_CFLAGS: FLAGS,
      CUDADRV_SANITIZED: '1', // the leak test then checks live counts only (ASan's quarantine holds memory)
      // A legitimate call that zeroes gigabytes (alignedZeros(2 ** 31 - 1, 'uint16'): 4 GiB) took
      // over the fuzzer's 20 s under ASan on a busy 2-core machine, which it reported as a hang.
      CUDADRV_FUZZ_HANG_MS: '60000',
    };
    const argv = process.argv.slice(2);
    if (!argv.includes('--fuzz-only')) {
      // Left out under the sanitizers, to keep CI short: the package's own checks (type-checking,
      // packing, docs), which exercise no C of ours beyond loading it, and the fuzzer's Mocha runs,
      // which the fuzzer run below repeats with more calls and a fresh seed.
      const ignore = ['test/runtimes/node_modules/**', 'test/package/**', 'test/reliability/fuzz.test.js'];
      const mocha = [path.join('node_modules', 'mocha', 'bin', 'mocha.js'), ...ignore.flatMap((g) => ['--ignore', g])];
      run(process.execPath, mocha, { cwd: stage, env });
    }
    const calls = Number(process.env.CUDADRV_SANITIZE_FUZZ_CALLS || 50000);
    const seedAt = argv.indexOf('--seed');
    const seed = seedAt >= 0 ? Number(argv[seedAt + 1]) : Math.floor(Math.random() * 2 ** 31);
    run(
      process.execPath,
      [path.join('test', 'reliability', 'fuzz', 'run.js'), '--calls', String(calls / 2), '--seed', String(seed)],
      {
        cwd: stage,
        env,
      },
    );
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

main();
