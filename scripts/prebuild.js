#!/usr/bin/env node
'use strict';
// `npm run prebuild [-- arch...]`: the prebuilt binaries that ship in the package, one per
// platform (Node-API: one binary serves every Node from 18, Electron, Bun and Deno), written by
// prebuildify to prebuilds/linux-<arch>/. Default: x64 and arm64; arm64 is cross-built with
// Debian's aarch64 toolchain (gcc-aarch64-linux-gnu) and skipped, saying so, where it is missing.
// The native architecture is built last, so that build/Release is left holding a binary this
// machine can load.
const { spawnSync } = require('child_process');
const os = require('os');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const CROSS = { arm64: 'aarch64-linux-gnu', x64: 'x86_64-linux-gnu' };

function has(command) {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

function prebuild(arch) {
  const env = { ...process.env };
  if (arch !== os.arch()) {
    const gcc = `${CROSS[arch]}-gcc`;
    if (!has(gcc)) {
      console.log(`prebuild: skipped linux-${arch}: ${gcc} is not installed`);
      return;
    }
    Object.assign(env, { CC: gcc, CXX: gcc, LINK: gcc, PREBUILD_STRIP_BIN: `${CROSS[arch]}-strip` });
  }
  const bin = require.resolve('prebuildify/bin.js');
  const result = spawnSync(process.execPath, [bin, '--napi', '--strip', '--arch', arch], {
    cwd: ROOT,
    env,
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error(`prebuild: linux-${arch} failed (${result.signal || result.status})`);
  console.log(`prebuild: wrote prebuilds/linux-${arch}`);
}

const requested = process.argv.slice(2);
const archs = requested.length ? requested : ['arm64', 'x64'];
for (const arch of archs) {
  if (!CROSS[arch]) throw new Error(`prebuild: unknown architecture ${arch}; use x64 or arm64`);
}
archs.sort((a, b) => (a === os.arch()) - (b === os.arch())).forEach(prebuild);
