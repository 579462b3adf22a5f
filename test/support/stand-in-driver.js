'use strict';
// Builds the stand-in libcuda.so.1 (test/support/fake-driver/, core.c says what it offers) into a
// directory: a process started with LD_LIBRARY_PATH=dir loads it instead of NVIDIA's. For the
// tests that run the addon through it, the fuzzer and bench/overhead.js.
const { execFileSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const SOURCES = path.join(__dirname, 'fake-driver');
const BUILT = path.join(__dirname, '..', '..', 'build', 'stand-in');

/**
 * Puts the stand-in at dir/libcuda.so.1 (dir is made if missing); returns dir. Throws with the
 * compiler's message on failure. flags: more compiler flags; CUDADRV_STAND_IN_CFLAGS adds more (the
 * sanitizer run's). Each build is kept in build/stand-in/, named by a digest of what went into it
 * (sources, flags, compiler, CUDA headers), and copied from there: some forty suites, the fuzzer
 * and the leak run each want one, and compiling it takes seconds.
 */
function buildStandIn(dir, flags = []) {
  const extra = (process.env.CUDADRV_STAND_IN_CFLAGS || '').split(' ').filter(Boolean);
  const include = cudaInclude();
  const cc = process.env.CC || 'cc';
  const names = fs.readdirSync(SOURCES).sort();
  const args = ['-O2', '-g', '-Wall', '-Wextra', '-Werror', '-shared', '-fPIC', '-fvisibility=hidden'];
  args.push(`-I${include}`, ...flags, ...extra);
  const digest = crypto.createHash('sha256').update(JSON.stringify([cc, args]));
  for (const name of names) digest.update(name).update(fs.readFileSync(path.join(SOURCES, name)));
  const built = path.join(BUILT, digest.digest('hex').slice(0, 24), 'libcuda.so.1');
  if (!fs.existsSync(built)) {
    fs.mkdirSync(path.dirname(built), { recursive: true });
    const partial = `${built}.${process.pid}`; // renamed when whole: builds at once never see half a file
    const sources = names.filter((f) => f.endsWith('.c')).map((f) => path.join(SOURCES, f));
    try {
      execFileSync(cc, [...args, '-o', partial, ...sources, '-ldl', '-lpthread'], { stdio: 'pipe' });
      fs.renameSync(partial, built);
    } finally {
      fs.rmSync(partial, { force: true });
    }
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(built, path.join(dir, 'libcuda.so.1'));
  return dir;
}

/** The CUDA toolkit's include directory (scripts/find-cuda.js), for C built against cuda.h. */
function cudaInclude() {
  return execFileSync(process.execPath, [path.join(__dirname, '..', '..', 'scripts', 'find-cuda.js')], {
    encoding: 'utf8',
  });
}

/**
 * Builds the C program source into out, linked to the libcuda.so.1 in dir (the stand-in: run it
 * with LD_LIBRARY_PATH=dir), or to the system's driver where dir is null.
 */
function buildAgainstDriver(source, out, dir) {
  const driver = dir ? ['-L', dir, '-l:libcuda.so.1'] : ['-lcuda'];
  const args = ['-O2', `-I${cudaInclude()}`, source, '-o', out, ...driver, '-lpthread', '-ldl'];
  execFileSync(process.env.CC || 'cc', args);
  return out;
}

/**
 * For a Mocha describe(): builds the stand-in in a directory of its own before the tests (which
 * skip, saying why, where it cannot be built) and removes it after. Returns { dir }, dir set by
 * then.
 */
function standInDriver() {
  const place = { dir: null };
  before(function () {
    if (process.platform !== 'linux') this.skip();
    place.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-stand-in-'));
    try {
      buildStandIn(place.dir);
    } catch (error) {
      console.log(
        `      (stand-in driver not built, so skipped: ${String(error.stderr || error.message).split('\n')[0]})`,
      );
      this.skip();
    }
  });
  after(function () {
    if (place.dir) fs.rmSync(place.dir, { recursive: true, force: true });
  });
  return place;
}

/**
 * The driver calls in a trace log (FAKE_CUDA_TRACE), between each "mark NAME" line that the
 * traced process wrote and the "end" after it: { NAME: [symbol, ...] }.
 */
function tracedCalls(log) {
  const calls = {};
  let current = null;
  for (const line of fs.readFileSync(log, 'utf8').split('\n')) {
    if (line.startsWith('mark ')) calls[(current = line.slice(5))] = [];
    else if (line === 'end') current = null;
    else if (current !== null && line.startsWith('call ')) calls[current].push(line.slice(5));
  }
  return calls;
}

/**
 * The stand-in's live counts, read from the file FAKE_CUDA_COUNTS names: { contexts, streams,
 * device_memory, ..., stale } (the names are the stand-in's, core.c and fake.h).
 */
function liveCounts(file) {
  const counts = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [name, value] = line.trim().split(/\s+/);
    if (name) counts[name] = Number(value);
  }
  return counts;
}

module.exports = { buildStandIn, buildAgainstDriver, cudaInclude, standInDriver, tracedCalls, liveCounts };
