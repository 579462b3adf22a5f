'use strict';
const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');

describe('the context stack against a model (stand-in driver)', function () {
  this.timeout(120000);
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();
  const child = path.join(__dirname, '..', 'support', 'context-model-child.js');

  // Random retain/make/push/pop/detach/drop/collect over handles of the primary context and of
  // made contexts. A primary handle that was not the last owner took the context off the stack when
  // detached or collected: every later call found no context current (21 tests of an outside suite
  // failed in a row on the GPU).
  it('every step leaves the stack the model says, over 8 seeds of 400 steps', function () {
    const first = Number(process.env.CUDADRV_MODEL_SEED) || (Date.now() % 100000) * 8;
    for (let seed = first; seed < first + 8; seed++) {
      const run = spawnSync(process.execPath, ['--expose-gc', child, String(seed), '400'], {
        encoding: 'utf8',
        env: { ...process.env, LD_LIBRARY_PATH: standIn.dir },
      });
      assert.strictEqual(run.status, 0, `seed ${seed} (CUDADRV_MODEL_SEED=${seed}):\n${run.stderr}`);
      assert.ok(JSON.parse(run.stdout).steps > 200, run.stdout);
    }
  });

  it('a second handle of the primary context, only dropped, leaves the first one current', function () {
    const script = `
      const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
      const device = new cuda.Device(0);
      const a = device.retainPrimaryContext();
      a.push();
      (() => device.retainPrimaryContext())();
      global.gc();
      setImmediate(() => setImmediate(() => {
        const b = device.retainPrimaryContext();
        b.push();
        cuda.Context.pop();
        b.detach();
        console.log(JSON.stringify([cuda.Context.getCurrent() === a, cuda.memAlloc(64).free() === undefined]));
      }));`;
    const run = spawnSync(process.execPath, ['--expose-gc', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, LD_LIBRARY_PATH: standIn.dir },
    });
    assert.strictEqual(run.status, 0, run.stderr);
    assert.deepStrictEqual(JSON.parse(run.stdout), [true, true]);
  });
});
