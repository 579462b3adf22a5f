'use strict';
// Loaded before the test files (.mocharc.js): this run's compile cache, in child processes too,
// lives in a temporary directory, never the user's ~/.cache. It is removed at exit. Under
// `--parallel` (the whole suite: .mocharc.js) each of Mocha's worker processes loads this once.
// CUDADRV_GC_EVERY_TEST=1 collects garbage after every test (Mocha runs with --expose-gc): the
// GPU suite run so shows that collection at any moment, kernels running, breaks nothing.
const fs = require('fs');
const os = require('os');
const path = require('path');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-test-cache-'));
process.env.CUDADRV_CACHE_DIR = dir;
process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

exports.mochaHooks = {
  afterEach() {
    if (process.env.CUDADRV_GC_EVERY_TEST === '1') global.gc();
  },
};
