'use strict';
// Relocatable and LTO-IR compiles, and the Linker with nvJitLink: both need no GPU. (The driver's
// linker and libraries run through the stand-in driver: test/kernel/library-driver.test.js; linked
// code on a device: linker-gpu.test.js.)
const assert = require('assert');
const path = require('path');
const { nvrtcLoads } = require('../support/nvrtc-available');
const { tmpdir, run } = require('../support/compile-helpers');
const { sources, elfSymbols, DYNAMIC_SOURCE } = require('../support/link-sources');

const compiler = require('../../lib/compiler');
const cache = require('../../lib/compiler/cache');
const { Linker, LinkError, CompileError, compileSync, compile } = compiler;

const ARCH = 'sm_90';

describe('linking (nvJitLink; no GPU needed)', function () {
  this.timeout(120000);
  before(function () {
    if (!nvrtcLoads()) this.skip(); // NVRTC compiles the inputs
    try {
      compiler.nvJitLinkVersion();
    } catch (error) {
      this.skip(`nvJitLink does not load here: ${error.message}`);
    }
  });

  it('compile() says what it made: relocatable cubin or PTX, and LTO-IR, each cached as such', async function () {
    const s = sources();
    const cacheDir = tmpdir('link-cache');
    const cubin = compileSync(s.library, { relocatable: true, arch: ARCH, cacheDir });
    const ptx = compileSync(s.library, { relocatable: true, arch: 'compute_90', cacheDir });
    const ltoir = compileSync(s.library, { lto: true, arch: ARCH, cacheDir });
    assert.deepStrictEqual([cubin.kind, ptx.kind, ltoir.kind], ['cubin', 'ptx', 'ltoir']);
    assert.strictEqual(cubin.subarray(0, 4).toString('latin1'), '\x7fELF');
    assert.match(ptx.toString(), /\.visible \.func .*twice_/);
    assert.strictEqual(ltoir.readUInt32LE(0), 0x7f4e43ed); // NVVM's LTO-IR magic
    // a plain compile of the same source is another entry: relocatable and LTO are in the key
    const plain = compileSync(s.library, { arch: ARCH, cacheDir });
    assert.strictEqual(plain.kind, 'cubin');
    assert.ok(!plain.equals(cubin));
    // from the cache, in this process and in another
    const hits = cache.stats.memoryHits;
    const again = await compile(s.library, { lto: true, arch: ARCH, cacheDir });
    assert.strictEqual(cache.stats.memoryHits, hits + 1);
    assert.deepStrictEqual([again.kind, again.equals(ltoir)], ['ltoir', true]);
    const other = await run(
      `const c = require('./lib/compiler'); const a = c.compileSync(${JSON.stringify(s.library)}, ` +
        `{ lto: true, arch: '${ARCH}', cacheDir: ${JSON.stringify(cacheDir)} }); ` +
        "console.log(JSON.stringify([a.kind, require('./lib/compiler/cache').stats.diskHits, a.toString('hex')]))",
    );
    assert.deepStrictEqual(JSON.parse(other.stdout), ['ltoir', 1, ltoir.toString('hex')]);
  });

  it('links two relocatable cubins, one calling the other, into one cubin holding the kernel', function () {
    const s = sources();
    const library = compileSync(s.library, { relocatable: true, arch: ARCH, name: 'library.cu' });
    const main = compileSync(s.main, { relocatable: true, arch: ARCH, name: 'main.cu' });
    const linked = new Linker({ arch: ARCH, cacheDir: false }).add(library).add(main).link();
    assert.deepStrictEqual([linked.kind, linked.target], ['cubin', ARCH]);
    const symbols = elfSymbols(linked);
    assert.ok(symbols.includes(s.kernel), `the kernel ${s.kernel} is among ${symbols.join(' ')}`);
    assert.ok(!elfSymbols(library).includes(s.kernel));
  });

  it('links LTO-IR with link-time optimization; PTX and files too', async function () {
    const s = sources();
    const library = compileSync(s.library, { lto: true, arch: ARCH });
    const main = compileSync(s.main, { lto: true, arch: ARCH });
    const linked = await new Linker({ arch: ARCH, lto: true, cacheDir: false }).add(library).add(main).linkAsync();
    assert.ok(elfSymbols(linked).includes(s.kernel));
    // the device function was inlined across the inputs: no call remains
    assert.ok(!elfSymbols(linked).includes(s.fn), 'LTO inlined the device function');
    // PTX from a file, its kind from the extension
    const dir = tmpdir('link-files');
    const ptxFile = path.join(dir, 'library.ptx');
    require('fs').writeFileSync(ptxFile, compileSync(s.library, { relocatable: true, arch: 'compute_90' }));
    const fromFile = new Linker({ arch: ARCH, cacheDir: false })
      .addFile(ptxFile)
      .add(compileSync(s.main, { relocatable: true, arch: ARCH }))
      .link();
    assert.ok(elfSymbols(fromFile).includes(s.kernel));
  });

  it('an unresolved symbol is a LinkError whose log names it', function () {
    const s = sources();
    const main = compileSync(s.main, { relocatable: true, arch: ARCH, name: 'main.cu' });
    assert.throws(
      () => new Linker({ arch: ARCH, cacheDir: false }).add(main).link(),
      (error) =>
        error instanceof LinkError &&
        error instanceof compiler.LinkError &&
        error.log.includes(s.fn) &&
        error.message.includes(s.fn) &&
        /nvJitLinkComplete/.test(error.api),
    );
  });

  it('wrong arch, garbage input, LTO-IR without lto, empty links: each a clear error', function () {
    const s = sources();
    const cubin = compileSync(s.library, { relocatable: true, arch: ARCH });
    const ltoir = compileSync(s.library, { lto: true, arch: ARCH });
    assert.throws(() => new Linker({ arch: 'sm_80' }).add(cubin).link(), {
      name: 'RangeError',
      message: /input0\.cubin is a cubin for sm_90, which cannot link into a cubin for sm_80/,
    });
    assert.throws(() => new Linker({ arch: 'compute_90' }), { name: 'RangeError', message: /such as 'sm_90'/ });
    assert.throws(() => new Linker({ arch: ARCH }).add(ltoir, { name: 'lib.ltoir' }).link(), {
      name: 'RangeError',
      message:
        /lib\.ltoir is LTO-IR, which links only with link-time optimization: make the Linker with \{ lto: true \}/,
    });
    assert.throws(
      () =>
        new Linker({ arch: ARCH, lto: true }).add(Buffer.from('not LTO-IR at all'), { kind: 'ltoir', name: 'junk' }),
      { name: 'RangeError', message: /^junk cannot be linked as LTO-IR: it is not LTO-IR/ },
    );
    // a cubin whose headers reach past its end never reaches the linker
    assert.throws(() => new Linker({ arch: ARCH }).add(cubin.subarray(0, 200)), {
      name: 'RangeError',
      message: /^input0\.cubin cannot be linked as a cubin: its section headers overrun it/,
    });
    assert.throws(() => new Linker({ arch: ARCH }).link(), { name: 'LogicError', message: /nothing to link/ });
    assert.throws(() => new Linker({ arch: ARCH }).add(Buffer.alloc(0)), { name: 'RangeError' });
    assert.throws(() => new Linker({ arch: ARCH }).add(cubin, { kind: 'elf' }), {
      name: 'RangeError',
      message: /kind must be one of/,
    });
    assert.throws(() => new Linker({ arch: ARCH, options: ['-lto'] }), { name: 'RangeError', message: /lto option/ });
    assert.throws(() => new Linker({ arch: ARCH, options: Array(2 ** 32 - 1) }), {
      name: 'RangeError',
      message: 'options holds 4294967295 items; at most 65536',
    });
    assert.throws(() => new Linker({ arhc: ARCH }), { name: 'TypeError', message: /unknown Linker option "arhc"/ });
    assert.throws(() => new Linker({ arch: ARCH }).addFile('/nonexistent/x.cubin'), {
      name: 'RuntimeError',
      message: /there is no such file/,
    });
    // an unknown nvJitLink option: nvJitLink's own error
    assert.throws(() => new Linker({ arch: ARCH, options: ['-no-such-option'] }).add(cubin).link(), LinkError);
    // after every failure above, nvJitLink still links (its lock stays on one thread)
    const s2 = sources();
    new Linker({ arch: ARCH, cacheDir: false })
      .add(compileSync(s2.library, { relocatable: true, arch: ARCH }))
      .add(compileSync(s2.main, { relocatable: true, arch: ARCH }))
      .link();
  });

  it('a cached link costs no link; inputs are copied when added', function () {
    const s = sources();
    const cacheDir = tmpdir('link-cache');
    const library = compileSync(s.library, { lto: true, arch: ARCH });
    const main = compileSync(s.main, { lto: true, arch: ARCH });
    const links = cache.stats.links;
    const linker = new Linker({ arch: ARCH, lto: true, cacheDir }).add(library).add(main);
    library.fill(0); // the linker holds its own copy
    const first = linker.link();
    const second = new Linker({ arch: ARCH, lto: true, cacheDir }).add(linker._inputs[0].data).add(main).link();
    assert.strictEqual(cache.stats.links, links + 1);
    assert.ok(second.equals(first) && second.buffer !== first.buffer);
  });

  it('a kernel launching a kernel links only with deviceRuntime (libcudadevrt)', async function () {
    const image = compileSync(DYNAMIC_SOURCE, { relocatable: true, arch: ARCH, name: 'parent.cu' });
    assert.throws(
      () => new Linker({ arch: ARCH, cacheDir: false }).add(image).link(),
      (error) => error instanceof LinkError && /Undefined reference to .__cudaCDP2\w*LaunchDevice/.test(error.log),
    );
    const linked = new Linker({ arch: ARCH, deviceRuntime: true, cacheDir: false }).add(image).link();
    assert.ok(elfSymbols(linked).includes('parent') && elfSymbols(linked).includes('child'));
    const missing = await run(
      `const c = require('./lib/compiler'); try { new c.Linker({ arch: '${ARCH}', deviceRuntime: true })` +
        ".add(Buffer.from('.version 9.0')).link(); } catch (e) { console.log(e.name + ': ' + e.message); }",
      { CUDADRV_CUDADEVRT_PATH: '/nonexistent/libcudadevrt.a' },
    );
    assert.match(
      missing.stdout,
      /^RuntimeError: cannot add \/nonexistent\/libcudadevrt\.a to the link: there is no such file/,
    );
  });

  it('linkAsync() links off the main thread, and a signal gives up waiting', async function () {
    const s = sources();
    const linker = new Linker({ arch: ARCH, cacheDir: false })
      .add(compileSync(s.library, { relocatable: true, arch: ARCH }))
      .add(compileSync(s.main, { relocatable: true, arch: ARCH }));
    await assert.rejects(linker.linkAsync({ signal: AbortSignal.abort() }), { name: 'AbortError' });
    const controller = new AbortController();
    const pending = linker.linkAsync({ signal: controller.signal });
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    const linked = await linker.linkAsync();
    assert.ok(elfSymbols(linked).includes(s.kernel));
    await assert.rejects(linker.linkAsync({ signal: 'no' }), {
      name: 'TypeError',
      message: /signal must be an AbortSignal/,
    });
  });

  it('queued links whose callers gave up are dropped, not linked: exit waits for none of them', async function () {
    // 300 aborted linkAsync() calls still linked one after another on the linking thread, holding
    // their inputs and delaying process.exit by 4-9 s.
    const binding = require('../../lib/internal/binding');
    const s = sources();
    const linker = new Linker({ arch: ARCH, cacheDir: false })
      .add(compileSync(s.library, { relocatable: true, arch: ARCH }))
      .add(compileSync(s.main, { relocatable: true, arch: ARCH }));
    const linkAsync = binding.linkAsync;
    let started = 0;
    binding.linkAsync = (...args) => (started++, linkAsync(...args));
    try {
      const controller = new AbortController();
      const pending = Array.from({ length: 100 }, () => linker.linkAsync({ signal: controller.signal }));
      for (let i = 0; i < 5; i++) await null; // the first link has started; the others wait their turn
      assert.strictEqual(started, 1);
      controller.abort();
      const outcomes = await Promise.allSettled(pending);
      const bad = outcomes.find((o) => !(o.status === 'rejected' && o.reason.name === 'AbortError'));
      assert.strictEqual(bad, undefined);
      assert.ok(elfSymbols(await linker.linkAsync()).includes(s.kernel)); // after the dropped ones
      assert.ok(started <= 2, `${started} links started for 1 caller that waited`);
    } finally {
      binding.linkAsync = linkAsync;
    }
  });

  it('without nvJitLink (forced): LTO says nvJitLink is needed; the rest waits for a context', async function () {
    const s = sources();
    const script = `
      const c = require('./lib/compiler');
      const out = [];
      const lto = c.compileSync(${JSON.stringify(s.library)}, { lto: true, arch: '${ARCH}' });
      const rdc = c.compileSync(${JSON.stringify(s.library)}, { relocatable: true, arch: '${ARCH}' });
      for (const f of [() => c.nvJitLinkVersion(),
                       () => new c.Linker({ arch: '${ARCH}', lto: true }).add(lto).link(),
                       () => new c.Linker({ arch: '${ARCH}' }).add(rdc).link()]) {
        try { f(); out.push('no error'); } catch (e) { out.push(e.name + ': ' + e.message); }
      }
      out.push(new c.Linker().backend);
      console.log(JSON.stringify(out));`;
    const child = await run(script, { CUDADRV_NVJITLINK_PATH: '/nonexistent/libnvJitLink.so.13' });
    const [version, lto, plain, backend] = JSON.parse(child.stdout);
    assert.match(version, /^RuntimeError: could not load nvJitLink: tried \/nonexistent\/libnvJitLink\.so\.13 \(/);
    assert.match(
      lto,
      /^RuntimeError: link-time optimization \(LTO-IR inputs, lto: true\) needs nvJitLink: could not load nvJitLink/,
    );
    assert.match(
      plain,
      /^LogicError: nvJitLink cannot be loaded .*the driver's linker \(cuLink\), which serves instead, links in a context/,
    );
    assert.strictEqual(backend, 'cuLink');
  });

  it('cudadrv/compiler exports CompileError and LinkError, the classes cudadrv throws', function () {
    const cuda = require('../..');
    assert.strictEqual(CompileError, cuda.CompileError);
    assert.strictEqual(LinkError, cuda.LinkError);
    assert.ok(new LinkError('x', { log: 'l', input: 'a.cubin' }) instanceof cuda.CudaError);
    assert.throws(() => compileSync('__global__ void k() { nope; }'), CompileError);
  });
});
