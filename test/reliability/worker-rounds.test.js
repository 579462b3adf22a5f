'use strict';
const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');
const { nvrtcLoads } = require('../support/nvrtc-available');

describe('workers that alone load cudadrv, terminated mid-call (stand-in driver)', function () {
  this.timeout(240000);
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  // Node unloaded the addon (dlclose) when the last worker that loaded it ended, while its compile
  // or wait thread still ran its code: SIGSEGV in 8 of 10 runs. dlclose also ran the addon's exit
  // handler under the loader lock, waiting for a compile inside dlopen: a hang for good. And an
  // exit() while a terminated worker's compile ran in NVRTC ran NVRTC's destructors under it.
  it('100 rounds terminated mid-compile, mid-link, mid-wait, idle and idle with Hopper objects, then the main thread: no crash, no hang, exit 0', function () {
    if (!nvrtcLoads()) this.skip();
    const run = spawnSync(process.execPath, [path.join(__dirname, '..', 'support', 'worker-rounds-child.js'), '100'], {
      encoding: 'utf8',
      timeout: 200000,
      killSignal: 'SIGKILL',
      env: { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_SYNC_MS: '300' },
    });
    assert.strictEqual(run.signal, null, `ended by ${run.signal}: ${run.stderr}`);
    assert.strictEqual(run.status, 0, run.stderr);
    assert.strictEqual(run.stderr, '');
    const summary = JSON.parse(run.stdout);
    assert.deepStrictEqual(summary.terminated, { compile: 20, link: 20, wait: 20, idle: 20, hopper: 20 });
    // the waits (300 ms) were all cut short; most compiles and links were too
    assert.strictEqual(summary.finishedFirst.wait, 0);
    assert.ok(summary.finishedFirst.compile + summary.finishedFirst.link < 20, run.stdout);
    assert.deepStrictEqual([summary.ptx, summary.copied], [true, true]);
  });
});
