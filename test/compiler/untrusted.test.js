'use strict';
// Compiling and linking what a hostile user submits (#29): NVRTC and nvJitLink never take the
// process down. Each case that crashed runs in a child process of its own, so that a crash fails
// the case instead of ending the suite; the isolated mode's children run the real libraries.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');
const { nvrtcLoads, nvJitLinkLoads } = require('../support/nvrtc-available');
const { tmpdir, run, ROOT } = require('../support/compile-helpers');

const ARCH = 'sm_90';
// A kernel of `levels` nested parentheses, as a child's script makes it (the source itself is too
// long for a command line).
const deepSource = (levels) =>
  `'__global__ void k(int *p) { *p = ' + '('.repeat(${levels}) + '1' + ')'.repeat(${levels}) + '; }'`;

// The script's result as JSON (its last line of output), failing with what it printed and how it
// ended where it did not end by itself with code 0.
async function child(script, env) {
  const result = await run(`const c = require('./lib/compiler'); (async () => { ${script} })();`, {
    CUDADRV_CACHE_DIR: tmpdir('untrusted-cache'),
    ...env,
  });
  assert.strictEqual(result.code, 0, `the child ended with ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop());
}

describe('untrusted source: NVRTC (no GPU needed)', function () {
  this.timeout(120000);
  before(function () {
    if (!nvrtcLoads()) this.skip();
  });

  it('10,000 nested parentheses compile with compileSync and compile() (the 8 MiB stack crashed at 5,000)', async function () {
    const out = await child(`
      const source = ${deepSource(10000)};
      const a = c.compileSync(source, { arch: '${ARCH}', cacheDir: false });
      const b = await c.compile(source, { arch: '${ARCH}', cacheDir: false });
      console.log(JSON.stringify({ same: a.equals(b), length: a.length }));`);
    assert.ok(out.same && out.length > 0);
  });

  it('isolated: a crash in NVRTC is a CompileError naming the signal, and the next compile works', async function () {
    const out = await child(`
      const deep = ${deepSource(1_500_000)}; // past even the 1 GiB stack
      const good = '__global__ void k(int *p) { *p = ' + ${Math.floor(Math.random() * 1e9)} + '; }';
      const opts = { arch: '${ARCH}', cacheDir: false, isolated: true };
      const failure = (e) => ({ name: e.name, codeName: e.codeName, message: e.message.split('\\n')[0] });
      const results = [];
      try { await c.compile(deep, opts); } catch (e) { results.push(failure(e)); }
      const after = await c.compile(good, opts);
      try { c.compileSync(deep, opts); } catch (e) { results.push(failure(e)); }
      const afterSync = c.compileSync(good, opts);
      const inProcess = c.compileSync(good, { ...opts, isolated: false });
      console.log(JSON.stringify({ results, same: after.equals(inProcess) && afterSync.equals(inProcess) }));`);
    assert.strictEqual(out.results.length, 2);
    for (const failure of out.results) {
      assert.deepStrictEqual(failure, {
        name: 'CompileError',
        codeName: 'SIGSEGV',
        message:
          'NVRTC crashed compiling kernel.cu: its isolated helper process killed by SIGSEGV (the next compile starts another)',
      });
    }
    assert.ok(out.same, 'isolated compiles give what a compile in the process gives');
  });

  it('process.exit() during an isolated compile ends its helper at once (it would finish its compile first)', async function () {
    const helpers = await child(`
      let source = '';
      for (let i = 0; i < 12000; i++) source += '__device__ int f' + i + '(int x) { return x * ' + i + ' + ${Math.floor(Math.random() * 1e6)}; }\\n';
      c.compile(source + '__global__ void k(int *x) { x[0] = f11999(x[0]); }', { arch: 'compute_90', cacheDir: false, isolated: true }).catch(() => {});
      setTimeout(() => {
        const fs = require('fs');
        const mine = fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).filter((p) => {
          try { const stat = fs.readFileSync('/proc/' + p + '/stat', 'utf8'); return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid; } catch { return false; }
        });
        console.log(JSON.stringify(mine.map(Number)));
        process.exit(0);
      }, 400);`);
    assert.strictEqual(helpers.length, 1, 'one helper was compiling');
    // running: a process there that is no zombie (one killed, its parent gone, may wait to be reaped)
    const alive = (pid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 300;
    while (alive(helpers[0]) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(!alive(helpers[0]), 'the helper outlived its parent');
  });

  it('CUDADRV_ISOLATE=1 isolates every compile; a timeout ends the helper, and the process exits at once', async function () {
    const started = Date.now();
    const out = await child(
      `
      const t = performance.now();
      let error;
      try { await c.compile(${deepSource(250_000)}, { arch: '${ARCH}', cacheDir: false, timeout: 50 }); }
      catch (e) { error = e; }
      console.log(JSON.stringify({ name: error?.name, message: error?.message, ms: performance.now() - t }));`,
      { CUDADRV_ISOLATE: '1' },
    );
    assert.strictEqual(out.name, 'AbortError');
    assert.match(out.message, /took longer than its timeout of 50 ms/);
    assert.ok(out.ms < 1000, `the timeout came after ${out.ms} ms`);
    // the compile in this process would have gone on to its end before exit (about 0.5 s more)
    assert.ok(Date.now() - started < 10000);
  });
});

describe('untrusted source: what NVRTC reads (no GPU needed)', function () {
  this.timeout(60000);
  let dir;
  before(function () {
    if (!nvrtcLoads()) this.skip();
    dir = tmpdir('reads');
  });
  after(function () {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a FIFO reached through a computed include is refused by name, in compileSync and compile() (it blocked for ever)', async function () {
    execFileSync('mkfifo', [path.join(dir, 'pipe.h')]);
    const out = await child(`
      const source = '#define H "pipe.h"\\n#include H\\n__global__ void k(int *p) { *p = 1; }';
      const opts = { arch: '${ARCH}', includeDirs: [${JSON.stringify(dir)}] };
      const results = [];
      try { c.compileSync(source, opts); } catch (e) { results.push([e.name, e.message]); }
      try { await c.compile(source, { ...opts, cacheDir: false }); } catch (e) { results.push([e.name, e.message]); }
      console.log(JSON.stringify(results));`);
    const refused = [
      'RuntimeError',
      `${path.join(dir, 'pipe.h')}, which NVRTC opened for an #include of kernel.cu, was refused: a FIFO (a FIFO or ` +
        'device would block NVRTC or never end); remove it or change the include path',
    ];
    assert.deepStrictEqual(out, [refused, refused]);
  });

  it('a header reached through a computed include is in the cache key: a change is compiled, in and across processes', async function () {
    const header = path.join(dir, 'value.h');
    const cacheDir = tmpdir('reads-cache');
    const values = [1 + Math.floor(Math.random() * 1e6), 2e6 + Math.floor(Math.random() * 1e6)];
    const script = `
      const fs = require('fs');
      const source = '#define H "value.h"\\n#include H\\n__global__ void k(int *p) { *p = VALUE; }';
      const opts = { arch: 'compute_90', includeDirs: [${JSON.stringify(dir)}], cacheDir: ${JSON.stringify(cacheDir)} };
      const seen = [];
      for (const value of ${JSON.stringify(values)}) {
        fs.writeFileSync(${JSON.stringify(header)}, '#define VALUE ' + value + '\\n');
        seen.push(c.compileSync(source, opts).toString());
      }
      console.log(JSON.stringify(seen));`;
    for (let round = 0; round < 2; round++) {
      // the first round compiles both, the second (a new process) finds both entries on disk
      const ptx = await child(script);
      values.forEach((value, i) => assert.match(ptx[i], new RegExp(`\\b${value}\\b`), `round ${round}, value ${i}`));
    }
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });
});

