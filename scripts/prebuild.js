#!/usr/bin/env node
'use strict';
// `npm run prebuild [-- arch...]`, and npm's prepack (so `npm pack` and `npm publish` always carry
// them): the prebuilt binaries that ship in the package, one per platform (Node-API: one binary
// serves every Node from 18, Electron, Bun and Deno), in prebuilds/linux-<arch>/. Default: x64
// and arm64, each required: the one that is not this machine's is cross-built with Debian's
// toolchain (gcc-aarch64-linux-gnu or gcc-x86-64-linux-gnu), and a missing toolchain fails.
//
// Each is built by prebuildify in a copy of the sources, never in build/, which the running tests
// and this checkout's own addon use; it is skipped where prebuilds/ holds one made from the same
// sources and compiler (a digest in build/prebuild/). Output goes to stderr: `npm pack --json`
// must print JSON alone. Run it through npm, which puts node-gyp on PATH.
const { execFileSync, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const CROSS = { arm64: 'aarch64-linux-gnu', x64: 'x86_64-linux-gnu' };
const DEBIAN_PACKAGE = { arm64: 'gcc-aarch64-linux-gnu', x64: 'gcc-x86-64-linux-gnu' };
// What a build reads: binding.gyp, the C sources and the scripts binding.gyp runs.
const INPUTS = ['binding.gyp', 'src', 'scripts/find-cuda.js', 'scripts/gen-constants.js', 'scripts/cuda-header.js'];
const DIGESTS = path.join(ROOT, 'build', 'prebuild');

function files(relative) {
  const full = path.join(ROOT, relative);
  if (!fs.statSync(full).isDirectory()) return [relative];
  return fs
    .readdirSync(full)
    .sort()
    .flatMap((name) => files(path.join(relative, name)));
}

// The compiler's environment for arch: {} for this machine's, CC and friends for a cross build.
function compilerEnv(arch) {
  if (arch === os.arch()) return {};
  const gcc = `${CROSS[arch]}-gcc`;
  if (spawnSync(gcc, ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(
      `prebuild: linux-${arch} needs the cross compiler ${gcc}, which is not installed: ` +
        `install Debian's ${DEBIAN_PACKAGE[arch]} (apt-get install ${DEBIAN_PACKAGE[arch]})`,
    );
  }
  return { CC: gcc, CXX: gcc, LINK: gcc, PREBUILD_STRIP_BIN: `${CROSS[arch]}-strip` };
}

function digestOf(arch, env) {
  const hash = crypto.createHash('sha256');
  const cc = env.CC || process.env.CC || 'cc';
  hash.update(execFileSync(cc, ['--version'], { encoding: 'utf8' }));
  hash.update(execFileSync(process.execPath, [path.join(__dirname, 'find-cuda.js')], { encoding: 'utf8' }));
  for (const file of INPUTS.flatMap(files)) hash.update(file).update(fs.readFileSync(path.join(ROOT, file)));
  return `${arch} ${hash.digest('hex')}`;
}

function prebuild(arch) {
  const env = compilerEnv(arch);
  const target = path.join(ROOT, 'prebuilds', `linux-${arch}`, 'cudadrv.node');
  const stamp = path.join(DIGESTS, arch);
  const digest = digestOf(arch, env);
  if (fs.existsSync(target) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === digest) {
    console.error(`prebuild: linux-${arch} is up to date`);
    return;
  }
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), `cudadrv-prebuild-${arch}-`));
  try {
    for (const input of [...INPUTS, 'package.json']) {
      fs.cpSync(path.join(ROOT, input), path.join(stage, input), { recursive: true });
    }
    const bin = require.resolve('prebuildify/bin.js');
    const result = spawnSync(process.execPath, [bin, '--napi', '--strip', '--arch', arch], {
      cwd: stage,
      env: { ...process.env, ...env },
      stdio: ['ignore', process.stderr, process.stderr],
    });
    if (result.status !== 0) throw new Error(`prebuild: linux-${arch} failed (${result.signal || result.status})`);
    // Renamed into place whole: a pack running meanwhile never takes half a file.
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const partial = `${target}.${process.pid}`;
    fs.copyFileSync(path.join(stage, 'prebuilds', `linux-${arch}`, 'cudadrv.node'), partial);
    fs.renameSync(partial, target);
    fs.mkdirSync(DIGESTS, { recursive: true });
    fs.writeFileSync(stamp, digest);
    console.error(`prebuild: wrote prebuilds/linux-${arch}`);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

const requested = process.argv.slice(2);
const archs = requested.length ? requested : ['arm64', 'x64'];
try {
  for (const arch of archs) {
    if (!CROSS[arch]) throw new Error(`prebuild: unknown architecture ${arch}; use x64 or arm64`);
  }
  archs.forEach(prebuild);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
