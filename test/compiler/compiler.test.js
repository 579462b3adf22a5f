'use strict';
// cudadrv/compiler: NVRTC needs no GPU, so everything but loading the result runs here and in CI.
const assert = require('assert');
const { execFileSync } = require('child_process');
const { getEventListeners } = require('events');
const fs = require('fs');
const os = require('os');
const path = require('path');
const cuda = require('../..');
const compiler = require('../../lib/compiler');
const binding = require('../../lib/internal/binding');
const { describeGpu } = require('../support/gpu');
const {
  ROOT,
  SCALE_SOURCE,
  randomFloat,
  ptxFloat,
  scaleOption,
  tmpdir,
  run,
  scratchCacheRoot,
} = require('../support/compile-helpers');

const { compile, compileSync, SourceModule, DEFAULT_OPTIONS } = compiler;
const cache = require('../../lib/compiler/cache');
const { splitShellWords, INCLUDE_DIR } = require('../../lib/compiler/request');
const { pickTarget } = require('../../lib/compiler/nvrtc');
const { toolkitInclude } = require('../../lib/compiler/request');

// The SM a cubin was compiled for, from its ELF header (e_flags; CUDA 13's ABI moved it a byte).
function cubinSm(image) {
  assert.strictEqual(image.subarray(0, 4).toString('latin1'), '\x7fELF');
  const flags = image.readUInt32LE(0x30);
  return image[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

const ptxTarget = (image) => /^\.target\s+(\S+)/m.exec(image.toString())[1];

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

describe('cudadrv/compiler', function () {
  const cacheRoot = scratchCacheRoot();

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
        // the binary that loads: the built one, else the prebuilt one
        needed = execFileSync('readelf', ['-d', require('node-gyp-build').path(ROOT)]).toString();
      } catch (error) {
        if (error.code === 'ENOENT') this.skip(); // no binutils here
        throw error;
      }
      assert.match(needed, /NEEDED/);
      assert.doesNotMatch(needed, /libnvrtc|libnvJitLink|libcuda/);
    });

    it('a missing NVRTC is a RuntimeError naming what was tried and why', async function () {
      const missing = '/nonexistent/libnvrtc.so.99';
      const { code, stdout } = await run(
        `
        const cuda = require('.');
        const out = [];
        for (const f of [() => cuda.nvrtcVersion(),
          () => cuda.compiler.compileSync('__global__ void k() {}', { cacheDir: false })]) {
          try { f(); out.push(null); } catch (e) {
            out.push({ name: e.name, message: e.message, api: e.api, codeName: e.codeName, cuda: e instanceof cuda.CudaError });
          }
        }
        console.log(JSON.stringify(out));`,
        { CUDADRV_NVRTC_PATH: missing },
      );
      assert.strictEqual(code, 0);
      const errors = JSON.parse(stdout);
      assert.strictEqual(errors.length, 2);
      for (const error of errors) {
        assert.strictEqual(error.name, 'RuntimeError');
        assert.strictEqual(error.cuda, true);
        assert.strictEqual(error.api, 'dlopen');
        assert.strictEqual(error.codeName, 'CUDA_ERROR_SHARED_OBJECT_INIT_FAILED');
        assert.ok(
          error.message.startsWith(
            `could not load NVRTC: tried ${missing} (${missing}: cannot open shared object file`,
          ),
          error.message,
        );
        assert.match(error.message, /CUDADRV_NVRTC_PATH/);
      }
    });

    it('CUDADRV_NVRTC_PATH names the library to load', async function () {
      const library = binding.nvrtcLibraryPath();
      const { code, stdout } = await run(
        `
        const nvrtc = require('./lib/compiler/nvrtc');
        console.log(JSON.stringify([nvrtc.nvrtcLibrary(), nvrtc.nvrtcVersion()]));`,
        { CUDADRV_NVRTC_PATH: library },
      );
      assert.strictEqual(code, 0);
      assert.deepStrictEqual(JSON.parse(stdout), [
        { path: library, source: 'CUDADRV_NVRTC_PATH' },
        cuda.nvrtcVersion(),
      ]);
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

    it("give PTX text (no NUL terminator) for compute_XY, holding the options' values", function () {
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
      for (const [arch, sm] of [
        ['sm_100', 100],
        ['sm_120', 120],
        ['sm_103', 103],
        ['sm_90a', 90],
        ['sm_100a', 100],
      ]) {
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

      // a compile of about a third of a second: 10 ms timers keep firing through it. The source is
      // new to every run: on the GPU machine a repeat of the same source compiled in about 15 ms,
      // from a cache outside cudadrv (cacheDir is false).
      const heavy = `__global__ void heavy(float *out, const float *in) {
        float acc = in[threadIdx.x] * ${randomFloat()}f;
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
      beforeEach(function () {
        // counts the compiles that reach NVRTC, and keeps them to wait for
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
          name: 'AbortError',
          message: 'the compile of kernel.cu took longer than its timeout of 5 ms',
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
        process.once('warning', (w) => {
          warned = w;
        });
        const pending = Array.from({ length: count }, () => {
          const [source, opts] = heavy();
          return compile(source, { ...opts, cacheDir: false, signal: controller.signal });
        });
        controller.abort();
        const outcomes = await Promise.allSettled(pending);
        assert.deepStrictEqual(
          outcomes.map((o) => o.reason?.name),
          Array(count).fill('AbortError'),
        );
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
          name: 'TypeError',
          message: 'compileSync cannot be interrupted, so it takes no timeout; use compile()',
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
      for (const [header, type] of [
        ['pipe.h', 'a FIFO'],
        ['zero.h', 'a character device'],
      ]) {
        for (const cacheDir of ['false', JSON.stringify(path.join(dir, 'cache'))]) {
          const out = execFileSync(process.execPath, ['-e', script(header, cacheDir)], { cwd: ROOT, timeout: 30000 });
          assert.strictEqual(
            out.toString().trim(),
            `RuntimeError: ${path.join(dir, header)}, where an #include ` +
              `of the source may be found, is ${type}; NVRTC would block reading it: remove it or change the include path`,
          );
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
      const plain = compileSync(SCALE_SOURCE, {
        code: 'compute_90',
        options: ['-DSCALE=2.0f'],
        noExternC: true,
        cacheDir: false,
      });
      assert.match(plain.toString(), /\.entry _Z5scalePf\(/);
      for (const noExternC of [false, true]) {
        assert.throws(
          () => compileSync('\n\n__global__ void broken() { undeclared = 1; }', { noExternC, cacheDir: false }),
          (e) =>
            e instanceof cuda.CompileError &&
            /kernel\.cu\(3\): error: identifier "undeclared" is undefined/.test(e.log),
        );
      }
    });

    it('give lowered names for name expressions (templates), defaulting noExternC to true', function () {
      const source = `template <typename T> __global__ void axpy(T a, const T *x, T *y) { y[threadIdx.x] += a * x[threadIdx.x]; }
        template <int N> __global__ void fill(int *out) { out[threadIdx.x] = N; }`;
      const n = 1 + Math.floor(Math.random() * 100000);
      const expressions = ['axpy<float>', 'axpy<double>', `fill<${n}>`];
      const image = compileSync(source, { code: 'compute_90', nameExpressions: expressions, cacheDir: false });
      assert.deepStrictEqual(
        { ...image.loweredNames },
        {
          'axpy<float>': '_Z4axpyIfEvT_PKS0_PS0_',
          'axpy<double>': '_Z4axpyIdEvT_PKS0_PS0_',
          [`fill<${n}>`]: `_Z4fillILi${n}EEvPi`,
        },
      );
      const ptx = image.toString();
      for (const lowered of Object.values(image.loweredNames)) assert.ok(ptx.includes(`.entry ${lowered}(`), lowered);
      assert.ok(ptx.includes(`${n};`), 'fill<N> stores N');
    });

    it('pass warnings to messageHandler and the result, never to stdout', function () {
      const source = '__global__ void k(float *x) { int unused; x[0] = 1; }';
      const logs = [];
      const opts = { messageHandler: (log) => logs.push(log), cacheDir: path.join(cacheRoot(), 'warn') };
      let image;
      const printed = captured(process.stdout, () => {
        image = compileSync(source, opts);
        compileSync(source, opts); // a hit
      });
      assert.strictEqual(printed, '');
      assert.match(image.log, /warning #177-D: variable "unused" was declared but never referenced/);
      assert.deepStrictEqual(logs, [image.log, image.log]);
    });

    it("use in-memory headers, include directories and the package's own include directory", function () {
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
        code: 'compute_90',
        headers: { 'defs.h': `#define SCALE ${x.toPrecision(9)}f` },
        includeDirs: [dir],
        options: [`-DVERSION=${major * 10000 + minor * 100 + patch}`],
        cacheDir: false,
      });
      assert.ok(image.toString().includes(ptxFloat(Math.fround(x * y))), 'SCALE * FACTOR, folded');
      fs.rmSync(dir, { recursive: true });
    });

    it('use DEFAULT_OPTIONS when options are not given', function () {
      const source = '#ifndef FROM_DEFAULTS\n#error "DEFAULT_OPTIONS were not used"\n#endif\n__global__ void k() {}';
      DEFAULT_OPTIONS.push('-DFROM_DEFAULTS=1');
      try {
        compileSync(source, { cacheDir: false });
        assert.throws(
          () => compileSync(source, { options: [], cacheDir: false }),
          (e) => e instanceof cuda.CompileError && /DEFAULT_OPTIONS were not used/.test(e.log),
        );
      } finally {
        DEFAULT_OPTIONS.pop();
      }
    });

    it('DEFAULT_OPTIONS starts as CUDADRV_DEFAULT_OPTIONS split as a shell would', async function () {
      const { stdout } = await run("console.log(JSON.stringify(require('./lib/compiler').DEFAULT_OPTIONS))", {
        CUDADRV_DEFAULT_OPTIONS: '-lineinfo  \'-DNAME=two words\' -DQ="a\\"b" x\\ y',
      });
      assert.deepStrictEqual(JSON.parse(stdout), ['-lineinfo', '-DNAME=two words', '-DQ=a"b', 'x y']);
      const broken = await run("require('./lib/compiler')", { CUDADRV_DEFAULT_OPTIONS: "-DX='open" });
      assert.notStrictEqual(broken.code, 0);
      assert.match(broken.stderr, /RangeError: CUDADRV_DEFAULT_OPTIONS has an unterminated ' quote/);
      assert.deepStrictEqual(splitShellWords('', 'x'), []);
      assert.deepStrictEqual(splitShellWords(' a\t\\\n b "c d"e \'f\\g\' h\\\\i "$\\$"', 'x'), [
        'a',
        'b',
        'c de',
        'f\\g',
        'h\\i',
        '$$',
      ]);
      assert.throws(() => splitShellWords('"a', 'x'), {
        name: 'RangeError',
        message: 'x has an unterminated " quote: "a',
      });
    });

    it('keep: the source, options, log and output stay in a directory that is printed', function () {
      let image;
      const printed = captured(process.stderr, () => {
        image = compileSync('__global__ void k(float *x) { int unused; x[0] = 2; }', {
          keep: true,
          code: 'compute_90',
          name: 'kept.cu',
        });
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
      const lengths = await Promise.all(
        [1, 2, 3].map(
          (k) =>
            new Promise((resolve, reject) => {
              const worker = new Worker(script, { eval: true, workerData: { source: heavy(k) } });
              worker.once('message', (length) => worker.terminate().then(() => resolve(length)));
              worker.once('error', reject);
            }),
        ),
      );
      lengths.forEach((length, i) =>
        assert.strictEqual(length, compileSync(heavy(i + 1), { arch: 'sm_90', cacheDir: false }).length),
      );
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

    it("is the device's own sm_XY where NVRTC supports it, three digits included", function () {
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
        message:
          'the current device (sm_70) is older than every architecture NVRTC 13.0 compiles for ' +
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
    it('the toolkit\'s headers are on the include path, outside the extern "C" block: cuda_fp16.h and cuda_bf16.h work as written', function () {
      if (!toolkitInclude(require('../../lib/compiler/nvrtc').nvrtcLibrary().path)) this.skip(); // an NVRTC without the toolkit's headers
      const source = [
        '#include <cuda_fp16.h>',
        '#include <cuda_bf16.h>',
        '__global__ void halves(__half *x) { x[0] = __float2half(1.5f); }',
        '__global__ void oops() { nope; }',
      ].join('\n');
      // line numbers are the source's, though the system headers moved out of the extern "C" block
      assert.throws(
        () => compileSync(source, { arch: 'compute_80', cacheDir: false }),
        (e) => /kernel\.cu\(4\): error: identifier "nope" is undefined/.test(e.log),
      );
      const ptx = Buffer.from(
        compileSync(source.split('\n').slice(0, 3).join('\n'), { arch: 'compute_80', cacheDir: false }),
      ).toString();
      assert.match(ptx, /\.visible \.entry halves\(/, 'the kernel keeps its C name');
    });

    it('a template refused for extern "C" linkage says to pass noExternC; with it, the template compiles', function () {
      const source =
        'template <typename T> __global__ void fill(T *x) { x[0] = 1; }\ntemplate __global__ void fill<float>(float *);';
      assert.throws(
        () => compileSync(source, { arch: 'compute_80', cacheDir: false }),
        (e) => {
          assert.ok(e instanceof cuda.CompileError);
          assert.match(e.log, /may not have extern "C" linkage/);
          assert.ok(
            e.message.endsWith(
              '\n(cudadrv compiles the source inside extern "C" { } so that kernels keep their names, and templates ' +
                'and overloads cannot have C linkage there: pass { noExternC: true }, and mark the kernels to get by ' +
                'name extern "C", or give nameExpressions for templates)',
            ),
            e.message,
          );
          return true;
        },
      );
      compileSync(source, { arch: 'compute_80', cacheDir: false, noExternC: true });
      // another error says nothing of it
      assert.throws(
        () => compileSync('__global__ void k() { nope; }', { arch: 'compute_80', cacheDir: false }),
        (e) => !/noExternC/.test(e.message),
      );
    });

    it('a syntax error is a CompileError with the whole log, the options and the source name', async function () {
      const source = '__global__ void k(float *x) {\n  x[0] = 1\n}';
      const check = (e) => {
        assert.ok(e instanceof cuda.CompileError && e instanceof cuda.CudaError);
        assert.strictEqual(e.name, 'CompileError');
        assert.strictEqual(e.code, 6);
        assert.strictEqual(e.codeName, 'NVRTC_ERROR_COMPILATION');
        assert.strictEqual(e.api, 'nvrtcCompileProgram');
        assert.strictEqual(e.source, 'broken.cu');
        // the toolkit's include directory next to the NVRTC in use, then cudadrv's own
        const toolkit = toolkitInclude(require('../../lib/compiler/nvrtc').nvrtcLibrary().path);
        assert.ok(toolkit === null || fs.existsSync(path.join(toolkit, 'cuda_fp16.h')), toolkit);
        assert.deepStrictEqual(e.options, [
          '-DX=1',
          ...(toolkit ? [`-I${toolkit}`] : []),
          `-I${INCLUDE_DIR}`,
          '-arch=sm_90',
        ]);
        assert.match(e.log, /^broken\.cu\(3\): error: expected a ";"$/m);
        assert.match(e.log, /1 error detected in the compilation of "broken\.cu"/);
        assert.strictEqual(
          e.message,
          `nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION compiling broken.cu\n${e.log.trimEnd()}`,
        );
        return true;
      };
      const opts = { name: 'broken.cu', arch: 'sm_90', options: ['-DX=1'] };
      assert.throws(() => compileSync(source, opts), check);
      await assert.rejects(compile(source, opts), check);
    });

    it("an unknown option is NVRTC's CompileError", async function () {
      await assert.rejects(
        compile('__global__ void k() {}', { options: ['--no-such-option'], cacheDir: false }),
        (e) => {
          assert.ok(e instanceof cuda.CompileError);
          assert.strictEqual(e.codeName, 'NVRTC_ERROR_INVALID_OPTION');
          assert.strictEqual(e.code, 5);
          assert.match(e.log, /unrecognized option --no-such-option/);
          return true;
        },
      );
    });

    it('an architecture NVRTC does not know is a RangeError listing those it does', function () {
      const supported = cache
        .nvrtcIdentity(null)
        .archs.map((n) => `sm_${n}`)
        .join(', ');
      const version = cuda.nvrtcVersion().join('.');
      assert.throws(() => compileSync('', { arch: 'sm_35' }), {
        name: 'RangeError',
        message: `arch sm_35: NVRTC ${version} does not compile for it; it supports ${supported} (and their compute_ forms)`,
      });
      assert.throws(() => compileSync('', { code: 'compute_20' }), {
        name: 'RangeError',
        message: /^code compute_20: NVRTC/,
      });
      for (const arch of ['sm_9', 'gfx90a', 'sm90', 'sm_1000', 'compute_90b', '']) {
        assert.throws(() => compileSync('', { arch }), {
          name: 'RangeError',
          message: `arch must name an architecture such as sm_90 (cubin) or compute_90 (PTX), sm_100, sm_120, sm_90a, not ${JSON.stringify(arch)}`,
        });
      }
      assert.throws(() => compileSync('', { arch: 90 }), {
        name: 'TypeError',
        message: 'arch must be a string, not number 90',
      });
      // a known number with a suffix NVRTC refuses: NVRTC's own error
      assert.throws(() => compileSync('', { arch: 'sm_75a', cacheDir: false }), cuda.CompileError);
    });

    it('conflicting architectures are refused; one given in options is used', function () {
      assert.throws(() => compileSync('', { arch: 'sm_80', code: 'sm_90' }), {
        name: 'RangeError',
        message: /^arch sm_80 and code sm_90 name different architectures/,
      });
      assert.throws(() => compileSync('', { arch: 'sm_90', options: ['-arch=sm_90'] }), {
        name: 'RangeError',
        message: /^the architecture is given twice/,
      });
      assert.throws(() => compileSync('', { options: ['-arch=sm_90', '--gpu-architecture', 'sm_80'] }), {
        name: 'RangeError',
        message: 'options give more than one architecture: sm_90, sm_80',
      });
      const image = compileSync(SCALE_SOURCE, {
        options: ['-DSCALE=3.0f', '--gpu-architecture=sm_120'],
        cacheDir: false,
      });
      assert.strictEqual(image.target, 'sm_120');
      assert.strictEqual(cubinSm(image), 120);
      const both = compileSync(SCALE_SOURCE, {
        arch: 'sm_90',
        code: 'compute_90',
        options: ['-DSCALE=3.0f'],
        cacheDir: false,
      });
      assert.strictEqual(both.target, 'compute_90');
      assert.strictEqual(ptxTarget(both), 'sm_90');
    });

    it('unreadable include directories are a RuntimeError naming them', function () {
      const file = path.join(cacheRoot(), 'a-file');
      fs.writeFileSync(file, '');
      for (const [dir, why] of [
        ['/nonexistent/include', 'ENOENT'],
        [file, 'not a directory'],
      ]) {
        assert.throws(
          () => compileSync('', { includeDirs: [INCLUDE_DIR, dir] }),
          (e) => {
            assert.ok(e instanceof cuda.RuntimeError);
            assert.ok(
              e.message.startsWith(`includeDirs[1]: ${JSON.stringify(dir)} is not a readable directory (`),
              e.message,
            );
            assert.ok(e.message.includes(why), e.message);
            return true;
          },
        );
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
        // a sparse array of 2**32 - 1 holes took minutes to walk (the sanitized fuzzer's hang)
        ['', { options: Array(2 ** 32 - 1) }, 'RangeError', 'options holds 4294967295 items; at most 65536'],
        ['', { includeDirs: [''] }, 'RangeError', 'includeDirs[0] must not be empty'],
        [
          '',
          { headers: ['a.h'] },
          'TypeError',
          'headers must be an object mapping include names to sources, not an array',
        ],
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
        ...[-1, NaN, Infinity, 2 ** 31].map((timeout) => [
          '',
          { timeout },
          'RangeError',
          `timeout must be a number of milliseconds from 0 to 2147483647, not ${timeout}`,
        ]),
      ];
      for (const [source, opts, name, message] of cases) {
        assert.throws(() => compileSync(source, opts), { name, message });
        await assert.rejects(compile(source, opts), { name, message });
        assert.throws(() => new SourceModule(source, opts), { name, message });
      }
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
        (error) => assert.ok(loadingFailed(error), error),
      );
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

    it("defaults to the current device's architecture as a cubin", function () {
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
      assert.deepStrictEqual(
        out,
        input.map((v) => Math.fround(a * v)),
      );
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
