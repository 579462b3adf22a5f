'use strict';
// Builds the stand-in driver (test/kernel-fake-driver.c) as dir/libcuda.so.1: a process started
// with LD_LIBRARY_PATH=dir loads it instead of NVIDIA's. Used by the tests that run the addon
// through it and by bench/overhead.js. Throws when no C compiler or CUDA headers are at hand.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const SOURCE = path.join(__dirname, 'kernel-fake-driver.c');

/** Builds dir/libcuda.so.1 (dir is made if missing); returns dir. */
function buildFakeDriver(dir) {
  const include = execFileSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'find-cuda.js')],
    { encoding: 'utf8' });
  fs.mkdirSync(dir, { recursive: true });
  // -finstrument-functions: the call trace (FAKE_CUDA_TRACE)
  execFileSync(process.env.CC || 'cc', ['-shared', '-fPIC', '-finstrument-functions', `-I${include}`,
    '-o', path.join(dir, 'libcuda.so.1'), SOURCE, '-ldl'], { stdio: 'pipe' });
  return dir;
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

module.exports = { buildFakeDriver, tracedCalls };
