'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const cuda = require('../..');
const tools = require('../../lib/tools');
const { defaultContext, makeNewContext, retainPrimaryContext } = require('../../lib/tools/default-context');
const { describeGpu, hasGpu, noGpuReason, markCudaTest } = require('../support/gpu');

const { contextDependentMemoize, clearContextCaches } = tools;

// A machine with `count` devices, device files in a pretend home directory, and the environment given.
function machine({ count = 2, env = {}, files = {}, home = '/home/u' } = {}) {
  return {
    env,
    homedir: () => {
      if (home === null) throw new Error('no home');
      return home;
    },
    readFile: (file) => {
      if (file in files) return files[file];
      const error = new Error(`ENOENT: ${file}`);
      error.code = 'ENOENT';
      throw error;
    },
    deviceCount: () => count,
    device: (id) => ({ id }),
  };
}

function driverError(message) {
  return new cuda.LogicError(`cuCtxCreate failed: ${message}`, { code: 201, api: 'cuCtxCreate' });
}

// A ctxMaker that fails on the devices listed, and records every device it was given.
function maker(failing = {}) {
  const tried = [];
  const make = (dev) => {
    tried.push(dev.id);
    if (dev.id in failing) throw failing[dev.id];
    return { ctxOn: dev.id };
  };
  return { make, tried };
}

describe('cudadrv/tools', function () {
  it('declares every export in typings/tools.d.ts', function () {
    const typings = fs.readFileSync(path.join(__dirname, '..', '..', 'typings', 'tools.d.ts'), 'utf8');
    const declared = new Set(
      [...typings.matchAll(/^export declare (?:function|class|const) (\w+)/gm)].map((m) => m[1]),
    );
    assert.deepStrictEqual(Object.keys(tools).sort(), [...declared].sort());
  });

  it('every export can be imported by name from ESM', function () {
    const names = Object.keys(tools);
    const script = `import * as tools from 'cudadrv/tools'; console.log(JSON.stringify(Object.keys(tools)));`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: path.join(__dirname, '..', '..'),
    });
    assert.strictEqual(String(child.stderr), '');
    assert.deepStrictEqual(
      JSON.parse(child.stdout)
        .filter((n) => n !== 'default')
        .sort(),
      names.sort(),
    );
  });
});

