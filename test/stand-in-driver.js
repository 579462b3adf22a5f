'use strict';
// Builds the stand-in libcuda.so.1 (test/kernel-fake-driver.c) into a directory: a process started
// with LD_LIBRARY_PATH=dir loads it instead of NVIDIA's. For the tests that run the addon through
// it (test/kernel-driver.test.js, test/memory-driver.test.js) and for bench/overhead.js.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const SOURCE = path.join(__dirname, 'kernel-fake-driver.c');

/** Compiles the stand-in into dir/libcuda.so.1 (dir is made if missing); returns dir. Throws with
 * the compiler's message on failure. */
function buildStandIn(dir) {
  const include = execFileSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'find-cuda.js')],
    { encoding: 'utf8' });
  fs.mkdirSync(dir, { recursive: true });
  // -finstrument-functions: the call trace (FAKE_CUDA_TRACE)
  execFileSync(process.env.CC || 'cc', ['-O2', '-shared', '-fPIC', '-finstrument-functions', `-I${include}`,
    '-o', path.join(dir, 'libcuda.so.1'), SOURCE, '-ldl'], { stdio: 'pipe' });
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
      console.log(`      (stand-in driver not built, so skipped: ${error.message.split('\n')[0]})`);
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
    if (line.startsWith('mark ')) calls[current = line.slice(5)] = [];
    else if (line === 'end') current = null;
    else if (current !== null && line.startsWith('call ')) calls[current].push(line.slice(5));
  }
  return calls;
}

module.exports = { buildStandIn, standInDriver, tracedCalls };