describe('untrusted binaries: nvJitLink (no GPU needed)', function () {
  this.timeout(120000);
  before(function () {
    if (!nvrtcLoads() || !nvJitLinkLoads()) this.skip();
  });

  const SOURCE = '__device__ __noinline__ int f(int x) { return x + 1; } __global__ void k(int *p) { p[0] = f(p[0]); }';

  it('one LTO link, then the same relocatable cubin twice: a RangeError, not a crash', async function () {
    const out = await child(`
      const source = ${JSON.stringify(SOURCE)};
      const cubin = c.compileSync(source, { arch: '${ARCH}', relocatable: true, cacheDir: false });
      const ltoir = c.compileSync(source, { arch: '${ARCH}', lto: true, cacheDir: false });
      new c.Linker({ arch: '${ARCH}', lto: true, cacheDir: false }).add(ltoir).link();
      let error;
      try { new c.Linker({ arch: '${ARCH}', cacheDir: false }).add(cubin).add(cubin).link(); } catch (e) { error = e; }
      console.log(JSON.stringify({ name: error?.name, message: error?.message }));`);
    assert.deepStrictEqual(out, {
      name: 'RangeError',
      message:
        'input1.cubin holds the same bytes as input0.cubin: add each input once (linked twice, each of its symbols would be defined twice)',
    });
  });

  it('two cubins defining one function: a RangeError (nvJitLink printed to stderr and gave a cubin)', async function () {
    const { compileSync, Linker } = require('../../lib/compiler');
    const tag = Math.random().toString(36).slice(2, 8);
    const one = compileSync(`__device__ int g_${tag}(int x) { return x; }`, { arch: ARCH, relocatable: true });
    const two = compileSync(`__device__ int g_${tag}(int x) { return -x; }`, { arch: ARCH, relocatable: true });
    assert.throws(() => new Linker({ arch: ARCH, cacheDir: false }).add(one).add(two, { name: 'two.cubin' }).link(), {
      name: 'RangeError',
      message: new RegExp(`^two\\.cubin defines g_${tag}, which input0\\.cubin defines too`),
    });
  });

  it('a relocatable cubin holding __device__ variables links (its .nv.global was taken for a truncation)', function () {
    const { compileSync, Linker } = require('../../lib/compiler');
    const cubin = compileSync(
      `__device__ float table[1024]; __global__ void k(float *p) { p[threadIdx.x] = table[threadIdx.x] + ${Math.random()}f; }`,
      { arch: ARCH, relocatable: true, cacheDir: false },
    );
    const linked = new Linker({ arch: ARCH, cacheDir: false }).add(cubin).link();
    assert.strictEqual(linked.readUInt32LE(0), 0x464c457f);
  });

  it('cubins whose section headers, symbols, relocations or CUDA sections are out of range are RangeErrors at add()', function () {
    const { compileSync, Linker } = require('../../lib/compiler');
    const cubin = compileSync(SOURCE, { arch: ARCH, relocatable: true, cacheDir: false });
    const shoff = Number(cubin.readBigUInt64LE(40));
    const shnum = cubin.readUInt16LE(60);
    const sections = Array.from({ length: shnum }, (_, i) => ({
      at: shoff + i * 64,
      type: cubin.readUInt32LE(shoff + i * 64 + 4),
      offset: Number(cubin.readBigUInt64LE(shoff + i * 64 + 24)),
    }));
    const first = (type) => sections.find((s) => s.type === type);
    const changed = (at, write) => {
      const bytes = Buffer.from(cubin);
      write(bytes, at);
      return bytes;
    };
    const cases = [
      // changes of each of these kinds crashed nvJitLink 13.0 in the process (SIGSEGV; SIGFPE for
      // the alignment of 0) in a scan of every single-byte change of a cubin
      [changed(sections[4].at + 48, (b, at) => b.writeBigUInt64LE(0n, at)), /has an alignment of 0/],
      [changed(sections[4].at + 48, (b, at) => b.writeBigUInt64LE(1n << 40n, at)), /has an alignment of 1099511627776/],
      [
        changed(first(2).offset + 24 * 5 + 6, (b, at) => b.writeUInt16LE(0xff80, at)),
        /has a symbol in a reserved section/,
      ],
      [changed(first(4).offset + 12, (b, at) => b.writeUInt32LE(0xfff0, at)), /names symbol 65520 of/],
      [changed(first(0x70000001).offset, (b, at) => b.writeUInt32LE(0x1234, at)), /names symbol 4660 of/],
      [changed(sections[7].at + 4, (b, at) => b.writeUInt32LE(0x6fffffff, at)), /is of type 1879048191/],
    ];
    for (const [bytes, message] of cases) {
      assert.throws(() => new Linker({ arch: ARCH }).add(bytes, { name: 'bad.cubin' }), {
        name: 'RangeError',
        message: new RegExp(`^bad\\.cubin cannot be linked as a cubin: its section \\d+ ${message.source}`),
      });
    }
    new Linker({ arch: ARCH }).add(cubin); // and the cubin itself is sound
  });

  it('isolated: a crash in nvJitLink is a LinkError naming the signal, and the next link works', async function () {
    // nvJitLink 13.0 crashes on a cubin whose ELF flags' top byte is 0: nothing says what it holds
    const out = await child(`
      const cubin = c.compileSync(${JSON.stringify(SOURCE)}, { arch: '${ARCH}', relocatable: true, cacheDir: false });
      const bad = Buffer.from(cubin);
      bad[51] = 0;
      const opts = { arch: '${ARCH}', cacheDir: false, isolated: true };
      const results = [];
      for (const link of [(l) => l.linkAsync(), (l) => l.link()]) {
        try { await link(new c.Linker(opts).add(bad)); } catch (e) { results.push([e.name, e.codeName, e.message]); }
        const good = await link(new c.Linker(opts).add(cubin));
        results.push(good.equals(new c.Linker({ ...opts, isolated: false }).add(cubin).link()));
      }
      console.log(JSON.stringify(results));`);
    const crash = [
      'LinkError',
      'SIGSEGV',
      'nvJitLink crashed linking input0.cubin: its isolated helper process killed by SIGSEGV (the next link starts another)',
    ];
    assert.deepStrictEqual(out, [crash, true, crash, true]);
  });
});