describe('makeDefaultContext (with a stubbed machine)', function () {
  it('without a setting, takes the first device where a context can be made', function () {
    const { make, tried } = maker({ 0: driverError('device busy') });
    assert.deepStrictEqual(defaultContext(make, machine({ count: 3 })), { ctxOn: 1 });
    assert.deepStrictEqual(tried, [0, 1]);
  });

  it('when every device fails, the error says why each failed', function () {
    const failures = { 0: driverError('device busy'), 1: new cuda.MemoryError('cuCtxCreate failed: out of memory') };
    const { make, tried } = maker(failures);
    assert.throws(
      () => defaultContext(make, machine()),
      (error) => {
        assert.ok(error instanceof cuda.RuntimeError);
        assert.strictEqual(
          error.message,
          'makeDefaultContext(): no context could be made on any of the 2 devices:' +
            '\n  device 0: cuCtxCreate failed: device busy\n  device 1: cuCtxCreate failed: out of memory',
        );
        assert.deepStrictEqual(error.errors, [failures[0], failures[1]]);
        return true;
      },
    );
    assert.deepStrictEqual(tried, [0, 1]);
  });

  it("an error that is not the driver's stops the search at once", function () {
    const { make, tried } = maker({ 0: new TypeError('bug in ctxMaker') });
    assert.throws(() => defaultContext(make, machine()), { name: 'TypeError', message: 'bug in ctxMaker' });
    assert.deepStrictEqual(tried, [0]);
  });

  it('no device is a RuntimeError saying so', function () {
    assert.throws(() => defaultContext(maker().make, machine({ count: 0 })), {
      name: 'RuntimeError',
      message: /the CUDA driver reports no device/,
    });
  });

  it('CUDA_DEVICE chooses the device, by ordinal or PCI bus id, and nothing else is tried', function () {
    const { make, tried } = maker();
    assert.deepStrictEqual(defaultContext(make, machine({ count: 4, env: { CUDA_DEVICE: ' 3\n' } })), { ctxOn: 3 });
    assert.deepStrictEqual(defaultContext(make, machine({ env: { CUDA_DEVICE: '0000:3b:00.0' } })), {
      ctxOn: '0000:3b:00.0',
    });
    assert.deepStrictEqual(tried, [3, '0000:3b:00.0']);
    const failing = maker({ 1: driverError('device busy') });
    assert.throws(
      () => defaultContext(failing.make, machine({ env: { CUDA_DEVICE: '1' } })),
      (error) => {
        assert.ok(error instanceof cuda.LogicError);
        assert.strictEqual(error.message, 'device 1 (chosen by CUDA_DEVICE): cuCtxCreate failed: device busy');
        assert.strictEqual(error.code, 201);
        return true;
      },
    );
    assert.deepStrictEqual(failing.tried, [1]);
  });

  it('a malformed CUDA_DEVICE is a TypeError; an empty one is no setting', function () {
    assert.throws(() => defaultContext(maker().make, machine({ env: { CUDA_DEVICE: 'gpu0' } })), {
      name: 'TypeError',
      message: 'CUDA_DEVICE must hold a device ordinal such as 0, or a PCI bus id such as 0000:3b:00.0, not "gpu0"',
    });
    assert.throws(() => defaultContext(maker().make, machine({ env: { CUDA_DEVICE: '-1' } })), { name: 'TypeError' });
    assert.deepStrictEqual(defaultContext(maker().make, machine({ env: { CUDA_DEVICE: '' } })), { ctxOn: 0 });
  });

  it('~/.cuda-device, then ~/.cuda_device; CUDA_DEVICE first', function () {
    const home = '/home/u';
    const dash = path.join(home, '.cuda-device');
    const under = path.join(home, '.cuda_device');
    const make = maker().make;
    assert.deepStrictEqual(defaultContext(make, machine({ files: { [dash]: '2\n', [under]: '1' } })), { ctxOn: 2 });
    assert.deepStrictEqual(defaultContext(make, machine({ files: { [under]: '1' } })), { ctxOn: 1 });
    assert.deepStrictEqual(defaultContext(make, machine({ files: { [dash]: '  \n', [under]: '1' } })), { ctxOn: 1 });
    assert.deepStrictEqual(defaultContext(make, machine({ env: { CUDA_DEVICE: '0' }, files: { [dash]: '1' } })), {
      ctxOn: 0,
    });
    assert.throws(() => defaultContext(make, machine({ files: { [dash]: 'one' } })), {
      name: 'TypeError',
      message: `${dash} must hold a device ordinal such as 0, or a PCI bus id such as 0000:3b:00.0, not "one"`,
    });
    assert.deepStrictEqual(defaultContext(make, machine({ home: null })), { ctxOn: 0 });
  });

  it('the ctxMakers: a new context, or the primary context pushed', function () {
    assert.strictEqual(makeNewContext({ makeContext: () => 'new' }), 'new');
    let pushed = 0;
    const primary = { push: () => pushed++ };
    assert.strictEqual(retainPrimaryContext({ retainPrimaryContext: () => primary }), primary);
    assert.strictEqual(pushed, 1);
    assert.throws(() => defaultContext('no', machine()), { name: 'TypeError', message: /ctxMaker must be a function/ });
  });

  it('getDefaultDevice follows the same settings, else its default, and warns once as deprecated', function () {
    const script = `
      const { defaultDevice } = require('./lib/tools/default-context');
      const stub = (env) => ({ env, homedir: () => '/nonexistent', readFile: () => { throw Object.assign(new Error('no'), { code: 'ENOENT' }); },
        deviceCount: () => 2, device: (id) => ({ id }) });
      console.log(JSON.stringify([defaultDevice(0, stub({ CUDA_DEVICE: '1' })), defaultDevice(2, stub({}))]));`;
    const child = spawnSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..', '..') });
    assert.deepStrictEqual(JSON.parse(child.stdout), [{ id: 1 }, { id: 2 }]);
    const warnings = String(child.stderr).match(/DeprecationWarning: .*/g);
    assert.deepStrictEqual(warnings, [
      'DeprecationWarning: getDefaultDevice() is deprecated; use makeDefaultContext() instead',
    ]);
  });
});

