'use strict';
// npm as the package tests run it: the npm installed beside this node (the GPU machine's copy of
// node has none: the tests that need it skip there), and `npm pack` of a directory.
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const NPM_CLI = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');

/** Skips the calling suite's hook (mocha's `this`) where npm is not installed beside node. */
function skipWithoutNpm(hook) {
  if (fs.existsSync(NPM_CLI)) return;
  console.log(`      (skipped: npm is not installed beside node, at ${NPM_CLI})`);
  hook.skip();
}

function npm(args, options) {
  const result = spawnSync(process.execPath, [NPM_CLI, ...args], { encoding: 'utf8', ...options });
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/**
 * Packs dir (its files as published) into destination; the tarball's path. No scripts run unless
 * scripts is true: then prepack builds the prebuilt binaries first, as for a publish.
 */
function pack(dir, destination, { scripts = false } = {}) {
  const args = ['pack', '--json', '--pack-destination', destination, ...(scripts ? [] : ['--ignore-scripts'])];
  const [{ filename }] = JSON.parse(npm(args, { cwd: dir }));
  return path.join(destination, filename);
}

/**
 * Skips the calling suite's hook where the cross compiler that prepack's prebuilt binary for the
 * other architecture needs is missing; fails instead where CUDADRV_REQUIRE_PREBUILDS=1 (CI).
 */
function skipWithoutCrossCompiler(hook) {
  const gcc = process.arch === 'arm64' ? 'x86_64-linux-gnu-gcc' : 'aarch64-linux-gnu-gcc';
  if (spawnSync(gcc, ['--version'], { stdio: 'ignore' }).status === 0) return;
  const why = `${gcc} is not installed, and packing builds both prebuilt binaries`;
  if (process.env.CUDADRV_REQUIRE_PREBUILDS === '1') throw new Error(`CUDADRV_REQUIRE_PREBUILDS=1, but ${why}`);
  console.log(`      (skipped: ${why})`);
  hook.skip();
}

module.exports = { NPM_CLI, npm, pack, skipWithoutNpm, skipWithoutCrossCompiler };
