'use strict';
// The packed package as its consumers' tools see it: arethetypeswrong (every subpath's types agree
// with its JavaScript under each module resolution: an ES module import gets ES declarations,
// typings/index.d.mts, not CommonJS ones "masquerading" as them) and publint (package.json's
// fields and exports point at files that exist, in the formats they claim).
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { pack, skipWithoutNpm } = require('../support/npm');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'node_modules', '.bin');

describe('the packed package under arethetypeswrong and publint', function () {
  this.timeout(180000);
  let dir;
  let tarball;

  before(function () {
    if (!fs.existsSync(path.join(BIN, 'attw'))) this.skip(); // the GPU machine's copy has no dev tools
    skipWithoutNpm(this);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-pack-'));
    tarball = pack(ROOT, dir);
  });
  after(function () {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('arethetypeswrong finds no problem in any subpath', function () {
    const attw = spawnSync(path.join(BIN, 'attw'), [tarball, '--format', 'json'], { encoding: 'utf8' });
    const report = JSON.parse(attw.stdout);
    assert.deepStrictEqual(report.analysis.problems, [], JSON.stringify(report.analysis.problems, null, 2));
    assert.strictEqual(attw.status, 0, attw.stderr);
  });

  it('publint finds nothing to fix', function () {
    const publint = spawnSync(path.join(BIN, 'publint'), [tarball, '--strict'], { encoding: 'utf8' });
    assert.strictEqual(publint.status, 0, publint.stdout + publint.stderr);
    assert.match(publint.stdout, /All good!/);
  });
});
