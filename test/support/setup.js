'use strict';
// Loaded before the test files (.mocharc.json): this run's compile cache, in child processes too,
// lives in a temporary directory, never the user's ~/.cache. It is removed at exit.
const fs = require('fs');
const os = require('os');
const path = require('path');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-test-cache-'));
process.env.CUDADRV_CACHE_DIR = dir;

exports.mochaHooks = {
  afterAll() {
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  },
};
