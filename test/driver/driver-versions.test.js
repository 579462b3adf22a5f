'use strict';
// Every driver from CUDA 12.0: each entry point is resolved at the oldest ABI that serves the call
// as cudadrv makes it, so the stand-in driver reporting 12.0, 12.4, 12.8 or 13.0 (and refusing
// newer versions through cuGetProcAddress, as a driver does) runs contexts, memory, launches,
// events and graphs alike. makeContext() needed 12.5 and timeSince() 12.8 before.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');

const ROOT = path.join(__dirname, '..', '..');
const SCRIPT = `
  const assert = require('assert');
  const cuda = require(${JSON.stringify(ROOT)});
  const device = new cuda.Device(0);
  const ctx = device.makeContext();
  const primary = device.retainPrimaryContext();
  const stream = new cuda.Stream();
  const start = new cuda.Event().record(stream);
  const data = Uint8Array.from({ length: 64 }, (_, i) => i * 3);
  const memory = cuda.toDevice(data);
  cuda.memsetD8Async(memory.slice(0, 8), 7, 8, stream);
  stream.synchronizeSync();
  const back = cuda.fromDevice(memory, 64, 'uint8');
  assert.deepStrictEqual([...back.subarray(0, 8)], new Array(8).fill(7));
  assert.deepStrictEqual([...back.subarray(8)], [...data.subarray(8)]);
  const kernel = cuda.moduleFromBuffer(Buffer.from('entry scale 8\\n')).getFunction('scale');
  kernel(cuda.pointer(memory.ptr), { block: 1, stream });
  stream.beginCapture();
  kernel(cuda.pointer(memory.ptr), { block: 1, stream });
  const exec = stream.endCapture().instantiate();
  exec.launch(stream);
  const end = new cuda.Event().record(stream);
  end.synchronizeSync();
  const ms = end.timeSince(start);
  primary.detach();
  ctx.detach();
  console.log(JSON.stringify({ driver: cuda.getDriverVersion(), ms }));`;

describe('drivers from CUDA 12.0 (stand-in driver)', function () {
  this.timeout(60000);
  const standIn = standInDriver();

  for (const version of [12000, 12040, 12080, 13000]) {
    it(`a driver reporting ${version}: contexts, memory, launches, graphs and event timing work`, function () {
      const child = spawnSync(process.execPath, ['-e', SCRIPT], {
        encoding: 'utf8',
        env: { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_DRIVER_VERSION: String(version) },
      });
      assert.strictEqual(child.status, 0, child.stderr);
      const { driver, ms } = JSON.parse(child.stdout);
      assert.strictEqual(driver, version);
      assert.strictEqual(typeof ms, 'number');
    });
  }
});
