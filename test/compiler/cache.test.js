'use strict';
// The compile cache (lib/compiler/cache.js) and the addon's file reads under it: NVRTC needs no
// GPU, so all of it runs here and in CI.
const assert = require('assert');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const compiler = require('../../lib/compiler');
const binding = require('../../lib/internal/binding');
const { randomFloat, ptxFloat, tmpdir, sha, run, scratchCacheRoot, ROOT } = require('../support/compile-helpers');

const { compile, compileSync } = compiler;
const cache = require('../../lib/compiler/cache');
const { request, INCLUDE_DIR } = require('../../lib/compiler/request');

// XXH64 (seed 0) as the xxHash specification gives it, in BigInt: the reference for the addon's.
function xxh64Reference(bytes) {
  const M = (1n << 64n) - 1n;
  const [P1, P2, P3, P4, P5] = [
    0x9e3779b185ebca87n,
    0xc2b2ae3d27d4eb4fn,
    0x165667b19e3779f9n,
    0x85ebca77c2b2ae63n,
    0x27d4eb2f165667c5n,
  ];
  const rol = (x, n) => ((x << BigInt(n)) | (x >> BigInt(64 - n))) & M;
  const round = (acc, input) => (rol((acc + input * P2) & M, 31) * P1) & M;
  const n = bytes.length;
  let i = 0;
  let h = P5;
  if (n >= 32) {
    let v = [(P1 + P2) & M, P2, 0n, (0n - P1) & M];
    for (; n - i >= 32; i += 32) v = v.map((acc, j) => round(acc, bytes.readBigUInt64LE(i + 8 * j)));
    h = (rol(v[0], 1) + rol(v[1], 7) + rol(v[2], 12) + rol(v[3], 18)) & M;
    for (const acc of v) h = ((h ^ round(0n, acc)) * P1 + P4) & M;
  }
  h = (h + BigInt(n)) & M;
  for (; n - i >= 8; i += 8) h = (rol(h ^ round(0n, bytes.readBigUInt64LE(i)), 27) * P1 + P4) & M;
  if (n - i >= 4) {
    h = (rol(h ^ ((BigInt(bytes.readUInt32LE(i)) * P1) & M), 23) * P2 + P3) & M;
    i += 4;
  }
  for (; i < n; i++) h = (rol(h ^ ((BigInt(bytes[i]) * P5) & M), 11) * P1) & M;
  h = ((h ^ (h >> 33n)) * P2) & M;
  h = ((h ^ (h >> 29n)) * P3) & M;
  return h ^ (h >> 32n);
}

