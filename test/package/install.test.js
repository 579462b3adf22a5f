'use strict';
// The package as a user installs it: packed as `npm publish` packs it (prepack builds the prebuilt
// binaries of both architectures first), installed into an empty project by a PATH that holds node,
// npm and sh only, and with the CUDA headers out of reach: no build may happen, and the prebuilt
// binary must serve, with install scripts run and with them disabled.
const assert = require('assert');
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { hasGpu } = require('../support/gpu');
const { NPM_CLI, npm, pack, skipWithoutNpm, skipWithoutCrossCompiler } = require('../support/npm');

const ROOT = path.join(__dirname, '..', '..');
// ELF's e_machine (the 2 bytes at offset 18) for each architecture a binary is shipped for
const ELF_MACHINE = { x64: 62, arm64: 183 };

describe('the packed package, installed with no compiler and no CUDA headers', function () {
  this.timeout(300000);
  let stage;
  let tarball;
  let installed;
  let bare; // the environment of the install and of the app: node, npm and sh only on PATH

  before(function () {
    if (process.platform !== 'linux') this.skip();
    skipWithoutNpm(this);
    skipWithoutCrossCompiler(this);
    stage = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-install-'));
    // pack() parses npm pack --json's output: the prepack script's must not reach stdout
    tarball = pack(ROOT, stage, { scripts: true });

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

  it('holds a prebuilt binary for linux-x64 and one for linux-arm64, each built for its machine', function () {
    const listed = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n');
    for (const [arch, machine] of Object.entries(ELF_MACHINE)) {
      const entry = `package/prebuilds/linux-${arch}/cudadrv.node`;
      assert.ok(listed.includes(entry), `${entry} is not in the tarball`);
      const binary = execFileSync('tar', ['xzOf', tarball, entry], { maxBuffer: 64 * 2 ** 20 });
      assert.strictEqual(binary.subarray(0, 4).toString('latin1'), '\x7fELF', entry);
      assert.strictEqual(binary.readUInt16LE(18), machine, `${entry} is built for machine ${binary.readUInt16LE(18)}`);
    }
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

  it('installs with scripts disabled (--ignore-scripts), and the prebuilt binary loads', function () {
    const app = path.join(stage, 'app-without-scripts');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "private": true }\n');
    npm(['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      cwd: app,
      env: bare,
    });
    const script = "console.log(typeof require('cudadrv').isAvailable())";
    const out = execFileSync(process.execPath, ['-e', script], { cwd: app, env: bare, encoding: 'utf8' });
    assert.strictEqual(out.trim(), 'boolean');
  });
});
