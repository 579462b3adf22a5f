'use strict';
// The compile cache is data that another local user must not be able to plant or redirect: a
// directory is used only when it is this user's and writable by no one else, entries are read
// without following symbolic links, and a FIFO where an entry was never blocks a compile.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { nvrtcLoads } = require('../support/nvrtc-available');

const COMPILER = JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'compiler', 'index.js'));
const CACHE = JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'compiler', 'cache.js'));

// Compiles source twice in a new process with cacheDir dir, dropping the in-memory cache between;
// returns the warnings, the cache's counters and whether both compiles gave the same PTX.
function compileTwice(dir, source) {
  const script = `
    const c = require(${COMPILER});
    const warnings = [];
    process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
    const opts = { cacheDir: ${JSON.stringify(dir)}, code: 'compute_90' };
    const a = c.compileSync(${JSON.stringify(source)}, opts);
    require(${CACHE}).clearMemory();
    const b = c.compileSync(${JSON.stringify(source)}, opts);
    setImmediate(() => console.log(JSON.stringify({ warnings, same: a.equals(b), stats: require(${CACHE}).stats })));`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30000 });
  assert.strictEqual(child.signal, null, `the compile hung or crashed: ${child.stderr.slice(-300)}`);
  assert.strictEqual(child.status, 0, child.stderr);
  return JSON.parse(child.stdout);
}

const entries = (dir) => fs.readdirSync(dir).filter((f) => f.endsWith('.entry'));

describe('the compile cache refuses what others could plant', function () {
  this.timeout(60000);
  let root;
  let n = 0;
  const source = () => `__global__ void k(float *x) { x[0] = ${++n}.5f + ${process.pid}; }`;
  before(function () {
    if (!nvrtcLoads()) this.skip();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-cache-safety-'));
  });
  after(() => root && fs.rmSync(root, { recursive: true, force: true }));

  it('a directory of its own (0700) is used: the second compile is a disk hit', function () {
    const dir = path.join(root, 'own');
    const out = compileTwice(dir, source());
    assert.deepStrictEqual(out.warnings, []);
    assert.deepStrictEqual([out.stats.compiles, out.stats.diskHits, out.same], [1, 1, true]);
    assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700);
  });

  it('a directory others can write: one CUDADRV_CACHE_UNSAFE warning, nothing read or written', function () {
    const dir = path.join(root, 'shared');
    fs.mkdirSync(dir);
    fs.chmodSync(dir, 0o777);
    const out = compileTwice(dir, source());
    assert.strictEqual(out.warnings.length, 1);
    assert.strictEqual(out.warnings[0].code, 'CUDADRV_CACHE_UNSAFE');
    assert.match(out.warnings[0].message, /can be written by other users \(owner \d+, mode 777\)/);
    assert.deepStrictEqual([out.stats.compiles, out.stats.diskHits, out.same], [2, 0, true]);
    assert.deepStrictEqual(fs.readdirSync(dir), []);
  });

  it("another user's directory is not used either", function () {
    if (process.getuid() !== 0) this.skip(); // only root can give a directory away
    const dir = path.join(root, 'theirs');
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chownSync(dir, 65534, 65534);
    const out = compileTwice(dir, source());
    assert.strictEqual(out.warnings[0].code, 'CUDADRV_CACHE_UNSAFE');
    assert.match(out.warnings[0].message, /belongs to another user/);
    assert.deepStrictEqual([out.stats.compiles, out.stats.diskHits], [2, 0]);
  });

  it('an entry that is a symbolic link is not followed, and one that is a FIFO does not block', function () {
    const dir = path.join(root, 'planted');
    const text = source();
    compileTwice(dir, text);
    const [entry] = entries(dir);
    const elsewhere = path.join(root, 'elsewhere.entry');
    fs.renameSync(path.join(dir, entry), elsewhere);
    fs.symlinkSync(elsewhere, path.join(dir, entry));
    let out = compileTwice(dir, text);
    assert.strictEqual(out.stats.diskHits, 1); // the first compile met the link and compiled;
    assert.strictEqual(out.stats.compiles, 1); // its write replaced the link with a file
    assert.ok(fs.lstatSync(path.join(dir, entry)).isFile());
    fs.rmSync(path.join(dir, entry));
    spawnSync('mkfifo', [path.join(dir, entry)]);
    if (!fs.lstatSync(path.join(dir, entry)).isFIFO()) this.skip();
    out = compileTwice(dir, text); // hung for ever before
    assert.strictEqual(out.stats.compiles, 1);
    assert.strictEqual(out.stats.diskHits, 1);
  });
});
