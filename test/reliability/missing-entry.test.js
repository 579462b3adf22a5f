'use strict';
// A driver that lacks an entry point: every call goes through one checked path (DRV in
// src/core/loader.h), so each operation reaching a missing entry is a RuntimeError naming the call and
// the driver it needs. Before, most calls went through the table unchecked and crashed.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');
const { OPERATIONS } = require('../support/missing-entry-child');

describe('a driver without an entry point (stand-in driver)', function () {
  this.timeout(60000);
  const standIn = standInDriver();

  for (const symbol of Object.keys(OPERATIONS)) {
    it(`without ${symbol}: a RuntimeError naming it, the driver version and the one needed`, function () {
      const child = spawnSync(process.execPath, [path.join(__dirname, '..', 'support', 'missing-entry-child.js')], {
        encoding: 'utf8',
        env: { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_MISSING: symbol },
      });
      assert.strictEqual(child.signal, null, `killed by ${child.signal}: ${child.stderr.slice(-300)}`);
      assert.strictEqual(child.status, 0, child.stderr.slice(-300));
      const error = JSON.parse(child.stdout);
      assert.deepStrictEqual({ name: error.name, api: error.api }, { name: 'RuntimeError', api: symbol });
      assert.match(
        error.message,
        new RegExp(
          `^${symbol} is not provided by the installed CUDA driver ` +
            '\\(version 13\\.0\\); it needs a driver for CUDA \\d+\\.\\d+ or newer: update the NVIDIA driver',
        ),
      );
    });
  }
});
