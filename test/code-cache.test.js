'use strict';
// V8's code cache for lib/'s own modules (lib/code-cache.js), in child processes with a cache
// directory of their own.
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const cuda = require('..');
const codeCache = require('../lib/code-cache');

const ROOT = path.join(__dirname, '..');

// Runs script in a new node with CUDADRV_CACHE_DIR=dir (and env); its stdout parsed as JSON.
function child(dir, script, { args = [], env = {} } = {}) {
  const out = execFileSync(process.execPath, [...args, '-e', script],
    { cwd: ROOT, env: { ...process.env, CUDADRV_CACHE_DIR: dir, ...env } });
  return JSON.parse(out.toString());
}

// A process that loads cudadrv and reports, after the code cache's writes at exit, its counters
// and the lib/ modules loaded.
const LOAD = `
  const cuda = require('.');
  const { stats } = require('./lib/code-cache');
  const lib = Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(path.join(ROOT, 'lib') + path.sep)}));
  process.on('exit', () => console.log(JSON.stringify({ stats, lib })));`;

describe('code cache (V8\'s, for lib/)', function () {
  let dir;
  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-code-cache-'));
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const files = () => fs.readdirSync(path.join(dir, 'js')).sort();

  it('a new process leaves the code of each module it loaded; the next compiles none of them', function () {
    const first = child(dir, LOAD);
    // every lib/ module but the entry (index.js) and what the loader itself needs, loaded by Node
    const byLoader = first.lib.filter((f) => !/[/\\](index|code-cache|binding|cache-dir)\.js$/.test(f));
    assert.ok(byLoader.length >= 15, first.lib.join());
    assert.deepStrictEqual(first.stats, { hits: 0, misses: byLoader.length, written: byLoader.length });
    assert.strictEqual(files().length, byLoader.length);
    assert.ok(files().every((f) => /^[a-z-]+-[0-9a-f]{16}-[0-9a-f]+\.v8$/.test(f)), files().join());
    assert.strictEqual(fs.statSync(path.join(dir, 'js')).mode & 0o777, 0o700);
    const second = child(dir, LOAD);
    assert.deepStrictEqual(second.stats, { hits: byLoader.length, misses: 0, written: 0 });
    assert.deepStrictEqual(second.lib, first.lib);
  });

  it('a damaged file never reaches V8: the module compiles from source and its file is written again', function () {
    child(dir, LOAD);
    const names = files();
    const victim = path.join(dir, 'js', names.find((f) => f.startsWith('memory-')));
    const good = fs.readFileSync(victim);
    const damaged = Buffer.from(good);
    damaged[Math.floor(good.length / 2)] ^= 0x20;
    for (const bytes of [damaged, good.subarray(0, 8), good.subarray(0, good.length - 1)]) {
      fs.writeFileSync(victim, bytes);
      const again = child(dir, LOAD);
      assert.deepStrictEqual(again.stats, { hits: names.length - 1, misses: 1, written: 1 });
      assert.deepStrictEqual(files(), names);
      assert.deepStrictEqual(child(dir, LOAD).stats, { hits: names.length, misses: 0, written: 0 });
    }
    // and the modules work: a kernel-free call into the damaged one's exports
    assert.strictEqual(child(dir, `console.log(JSON.stringify(typeof require('.').memAlloc))`), 'function');
  });

  it('names files by source, versions and flags, not by the code of -e', function () {
    const source = Buffer.from('module.exports = 1;\n');
    const same = Buffer.from('module.exports = 2;\n'); // as long: V8 alone would take the old code
    const file = path.join(ROOT, 'lib', 'x.js');
    assert.notStrictEqual(codeCache.cacheName(file, source), codeCache.cacheName(file, same));
    assert.notStrictEqual(codeCache.cacheName(file, source), codeCache.cacheName(path.join(ROOT, 'lib', 'y.js'), source));
    child(dir, LOAD);
    const plain = files();
    child(dir, `${LOAD}\n// another script`);
    assert.deepStrictEqual(files(), plain);
    const flagged = child(dir, LOAD, { args: ['--max-old-space-size=1000'] });
    assert.deepStrictEqual(flagged.stats.hits, 0);
    assert.strictEqual(files().length, 2 * plain.length);
  });

  it('CUDADRV_DISABLE_CACHE turns it off; modules load the same', function () {
    const off = child(dir, LOAD, { env: { CUDADRV_DISABLE_CACHE: '1' } });
    assert.ok(off.stats.misses >= 15);
    assert.strictEqual(off.stats.written, 0);
    assert.ok(!fs.existsSync(path.join(dir, 'js')));
  });

  it('a directory that cannot be written costs nothing but the cache: no warning, no failure', function () {
    const file = path.join(dir, 'plain-file');
    fs.writeFileSync(file, '');
    const out = execFileSync(process.execPath, ['-e', `${LOAD}; require('./lib/compiler')`],
      { cwd: ROOT, env: { ...process.env, CUDADRV_CACHE_DIR: path.join(file, 'cache') }, stdio: ['ignore', 'pipe', 'pipe'] });
    assert.strictEqual(JSON.parse(out.toString()).stats.written, 0);
    assert.strictEqual(fs.readFileSync(file, 'utf8'), '');
  });

  it('in a realm of its own (as Jest gives each test file), modules load through the realm\'s require', function () {
    const vm = require('vm');
    const file = path.join(ROOT, 'lib', 'code-cache.js');
    const context = vm.createContext({ process, Buffer });
    const wrapped = vm.runInContext(require('module').wrap(fs.readFileSync(file, 'utf8')), context, { filename: file });
    const loaded = { exports: {} };
    wrapped(loaded.exports, require('module').createRequire(file), loaded, file, path.dirname(file));
    const asked = [];
    const module = { filename: file, require: (id) => asked.push(id) && 'from the realm' };
    assert.strictEqual(loaded.exports.requireFrom(module)('./errors'), 'from the realm');
    assert.deepStrictEqual(asked, ['./errors']);
    // and in the main realm, lib/ modules come from the code cache's loader, not module.require
    assert.strictEqual(codeCache.requireFrom(module)('./errors'), require('../lib/errors'));
    assert.deepStrictEqual(asked, ['./errors']);
  });

  it('modules loaded through it are the ones require() gives, and their errors point at their lines', function () {
    assert.strictEqual(require('../lib/compiler-cache'), require('../lib/compiler').internal.cache);
    assert.strictEqual(require('../lib/device').Device, cuda.Device);
    let error;
    try {
      cuda.memcpyHtoD(null, new Float32Array(1));
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof TypeError);
    const [, file, line] = /\((\/[^:]+\.js):(\d+):\d+\)/.exec(error.stack.split('\n')[1]);
    assert.ok(file.startsWith(path.join(ROOT, 'lib')), error.stack);
    assert.match(fs.readFileSync(file, 'utf8').split('\n')[line - 1], /throw|Error\(/);
  });
});