describe('contextDependentMemoize', function () {
  it('returns the first result for the same arguments, by value for primitives and by identity for objects', function () {
    const calls = [];
    const f = contextDependentMemoize(function f(...args) {
      calls.push(args);
      return { args };
    });
    assert.strictEqual(f.name, 'f');
    const key = {};
    const sym = Symbol('s');
    const first = [
      f(1, 'a'),
      f(1, 'a', undefined),
      f('1', 'a'),
      f(key),
      f({}),
      f(NaN),
      f(0),
      f(1n),
      f(true),
      f(null),
      f(sym),
      f(),
    ];
    const again = [
      f(1, 'a'),
      f(1, 'a', undefined),
      f('1', 'a'),
      f(key),
      f({}),
      f(NaN),
      f(-0),
      f(1n),
      f(true),
      f(null),
      f(sym),
      f(),
    ];
    assert.strictEqual(calls.length, first.length + 1, 'f({}) twice are two calls');
    first.forEach((result, i) => {
      if (i !== 4) assert.strictEqual(again[i], result, `call ${i}`);
    });
    assert.notStrictEqual(again[4], first[4]);
    assert.notStrictEqual(f('a,', 'b'), f('a', ',b'), 'strings do not run together');
  });

  it('keeps the most recently used maxSize results', function () {
    let calls = 0;
    const f = contextDependentMemoize((n) => ({ n, call: ++calls }), { maxSize: 3 });
    const [a, b] = [f(1), f(2), f(3)];
    assert.strictEqual(f(1), a); // 1 is now the most recent
    f(4); // evicts 2
    assert.strictEqual(f(1), a);
    assert.notStrictEqual(f(2), b);
    assert.strictEqual(calls, 5);
    assert.throws(() => contextDependentMemoize(() => 0, { maxSize: 0 }), { name: 'RangeError', message: /maxSize/ });
    assert.throws(() => contextDependentMemoize('f'), { name: 'TypeError', message: /fn must be a function/ });
  });

  it('keeps neither throws nor rejected Promises; passes this', async function () {
    let calls = 0;
    const f = contextDependentMemoize(function (fail) {
      calls++;
      if (fail === 'throw') throw new Error('no');
      return fail ? Promise.reject(new Error('later')) : Promise.resolve(this.x);
    });
    assert.throws(() => f('throw'), /no/);
    assert.throws(() => f('throw'), /no/);
    await assert.rejects(f(true), /later/);
    await assert.rejects(f(true), /later/);
    assert.strictEqual(calls, 4);
    const ok = f.call({ x: 7 }, false);
    assert.strictEqual(await ok, 7);
    assert.strictEqual(f(false), ok);
    assert.strictEqual(calls, 5);
  });

  it('clearContextCaches() empties every cache', function () {
    let calls = 0;
    const f = contextDependentMemoize(() => ++calls);
    const g = contextDependentMemoize(() => ++calls);
    f();
    g();
    clearContextCaches();
    assert.deepStrictEqual([f(), g(), f(), g()], [3, 4, 3, 4]);
  });
});

