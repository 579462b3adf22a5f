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

/** Packs dir (its files as published, no scripts run) into destination; the tarball's path. */
function pack(dir, destination) {
  const [{ filename }] = JSON.parse(
    npm(['pack', '--json', '--ignore-scripts', '--pack-destination', destination], { cwd: dir }),
  );
  return path.join(destination, filename);
}

module.exports = { NPM_CLI, npm, pack, skipWithoutNpm };