describe('untrusted places: the library search and the cache refuse what another user could plant (no GPU needed)', function () {
  this.timeout(60000);
  let dir;
  let planted;
  before(function () {
    if (!nvrtcLoads()) this.skip();
    dir = tmpdir('planted');
    // a "libnvrtc.so.13" whose constructor leaves a mark: loading it is running another's code
    const source = path.join(dir, 'plant.c');
    planted = path.join(dir, 'ran');
    fs.writeFileSync(
      source,
      `#include <stdio.h>\n__attribute__((constructor)) static void run(void) { FILE *f = fopen("${planted}", "w"); if (f) fclose(f); }\n`,
    );
    for (const place of ['open/lib64', 'safe/lib64']) {
      fs.mkdirSync(path.join(dir, place), { recursive: true });
      execFileSync('cc', ['-shared', '-fPIC', '-o', path.join(dir, place, 'libnvrtc.so.13'), source]);
    }
    fs.chmodSync(path.join(dir, 'open'), 0o777); // not sticky: anyone may swap what is inside
  });
  after(function () {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a library under a directory others can write, or found by a relative CUDA_PATH, is never loaded; doctor says why', async function () {
    for (const [cudaPath, why] of [
      [path.join(dir, 'open'), `'${path.join(dir, 'open')}' can be written by other users \\(owner \\d+, mode 0777\\)`],
      ['safe', "'safe/lib64/libnvrtc\\.so\\.13' is not an absolute path"],
    ]) {
      fs.rmSync(planted, { force: true });
      const doctor = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'cudadrv.js'), 'doctor'], {
        cwd: dir,
        env: { ...process.env, CUDA_PATH: cudaPath, CUDADRV_DISABLE_CACHE: '1' },
        encoding: 'utf8',
      });
      assert.ok(!fs.existsSync(planted), `the planted library ran (CUDA_PATH=${cudaPath})`);
      assert.match(
        doctor.stdout + doctor.stderr,
        new RegExp(`NVRTC: refused \\S*libnvrtc\\.so\\.13 \\(found by: CUDA_PATH\\): ${why}`),
      );
    }
  });

  it('a cache directory under a directory others can write is refused, with one warning', async function () {
    const parent = path.join(dir, 'shared');
    fs.mkdirSync(parent);
    fs.chmodSync(parent, 0o777);
    const out = await child(
      `
      const warnings = [];
      process.on('warning', (w) => warnings.push(w.code + ': ' + w.message));
      c.compileSync('__global__ void k(int *p) { *p = ${Math.floor(Math.random() * 1e9)}; }', { arch: 'compute_90' });
      await new Promise((resolve) => setImmediate(resolve));
      console.log(JSON.stringify({ warnings, entries: require('fs').existsSync(${JSON.stringify(path.join(parent, 'cache'))}) }));`,
      { CUDADRV_CACHE_DIR: path.join(parent, 'cache') },
    );
    assert.strictEqual(out.entries, false);
    assert.strictEqual(out.warnings.length, 1);
    assert.match(out.warnings[0], new RegExp(`^CUDADRV_CACHE_UNSAFE: .*'${parent}' can be written by other users`));
  });
});

