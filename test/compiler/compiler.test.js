'use strict';
// cudadrv/compiler: NVRTC needs no GPU, so everything but loading the result runs here and in CI.
const assert = require('assert');
const crypto = require('crypto');
const { execFile, execFileSync } = require('child_process');
const { getEventListeners } = require('events');
const fs = require('fs');
const os = require('os');
const path = require('path');
const cuda = require('../..');
const compiler = require('../../lib/compiler');
const binding = require('../../lib/internal/binding');
const { describeGpu } = require('../support/gpu');

const { compile, compileSync, SourceModule, DEFAULT_OPTIONS } = compiler;
const { cache, request, splitShellWords, pickTarget, INCLUDE_DIR } = compiler.internal;
const ROOT = path.join(__dirname, '..', '..');

// A kernel scaling by SCALE, a random float given with -D: the PTX must hold its exact bits.
const SCALE_SOURCE = '__global__ void scale(float *x) { x[threadIdx.x] *= SCALE; }';
const randomFloat = () => Math.fround(1 + Math.random() * 1000);
function ptxFloat(x) {
  const bits = Buffer.alloc(4);
  bits.writeFloatBE(x);
  return `0f${bits.toString('hex').toUpperCase()}`;
}
const scaleOption = (x) => `-DSCALE=${x.toPrecision(9)}f`;

// The SM a cubin was compiled for, from its ELF header (e_flags; CUDA 13's ABI moved it a byte).
function cubinSm(image) {
  assert.strictEqual(image.subarray(0, 4).toString('latin1'), '\x7fELF');
  const flags = image.readUInt32LE(0x30);
  return image[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

const ptxTarget = (image) => /^\.target\s+(\S+)/m.exec(image.toString())[1];
const tmpdir = (prefix) => fs.mkdtempSync(path.join(os.tmpdir(), `cudadrv-${prefix}-`));
const sha = (data) => crypto.createHash('sha256').update(data).digest('hex');

function run(script, env = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', script], { env: { ...process.env, ...env }, cwd: ROOT },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }));
  });
}

// What fn writes to stream (process.stdout or process.stderr), kept from the terminal.
function captured(stream, fn) {
  const write = stream.write;
  let printed = '';
  stream.write = (chunk) => {
    printed += chunk;
    return true;
  };
  try {
    fn();
  } finally {
    stream.write = write;
  }
  return printed;
}

