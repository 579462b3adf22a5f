'use strict';
// Where NVRTC is looked for: CUDADRV_NVRTC_PATH, CUDA_PATH and CUDA_HOME, then conda, pip wheels,
// the system's loader and /usr/local/cuda, newest major the driver supports first. The order is
// checked on a made-up tree; loading from conda and pip places with the real NVRTC linked there.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { librarySearch, searchedDirs } = require('../../lib/internal/library-search');
const { nvrtcLoads } = require('../support/nvrtc-available');
const { run } = require('../support/compile-helpers');

const MAJORS = [13, 12];

function touch(file, target) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (target) fs.symlinkSync(target, file);
  else fs.writeFileSync(file, '');
  return file;
}

describe('finding NVRTC', function () {
  let root;
  beforeEach(function () {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-nvrtc-search-'));
  });
  afterEach(function () {
    fs.rmSync(root, { recursive: true, force: true });
  });

  describe('the order of the candidates', function () {
    let env;
    let files;
    beforeEach(function () {
      env = {
        CUDA_PATH: path.join(root, 'toolkit'),
        CONDA_PREFIX: path.join(root, 'conda'),
        VIRTUAL_ENV: path.join(root, 'venv'),
        HOME: path.join(root, 'home'),
      };
      const venvSite = path.join(root, 'venv', 'lib', 'python3.12', 'site-packages', 'nvidia');
      files = {
        toolkit12: touch(path.join(root, 'toolkit', 'lib64', 'libnvrtc.so.12')),
        conda13: touch(path.join(root, 'conda', 'lib', 'libnvrtc.so.13')),
        venv13: touch(path.join(venvSite, 'cu13', 'lib', 'libnvrtc.so.13')),
        venv12: touch(path.join(venvSite, 'cuda_nvrtc', 'lib', 'libnvrtc.so.12')),
        user12: touch(
          path.join(
            root,
            'home',
            '.local',
            'lib',
            'python3.11',
            'site-packages',
            'nvidia',
            'cuda_nvrtc',
            'lib',
            'libnvrtc.so.12',
          ),
        ),
      };
      touch(path.join(venvSite, 'cu13', 'lib', 'libnvrtc.so.12')); // not where a 12 wheel puts it
    });

    const search = (driverMajor) =>
      librarySearch('nvrtc', { majors: MAJORS, override: 'CUDADRV_NVRTC_PATH', env, driverMajor }).filter(
        (c) => c.source !== '/usr/local/cuda', // this machine's own toolkit, when it has one
      );

    it('driver 13: CUDA_PATH first, then the 13s (conda, pip, system), then the 12s', function () {
      assert.deepStrictEqual(
        search(() => 13),
        [
          { path: files.toolkit12, source: 'CUDA_PATH', major: 12 },
          { path: files.conda13, source: 'conda', major: 13 },
          { path: files.venv13, source: 'pip', major: 13 },
          { path: 'libnvrtc.so.13', source: 'system', major: 13 },
          { path: files.venv12, source: 'pip', major: 12 },
          { path: files.user12, source: 'pip', major: 12 },
          { path: 'libnvrtc.so.12', source: 'system', major: 12 },
        ],
      );
    });

    it('driver 12: the 12s before the 13s, which the driver cannot load the PTX of', function () {
      assert.deepStrictEqual(
        search(() => 12).map((c) => c.path),
        [files.toolkit12, files.venv12, files.user12, 'libnvrtc.so.12', files.conda13, files.venv13, 'libnvrtc.so.13'],
      );
    });

    it('no driver (the query throws): the newest first', function () {
      const noDriver = () => {
        throw new Error('no libcuda');
      };
      assert.deepStrictEqual(
        search(noDriver),
        search(() => 13),
      );
    });

    it('CUDADRV_NVRTC_PATH alone, when set', function () {
      env.CUDADRV_NVRTC_PATH = '/opt/x/libnvrtc.so';
      assert.deepStrictEqual(
        search(() => 13),
        [{ path: '/opt/x/libnvrtc.so', source: 'CUDADRV_NVRTC_PATH', major: null }],
      );
    });

    it('the directories a cache record watches include every place searched', function () {
      const dirs = searchedDirs('nvrtc', { majors: MAJORS, env });
      for (const file of Object.values(files)) assert.ok(dirs.includes(path.dirname(file)), file);
      assert.ok(dirs.includes(path.join(root, 'venv', 'lib', 'python3.12', 'site-packages')));
      assert.ok(dirs.includes(path.join(root, 'venv', 'lib')), 'a new Python appears there');
    });
  });

  describe('loading from where conda and pip put it', function () {
    let real;
    let major;
    before(function () {
      if (!nvrtcLoads()) this.skip();
      real = require('../../lib/compiler/nvrtc').nvrtcLibrary().path;
      major = require('../../lib/compiler/nvrtc').nvrtcVersion()[0];
    });

    // A child with no toolkit variables, compiling with a cache in root: { library, identity }.
    async function childLoads(extraEnv) {
      const { code, stdout, stderr } = await run(
        `
        const { compileSync } = require('./lib/compiler');
        const ptx = compileSync('__global__ void k(int *p) { *p = 1; }', { arch: 'compute_75', cacheDir: ${JSON.stringify(path.join(root, 'cache'))} });
        const library = require('./lib/compiler/nvrtc').nvrtcLibrary();
        const identity = require('./lib/compiler/cache').nvrtcIdentity(${JSON.stringify(path.join(root, 'cache'))});
        console.log(JSON.stringify({ library, identity: identity.library, entry: ptx.toString().includes('.entry k') }));`,
        { CUDA_PATH: '', CUDA_HOME: '', CUDADRV_NVRTC_PATH: '', CONDA_PREFIX: '', VIRTUAL_ENV: '', ...extraEnv },
      );
      assert.strictEqual(code, 0, stderr);
      return JSON.parse(stdout);
    }

    it('from $CONDA_PREFIX/lib, saying so', async function () {
      const file = touch(path.join(root, 'conda', 'lib', `libnvrtc.so.${major}`), real);
      const out = await childLoads({ CONDA_PREFIX: path.join(root, 'conda') });
      assert.deepStrictEqual(out, { library: { path: file, source: 'conda' }, identity: file, entry: true });
    });

    it("from a pip wheel in a virtual environment's site-packages; a record made before the wheel was installed is not used", async function () {
      const site = path.join(root, 'venv', 'lib', 'python3.12', 'site-packages');
      fs.mkdirSync(site, { recursive: true });
      const before = await childLoads({ VIRTUAL_ENV: path.join(root, 'venv') });
      assert.notStrictEqual(before.library.source, 'pip');
      const wheelDir = major === 13 ? 'cu13' : 'cuda_nvrtc';
      const file = touch(path.join(site, 'nvidia', wheelDir, 'lib', `libnvrtc.so.${major}`), real);
      const after = await childLoads({ VIRTUAL_ENV: path.join(root, 'venv') });
      assert.deepStrictEqual(after, { library: { path: file, source: 'pip' }, identity: file, entry: true });
    });
  });
});