describe('untrusted files: every read is bounded (no GPU needed)', function () {
  this.timeout(60000);
  let dir;
  before(function () {
    dir = tmpdir('bounded');
  });
  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('Linker.addFile of a file past 2 GiB is a RangeError naming it, read no further', function () {
    const file = path.join(dir, 'huge.cubin');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, 2 ** 31 + 5); // sparse: nothing written
    const { Linker } = require('../../lib/compiler');
    assert.throws(() => new Linker({ arch: ARCH }).addFile(file), {
      name: 'RangeError',
      message: `${file} is ${2 ** 31 + 5} bytes, more than the ${2 ** 31 - 1} cudadrv reads of it`,
    });
  });

  it('the CLI refuses a FIFO and /dev/zero as a source at once, exit code 1', function () {
    const fifo = path.join(dir, 'source.cu');
    execFileSync('mkfifo', [fifo]);
    for (const file of [fifo, '/dev/zero']) {
      let status = 0;
      let stderr = '';
      try {
        execFileSync(process.execPath, [path.join(ROOT, 'bin', 'cudadrv.js'), 'compile', file], {
          timeout: 20000,
          stdio: 'pipe',
        });
      } catch (error) {
        ({ status, stderr } = error);
      }
      assert.strictEqual(status, 1, String(stderr));
      assert.strictEqual(String(stderr), `cudadrv: cannot read ${file}: it is not a regular file\n`);
    }
  });
});
