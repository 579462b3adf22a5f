'use strict';
// npm run docs [-- TypeDoc's options]: the API reference, from typings/ (their JSDoc) and the
// guides in docs/, written to docs/api by TypeDoc (typedoc.json: any warning fails, an undocumented declaration included).
// TypeDoc needs TypeScript's compiler API, which TypeScript 7 (this project's tsc) has not, so it
// lives with TypeScript 5 in scripts/docs/, installed here from its own lockfile the first time:
// no install script brings documentation tools to the package's consumers.
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const typedoc = path.join(__dirname, 'docs', 'node_modules', 'typedoc', 'bin', 'typedoc');
if (!fs.existsSync(typedoc)) {
  // npm_execpath: the npm running this script (npm run docs), else the one on PATH
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const args = ['ci', '--prefix', path.join(__dirname, 'docs'), '--no-audit', '--no-fund', '--loglevel=error'];
  const installed = spawnSync(npm[0], [...npm.slice(1), ...args], {
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (installed.status !== 0) {
    console.error('docs: TypeDoc could not be installed: run npm ci --prefix scripts/docs and see why');
    process.exit(1);
  }
}
// Arguments are TypeDoc's (--out DIR: elsewhere than docs/api, as the site test builds it).
const args = [typedoc, '--logLevel', 'Warn', ...process.argv.slice(2)];
const result = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
process.exit(result.status ?? 1);
