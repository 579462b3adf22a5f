'use strict';
// npm run docs: the API reference, from typings/ (their JSDoc) and the guides in docs/, written to
// docs/api by TypeDoc (typedoc.json: any warning fails, an undocumented declaration included).
// TypeDoc needs TypeScript's compiler API, which TypeScript 7 (this project's tsc) has not, so it
// lives with TypeScript 5 in scripts/docs/, installed by `npm install` (the prepare script).
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const typedoc = path.join(__dirname, 'docs', 'node_modules', 'typedoc', 'bin', 'typedoc');
if (!fs.existsSync(typedoc)) {
  console.error('docs: TypeDoc is not installed: run npm ci --prefix scripts/docs (npm install does it)');
  process.exit(1);
}
const result = spawnSync(process.execPath, [typedoc, '--logLevel', 'Warn'], { cwd: ROOT, stdio: 'inherit' });
process.exit(result.status ?? 1);
