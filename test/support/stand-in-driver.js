'use strict';
// Builds the stand-in libcuda.so.1 (test/support/fake-driver/, core.c says what it offers) into a
// directory: a process started with LD_LIBRARY_PATH=dir loads it instead of NVIDIA's. For the
// tests that run the addon through it, the fuzzer and bench/overhead.js.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const SOURCES = path.join(__dirname, 'fake-driver');

/**
 * Compiles the stand-in into dir/libcuda.so.1 (dir is made if missing); returns dir. Throws with
 * the compiler's message on failure. flags: more compiler flags; CUDADRV_STAND_IN_CFLAGS adds
 * more (the sanitizer run's).
 */
function buildStandIn(dir, flags = []) {
  const extra = (process.env.CUDADRV_STAND_IN_CFLAGS || '').split(' ').filter(Boolean);
  const include = execFileSync(process.execPath, [path.join(__dirname, '..', '..', 'scripts', 'find-cuda.js')], {
    encoding: 'utf8',
  });
  fs.mkdirSync(dir, { recursive: true });
  const sources = fs
    .readdirSync(SOURCES)
    .filter((f) => f.endsWith('.c'))
    .map((f) => path.join(SOURCES, f));
  execFileSync(
    process.env.CC || 'cc',
    [
      '-O2',
      '-g',
      '-Wall',
      '-Wextra',
      '-Werror',
      '-shared',
      '-fPIC',
      '-fvisibility=hidden',
      `-I${include}`,
      ...flags,
      ...extra,
      '-o',
      path.join(dir, 'libcuda.so.1'),
      ...sources,
      '-ldl',
      '-lpthread',
    ],
    { stdio: 'pipe' },
  );
  return dir;
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

module.exports = { buildStandIn, standInDriver, tracedCalls, liveCounts };
