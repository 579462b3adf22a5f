'use strict';
// Every example runs to success on the GPU, and the README's quick start is the example it shows.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { describeGpu } = require('../support/gpu');

const root = path.join(__dirname, '..', '..');
const examples = fs
  .readdirSync(path.join(root, 'examples'))
  .filter((f) => /\.(m?js)$/.test(f))
  .sort();

describe('README', function () {
  it('shows examples/quick-start.mjs as its quick start, word for word', function () {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const start = readme.indexOf('```js\n', readme.indexOf('## Quick start')) + '```js\n'.length;
    const block = readme.slice(start, readme.indexOf('```\n', start));
    assert.strictEqual(block, fs.readFileSync(path.join(root, 'examples', 'quick-start.mjs'), 'utf8'));
  });

  it('names every example', function () {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    for (const file of fs.readdirSync(path.join(root, 'examples'))) {
      assert.ok(readme.includes(file), `README mentions examples/${file}`);
    }
  });
});

describeGpu('examples', function () {
  for (const file of examples) {
    it(`${file} runs and exits 0`, function () {
      this.timeout(120000);
      const child = spawnSync(process.execPath, [path.join(root, 'examples', file)], { cwd: root, encoding: 'utf8' });
      assert.strictEqual(child.status, 0, `${file} exited ${child.status}:\n${child.stdout}\n${child.stderr}`);
      assert.ok(child.stdout.length > 0, `${file} printed nothing`);
      if (file === 'quick-start.mjs') assert.strictEqual(child.stdout.trim(), 'true');
    });
  }
});