describe('cudadrv/compiler: the cache', function () {
  const cacheRoot = scratchCacheRoot();
  describe("the cache's file reads (the addon's readFile and stat)", function () {
    let dir;
    before(function () {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-files-'));
    });
    after(function () {
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("readFile gives a file's bytes up to its limit, and null where there is no regular file to read", function () {
      const file = path.join(dir, 'data.bin');
      const bytes = crypto.randomBytes(70000 + Math.floor(Math.random() * 1000));
      fs.writeFileSync(file, bytes);
      assert.ok(binding.readFile(file, false, bytes.length).equals(bytes));
      assert.throws(() => binding.readFile(file, false, bytes.length - 1), {
        name: 'RangeError',
        message: `${file} is ${bytes.length} bytes, more than the ${bytes.length - 1} cudadrv reads of it`,
      });
      fs.writeFileSync(file, '');
      assert.strictEqual(binding.readFile(file, false, 0).length, 0);
      for (const nothing of [path.join(dir, 'absent'), dir, `${file}\0.entry`, `/${'x'.repeat(5000)}`]) {
        assert.strictEqual(binding.readFile(nothing, false, 1e9), null, nothing.slice(0, 40));
      }
      assert.throws(() => binding.readFile(7, false, 1), { name: 'TypeError', message: 'expected a path (a string)' });
      assert.throws(() => binding.readFile(file, false), { name: 'TypeError', message: /needs a limit/ });
    });

    it('stat gives what fs.statSync gives, and null where there is nothing', function () {
      const file = path.join(dir, 'stamped.txt');
      fs.writeFileSync(file, 'x'.repeat(Math.floor(Math.random() * 100)));
      for (const place of [file, dir]) {
        const s = fs.statSync(place);
        assert.deepStrictEqual(binding.stat(place), [s.dev, s.ino, s.mode, s.size, s.mtimeMs, s.ctimeMs]);
      }
      for (const nothing of [path.join(dir, 'absent'), `${file}\0`, path.join(file, 'below-a-file')]) {
        assert.strictEqual(binding.stat(nothing), null);
      }
      assert.throws(() => binding.stat(undefined), { name: 'TypeError', message: 'expected a path (a string)' });
    });
  });

  describe('the compile cache', function () {
    let dir;
    let n = 0;
    beforeEach(function () {
      dir = path.join(cacheRoot(), `c${n++}`);
    });
    // a source no other test compiles
    const fresh = () => `__global__ void k(float *x) { x[threadIdx.x] *= ${randomFloat().toPrecision(9)}f; }`;
    // the entries on disk, once the background writes are done
    const entries = () => {
      cache.flush();
      return fs.readdirSync(dir).filter((f) => f.endsWith('.entry'));
    };

    it('hits in memory, then on disk, with the same bytes; the directory is private', function () {
      const source = fresh();
      const before = { ...cache.stats };
      const compiled = compileSync(source, { cacheDir: dir, arch: 'sm_90' });
      const first = Buffer.from(compiled);
      compiled.fill(0); // a fresh compile's caller owns its image: the cache keeps a copy
      assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700);
      assert.strictEqual(entries().length, 1);
      assert.strictEqual(fs.statSync(path.join(dir, entries()[0])).mode & 0o777, 0o600);
      const again = compileSync(source, { cacheDir: dir, arch: 'sm_90' });
      assert.strictEqual(cache.stats.memoryHits, before.memoryHits + 1);
      cache.clearMemory();
      const fromDisk = compileSync(source, { cacheDir: dir, arch: 'sm_90' });
      assert.strictEqual(cache.stats.diskHits, before.diskHits + 1);
      assert.strictEqual(cache.stats.compiles, before.compiles + 1);
      for (const image of [again, fromDisk]) {
        assert.ok(image.equals(first));
        assert.notStrictEqual(image.buffer, compiled.buffer); // each caller gets its own copy
        assert.strictEqual(image.target, 'sm_90');
      }
      again.fill(0);
      assert.ok(compileSync(source, { cacheDir: dir, arch: 'sm_90' }).equals(first));
    });

    it('keeps lowered names and logs', function () {
      const source = `template <int N> __global__ void k(int *x) { int unused; x[0] = N + ${n}; }`;
      const opts = { cacheDir: dir, code: 'compute_90', nameExpressions: ['k<7>'] };
      const first = compileSync(source, opts);
      cache.clearMemory();
      const hit = compileSync(source, opts);
      assert.strictEqual(cache.stats.diskHits > 0, true);
      assert.deepStrictEqual({ ...hit.loweredNames }, { 'k<7>': '_Z1kILi7EEvPi' });
      assert.strictEqual(hit.log, first.log);
      assert.match(hit.log, /warning/);
    });

    it('keys on options, target, name expressions, headers and every included file, recursively', function () {
      const inc = tmpdir('key');
      fs.writeFileSync(path.join(inc, 'outer.h'), '#include "inner.h"\n');
      fs.writeFileSync(path.join(inc, 'inner.h'), '#define FACTOR 2.0f\n');
      const source = '#include <outer.h>\n#include "mem.h"\n__global__ void k(float *x) { x[0] *= FACTOR * SCALE; }';
      const base = {
        cacheDir: dir,
        code: 'compute_90',
        includeDirs: [inc],
        headers: { 'mem.h': '#define SCALE 3.0f' },
        options: [],
      };
      const compiles = () => cache.stats.compiles;
      const start = compiles();
      const first = compileSync(source, base);
      assert.ok(first.toString().includes(ptxFloat(6)));
      compileSync(source, base);
      assert.strictEqual(compiles(), start + 1);
      // each change below compiles anew
      fs.writeFileSync(path.join(inc, 'inner.h'), '#define FACTOR 5.0f\n');
      assert.ok(compileSync(source, base).toString().includes(ptxFloat(15)));
      assert.strictEqual(compiles(), start + 2);
      compileSync(source, { ...base, headers: { 'mem.h': '#define SCALE 7.0f' } });
      compileSync(source, { ...base, options: ['-DUNUSED'] });
      compileSync(source, { ...base, code: 'compute_100' });
      compileSync(source, { ...base, nameExpressions: ['k'] });
      compileSync(source, { ...base, noExternC: true });
      compileSync(source, { ...base, name: 'other.cu' });
      assert.strictEqual(compiles(), start + 8);
      // a header appearing earlier on the search path
      const early = tmpdir('early');
      fs.writeFileSync(path.join(early, 'inner.h'), '#define FACTOR 11.0f\n');
      fs.writeFileSync(path.join(early, 'outer.h'), '#include "inner.h"\n');
      assert.ok(
        compileSync(source, { ...base, includeDirs: [early, inc] })
          .toString()
          .includes(ptxFloat(33)),
      );
      assert.strictEqual(compiles(), start + 9);
      // a pre-included header
      fs.writeFileSync(path.join(inc, 'pre.h'), '#define PRE 1\n');
      const pre = { ...base, options: ['--pre-include=pre.h'] };
      compileSync(source, pre);
      compileSync(source, pre);
      fs.writeFileSync(path.join(inc, 'pre.h'), '#define PRE 2\n');
      compileSync(source, pre);
      assert.strictEqual(compiles(), start + 11);
      fs.rmSync(inc, { recursive: true });
      fs.rmSync(early, { recursive: true });
    });

    it('detects truncated and altered entries, and recompiles them', function () {
      const source = fresh();
      const opts = { cacheDir: dir, arch: 'sm_90' };
      const good = compileSync(source, opts);
      const file = path.join(dir, entries()[0]);
      const bytes = fs.readFileSync(file);
      const damages = [
        bytes.subarray(0, bytes.length - 100), // truncated
        Buffer.concat([bytes.subarray(0, bytes.length - 1), Buffer.from([bytes[bytes.length - 1] ^ 1])]), // a flipped bit
        Buffer.alloc(0),
        Buffer.from('not an entry at all, but long enough to have a header.....'),
      ];
      for (const damaged of damages) {
        fs.writeFileSync(file, damaged);
        cache.clearMemory();
        const before = { ...cache.stats };
        assert.ok(compileSync(source, opts).equals(good));
        assert.strictEqual(cache.stats.corrupt, before.corrupt + 1);
        assert.strictEqual(cache.stats.compiles, before.compiles + 1);
        cache.flush();
        assert.ok(fs.readFileSync(file).equals(bytes)); // rewritten whole
      }
    });

    it('an entry or record past its size limit is a miss, read no further; the entry is removed and written again', function () {
      const source = fresh();
      const opts = { cacheDir: dir, arch: 'sm_90' };
      const good = compileSync(source, opts);
      cache.flush();
      const file = path.join(dir, entries()[0]);
      const bytes = fs.readFileSync(file);
      const records = fs.readdirSync(dir).filter((name) => /^nvrtc-.*\.json$/.test(name));
      assert.strictEqual(records.length, 1);
      // sparse files: 3 GiB of entry (read whole before, 16 s, then found corrupt), 5 GiB of record
      // (past what a Buffer holds: every compile failed)
      fs.truncateSync(file, 3 * 2 ** 30);
      fs.truncateSync(path.join(dir, records[0]), 5 * 2 ** 30);
      const start = Date.now();
      const script = `const c = require('./lib/compiler');
        const image = c.compileSync(${JSON.stringify(source)}, ${JSON.stringify(opts)});
        require('./lib/compiler/cache').flush();
        console.log(image.toString('base64'));`;
      const child = require('child_process').execFileSync(process.execPath, ['-e', script], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      assert.ok(Buffer.from(child.trim(), 'base64').equals(good));
      assert.ok(Date.now() - start < 10000, `took ${Date.now() - start} ms`);
      assert.ok(fs.readFileSync(file).equals(bytes), 'the entry is written again');
    });

    it('several processes compiling the same source at once all succeed', async function () {
      const source = `${fresh()}
        __global__ void heavy(float *out, const float *in) {
          float acc = in[threadIdx.x];
          #pragma unroll
          for (int i = 0; i < 12; i++) acc = acc * in[(i * 7) & 255] + sinf(acc + i);
          out[threadIdx.x] = acc; }`;
      const script = `
        const c = require('./lib/compiler');
        const image = c.compileSync(${JSON.stringify(source)}, { cacheDir: ${JSON.stringify(dir)}, arch: 'sm_90' });
        console.log(require('crypto').createHash('sha256').update(image).digest('hex'));`;
      const results = await Promise.all([1, 2, 3, 4].map(() => run(script)));
      const expected = sha(compileSync(source, { cacheDir: false, arch: 'sm_90' }));
      for (const { code, stdout, stderr } of results) {
        assert.strictEqual(code, 0, stderr);
        assert.strictEqual(stdout.trim(), expected);
      }
      assert.strictEqual(entries().length, 1);
      assert.deepStrictEqual(
        fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')),
        [],
      );
      cache.clearMemory();
      const before = cache.stats.diskHits;
      assert.strictEqual(sha(compileSync(source, { cacheDir: dir, arch: 'sm_90' })), expected);
      assert.strictEqual(cache.stats.diskHits, before + 1);
    });

    it('names entries by BLAKE2b and checks them by XXH64, both computed by the addon', function () {
      // BLAKE2b against OpenSSL's (the 64-byte digest) and a published 32-byte one
      for (let i = 0; i < 300; i++) {
        const bytes = crypto.randomBytes(Math.floor(Math.random() * 600));
        const text = `é ${'x'.repeat(i % 200)} \u{1F600}`;
        const parts = i % 2 ? [text, bytes.subarray(i % 7), new Uint16Array([i, 7, 65535])] : [bytes];
        const reference = crypto.createHash('blake2b512');
        for (const part of parts)
          reference.update(
            typeof part === 'string' ? part : Buffer.from(part.buffer, part.byteOffset, part.byteLength),
          );
        assert.strictEqual(binding.blake2b(parts, 64), reference.digest('hex'));
      }
      assert.strictEqual(
        binding.blake2b(['abc'], 32),
        'bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319',
      );
      assert.strictEqual(binding.blake2b([], 32).length, 64);
      // XXH64: the specification's function in BigInt, checked on published values first
      const pattern = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) % 256));
      const known = [
        ['', 0xef46db3751d8e999n],
        ['abc', 0x44bc2cf5ad770999n],
        ['The quick brown fox jumps over the lazy dog', 0x0b242d361fda71bcn],
        [pattern, 0x25275608a9cfc168n],
      ];
      for (const [data, value] of known) {
        const bytes = Buffer.from(data);
        assert.strictEqual(xxh64Reference(bytes), value);
        assert.strictEqual(binding.xxh64(bytes), value);
      }
      for (let length = 0; length < 300; length += 1 + Math.floor(Math.random() * 4)) {
        const bytes = crypto.randomBytes(length + 1).subarray(1); // unaligned
        assert.strictEqual(binding.xxh64(bytes), xxh64Reference(bytes), `length ${length}`);
      }
      assert.throws(() => binding.blake2b('abc', 32), TypeError);
      assert.throws(() => binding.blake2b([{}], 32), TypeError);
      assert.throws(() => binding.blake2b([], 65), TypeError);
      assert.throws(() => binding.xxh64('abc'), TypeError);
    });

    // fs calls that fn makes: { stat, read } (counted by wrapping the fs module's functions)
    // fn's result, and how many times it looked at a file and read one, through fs or through the
    // addon (the cache's reads)
    function fsCalls(fn) {
      const counts = { stat: 0, read: 0 };
      const spy = (object, name, count) => {
        const original = object[name];
        object[name] = (...args) => {
          counts[count]++;
          return original(...args);
        };
        return () => {
          object[name] = original;
        };
      };
      const restore = [
        spy(fs, 'statSync', 'stat'),
        spy(binding, 'stat', 'stat'),
        spy(fs, 'readFileSync', 'read'),
        spy(binding, 'readFile', 'read'),
      ];
      try {
        return { result: fn(), ...counts };
      } finally {
        restore.forEach((undo) => undo());
      }
    }

    it('a request made again reuses its key: no file system call when the source includes none', function () {
      const source = fresh();
      const opts = { cacheDir: dir, arch: 'sm_90', includeDirs: [INCLUDE_DIR] };
      const first = compileSync(source, opts);
      const again = fsCalls(() => compileSync(source, opts));
      assert.deepStrictEqual({ stat: again.stat, read: again.read }, { stat: 0, read: 0 });
      assert.ok(again.result.equals(first));
      // the same source with another option is another request
      assert.ok(fsCalls(() => compileSync(source, { ...opts, options: ['-DX'] })).stat > 0);
    });

    it('a known key is used while its included files are unchanged; a change or a fresh file is seen', async function () {
      this.timeout(20000);
      const inc = tmpdir('known');
      fs.writeFileSync(path.join(inc, 'outer.h'), '#include "inner.h"\n');
      fs.writeFileSync(path.join(inc, 'inner.h'), '#define FACTOR 3.25f\n');
      await new Promise((resolve) => setTimeout(resolve, 2200)); // settled: older than any timestamp tick
      const source = '#include <outer.h>\n__global__ void k(float *x) { x[0] *= FACTOR; }';
      const opts = { cacheDir: dir, code: 'compute_90', includeDirs: [inc] };
      const start = cache.stats.compiles;
      assert.ok(compileSync(source, opts).toString().includes(ptxFloat(3.25)));
      const again = fsCalls(() => compileSync(source, opts));
      assert.strictEqual(again.read, 0); // checked by stat alone
      assert.ok(again.stat > 0);
      assert.ok(again.result.toString().includes(ptxFloat(3.25)));
      assert.strictEqual(cache.stats.compiles, start + 1);
      // the same size, other contents, at once: seen
      fs.writeFileSync(path.join(inc, 'inner.h'), '#define FACTOR 5.50f\n');
      assert.ok(compileSync(source, opts).toString().includes(ptxFloat(5.5)));
      assert.strictEqual(cache.stats.compiles, start + 2);
      // a file changed that recently is read again every time, until it has settled
      const fresh5 = fsCalls(() => compileSync(source, opts));
      assert.ok(fresh5.read >= 2, `${fresh5.read} reads`);
      assert.ok(fresh5.result.toString().includes(ptxFloat(5.5)));
      fs.writeFileSync(path.join(inc, 'inner.h'), '#define FACTOR 7.75f\n');
      assert.ok(compileSync(source, opts).toString().includes(ptxFloat(7.75)));
      // a header appearing earlier on the search path, in a directory probed before
      fs.writeFileSync(path.join(inc, 'first.h'), '#define FACTOR 3.5f\n');
      const early = tmpdir('known-early');
      const opts2 = { ...opts, includeDirs: [early, inc] };
      const source2 = '#include <first.h>\n__global__ void k(float *x) { x[0] *= FACTOR; }';
      await new Promise((resolve) => setTimeout(resolve, 2200));
      assert.ok(compileSync(source2, opts2).toString().includes(ptxFloat(3.5)));
      assert.strictEqual(fsCalls(() => compileSync(source2, opts2)).read, 0);
      fs.writeFileSync(path.join(early, 'first.h'), '#define FACTOR 11.25f\n');
      assert.ok(compileSync(source2, opts2).toString().includes(ptxFloat(11.25)));
      assert.strictEqual(cache.stats.compiles, start + 5);
      fs.rmSync(inc, { recursive: true });
      fs.rmSync(early, { recursive: true });
    });

    it('concurrent compile() calls of one source in a process share one compile', async function () {
      const source = fresh();
      const before = cache.stats.compiles;
      const images = await Promise.all([1, 2, 3].map(() => compile(source, { cacheDir: dir, arch: 'sm_90' })));
      assert.strictEqual(cache.stats.compiles, before + 1);
      assert.ok(images[1].equals(images[0]) && images[2].equals(images[0]));
      assert.strictEqual(new Set(images.map((image) => image.buffer)).size, 3, 'each caller its own memory');
      const copy = Buffer.from(images[0]);
      images.forEach((image) => image.fill(0));
      assert.ok(compileSync(source, { cacheDir: dir, arch: 'sm_90' }).equals(copy), 'the cache kept its own');
    });

    it('a directory that cannot be written falls back to no disk cache, with one warning', async function () {
      const file = path.join(cacheRoot(), 'plain-file');
      fs.writeFileSync(file, '');
      const unwritable = path.join(file, 'cache'); // ENOTDIR, even for root
      const { code, stdout, stderr } = await run(`
        const c = require('./lib/compiler');
        const warnings = [];
        process.on('warning', (w) => warnings.push({ name: w.name, code: w.code, message: w.message }));
        const opts = { cacheDir: ${JSON.stringify(unwritable)}, code: 'compute_90' };
        const a = c.compileSync('__global__ void k(float *x) { x[0] = 1; }', opts);
        const b = c.compileSync('__global__ void k(float *x) { x[0] = 2; }', opts);
        setImmediate(() => console.log(JSON.stringify({ warnings, ptx: [a.toString(), b.toString()], stats: require('./lib/compiler/cache').stats })));`);
      assert.strictEqual(code, 0, stderr);
      const out = JSON.parse(stdout);
      assert.strictEqual(out.warnings.length, 1);
      assert.strictEqual(out.warnings[0].code, 'CUDADRV_CACHE_UNWRITABLE');
      assert.ok(
        out.warnings[0].message.startsWith(
          `cudadrv: the compile cache directory ${unwritable} cannot be written (ENOTDIR`,
        ),
        out.warnings[0].message,
      );
      assert.match(out.ptx[0], /\.entry k/);
      assert.match(out.ptx[1], /\.entry k/);
      assert.strictEqual(out.stats.compiles, 2);
      assert.strictEqual(fs.readFileSync(file, 'utf8'), '');
    });

    it('a read-only directory falls back the same way', async function () {
      if (process.getuid && process.getuid() === 0) this.skip(); // root writes anyway
      fs.mkdirSync(dir, { mode: 0o500 });
      const { stdout } = await run(`
        const c = require('./lib/compiler');
        let warnings = 0;
        process.on('warning', () => warnings++);
        c.compileSync('__global__ void k() {}', { cacheDir: ${JSON.stringify(dir)} });
        c.compileSync('__global__ void k2() {}', { cacheDir: ${JSON.stringify(dir)} });
        setImmediate(() => console.log(warnings));`);
      assert.strictEqual(stdout.trim(), '1');
    });

    it('a cold compile writes its entry in the background: on disk after flush(), and at exit', async function () {
      const source = fresh();
      const opts = { cacheDir: dir, arch: 'sm_90' };
      // the compile's background write makes the process wait for the writer at exit, also for
      // a long queue behind it, and after process.exit()
      const { code, stderr } = await run(`
        const c = require('./lib/compiler');
        const binding = require('./lib/internal/binding');
        c.compileSync(${JSON.stringify(source)}, ${JSON.stringify(opts)});
        for (let i = 0; i < 64; i++) binding.writeFileAtomicLater(${JSON.stringify(dir)}, 'queued' + i, Buffer.alloc(1 << 20, i));
        process.exit(0);`);
      assert.strictEqual(code, 0, stderr);
      assert.strictEqual(entries().length, 1);
      for (let i = 0; i < 64; i++)
        assert.ok(fs.readFileSync(path.join(dir, `queued${i}`)).equals(Buffer.alloc(1 << 20, i)));
      assert.deepStrictEqual(
        fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')),
        [],
      );
      const before = cache.stats.diskHits;
      compileSync(source, opts);
      assert.strictEqual(cache.stats.diskHits, before + 1);
      // in this process: the first write to a directory (its NVRTC record) is made at once, an
      // entry in the background
      const other = { ...opts, cacheDir: path.join(cacheRoot(), `background${n}`) };
      const another = fresh();
      const entry = cache.entryName(request(another, other).key);
      assert.ok(fs.readdirSync(other.cacheDir).some((f) => f.startsWith('nvrtc-')));
      compileSync(another, other);
      cache.flush();
      assert.ok(fs.existsSync(path.join(other.cacheDir, entry)));
    });

    it('a background write that fails warns once, at the next write, and turns the disk cache off', async function () {
      const { code, stdout, stderr } = await run(`
        const fs = require('fs');
        const c = require('./lib/compiler');
        const warnings = [];
        process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
        const opts = { cacheDir: ${JSON.stringify(dir)}, code: 'compute_90' };
        c.compileSync('__global__ void k(float *x) { x[0] = 1; }', opts); // the directory works
        require('./lib/compiler/cache').flush();
        fs.rmSync(opts.cacheDir, { recursive: true });
        fs.writeFileSync(opts.cacheDir, ''); // a file where the directory was: ENOTDIR
        c.compileSync('__global__ void k(float *x) { x[0] = 2; }', opts);
        require('./lib/compiler/cache').flush();
        c.compileSync('__global__ void k(float *x) { x[0] = 3; }', opts);
        c.compileSync('__global__ void k(float *x) { x[0] = 4; }', opts);
        setImmediate(() => console.log(JSON.stringify({ warnings, contents: fs.readFileSync(opts.cacheDir, 'utf8') })));`);
      assert.strictEqual(code, 0, stderr);
      const out = JSON.parse(stdout);
      assert.strictEqual(out.warnings.length, 1, stdout);
      assert.strictEqual(out.warnings[0].code, 'CUDADRV_CACHE_UNWRITABLE');
      assert.ok(
        out.warnings[0].message.startsWith(`cudadrv: the compile cache directory ${dir} cannot be written (ENOTDIR: `),
        out.warnings[0].message,
      );
      assert.strictEqual(out.contents, '');
    });

    it("the addon's writes check their arguments, and say what failed", function () {
      assert.throws(() => binding.writeFileAtomic(dir, 'x', 'text'), {
        name: 'TypeError',
        message: 'data must be a Buffer',
      });
      assert.throws(() => binding.writeFileAtomicLater(dir, 5, Buffer.alloc(1)), TypeError);
      assert.throws(() => binding.writeFileAtomic('x'.repeat(5000), 'x', Buffer.alloc(1)), /dir/);
      const bytes = crypto.randomBytes(100000);
      assert.strictEqual(binding.writeFileAtomic(path.join(dir, 'a', 'b'), 'f', bytes), null);
      assert.ok(fs.readFileSync(path.join(dir, 'a', 'b', 'f')).equals(bytes));
      assert.strictEqual(fs.statSync(path.join(dir, 'a')).mode & 0o777, 0o700);
      const [errno, message] = binding.writeFileAtomic(path.join(dir, 'a', 'b', 'f', 'g'), 'x', bytes);
      assert.strictEqual(errno, os.constants.errno.ENOTDIR);
      assert.match(message, /, stat '.*\/f\/g'$/);
      // a directory that cannot be made (procfs takes none, even from root)
      const [mkdirErrno, mkdirMessage] = binding.writeFileAtomic('/proc/cudadrv-none/x', 'y', bytes);
      assert.strictEqual(mkdirErrno, os.constants.errno.ENOENT);
      assert.match(mkdirMessage, /, mkdir '\/proc\/cudadrv-none'$/);
      assert.deepStrictEqual(fs.readdirSync(path.join(dir, 'a', 'b')), ['f']); // no temporary left
    });

    it('follows CUDADRV_CACHE_DIR, XDG_CACHE_HOME, CUDADRV_DISABLE_CACHE and cacheDir: false', function () {
      const source = fresh();
      process.env.CUDADRV_CACHE_DIR = dir;
      compileSync(source);
      assert.strictEqual(entries().length, 1);
      delete process.env.CUDADRV_CACHE_DIR;
      const xdg = path.join(cacheRoot(), `xdg${n}`);
      process.env.XDG_CACHE_HOME = xdg;
      compileSync(fresh());
      cache.flush();
      assert.strictEqual(fs.readdirSync(path.join(xdg, 'cudadrv')).filter((f) => f.endsWith('.entry')).length, 1);
      assert.strictEqual(cache.cacheDirFor(undefined), path.join(xdg, 'cudadrv'));
      delete process.env.XDG_CACHE_HOME;
      assert.strictEqual(cache.cacheDirFor(undefined), path.join(os.homedir(), '.cache', 'cudadrv'));
      process.env.CUDADRV_CACHE_DIR = path.join(cacheRoot(), 'default');

      const before = cache.stats.compiles;
      process.env.CUDADRV_DISABLE_CACHE = '1';
      compileSync(source, { cacheDir: dir });
      delete process.env.CUDADRV_DISABLE_CACHE;
      compileSync(source, { cacheDir: false });
      compileSync(source, { cacheDir: false });
      assert.strictEqual(cache.stats.compiles, before + 3); // none of them cached
    });

    it('a new process with a current NVRTC record hits the disk without loading NVRTC', async function () {
      const source = fresh();
      compileSync(source, { cacheDir: dir, arch: 'sm_90' });
      cache.flush();
      const script = `
        const c = require('./lib/compiler');
        const image = c.compileSync(${JSON.stringify(source)}, { cacheDir: ${JSON.stringify(dir)}, arch: 'sm_90' });
        const loaded = require('fs').readFileSync('/proc/self/maps', 'utf8').includes('libnvrtc');
        console.log(JSON.stringify({ loaded, diskHits: require('./lib/compiler/cache').stats.diskHits, length: image.length }));`;
      const hit = JSON.parse((await run(script)).stdout);
      assert.deepStrictEqual(hit, {
        loaded: false,
        diskHits: 1,
        length: compileSync(source, { cacheDir: dir, arch: 'sm_90' }).length,
      });
      // a record that no longer matches the library is not trusted: NVRTC is loaded to check
      const record = path.join(
        dir,
        fs.readdirSync(dir).find((f) => f.startsWith('nvrtc-')),
      );
      const data = JSON.parse(fs.readFileSync(record, 'utf8'));
      data.stamps[0][1] += 1; // the library's size
      fs.writeFileSync(record, JSON.stringify(data));
      const checked = JSON.parse((await run(script)).stdout);
      assert.deepStrictEqual(checked, { ...hit, loaded: true });
    });
  });
});
