'use strict';
// Loaded before the test files (.mocharc.json): this run's caches, the compile cache and V8's code
// cache (lib/code-cache.js), in child processes too, live in a temporary directory, never the
// user's ~/.cache. It is removed at exit, after the code cache's last write.
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
