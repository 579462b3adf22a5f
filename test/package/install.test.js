'use strict';
// The package as a user installs it: its files packed with the prebuilt binary for this machine
// (npm run prebuild), installed into an empty project by a PATH that holds node, npm and sh only, and
// with the CUDA headers out of reach: no build may happen, and the prebuilt binary must serve.
const assert = require('assert');
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { hasGpu } = require('../support/gpu');
const { NPM_CLI, npm, pack, skipWithoutNpm } = require('../support/npm');

const ROOT = path.join(__dirname, '..', '..');
describe('the packed package, installed with no compiler and no CUDA headers', function () {
  this.timeout(300000);
  let stage;
  let installed;
  let bare; // the environment of the install and of the app: node, npm and sh only on PATH

  before(function () {
    if (process.platform !== 'linux') this.skip();
    skipWithoutNpm(this);
    stage = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-install-'));
    // The package's own files, as published, with its prebuilt binary made there.
    const source = path.join(stage, 'source');
    execFileSync('tar', ['xzf', pack(ROOT, stage), '-C', stage]);
    fs.renameSync(path.join(stage, 'package'), source);
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(source, 'node_modules'));
    npm(['run', 'prebuild', '--', os.arch()], { cwd: source });
    fs.rmSync(path.join(source, 'build'), { recursive: true, force: true });
    fs.rmSync(path.join(source, 'node_modules'));
    const tarball = pack(source, stage);

    const bin = path.join(stage, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    fs.symlinkSync('/bin/sh', path.join(bin, 'sh')); // npm runs scripts with it
    fs.writeFileSync(path.join(bin, 'npm'), `#!/bin/sh\nexec node ${JSON.stringify(NPM_CLI)} "$@"\n`, { mode: 0o755 });
    bare = {
      PATH: bin,
      HOME: os.homedir(),
      CUDA_PATH: path.join(stage, 'no-cuda'),
      CUDA_HOME: path.join(stage, 'no-cuda'),
    };
    const app = path.join(stage, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "private": true }\n');
    npm(['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: app, env: bare });
    installed = path.join(app, 'node_modules', 'cudadrv');
  });

  after(function () {
    if (stage) fs.rmSync(stage, { recursive: true, force: true });
  });

  it('had no compiler to build with', function () {
    for (const tool of ['cc', 'gcc', 'make', 'python3']) {
      assert.strictEqual(spawnSync(tool, ['--version'], { env: bare }).error?.code, 'ENOENT', tool);
    }
  });

  it('built nothing: the prebuilt binary, the examples and the changelog are in the package', function () {
    assert.strictEqual(fs.existsSync(path.join(installed, 'build')), false);
    assert.ok(fs.statSync(path.join(installed, 'prebuilds', `linux-${os.arch()}`, 'cudadrv.node')).size > 0);
    for (const file of ['examples/device-query.js', 'CHANGELOG.md', 'typings/index.d.ts']) {
      assert.ok(fs.existsSync(path.join(installed, file)), file);
    }
  });

  it('requires, answers isAvailable(), and compiles with NVRTC', function () {
    const script = `
      const cuda = require('cudadrv');
      const ptx = require('cudadrv/compiler').compileSync('__global__ void k(int *p) { *p = 7; }', { arch: 'compute_75' });
      console.log(JSON.stringify({ available: cuda.isAvailable(), entry: ptx.toString().includes('.entry k') }));`;
    const env = {
      ...bare,
      ...(process.env.CUDADRV_NVRTC_PATH && { CUDADRV_NVRTC_PATH: process.env.CUDADRV_NVRTC_PATH }),
    };
    const out = execFileSync(process.execPath, ['-e', script], { cwd: path.dirname(path.dirname(installed)), env });
    assert.deepStrictEqual(JSON.parse(out.toString()), { available: hasGpu, entry: true });
  });
});