// XXH64 (seed 0) as the xxHash specification gives it, in BigInt: the reference for the addon's.
function xxh64Reference(bytes) {
  const M = (1n << 64n) - 1n;
  const [P1, P2, P3, P4, P5] = [0x9E3779B185EBCA87n, 0xC2B2AE3D27D4EB4Fn, 0x165667B19E3779F9n,
    0x85EBCA77C2B2AE63n, 0x27D4EB2F165667C5n];
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

describe('cudadrv/compiler', function () {
  let cacheRoot;
  let savedEnv;
  before(function () {
    // the default cache directory of every compile here: never the user's ~/.cache
    savedEnv = { ...process.env };
    cacheRoot = tmpdir('cache');
    process.env.CUDADRV_CACHE_DIR = path.join(cacheRoot, 'default');
    delete process.env.CUDADRV_DISABLE_CACHE;
  });
  after(function () {
    for (const name of ['CUDADRV_CACHE_DIR', 'CUDADRV_DISABLE_CACHE', 'XDG_CACHE_HOME']) {
      if (savedEnv[name] === undefined) delete process.env[name];
      else process.env[name] = savedEnv[name];
    }
    fs.rmSync(cacheRoot, { recursive: true, force: true });
  });

  describe('NVRTC loading', function () {
    it('nvrtcVersion() is [major, minor] at the top level and in cudadrv/compiler', async function () {
      const version = cuda.nvrtcVersion();
      assert.deepStrictEqual(compiler.nvrtcVersion(), version);
      assert.strictEqual(version.length, 2);
      assert.ok(Number.isInteger(version[0]) && version[0] >= 12, `major ${version[0]}`);
      assert.ok(Number.isInteger(version[1]) && version[1] >= 0);
      const soname = /libnvrtc\.so\.(\d+)$/.exec(binding.nvrtcLibraryPath());
      if (soname) assert.strictEqual(Number(soname[1]), version[0]);
      const esm = await import('cudadrv');
      assert.strictEqual(esm.nvrtcVersion, cuda.nvrtcVersion);
      const esmCompiler = await import('cudadrv/compiler');
      for (const name of ['compile', 'compileSync', 'SourceModule', 'DEFAULT_OPTIONS', 'nvrtcVersion']) {
        assert.strictEqual(esmCompiler[name], compiler[name], name);
      }
    });

    it('is dlopen-ed at run time, never linked', function () {
      let needed;
      try {
        needed = execFileSync('readelf', ['-d', path.join(ROOT, 'build', 'Release', 'cudadrv.node')]).toString();
      } catch (error) {
        if (error.code === 'ENOENT') this.skip(); // no binutils here
        throw error;
      }
      assert.match(needed, /NEEDED/);
      assert.doesNotMatch(needed, /libnvrtc|libcuda/);
    });

    it('a missing NVRTC is a RuntimeError naming what was tried and why', async function () {
      const missing = '/nonexistent/libnvrtc.so.99';
      const { code, stdout } = await run(`
        const cuda = require('.');
        const out = [];
        for (const f of [() => cuda.nvrtcVersion(),
          () => cuda.compiler.compileSync('__global__ void k() {}', { cacheDir: false })]) {
          try { f(); out.push(null); } catch (e) {
            out.push({ name: e.name, message: e.message, api: e.api, codeName: e.codeName, cuda: e instanceof cuda.CudaError });
          }
        }
        console.log(JSON.stringify(out));`, { CUDADRV_NVRTC_PATH: missing });
      assert.strictEqual(code, 0);
      const errors = JSON.parse(stdout);
      assert.strictEqual(errors.length, 2);
      for (const error of errors) {
        assert.strictEqual(error.name, 'RuntimeError');
        assert.strictEqual(error.cuda, true);
        assert.strictEqual(error.api, 'dlopen');
        assert.strictEqual(error.codeName, 'CUDA_ERROR_SHARED_OBJECT_INIT_FAILED');
        assert.ok(error.message.startsWith(`could not load NVRTC: tried ${missing} (${missing}: cannot open shared object file`),
          error.message);
        assert.match(error.message, /CUDADRV_NVRTC_PATH/);
      }
    });

    it('CUDADRV_NVRTC_PATH names the library to load', async function () {
      const library = binding.nvrtcLibraryPath();
      const { code, stdout } = await run(`
        const b = require('./lib/internal/binding');
        console.log(JSON.stringify([b.nvrtcLibraryPath(), b.nvrtcVersion()]));`, { CUDADRV_NVRTC_PATH: library });
      assert.strictEqual(code, 0);
      assert.deepStrictEqual(JSON.parse(stdout), [library, cuda.nvrtcVersion()]);
    });
  });

  describe('compileSync and compile', function () {
    it('give a cubin for sm_XY with its log, lowered names and target', function () {
      const x = randomFloat();
      const image = compileSync(SCALE_SOURCE, { arch: 'sm_90', options: [scaleOption(x)], cacheDir: false });
      assert.ok(Buffer.isBuffer(image));
      assert.strictEqual(cubinSm(image), 90);
      assert.strictEqual(image.target, 'sm_90');
      assert.strictEqual(image.log, '');
      assert.deepStrictEqual(Object.keys(image.loweredNames), []);
    });

    it('give PTX text (no NUL terminator) for compute_XY, holding the options\' values', function () {
      const x = randomFloat();
      const image = compileSync(SCALE_SOURCE, { code: 'compute_90', options: [scaleOption(x)], cacheDir: false });
      const ptx = image.toString();
      assert.ok(ptx.startsWith('//\n// Generated by NVIDIA NVVM Compiler'));
      assert.notStrictEqual(image[image.length - 1], 0);
      assert.strictEqual(ptxTarget(image), 'sm_90');
      assert.strictEqual(image.target, 'compute_90');
      assert.match(ptx, /\.entry scale\(/); // extern "C" by default: the name as written
      assert.ok(ptx.includes(ptxFloat(x)), `the PTX multiplies by ${ptxFloat(x)}`);
    });

    it('handle three-digit and suffixed architectures', function () {
      const opts = { options: [scaleOption(randomFloat())], cacheDir: false };
      for (const [arch, sm] of [['sm_100', 100], ['sm_120', 120], ['sm_103', 103], ['sm_90a', 90], ['sm_100a', 100]]) {
        const image = compileSync(SCALE_SOURCE, { ...opts, arch });
        assert.strictEqual(cubinSm(image), sm, arch);
        assert.strictEqual(image.target, arch);
      }
      for (const arch of ['compute_100', 'compute_120', 'compute_100a']) {
        assert.strictEqual(ptxTarget(compileSync(SCALE_SOURCE, { ...opts, arch })), arch.replace('compute', 'sm'));
      }
    });

    it('give the same image asynchronously, with the event loop free meanwhile', async function () {
      const opts = { arch: 'sm_90', options: [scaleOption(randomFloat())], cacheDir: false };
      const expected = compileSync(SCALE_SOURCE, opts);
      const pending = compile(SCALE_SOURCE, opts);
      assert.ok(pending instanceof Promise);
      const image = await pending;
      assert.ok(image.equals(expected));
      assert.strictEqual(image.target, 'sm_90');

      // a compile of about a third of a second: 10 ms timers keep firing through it
      const heavy = `__global__ void heavy(float *out, const float *in) {
        float acc = in[threadIdx.x];
        #pragma unroll
        for (int i = 0; i < 24; i++) acc = acc * in[(i * 7) & 255] + sinf(acc + i);
        out[threadIdx.x] = acc; }`;
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      const start = Date.now();
      await compile(heavy, { arch: 'sm_90', cacheDir: false });
      const elapsed = Date.now() - start;
      clearInterval(timer);
      assert.ok(elapsed > 100, `the heavy compile took ${elapsed} ms`);
      assert.ok(ticks >= elapsed / 10 / 3, `${ticks} ticks in ${elapsed} ms`);
    });

    describe('giving up: signal and timeout', function () {
      const HEAVY = `__global__ void heavy(float *out, const float *in) {
        float acc = in[threadIdx.x];
        #pragma unroll
        for (int i = 0; i < 24; i++) acc = acc * in[(i * 7) & 255] + sinf(acc + i);
        out[threadIdx.x] = acc * SCALE; }`;
      const heavy = () => [HEAVY, { arch: 'sm_90', options: [scaleOption(randomFloat())] }];
      let started;
      let nvrtcCompileAsync;
      beforeEach(function () { // counts the compiles that reach NVRTC, and keeps them to wait for
        started = [];
        nvrtcCompileAsync = binding.nvrtcCompileAsync;
        binding.nvrtcCompileAsync = (...args) => {
          const running = nvrtcCompileAsync(...args);
          started.push(running);
          return running;
        };
      });
      afterEach(async function () {
        binding.nvrtcCompileAsync = nvrtcCompileAsync;
        await Promise.allSettled(started);
      });

      it('an abort rejects at once with an AbortError; the compile goes on and fills the cache', async function () {
        const [source, opts] = heavy();
        const controller = new AbortController();
        const pending = compile(source, { ...opts, signal: controller.signal });
        const reason = new Error('the user closed the window');
        setTimeout(() => controller.abort(reason), 20);
        const start = Date.now();
        await assert.rejects(pending, (e) => {
          assert.ok(e instanceof cuda.AbortError && e instanceof cuda.CudaError);
          assert.strictEqual(e.name, 'AbortError');
          assert.strictEqual(e.message, 'the compile of kernel.cu was aborted: the user closed the window');
          assert.strictEqual(e.cause, reason);
          return true;
        });
        const waited = Date.now() - start;
        assert.strictEqual(started.length, 1);
        assert.deepStrictEqual(getEventListeners(controller.signal, 'abort'), []);
        const compiles = cache.stats.compiles;
        const image = await compile(source, opts); // shares the compile still running
        assert.strictEqual(cache.stats.compiles, compiles + 1);
        assert.strictEqual(started.length, 1);
        assert.ok(image.equals(compileSync(source, opts)));
        assert.ok(waited < 200, `rejected ${waited} ms after the abort was asked for`);
      });

      it('a timeout rejects with an AbortError saying so; one not reached changes nothing', async function () {
        const [source, opts] = heavy();
        await assert.rejects(compile(source, { ...opts, cacheDir: false, timeout: 5 }), {
          name: 'AbortError', message: 'the compile of kernel.cu took longer than its timeout of 5 ms',
        });
        const signal = new AbortController().signal;
        const image = await compile(SCALE_SOURCE, { ...opts, signal, timeout: 60000 });
        assert.ok(image.equals(compileSync(SCALE_SOURCE, opts)));
        assert.deepStrictEqual(getEventListeners(signal, 'abort'), []);
      });

      it('compiles still waiting for a slot when aborted never start', async function () {
        const controller = new AbortController();
        const count = os.availableParallelism() + 12; // past Node's 10 listeners a signal: one is added
        let warned = null;
        process.once('warning', (w) => { warned = w; });
        const pending = Array.from({ length: count }, () => {
          const [source, opts] = heavy();
          return compile(source, { ...opts, cacheDir: false, signal: controller.signal });
        });
        controller.abort();
        const outcomes = await Promise.allSettled(pending);
        assert.deepStrictEqual(outcomes.map((o) => o.reason?.name), Array(count).fill('AbortError'));
        assert.strictEqual(started.length, os.availableParallelism());
        assert.deepStrictEqual(getEventListeners(controller.signal, 'abort'), []);
        await new Promise(setImmediate);
        assert.strictEqual(warned?.name, undefined, 'no MaxListenersExceededWarning');
      });

      it('a signal aborted already fails compile and compileSync before any compile', async function () {
        const signal = AbortSignal.abort();
        const [source, opts] = heavy();
        const compiles = cache.stats.compiles;
        await assert.rejects(compile(source, { ...opts, signal }), { name: 'AbortError', cause: signal.reason });
        assert.throws(() => compileSync(source, { ...opts, signal }), { name: 'AbortError' });
        assert.throws(() => compileSync(source, { ...opts, timeout: 1000 }), {
          name: 'TypeError', message: 'compileSync cannot be interrupted, so it takes no timeout; use compile()',
        });
        assert.strictEqual(cache.stats.compiles, compiles);
        assert.strictEqual(started.length, 0);
      });
    });

    it('refuse an include NVRTC would block on (a FIFO, a device), with and without the cache', function () {
      const dir = tmpdir('fifo');
      execFileSync('mkfifo', [path.join(dir, 'pipe.h')]);
      fs.symlinkSync('/dev/zero', path.join(dir, 'zero.h'));
      const script = (header, cacheDir) => `
        const { compileSync } = require('./lib/compiler');
        try {
          compileSync('#include "${header}"\\n', { includeDirs: [${JSON.stringify(dir)}], cacheDir: ${cacheDir} });
        } catch (e) { console.log(e.name + ': ' + e.message); }`;
      for (const [header, type] of [['pipe.h', 'a FIFO'], ['zero.h', 'a character device']]) {
        for (const cacheDir of ['false', JSON.stringify(path.join(dir, 'cache'))]) {
          const out = execFileSync(process.execPath, ['-e', script(header, cacheDir)], { cwd: ROOT, timeout: 30000 });
          assert.strictEqual(out.toString().trim(), `RuntimeError: ${path.join(dir, header)}, where an #include ` +
            `of the source may be found, is ${type}; NVRTC would block reading it: remove it or change the include path`);
        }
      }
      fs.rmSync(dir, { recursive: true });
    });

    it('without a context, default to PTX for compute_75 (the documented default)', function () {
      if (binding.currentComputeCapability()) this.skip(); // a context is current here
      const image = compileSync(SCALE_SOURCE, { options: [scaleOption(randomFloat())], cacheDir: false });
      const { archs } = cache.nvrtcIdentity(null);
      assert.strictEqual(image.target, pickTarget(archs, null, cuda.nvrtcVersion()));
      assert.strictEqual(image.target, 'compute_75');
      assert.strictEqual(ptxTarget(image), 'sm_75');
    });

    it('wrap the source in extern "C" unless noExternC, keeping its line numbers', function () {
      const plain = compileSync(SCALE_SOURCE, { code: 'compute_90', options: ['-DSCALE=2.0f'], noExternC: true, cacheDir: false });
      assert.match(plain.toString(), /\.entry _Z5scalePf\(/);
      for (const noExternC of [false, true]) {
        assert.throws(() => compileSync('\n\n__global__ void broken() { undeclared = 1; }', { noExternC, cacheDir: false }),
          (e) => e instanceof cuda.CompileError && /kernel\.cu\(3\): error: identifier "undeclared" is undefined/.test(e.log));
      }
    });

    it('give lowered names for name expressions (templates), defaulting noExternC to true', function () {
      const source = `template <typename T> __global__ void axpy(T a, const T *x, T *y) { y[threadIdx.x] += a * x[threadIdx.x]; }
        template <int N> __global__ void fill(int *out) { out[threadIdx.x] = N; }`;
      const n = 1 + Math.floor(Math.random() * 100000);
      const expressions = ['axpy<float>', 'axpy<double>', `fill<${n}>`];
      const image = compileSync(source, { code: 'compute_90', nameExpressions: expressions, cacheDir: false });
      assert.deepStrictEqual({ ...image.loweredNames }, {
        'axpy<float>': '_Z4axpyIfEvT_PKS0_PS0_',
        'axpy<double>': '_Z4axpyIdEvT_PKS0_PS0_',
        [`fill<${n}>`]: `_Z4fillILi${n}EEvPi`,
      });
      const ptx = image.toString();
      for (const lowered of Object.values(image.loweredNames)) assert.ok(ptx.includes(`.entry ${lowered}(`), lowered);
      assert.ok(ptx.includes(`${n};`), 'fill<N> stores N');
    });

    it('pass warnings to messageHandler and the result, never to stdout', function () {
      const source = '__global__ void k(float *x) { int unused; x[0] = 1; }';
      const logs = [];
      const opts = { messageHandler: (log) => logs.push(log), cacheDir: path.join(cacheRoot, 'warn') };
      let image;
      const printed = captured(process.stdout, () => {
        image = compileSync(source, opts);
        compileSync(source, opts); // a hit
      });
      assert.strictEqual(printed, '');
      assert.match(image.log, /warning #177-D: variable "unused" was declared but never referenced/);
      assert.deepStrictEqual(logs, [image.log, image.log]);
    });

    it('use in-memory headers, include directories and the package\'s own include directory', function () {
      const x = randomFloat();
      const y = randomFloat();
      const dir = tmpdir('inc');
      fs.mkdirSync(path.join(dir, 'sub'));
      fs.writeFileSync(path.join(dir, 'sub', 'factor.h'), `#define FACTOR ${y.toPrecision(9)}f\n`);
      fs.writeFileSync(path.join(dir, 'outer.h'), '#include "sub/factor.h"\n');
      const source = `#include "defs.h"
        #include <outer.h>
        #include <cudadrv/version.h>
        static_assert(CUDADRV_VERSION_MAJOR * 10000 + CUDADRV_VERSION_MINOR * 100 + CUDADRV_VERSION_PATCH == VERSION, "version");
        __global__ void k(float *v) { v[threadIdx.x] *= SCALE * FACTOR; }`;
      const [major, minor, patch] = cuda.VERSION;
      const image = compileSync(source, {
        code: 'compute_90', headers: { 'defs.h': `#define SCALE ${x.toPrecision(9)}f` }, includeDirs: [dir],
        options: [`-DVERSION=${major * 10000 + minor * 100 + patch}`], cacheDir: false,
      });
      assert.ok(image.toString().includes(ptxFloat(Math.fround(x * y))), 'SCALE * FACTOR, folded');
      fs.rmSync(dir, { recursive: true });
    });

    it('use DEFAULT_OPTIONS when options are not given', function () {
      const source = '#ifndef FROM_DEFAULTS\n#error "DEFAULT_OPTIONS were not used"\n#endif\n__global__ void k() {}';
      DEFAULT_OPTIONS.push('-DFROM_DEFAULTS=1');
      try {
        compileSync(source, { cacheDir: false });
        assert.throws(() => compileSync(source, { options: [], cacheDir: false }),
          (e) => e instanceof cuda.CompileError && /DEFAULT_OPTIONS were not used/.test(e.log));
      } finally {
        DEFAULT_OPTIONS.pop();
      }
    });

    it('DEFAULT_OPTIONS starts as CUDADRV_DEFAULT_OPTIONS split as a shell would', async function () {
      const { stdout } = await run("console.log(JSON.stringify(require('./lib/compiler').DEFAULT_OPTIONS))",
        { CUDADRV_DEFAULT_OPTIONS: "-lineinfo  '-DNAME=two words' -DQ=\"a\\\"b\" x\\ y" });
      assert.deepStrictEqual(JSON.parse(stdout), ['-lineinfo', '-DNAME=two words', '-DQ=a"b', 'x y']);
      const broken = await run("require('./lib/compiler')", { CUDADRV_DEFAULT_OPTIONS: "-DX='open" });
      assert.notStrictEqual(broken.code, 0);
      assert.match(broken.stderr, /RangeError: CUDADRV_DEFAULT_OPTIONS has an unterminated ' quote/);
      assert.deepStrictEqual(splitShellWords('', 'x'), []);
      assert.deepStrictEqual(splitShellWords(' a\t\\\n b "c d"e \'f\\g\' h\\\\i "$\\$"', 'x'),
        ['a', 'b', 'c de', 'f\\g', 'h\\i', '$$']);
      assert.throws(() => splitShellWords('"a', 'x'), { name: 'RangeError', message: 'x has an unterminated " quote: "a' });
    });

    it('keep: the source, options, log and output stay in a directory that is printed', function () {
      let image;
      const printed = captured(process.stderr, () => {
        image = compileSync('__global__ void k(float *x) { int unused; x[0] = 2; }', { keep: true, code: 'compute_90', name: 'kept.cu' });
        assert.throws(() => compileSync('syntax error', { keep: true, cacheDir: false }), cuda.CompileError);
      });
      const lines = printed.trim().split('\n');
      assert.strictEqual(lines.length, 2);
      assert.strictEqual(lines[0], `cudadrv: compiler output kept in ${image.keptIn}`);
      assert.deepStrictEqual(fs.readdirSync(image.keptIn).sort(), ['kept.cu', 'kept.log', 'kept.ptx', 'options.txt']);
      assert.strictEqual(fs.readFileSync(path.join(image.keptIn, 'kept.ptx'), 'latin1'), image.toString('latin1'));
      assert.strictEqual(fs.readFileSync(path.join(image.keptIn, 'kept.log'), 'utf8'), image.log);
      assert.match(fs.readFileSync(path.join(image.keptIn, 'kept.cu'), 'utf8'), /int unused; x\[0\] = 2;/);
      assert.match(fs.readFileSync(path.join(image.keptIn, 'options.txt'), 'utf8'), /^-arch=compute_90$/m);
      const failedIn = /kept in (.*)$/.exec(lines[1])[1];
      assert.match(fs.readFileSync(path.join(failedIn, 'kernel.log'), 'utf8'), /error/);
      fs.rmSync(image.keptIn, { recursive: true });
      fs.rmSync(failedIn, { recursive: true });
    });
  });

  describe('compiling in worker threads', function () {
    it('workers compile at once; terminating one mid-compile harms nothing', async function () {
      const { Worker } = require('worker_threads');
      const script = `
        const { parentPort, workerData } = require('worker_threads');
        const c = require(${JSON.stringify(path.join(ROOT, 'lib', 'compiler'))});
        c.compile(workerData.source, { arch: 'sm_90', cacheDir: false }).then((image) => parentPort.postMessage(image.length));`;
      const heavy = (k) => `__global__ void heavy(float *out, const float *in) { float acc = in[threadIdx.x];
        #pragma unroll
        for (int i = 0; i < ${k}; i++) acc = acc * in[(i * 7) & 255] + sinf(acc + i);
        out[threadIdx.x] = acc; }`;
      const lengths = await Promise.all([1, 2, 3].map((k) => new Promise((resolve, reject) => {
        const worker = new Worker(script, { eval: true, workerData: { source: heavy(k) } });
        worker.once('message', (length) => worker.terminate().then(() => resolve(length)));
        worker.once('error', reject);
      })));
      lengths.forEach((length, i) => assert.strictEqual(length, compileSync(heavy(i + 1), { arch: 'sm_90', cacheDir: false }).length));
      const doomed = new Worker(script, { eval: true, workerData: { source: heavy(20) } });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await doomed.terminate();
      await new Promise((resolve) => setTimeout(resolve, 400)); // its compile ends meanwhile
      assert.strictEqual(compileSync(heavy(1), { arch: 'sm_90', cacheDir: false }).length, lengths[0]);
    });
  });

  describe('the default target', function () {
    const NVRTC13 = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];
    const NVRTC12 = [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90];

    it('is the device\'s own sm_XY where NVRTC supports it, three digits included', function () {
      assert.strictEqual(pickTarget(NVRTC13, [9, 0], [13, 0]), 'sm_90');
      assert.strictEqual(pickTarget(NVRTC13, [10, 0], [13, 0]), 'sm_100');
      assert.strictEqual(pickTarget(NVRTC13, [10, 3], [13, 0]), 'sm_103');
      assert.strictEqual(pickTarget(NVRTC13, [12, 0], [13, 0]), 'sm_120');
      assert.strictEqual(pickTarget(NVRTC13, [8, 6], [13, 0]), 'sm_86');
      assert.strictEqual(pickTarget(NVRTC12, [7, 2], [12, 4]), 'sm_72');
    });

    it('falls back to a same-major cubin, then to PTX the driver compiles, for devices NVRTC does not list', function () {
      assert.strictEqual(pickTarget(NVRTC13, [12, 2], [13, 0]), 'sm_121'); // cubins run on later minors
      assert.strictEqual(pickTarget(NVRTC13, [13, 0], [13, 0]), 'compute_121');
      assert.strictEqual(pickTarget(NVRTC12, [10, 0], [12, 4]), 'compute_90');
      assert.strictEqual(pickTarget(NVRTC12, [12, 0], [12, 4]), 'compute_90');
      assert.strictEqual(pickTarget([90, 100], [9, 5], [13, 0]), 'sm_90');
    });

    it('is refused for devices older than all NVRTC supports', function () {
      assert.throws(() => pickTarget(NVRTC13, [7, 0], [13, 0]), {
        name: 'RangeError',
        message: 'the current device (sm_70) is older than every architecture NVRTC 13.0 compiles for ' +
          '(sm_75, sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_100, sm_103, sm_110, sm_120, sm_121); ' +
          'load an older NVRTC with CUDADRV_NVRTC_PATH, or give arch explicitly',
      });
    });

    it('without a context is PTX for the oldest architecture from compute_75 up', function () {
      assert.strictEqual(pickTarget(NVRTC13, null, [13, 0]), 'compute_75');
      assert.strictEqual(pickTarget(NVRTC12, null, [12, 4]), 'compute_75');
      assert.strictEqual(pickTarget([80, 90, 100], null, [14, 0]), 'compute_80');
      assert.strictEqual(pickTarget([50, 60, 70], null, [11, 0]), 'compute_70');
    });
  });

  describe('compile errors and bad input', function () {
    it('a syntax error is a CompileError with the whole log, the options and the source name', async function () {
      const source = '__global__ void k(float *x) {\n  x[0] = 1\n}';
      const check = (e) => {
        assert.ok(e instanceof cuda.CompileError && e instanceof cuda.CudaError);
        assert.strictEqual(e.name, 'CompileError');
        assert.strictEqual(e.code, 6);
        assert.strictEqual(e.codeName, 'NVRTC_ERROR_COMPILATION');
        assert.strictEqual(e.api, 'nvrtcCompileProgram');
        assert.strictEqual(e.source, 'broken.cu');
        assert.deepStrictEqual(e.options, ['-DX=1', `-I${INCLUDE_DIR}`, '-arch=sm_90']);
        assert.match(e.log, /^broken\.cu\(3\): error: expected a ";"$/m);
        assert.match(e.log, /1 error detected in the compilation of "broken\.cu"/);
        assert.strictEqual(e.message, `nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION compiling broken.cu\n${e.log.trimEnd()}`);
        return true;
      };
      const opts = { name: 'broken.cu', arch: 'sm_90', options: ['-DX=1'] };
      assert.throws(() => compileSync(source, opts), check);
      await assert.rejects(compile(source, opts), check);
    });

    it('an unknown option is NVRTC\'s CompileError', async function () {
      await assert.rejects(compile('__global__ void k() {}', { options: ['--no-such-option'], cacheDir: false }), (e) => {
        assert.ok(e instanceof cuda.CompileError);
        assert.strictEqual(e.codeName, 'NVRTC_ERROR_INVALID_OPTION');
        assert.strictEqual(e.code, 5);
        assert.match(e.log, /unrecognized option --no-such-option/);
        return true;
      });
    });

    it('an architecture NVRTC does not know is a RangeError listing those it does', function () {
      const supported = cache.nvrtcIdentity(null).archs.map((n) => `sm_${n}`).join(', ');
      const version = cuda.nvrtcVersion().join('.');
      assert.throws(() => compileSync('', { arch: 'sm_35' }), {
        name: 'RangeError',
        message: `arch sm_35: NVRTC ${version} does not compile for it; it supports ${supported} (and their compute_ forms)`,
      });
      assert.throws(() => compileSync('', { code: 'compute_20' }), { name: 'RangeError', message: /^code compute_20: NVRTC/ });
      for (const arch of ['sm_9', 'gfx90a', 'sm90', 'sm_1000', 'compute_90b', '']) {
        assert.throws(() => compileSync('', { arch }), {
          name: 'RangeError',
          message: `arch must name an architecture such as sm_90 (cubin) or compute_90 (PTX), sm_100, sm_120, sm_90a, not ${JSON.stringify(arch)}`,
        });
      }
      assert.throws(() => compileSync('', { arch: 90 }), { name: 'TypeError', message: 'arch must be a string, not number 90' });
      // a known number with a suffix NVRTC refuses: NVRTC's own error
      assert.throws(() => compileSync('', { arch: 'sm_75a', cacheDir: false }), cuda.CompileError);
    });

    it('conflicting architectures are refused; one given in options is used', function () {
      assert.throws(() => compileSync('', { arch: 'sm_80', code: 'sm_90' }), {
        name: 'RangeError', message: /^arch sm_80 and code sm_90 name different architectures/,
      });
      assert.throws(() => compileSync('', { arch: 'sm_90', options: ['-arch=sm_90'] }), {
        name: 'RangeError', message: /^the architecture is given twice/,
      });
      assert.throws(() => compileSync('', { options: ['-arch=sm_90', '--gpu-architecture', 'sm_80'] }), {
        name: 'RangeError', message: 'options give more than one architecture: sm_90, sm_80',
      });
      const image = compileSync(SCALE_SOURCE, { options: ['-DSCALE=3.0f', '--gpu-architecture=sm_120'], cacheDir: false });
      assert.strictEqual(image.target, 'sm_120');
      assert.strictEqual(cubinSm(image), 120);
      const both = compileSync(SCALE_SOURCE, { arch: 'sm_90', code: 'compute_90', options: ['-DSCALE=3.0f'], cacheDir: false });
      assert.strictEqual(both.target, 'compute_90');
      assert.strictEqual(ptxTarget(both), 'sm_90');
    });

    it('unreadable include directories are a RuntimeError naming them', function () {
      const file = path.join(cacheRoot, 'a-file');
      fs.writeFileSync(file, '');
      for (const [dir, why] of [['/nonexistent/include', 'ENOENT'], [file, 'not a directory']]) {
        assert.throws(() => compileSync('', { includeDirs: [INCLUDE_DIR, dir] }), (e) => {
          assert.ok(e instanceof cuda.RuntimeError);
          assert.ok(e.message.startsWith(`includeDirs[1]: ${JSON.stringify(dir)} is not a readable directory (`), e.message);
          assert.ok(e.message.includes(why), e.message);
          return true;
        });
      }
    });

    it('non-string sources and malformed options are TypeError or RangeError naming them', async function () {
      const cases = [
        [42, undefined, 'TypeError', 'source must be a string, not number 42'],
        [Buffer.from('x'), undefined, 'TypeError', 'source must be a string, not a Buffer'],
        [undefined, undefined, 'TypeError', 'source must be a string, not undefined'],
        ['a\0b', undefined, 'RangeError', 'source must not contain NUL characters (NVRTC would stop reading there)'],
        ['', 'sm_90', 'TypeError', 'compile options must be an object, not the string "sm_90"'],
        ['', { arh: 'sm_90' }, 'TypeError', /^unknown compile option "arh"; the options are options, noExternC, arch/],
        ['', { options: '-G' }, 'TypeError', 'options must be an array of strings, not the string "-G"'],
        ['', { options: ['-G', 3] }, 'TypeError', 'options[1] must be a string, not number 3'],
        ['', { includeDirs: [''] }, 'RangeError', 'includeDirs[0] must not be empty'],
        ['', { headers: ['a.h'] }, 'TypeError', 'headers must be an object mapping include names to sources, not an array'],
        ['', { headers: { 'a.h': 1 } }, 'TypeError', 'headers["a.h"] must be a string, not number 1'],
        ['', { nameExpressions: ['k<int>', ''] }, 'RangeError', 'nameExpressions[1] must not be empty'],
        ['', { noExternC: 1 }, 'TypeError', 'noExternC must be a boolean, not number 1'],
        ['', { keep: 'yes' }, 'TypeError', 'keep must be a boolean, not the string "yes"'],
        ['', { cacheDir: 5 }, 'TypeError', 'cacheDir must be a string, not number 5'],
        ['', { cacheDir: '' }, 'RangeError', 'cacheDir must not be empty'],
        ['', { name: '' }, 'RangeError', 'name must not be empty'],
        ['', { messageHandler: 'log' }, 'TypeError', 'messageHandler must be a function, not the string "log"'],
        ['', { signal: {} }, 'TypeError', 'signal must be an AbortSignal, not an Object'],
        ['', { signal: new AbortController() }, 'TypeError', 'signal must be an AbortSignal, not an AbortController'],
        ['', { timeout: '5' }, 'TypeError', 'timeout must be a number, not the string "5"'],
        ...[-1, NaN, Infinity, 2 ** 31].map((timeout) => ['', { timeout }, 'RangeError',
          `timeout must be a number of milliseconds from 0 to 2147483647, not ${timeout}`]),
      ];
      for (const [source, opts, name, message] of cases) {
        assert.throws(() => compileSync(source, opts), { name, message });
        await assert.rejects(compile(source, opts), { name, message });
        assert.throws(() => new SourceModule(source, opts), { name, message });
      }
    });
  });

  describe('the cache\'s file reads (the addon\'s readFile and stat)', function () {
    let dir;
    before(function () {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-files-'));
    });
    after(function () {
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('readFile gives a file\'s bytes, and null where there is no regular file to read', function () {
      const file = path.join(dir, 'data.bin');
      const bytes = crypto.randomBytes(70000 + Math.floor(Math.random() * 1000));
      fs.writeFileSync(file, bytes);
      assert.ok(binding.readFile(file).equals(bytes));
      fs.writeFileSync(file, '');
      assert.strictEqual(binding.readFile(file).length, 0);
      for (const nothing of [path.join(dir, 'absent'), dir, `${file}\0.entry`, `/${'x'.repeat(5000)}`]) {
        assert.strictEqual(binding.readFile(nothing), null, nothing.slice(0, 40));
      }
      assert.throws(() => binding.readFile(7), { name: 'TypeError', message: 'expected a path (a string)' });
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
      dir = path.join(cacheRoot, `c${n++}`);
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
      const base = { cacheDir: dir, code: 'compute_90', includeDirs: [inc], headers: { 'mem.h': '#define SCALE 3.0f' }, options: [] };
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
      assert.ok(compileSync(source, { ...base, includeDirs: [early, inc] }).toString().includes(ptxFloat(33)));
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
      assert.deepStrictEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
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
        for (const part of parts) reference.update(typeof part === 'string' ? part : Buffer.from(part.buffer, part.byteOffset, part.byteLength));
        assert.strictEqual(binding.blake2b(parts, 64), reference.digest('hex'));
      }
      assert.strictEqual(binding.blake2b(['abc'], 32), 'bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319');
      assert.strictEqual(binding.blake2b([], 32).length, 64);
      // XXH64: the specification's function in BigInt, checked on published values first
      const pattern = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) % 256));
      const known = [['', 0xef46db3751d8e999n], ['abc', 0x44bc2cf5ad770999n],
        ['The quick brown fox jumps over the lazy dog', 0x0b242d361fda71bcn], [pattern, 0x25275608a9cfc168n]];
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
      const restore = [spy(fs, 'statSync', 'stat'), spy(binding, 'stat', 'stat'),
        spy(fs, 'readFileSync', 'read'), spy(binding, 'readFile', 'read')];
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
      const file = path.join(cacheRoot, 'plain-file');
      fs.writeFileSync(file, '');
      const unwritable = path.join(file, 'cache'); // ENOTDIR, even for root
      const { code, stdout, stderr } = await run(`
        const c = require('./lib/compiler');
        const warnings = [];
        process.on('warning', (w) => warnings.push({ name: w.name, code: w.code, message: w.message }));
        const opts = { cacheDir: ${JSON.stringify(unwritable)}, code: 'compute_90' };
        const a = c.compileSync('__global__ void k(float *x) { x[0] = 1; }', opts);
        const b = c.compileSync('__global__ void k(float *x) { x[0] = 2; }', opts);
        setImmediate(() => console.log(JSON.stringify({ warnings, ptx: [a.toString(), b.toString()], stats: c.internal.cache.stats })));`);
      assert.strictEqual(code, 0, stderr);
      const out = JSON.parse(stdout);
      assert.strictEqual(out.warnings.length, 1);
      assert.strictEqual(out.warnings[0].code, 'CUDADRV_CACHE_UNWRITABLE');
      assert.ok(out.warnings[0].message.startsWith(`cudadrv: the compile cache directory ${unwritable} cannot be written (ENOTDIR`),
        out.warnings[0].message);
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
      for (let i = 0; i < 64; i++) assert.ok(fs.readFileSync(path.join(dir, `queued${i}`)).equals(Buffer.alloc(1 << 20, i)));
      assert.deepStrictEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
      const before = cache.stats.diskHits;
      compileSync(source, opts);
      assert.strictEqual(cache.stats.diskHits, before + 1);
      // in this process: the first write to a directory (its NVRTC record) is made at once, an
      // entry in the background
      const other = { ...opts, cacheDir: path.join(cacheRoot, `background${n}`) };
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
        c.internal.cache.flush();
        fs.rmSync(opts.cacheDir, { recursive: true });
        fs.writeFileSync(opts.cacheDir, ''); // a file where the directory was: ENOTDIR
        c.compileSync('__global__ void k(float *x) { x[0] = 2; }', opts);
        c.internal.cache.flush();
        c.compileSync('__global__ void k(float *x) { x[0] = 3; }', opts);
        c.compileSync('__global__ void k(float *x) { x[0] = 4; }', opts);
        setImmediate(() => console.log(JSON.stringify({ warnings, contents: fs.readFileSync(opts.cacheDir, 'utf8') })));`);
      assert.strictEqual(code, 0, stderr);
      const out = JSON.parse(stdout);
      assert.strictEqual(out.warnings.length, 1, stdout);
      assert.strictEqual(out.warnings[0].code, 'CUDADRV_CACHE_UNWRITABLE');
      assert.ok(out.warnings[0].message.startsWith(`cudadrv: the compile cache directory ${dir} cannot be written (ENOTDIR: `),
        out.warnings[0].message);
      assert.strictEqual(out.contents, '');
    });

    it('the addon\'s writes check their arguments, and say what failed', function () {
      assert.throws(() => binding.writeFileAtomic(dir, 'x', 'text'), { name: 'TypeError', message: 'data must be a Buffer' });
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
      const xdg = path.join(cacheRoot, `xdg${n}`);
      process.env.XDG_CACHE_HOME = xdg;
      compileSync(fresh());
      cache.flush();
      assert.strictEqual(fs.readdirSync(path.join(xdg, 'cudadrv')).filter((f) => f.endsWith('.entry')).length, 1);
      assert.strictEqual(cache.cacheDirFor(undefined), path.join(xdg, 'cudadrv'));
      delete process.env.XDG_CACHE_HOME;
      assert.strictEqual(cache.cacheDirFor(undefined), path.join(os.homedir(), '.cache', 'cudadrv'));
      process.env.CUDADRV_CACHE_DIR = path.join(cacheRoot, 'default');

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
        console.log(JSON.stringify({ loaded, diskHits: c.internal.cache.stats.diskHits, length: image.length }));`;
      const hit = JSON.parse((await run(script)).stdout);
      assert.deepStrictEqual(hit, { loaded: false, diskHits: 1, length: compileSync(source, { cacheDir: dir, arch: 'sm_90' }).length });
      // a record that no longer matches the library is not trusted: NVRTC is loaded to check
      const record = path.join(dir, fs.readdirSync(dir).find((f) => f.startsWith('nvrtc-')));
      const data = JSON.parse(fs.readFileSync(record, 'utf8'));
      data.stamps[0][1] += 1; // the library's size
      fs.writeFileSync(record, JSON.stringify(data));
      const checked = JSON.parse((await run(script)).stdout);
      assert.deepStrictEqual(checked, { ...hit, loaded: true });
    });
  });

  describe('SourceModule', function () {
    it('is a Module', function () {
      assert.ok(SourceModule.prototype instanceof cuda.Module);
    });

    it('a compile error surfaces as a CompileError before any loading', async function () {
      assert.throws(() => new SourceModule('__global__ void k() { nope; }'), cuda.CompileError);
      await assert.rejects(SourceModule.compile('__global__ void k() { nope; }'), cuda.CompileError);
    });

    it('a valid source compiles and reaches the loading step', async function () {
      if (binding.currentComputeCapability()) this.skip(); // loading would succeed here
      const source = `__global__ void k(float *x) { x[0] = ${randomFloat().toPrecision(9)}f; }`;
      const before = cache.stats.compiles;
      // without a context, loading fails (not compiling); were a context found, it would load
      const loadingFailed = (e) => e instanceof cuda.CudaError && !(e instanceof cuda.CompileError);
      try {
        assert.ok(new SourceModule(source) instanceof SourceModule);
      } catch (error) {
        assert.ok(loadingFailed(error), error);
      }
      await SourceModule.compile(`${source}\n`).then(
        (mod) => assert.ok(mod instanceof SourceModule),
        (error) => assert.ok(loadingFailed(error), error));
      assert.strictEqual(cache.stats.compiles, before + 2);
    });
  });

  describeGpu('SourceModule on the GPU', function () {
    const n = 1000;
    const SCALE = `__global__ void scale(float *out, const float *in, float a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = a * in[i];
      }`;
    const ADD = `template <typename T> __global__ void addTo(T *out, const T *in, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] += in[i];
      }`;
    const launch = { block: [128, 1, 1], grid: [Math.ceil(n / 128), 1] };
    const random = () => Float32Array.from({ length: n }, () => Math.random() * 100 - 50);

    it('defaults to the current device\'s architecture as a cubin', function () {
      const [major, minor] = cuda.Context.getDevice().computeCapability();
      const image = compileSync('__global__ void k() {}', { cacheDir: false });
      assert.strictEqual(image.target, `sm_${major}${minor}`);
      assert.strictEqual(cubinSm(image), major * 10 + minor);
    });

    it('loads, and its kernels compute what the CPU does', async function () {
      const mod = new SourceModule(SCALE);
      assert.ok(mod instanceof cuda.Module);
      const input = random();
      const a = Math.fround(Math.random() * 10 + 1);
      const out = new Float32Array(n);
      await mod.getFunction('scale')(cuda.Out(out), cuda.In(input), cuda.float32(a), cuda.int32(n), launch);
      assert.deepStrictEqual(out, input.map((v) => Math.fround(a * v)));
    });

    it('SourceModule.compile loads templates by their name expressions', async function () {
      const mod = await SourceModule.compile(ADD, { nameExpressions: ['addTo<float>'] });
      assert.ok(mod instanceof SourceModule);
      assert.strictEqual(mod.loweredNames['addTo<float>'], '_Z5addToIfEvPT_PKS0_i');
      const x = random();
      const y = random();
      const sum = y.map((v, i) => Math.fround(v + x[i]));
      await mod.getFunction('addTo<float>')(cuda.InOut(y), cuda.In(x), cuda.int32(n), launch);
      assert.deepStrictEqual(y, sum);
    });
  });
});
