'use strict';
// The two-device calls through the stand-in driver's two devices (FAKE_CUDA_DEVICES=2; no GPU
// needed): the two-device suite's peer access and copies, every byte checked, and the exact error
// of each bad argument. (Kernels, IPC between processes and workers need the GPUs themselves:
// two-gpus.test.js.)
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');

const ROOT = path.join(__dirname, '..', '..');

describe('two devices through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const standIn = standInDriver();
  const env = () => ({ ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_DEVICES: '2' });

  // Mocha on the two-device suite (its tests whose titles match grep): { status, stdout }.
  function twoDeviceSuite(grep, extraEnv) {
    const mocha = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const args = ['--expose-gc', mocha, '--no-config', '--require', 'test/support/setup.js'];
    return spawnSync(process.execPath, [...args, '--grep', grep, 'test/driver/two-gpus.test.js'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...env(), ...extraEnv },
    });
  }

  it("the two-device suite's peer access, peer copies and Memcpy3DPeer pass on the stand-in's devices", function () {
    const child = twoDeviceSuite('^two devices (canAccessPeer|memcpyPeer|Memcpy3DPeer)', { CUDADRV_REQUIRE_GPU: '2' });
    assert.strictEqual(child.status, 0, child.stdout + child.stderr);
    assert.match(child.stdout, / 3 passing/);
  });

  it('with one device the suite skips, saying why, and fails instead where CUDADRV_REQUIRE_GPU=2', function () {
    const skipped = twoDeviceSuite('^two devices ', { FAKE_CUDA_DEVICES: '1', CUDADRV_REQUIRE_GPU: '' });
    assert.strictEqual(skipped.status, 0, skipped.stdout + skipped.stderr);
    assert.match(skipped.stdout, /\(skipped: two devices are needed, and the driver reports 1\)/);
    assert.match(skipped.stdout, / 5 pending/);
    const required = twoDeviceSuite('^two devices ', { FAKE_CUDA_DEVICES: '1', CUDADRV_REQUIRE_GPU: '2' });
    assert.strictEqual(required.status, 1, required.stdout + required.stderr);
    assert.match(required.stdout, /CUDADRV_REQUIRE_GPU=2 but two devices are needed, and the driver reports 1/);
  });

  it('each bad argument of a two-device call is the error that says what to do', function () {
    const script = `
      const cuda = require(${JSON.stringify(ROOT)});
      const out = {};
      const outcome = (name, fn) => {
        try {
          fn();
          out[name] = 'ok';
        } catch (error) {
          out[name] = error.name + ': ' + error.message;
        }
      };
      const [a, b] = [new cuda.Device(0), new cuda.Device(1)];
      const contextOf = (device) => { const ctx = device.makeContext(); cuda.Context.pop(); return ctx; };
      const [first, second, gone] = [contextOf(a), contextOf(b), contextOf(b)];
      gone.detach();
      out.canAccessPeer = [a.canAccessPeer(a), a.canAccessPeer(b), b.canAccessPeer(a)];
      outcome('canAccessPeer(1)', () => a.canAccessPeer(1));
      outcome('enablePeerAccess({})', () => first.enablePeerAccess({}));
      outcome('enablePeerAccess(second, 1)', () => first.enablePeerAccess(second, 1));
      outcome('enablePeerAccess(detached)', () => first.enablePeerAccess(gone));
      outcome('disablePeerAccess(never enabled)', () => first.disablePeerAccess(second));
      first.push();
      const x = cuda.memAlloc(4096);
      second.push();
      const y = cuda.memAlloc(1024);
      cuda.Context.pop();
      outcome('memcpyPeer(more than dest holds)', () => cuda.memcpyPeer(y, x, 2048, second, first));
      outcome('memcpyPeer(destContext {})', () => cuda.memcpyPeer(y, x, 16, {}, first));
      outcome('memcpyPeer(detached context)', () => cuda.memcpyPeer(y, x, 16, gone, first));
      outcome('memcpyPeerAsync(stream {})', () => cuda.memcpyPeerAsync(y, x, 16, second, first, {}));
      const box = new cuda.Memcpy3DPeer();
      outcome('Memcpy3DPeer.setSrcContext({})', () => box.setSrcContext({}));
      box.setSrcDevice(x);
      box.setSrcContext(first);
      box.setDstDevice(y);
      box.setDstContext(second);
      Object.assign(box, { widthInBytes: 64, height: 32, depth: 1, srcPitch: 64, srcHeight: 32, dstPitch: 64, dstHeight: 32 });
      outcome('Memcpy3DPeer(more than dst holds)', () => box.run());
      console.log(JSON.stringify(out));`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: env() });
    assert.strictEqual(child.status, 0, child.stderr);
    const detached = 'LogicError: this Context has been detached; make or retain a new one';
    assert.deepStrictEqual(JSON.parse(child.stdout), {
      canAccessPeer: [false, true, true],
      'canAccessPeer(1)': 'TypeError: peer must be a Device, not number 1',
      'enablePeerAccess({})': 'TypeError: peer must be a Context, not an Object',
      'enablePeerAccess(second, 1)': 'LogicError: cuCtxEnablePeerAccess failed: invalid argument',
      'enablePeerAccess(detached)': detached,
      'disablePeerAccess(never enabled)': 'LogicError: cuCtxDisablePeerAccess failed: peer access has not been enabled',
      'memcpyPeer(more than dest holds)':
        'RangeError: memcpyPeer: dest: 2048 bytes do not fit in 1024 bytes of device memory',
      'memcpyPeer(destContext {})': 'TypeError: destContext must be a Context, not an Object',
      'memcpyPeer(detached context)': detached,
      'memcpyPeerAsync(stream {})':
        'TypeError: stream must be a Stream (or null for the default stream), not an Object',
      'Memcpy3DPeer.setSrcContext({})': 'TypeError: context must be a Context, not an Object',
      'Memcpy3DPeer(more than dst holds)':
        'RangeError: Memcpy3DPeer: the copy reaches byte 2048 of dst, which holds 1024',
    });
  });
});
