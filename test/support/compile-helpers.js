'use strict';
// What the compiler's tests share: random kernels whose PTX can be checked, scratch directories,
// a child process in the repository's root, and a default cache directory of the tests' own.
const crypto = require('crypto');
const { execFile } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');

// A kernel scaling by SCALE, a random float given with -D: the PTX must hold its exact bits.
const SCALE_SOURCE = '__global__ void scale(float *x) { x[threadIdx.x] *= SCALE; }';
const randomFloat = () => Math.fround(1 + Math.random() * 1000);
function ptxFloat(x) {
  const bits = Buffer.alloc(4);
  bits.writeFloatBE(x);
  return `0f${bits.toString('hex').toUpperCase()}`;
}
const scaleOption = (x) => `-DSCALE=${x.toPrecision(9)}f`;

const tmpdir = (prefix) => fs.mkdtempSync(path.join(os.tmpdir(), `cudadrv-${prefix}-`));
const sha = (data) => crypto.createHash('sha256').update(data).digest('hex');

function run(script, env = {}) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-e', script],
      { env: { ...process.env, ...env }, cwd: ROOT },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }),
    );
  });
}

// Makes every compile of the calling suite use a cache directory of its own, never the user's
// ~/.cache; returns a function giving that directory's parent, made before the suite's tests.
function scratchCacheRoot() {
  let cacheRoot;
  let savedEnv;
  before(function () {
    // the default cache directory of every compile here: never the user's ~/.cache
    savedEnv = { ...process.env };
    cacheRoot = tmpdir('cache');
    process.env.CUDADRV_CACHE_DIR = path.join(cacheRoot, 'default');
    delete process.env.CUDADRV_DISABLE_CACHE;
  });
  after(function () {
    for (const name of ['CUDADRV_CACHE_DIR', 'CUDADRV_DISABLE_CACHE', 'XDG_CACHE_HOME']) {
      if (savedEnv[name] === undefined) delete process.env[name];
      else process.env[name] = savedEnv[name];
    }
    require('../../lib/internal/binding').flushWrites(); // the cache's background writes land first
    fs.rmSync(cacheRoot, { recursive: true, force: true, maxRetries: 3 });
  });
  return () => cacheRoot;
}

module.exports = { ROOT, SCALE_SOURCE, randomFloat, ptxFloat, scaleOption, tmpdir, sha, run, scratchCacheRoot };
