'use strict';
// Every example runs to success on the GPU (a TypeScript one compiled by tsc first), and the
// README's quick start is the example it shows.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { describeGpu } = require('../support/gpu');

const root = path.join(__dirname, '..', '..');
const TSC = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const examples = fs
  .readdirSync(path.join(root, 'examples'))
  .filter((f) => /\.m?(js|ts)$/.test(f))
  .sort();

// The script that runs an example: itself, or for TypeScript what tsc makes of it, written under
// build/ so that require('cudadrv') still finds this package.
function runnable(ctx, file) {
  const source = path.join(root, 'examples', file);
  if (!/\.m?ts$/.test(file)) return source;
  if (!fs.existsSync(TSC)) ctx.skip(`TypeScript is not installed here (${TSC}) to compile ${file}`);
  const outDir = path.join(root, 'build', 'examples');
  const options = ['--strict', '--target', 'es2022', '--module', 'node16', '--types', 'node'];
  options.push('--rootDir', root, '--outDir', outDir); // the root: require('cudadrv') is this package
  const tsc = spawnSync(process.execPath, [TSC, ...options, source], { cwd: root, encoding: 'utf8' });
  assert.strictEqual(tsc.status, 0, `tsc ${file}:\n${tsc.stdout}${tsc.stderr}`);
  return path.join(outDir, 'examples', file.replace(/ts$/, 'js'));
}

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

// Examples that need no driver (compile.js uses NVRTC alone), and those run only through tsc.
const WITHOUT_DRIVER = new Set(['compile.js']);

describe('examples without a driver', function () {
  before(function () {
    if (require('../..').isAvailable()) {
      console.log('      (skipped: a driver is here, and the examples run for real in the GPU suite)');
      this.skip();
    }
  });
  for (const file of examples.filter((f) => !WITHOUT_DRIVER.has(f))) {
    it(`${file} prints one line saying so and exits 1`, function () {
      this.timeout(60000);
      const child = spawnSync(process.execPath, [runnable(this, file)], { cwd: root, encoding: 'utf8' });
      assert.strictEqual(child.status, 1, `${file} exited ${child.status}:\n${child.stdout}\n${child.stderr}`);
      const lines = (child.stdout + child.stderr).trim().split('\n');
      assert.strictEqual(lines.length, 1, `${file} printed:\n${lines.join('\n')}`);
      assert.match(lines[0], /\bno CUDA|No CUDA|needs a GPU|driver/, lines[0]);
    });
  }
  it("saxpy-ptx.mts, its types stripped as Node's own type stripping strips them, runs as it is: one line, exit 1", function () {
    this.timeout(60000);
    // amaro is the stripper Node 22.6+ runs .mts files through; strip-only refuses what Node would
    const { transformSync } = require('amaro');
    const source = fs.readFileSync(path.join(root, 'examples', 'saxpy-ptx.mts'), 'utf8');
    const stripped = path.join(root, 'build', 'examples', 'saxpy-ptx.stripped.mjs');
    fs.mkdirSync(path.dirname(stripped), { recursive: true });
    fs.writeFileSync(stripped, transformSync(source, { mode: 'strip-only' }).code);
    const child = spawnSync(process.execPath, [stripped], { cwd: root, encoding: 'utf8' });
    assert.strictEqual(child.status, 1, `exited ${child.status}:\n${child.stdout}\n${child.stderr}`);
    assert.strictEqual(child.stderr.trim(), 'saxpy-ptx: no CUDA device here');
  });
  for (const file of WITHOUT_DRIVER) {
    it(`${file} compiles with NVRTC alone, says it has no GPU, and exits 0`, function () {
      this.timeout(60000);
      const child = spawnSync(process.execPath, [runnable(this, file)], { cwd: root, encoding: 'utf8' });
      assert.strictEqual(child.status, 0, `${file} exited ${child.status}:\n${child.stdout}\n${child.stderr}`);
      assert.match(child.stdout, /^NVRTC \d+\.\d+\n/);
      assert.match(child.stdout, /\nNo GPU here: compiled only\.\n$/);
    });
  }
});

describeGpu('examples', function () {
  for (const file of examples) {
    it(`${file} runs and exits 0`, function () {
      this.timeout(120000);
      const child = spawnSync(process.execPath, [runnable(this, file)], { cwd: root, encoding: 'utf8' });
      assert.strictEqual(child.status, 0, `${file} exited ${child.status}:\n${child.stdout}\n${child.stderr}`);
      assert.ok(child.stdout.length > 0, `${file} printed nothing`);
      if (file === 'quick-start.mjs') assert.strictEqual(child.stdout.trim(), 'true');
    });
  }
});
