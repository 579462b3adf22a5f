'use strict';
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const cuda = require('../..');
const { hasGpu } = require('../support/gpu');

const ROOT = path.join(__dirname, '..', '..');

describe('loading', function () {
  it('require works and isAvailable() answers a boolean without throwing', function () {
    assert.strictEqual(typeof cuda.isAvailable(), 'boolean');
    if (hasGpu) assert.strictEqual(cuda.isAvailable(), true);
  });

  it('loads in a process with no driver on the library path and says why on first use', function () {
    // A child with an empty LD_LIBRARY_PATH still finds a system driver; so only assert the
    // documented failure where the driver is missing, and success where it is present.
    const script = `
      const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
      try { console.log(JSON.stringify({ ok: true, count: cuda.Device.count(), available: cuda.isAvailable() })); }
      catch (e) { console.log(JSON.stringify({ ok: false, name: e.name, message: e.message, api: e.api,
        codeName: e.codeName, available: cuda.isAvailable(), isCuda: e instanceof cuda.CudaError })); }`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script]).toString());
    if (out.ok) {
      assert.strictEqual(out.available, true);
      assert.ok(out.count >= 0);
    } else {
      assert.strictEqual(out.available, false);
      assert.strictEqual(out.isCuda, true);
      if (out.api === 'dlopen') {
        assert.strictEqual(out.name, 'RuntimeError');
        assert.match(out.message, /libcuda\.so\.1/);
        assert.match(out.message, /cannot open shared object file|No such file/);
        assert.strictEqual(out.codeName, 'CUDA_ERROR_SHARED_OBJECT_INIT_FAILED');
      } else {
        assert.strictEqual(out.api, 'cuInit'); // a driver without a usable device
      }
    }
  });

  it('where no binary fits, the error lists the platforms this copy holds prebuilt binaries for', function () {
    // A copy of lib/ with no build/ and prebuilds for other platforms only (or none at all).
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-noprebuild-'));
    try {
      fs.cpSync(path.join(ROOT, 'lib'), path.join(copy, 'lib'), { recursive: true });
      fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(copy, 'package.json'));
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
      const load = () => {
        const script = `try { require(${JSON.stringify(path.join(copy, 'lib', 'internal', 'binding'))}); }
          catch (e) { console.log(e.message); }`;
        return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
      };
      assert.match(
        load(),
        /no prebuilt binary fits this platform \(prebuilt: none\); build one with "npm rebuild cudadrv"/,
      );
      for (const platform of ['linux-s390x', 'darwin-x64'])
        fs.mkdirSync(path.join(copy, 'prebuilds', platform), { recursive: true });
      assert.match(load(), /\(prebuilt: darwin-x64, linux-s390x\)/);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('loads no Node module it does not need yet: worker_threads waits for the first host allocation', function () {
    const script = `
      const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
      const loaded = () => process.moduleLoadList.includes('NativeModule worker_threads');
      const before = loaded();
      cuda.alignedEmpty(4, 'float32');
      console.log(JSON.stringify([before, loaded()]));`;
    assert.deepStrictEqual(JSON.parse(execFileSync(process.execPath, ['-e', script]).toString()), [false, true]);
  });

  it('reports the CUDA version of the headers it was built against', function () {
    const [major, minor] = cuda.getVersion();
    const header = require('fs').readFileSync(
      path.join(process.env.CUDA_PATH || process.env.CUDA_HOME || '/usr/local/cuda', 'include', 'cuda.h'),
      'utf8',
    );
    const version = Number(/#define CUDA_VERSION (\d+)/.exec(header)[1]);
    assert.deepStrictEqual([major, minor], [Math.floor(version / 1000), Math.floor((version % 1000) / 10)]);
  });

  it('VERSION, VERSION_TEXT and VERSION_STATUS come from package.json', function () {
    const { version } = require('../../package.json');
    assert.strictEqual(cuda.VERSION_TEXT, version);
    assert.deepStrictEqual(cuda.VERSION, version.split('-')[0].split('.').map(Number));
    assert.strictEqual(typeof cuda.VERSION_STATUS, 'string');
  });

  it('exports every subpath, and ESM import works', async function () {
    const pkg = require('../../package.json');
    for (const sub of ['.', './compiler', './tools', './autoinit', './autoprimaryctx']) {
      assert.ok(pkg.exports[sub], `package.json exports ${sub}`);
    }
    const esm = await import('cudadrv');
    assert.strictEqual(esm.default, cuda);
    assert.strictEqual(esm.Device, cuda.Device);
    assert.strictEqual(esm.DeviceAttribute, cuda.DeviceAttribute);
    assert.strictEqual(cuda.compiler, require('cudadrv/compiler'));
    assert.strictEqual(cuda.tools, require('cudadrv/tools'));
  });

  it('every named ESM export exists in the CommonJS namespace', async function () {
    const esm = await import('cudadrv');
    for (const name of Object.keys(esm)) {
      if (name !== 'default') assert.notStrictEqual(cuda[name], undefined, name);
    }
    for (const name of Object.keys(cuda)) assert.ok(name in esm, `ESM lacks ${name}`);
    assert.strictEqual(esm.compiler, require('cudadrv/compiler'));
    assert.strictEqual(esm.tools, require('cudadrv/tools'));
  });
});