describe('markCudaTest', function () {
  it('checks its argument', function () {
    assert.throws(() => markCudaTest(5), { name: 'TypeError', message: /fn must be a function/ });
  });

  // A Mocha of its own runs test/support/fixtures/mark-cuda-test.spec.js, with and without CUDADRV_REQUIRE_GPU.
  function runSpec(env) {
    const mocha = require.resolve('mocha/bin/mocha.js');
    const child = spawnSync(
      process.execPath,
      [
        mocha,
        '--no-config',
        '--reporter',
        'dot',
        path.join(__dirname, '..', 'support', 'fixtures', 'mark-cuda-test.spec.js'),
      ],
      { env: { ...process.env, CUDADRV_REQUIRE_GPU: '', ...env }, cwd: path.join(__dirname, '..', '..') },
    );
    return { out: String(child.stdout), status: child.status };
  }

  it('runs the test with a context and detaches it after, or skips saying why', function () {
    this.timeout(60000);
    const { out, status } = runSpec({});
    if (hasGpu) {
      assert.match(out, /ran sync[\s\S]*ran async[\s\S]*detached/);
      assert.match(out, /3 passing[\s\S]*1 failing[\s\S]*meant to fail/);
      assert.strictEqual(status, 1);
    } else {
      assert.ok(out.includes(`(GPU tests skipped: ${noGpuReason})`), out);
      assert.match(out, /1 passing[\s\S]*3 pending/);
      assert.doesNotMatch(out, /ran|detached/);
      assert.strictEqual(status, 0);
    }
  });

  it('with CUDADRV_REQUIRE_GPU=1, fails where there is no GPU', function () {
    this.timeout(60000);
    const { out } = runSpec({ CUDADRV_REQUIRE_GPU: '1' });
    if (hasGpu) {
      assert.match(out, /3 passing[\s\S]*1 failing/);
    } else {
      assert.match(out, /1 passing[\s\S]*3 failing/);
      assert.ok(out.includes(`CUDADRV_REQUIRE_GPU=1 but no GPU can be used: ${noGpuReason}`), out);
    }
  });
});

describeGpu('default contexts and memoization on the GPU', function () {
  it('makeDefaultContext() makes a new current context on the default device', function () {
    const ctx = tools.makeDefaultContext();
    try {
      assert.strictEqual(cuda.Context.getCurrent(), ctx);
      assert.notStrictEqual(ctx, this.cudaContext);
    } finally {
      ctx.detach();
    }
    const primary = tools.makeDefaultContext(retainPrimaryContext);
    try {
      assert.strictEqual(cuda.Context.getCurrent(), primary);
      assert.strictEqual(primary.device.primaryContextState().active, true);
    } finally {
      primary.detach();
    }
    assert.strictEqual(cuda.Context.getCurrent(), this.cudaContext);
  });

  it('getDefaultDevice() gives a Device', function () {
    assert.ok(tools.getDefaultDevice() instanceof cuda.Device);
  });

  it('memoizes per context: another context computes its own result', function () {
    const f = contextDependentMemoize((n) => ({ n, ctx: cuda.Context.getCurrent() }));
    const mine = f(1);
    assert.strictEqual(mine.ctx, this.cudaContext);
    const other = new cuda.Device(this.cudaContext.device.ordinal).makeContext();
    try {
      const theirs = f(1);
      assert.strictEqual(theirs.ctx, other);
      assert.strictEqual(f(1), theirs);
    } finally {
      other.detach();
    }
    assert.strictEqual(f(1), mine);
  });

  it('autoinit and autoprimaryctx follow CUDA_DEVICE and clean up at exit silently', function () {
    for (const sub of ['autoinit', 'autoprimaryctx']) {
      const script = `const { device, context } = require('cudadrv/${sub}');
        const cuda = require('cudadrv');
        if (cuda.Context.getCurrent() !== context || device.ordinal !== cuda.Device.count() - 1) process.exit(3);
        new cuda.Stream();
        const f = require('cudadrv/tools').contextDependentMemoize(() => new cuda.Event());
        f();`;
      const child = spawnSync(process.execPath, ['-e', script], {
        cwd: path.join(__dirname, '..', '..'),
        env: { ...process.env, CUDA_DEVICE: String(cuda.Device.count() - 1) },
      });
      assert.strictEqual(child.stderr.toString(), '');
      assert.strictEqual(child.stdout.toString(), '');
      assert.strictEqual(child.signal, null);
      assert.strictEqual(child.status, 0);
    }
  });
});
