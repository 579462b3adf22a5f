'use strict';
// Libraries (cuLibrary*) and the driver's linker (cuLink*, the fallback without nvJitLink) through
// the stand-in driver, in child processes: what the driver received is read from its log.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');

const ROOT = path.join(__dirname, '..', '..');

describe('libraries and the driver linker through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const standIn = standInDriver();

  // Runs script (cuda is cudadrv, out(value) records a result) against the stand-in.
  function run(name, script, env = {}) {
    const log = path.join(standIn.dir, `${name}.log`);
    fs.rmSync(log, { force: true });
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        `const cuda = require('.'); const results = []; const out = (v) => results.push(v);\n${script}\nconsole.log(JSON.stringify(results));`,
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_LOG: log, ...env },
      },
    );
    if (child.status !== 0) throw new Error(`${name} failed:\n${child.stderr}`);
    return {
      results: JSON.parse(child.stdout.trim().split('\n').pop()),
      lines: fs.readFileSync(log, 'utf8').trim().split('\n'),
    };
  }
  const errorOf = `(f) => { try { f(); return 'no error'; } catch (e) { return e.name + ': ' + e.message; } }`;

  it('a library loads without a context; its kernel launches in each context current, once per context', function () {
    const a = 1 + Math.floor(Math.random() * 1000);
    const b = 1 + Math.floor(Math.random() * 1000);
    const { results, lines } = run(
      'library',
      `const errorOf = ${errorOf};
      const library = cuda.libraryFromBuffer('entry scale 8 4\\nglobal table 24\\n');
      const kernel = library.getKernel('scale');
      out(kernel === library.getKernel('scale') && kernel === library.getFunction('scale'));
      out(errorOf(() => library.getKernel('missing')));
      out(errorOf(() => kernel(cuda.int32(1), { block: 1 })));
      out(errorOf(() => library.getGlobal('table')));
      const device = new cuda.Device(0);
      const first = device.makeContext();
      const memory = cuda.memAlloc(16);
      kernel(memory, cuda.int32(${a}), { block: [2, 1, 1], grid: [3, 1] });
      kernel(memory, cuda.int32(${a}), { block: [2, 1, 1], grid: [3, 1] });
      out(library.getGlobal('table').size);
      const second = device.makeContext();
      kernel(memory, cuda.int32(${b}), { block: 4 });
      out(kernel.module === library);
      first.push();
      kernel(memory, cuda.int32(${a}), { block: 1 });
      cuda.Context.pop();
      library.unload();
      library.unload();
      out(errorOf(() => kernel(memory, cuda.int32(1), { block: 1 })));
      out(errorOf(() => library.getKernel('scale')));
      second.detach();
      first.detach();`,
    );
    assert.deepStrictEqual(results, [
      true,
      "RuntimeError: cuLibraryGetKernel failed: named symbol not found (kernel 'missing')",
      "LogicError: a Library's kernels and globals live in the current context, and none is current: make or push a context first",
      "LogicError: a Library's kernels and globals live in the current context, and none is current: make or push a context first",
      24,
      true,
      "LogicError: this kernel's Library has been unloaded; load the library again and get the kernel from it",
      'LogicError: this Library has been unloaded; load it again',
    ]);
    const param = (n) => Buffer.from(new Int32Array([n]).buffer).toString('hex');
    const launches = lines.filter((line) => line.startsWith('launch '));
    assert.strictEqual(launches.length, 4);
    assert.ok(launches[0].endsWith(param(a)) && launches[2].endsWith(param(b)) && launches[3].endsWith(param(a)));
    assert.match(launches[0], /^launch scale grid=3,1,1 block=2,1,1 /);
    // one module per context: the first context's is made once, used again after the second's
    assert.deepStrictEqual(
      lines.filter((line) => /^library /.test(line)),
      ['library load 1 32', 'library 1 in context, module 1', 'library 1 in context, module 2', 'library unload 1'],
    );
  });

  it('libraryFromFile, getManaged, bad input', function () {
    const file = path.join(standIn.dir, 'library.txt');
    fs.writeFileSync(file, 'entry fill 8\nglobal counter 4\n');
    const { results } = run(
      'library-file',
      `const errorOf = ${errorOf};
      out(errorOf(() => cuda.libraryFromBuffer('fail\\n')));
      out(errorOf(() => cuda.libraryFromBuffer(42)));
      out(errorOf(() => cuda.libraryFromFile('/nonexistent')));
      out(errorOf(() => cuda.libraryFromFile('/dev/zero')));
      const ctx = new cuda.Device(0).makeContext();
      const library = cuda.libraryFromFile(${JSON.stringify(file)});
      out(library.getManaged('counter').size);
      out(typeof library.getGlobal('counter').ptr);
      out(errorOf(() => library.getGlobal(7)));
      const scoped = cuda.libraryFromBuffer('entry other 8\\n');
      scoped.getKernel('other');
      scoped[Symbol.dispose]();
      out(errorOf(() => scoped.getKernel('other')));
      ctx.detach();`,
    );
    assert.strictEqual(results[0].split('\n')[0], 'LogicError: cuLibraryLoadData failed: a PTX JIT compilation failed');
    assert.match(results[0], /fake JIT: syntax error at line 1/);
    assert.match(results[1], /^TypeError: image must be PTX, cubin or fatbin/);
    assert.match(results[2], /^RuntimeError: cuLibraryLoadFromFile failed: file not found/);
    assert.match(results[3], /something other than a regular file/);
    assert.deepStrictEqual(results.slice(4), [
      4,
      'bigint',
      'TypeError: name must be a string, not number 7',
      'LogicError: this Library has been unloaded; load it again',
    ]);
  });

  it('a driver without cuLinkCreate: the RuntimeError of every missing entry point (it read "CUresult 2147418113")', function () {
    const { results } = run(
      'nolink',
      `const errorOf = ${errorOf};
      const { Linker } = require('./lib/compiler');
      const ctx = new cuda.Device(0).makeContext();
      out(errorOf(() => new Linker().add('entry a 8\\n').link()));
      ctx.detach();`,
      {
        CUDADRV_NVJITLINK_PATH: '/nonexistent/libnvJitLink.so',
        FAKE_CUDA_MISSING: 'cuLinkCreate',
        FAKE_CUDA_TRACE: '1',
      },
    );
    assert.match(
      results[0],
      /^RuntimeError: cuLinkCreate is not provided by the installed CUDA driver \(version \d+\.\d+\); it needs a driver for CUDA \d+\.\d+ or newer/,
    );
  });

  it("without nvJitLink, the driver's linker links in the current context, and its log reaches a LinkError", function () {
    const { results, lines } = run(
      'culink',
      `const errorOf = ${errorOf};
      const { Linker } = require('./lib/compiler');
      const ctx = new cuda.Device(0).makeContext();
      const linker = new Linker().add('entry first 8\\n', { kind: 'ptx' }).add(Buffer.from('entry second 4\\n'), { name: 'second.ptx' });
      out(linker.backend);
      const image = linker.link();
      out([image.kind, image.target, image.log]);
      const module = cuda.moduleFromBuffer(image);
      module.getFunction('second')(cuda.int32(5), { block: 1 });
      out(errorOf(() => new Linker().add('entry a 8\\n').add('fail\\n', { name: 'bad.ptx' }).link()));
      let error;
      try { new Linker().add('fail\\n', { name: 'bad.ptx' }).link(); } catch (e) { error = e; }
      out([error.input, error.log, error.codeName]);
      out(errorOf(() => new Linker({ lto: true }).add('entry a 8\\n').link()));
      out(errorOf(() => new Linker({ options: ['-O3'] }).add('entry a 8\\n').link()));
      out(errorOf(() => new Linker({ arch: 'sm_80' }).add('entry a 8\\n').link()));
      new Linker().add('entry third 8\\n').linkAsync().then((async) => {
        out(cuda.moduleFromBuffer(async).getFunction('third') !== undefined);
        ctx.detach();
        console.log(JSON.stringify(results));
      });`,
      { CUDADRV_NVJITLINK_PATH: '/nonexistent/libnvJitLink.so' },
    );
    assert.strictEqual(results[0], 'cuLink');
    assert.deepStrictEqual(results[1], ['cubin', 'sm_90', 'fake link: 2 inputs']);
    assert.match(
      results[2],
      /^LinkError: cuLinkAddData failed: CUDA_ERROR_INVALID_PTX adding bad\.ptx \(the driver's linker: nvJitLink could not be loaded\)\nfake link: bad\.ptx: syntax error/,
    );
    assert.deepStrictEqual(results[3], ['bad.ptx', 'fake link: bad.ptx: syntax error', 'CUDA_ERROR_INVALID_PTX']);
    assert.match(
      results[4],
      /^RuntimeError: link-time optimization .* needs nvJitLink: could not load nvJitLink: tried \/nonexistent/,
    );
    assert.match(results[5], /^RuntimeError: the link options -O3 need nvJitLink/);
    assert.match(results[6], /^RangeError: the driver's linker .* links for the current device, sm_90, not sm_80/);
    assert.strictEqual(results[7], true);
    // what the driver received: each input with its kind (1: PTX) and size (PTX with its NUL)
    const link = lines.filter((line) => line.startsWith('link '));
    assert.deepStrictEqual(link.slice(0, 5), [
      'link create',
      'link add 1 15 input0.ptx',
      'link add 1 16 second.ptx',
      'link complete 31',
      'link destroy',
    ]);
    assert.strictEqual(
      link.filter((line) => line === 'link destroy').length,
      link.filter((line) => line === 'link create').length,
    );
  });
});
