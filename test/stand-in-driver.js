'use strict';
// Builds the stand-in libcuda.so.1 (test/kernel-fake-driver.c) into a directory, for the tests of
// modules and launches without a GPU (test/kernel-driver.test.js) and for measuring cudadrv's own
// cost per launch (bench/launch-overhead.js). A process loads it through LD_LIBRARY_PATH=dir.
const { execFileSync } = require('child_process');
const path = require('path');

/** Compiles the stand-in into dir/libcuda.so.1; throws with the compiler's message on failure. */
function buildStandIn(dir) {
  const include = execFileSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'find-cuda.js')],
    { encoding: 'utf8' });
  execFileSync(process.env.CC || 'cc', ['-O2', '-shared', '-fPIC', `-I${include}`, '-o',
    path.join(dir, 'libcuda.so.1'), path.join(__dirname, 'kernel-fake-driver.c'), '-ldl'], { stdio: 'pipe' });
  return dir;
}

module.exports = { buildStandIn };
