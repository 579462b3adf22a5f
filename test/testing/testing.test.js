'use strict';
// cudadrv/testing from a consumer project: Mocha with the root-hook plugin (a context per file, a
// failing check for a file that leaks one, GPU tests skipped with the reason or failed with
// CUDADRV_REQUIRE_GPU=1), and node:test with describeGpu and markCudaTest.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { consumerProject } = require('../support/consumer-project');
const { standInDriver } = require('../support/stand-in-driver');

const ROOT = path.join(__dirname, '..', '..');
const MOCHA = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
// Mocha resolves --require from where it is installed: the consumer's 'cudadrv' must be found
// from this package's node_modules too, as it is from a project's own.
const SELF_LINK = path.join(ROOT, 'node_modules', 'cudadrv');
const CUDA_ERROR_NO_DEVICE = 100;

const FILES = {
  'test/gpu.test.js': `
    const assert = require('assert');
    const cuda = require('cudadrv');
    const { describeGpu, markCudaTest, hasGpu } = require('cudadrv/testing');
    it('runs on the CPU', () => assert.strictEqual(1 + 1, 2));
    it('has the file context current', function () {
      if (!hasGpu()) this.skip();
      assert.ok(cuda.Context.getCurrent());
    });
    describeGpu('a GPU suite', function () {
      it('runs in this.cudaContext', function () {
        assert.ok(this.cudaContext.equals(cuda.Context.getCurrent()));
        cuda.memAlloc(64).free();
      });
    });
    it('marked', markCudaTest((ctx) => assert.ok(ctx.equals(cuda.Context.getCurrent()))));`,
  'test/leak.test.js': `
    const cuda = require('cudadrv');
    it('makes a context and leaves it', () => { new cuda.Device(0).makeContext(); });`,
  'test/detach.test.js': `
    const assert = require('assert');
    const cuda = require('cudadrv');
    it('detaches the context it was given', () => cuda.Context.getCurrent().detach());
    it('gets a context again', () => {
      assert.ok(cuda.Context.getCurrent());
      cuda.memAlloc(64).free();
    });`,
  'node-test.js': `
    const assert = require('assert');
    const { test } = require('node:test');
    const cuda = require('cudadrv');
    const { describeGpu, markCudaTest } = require('cudadrv/testing');
    describeGpu('a GPU suite', () => {
      test('allocates', () => cuda.memAlloc(64).free());
    });
    test('marked', markCudaTest((ctx, t) => {
      assert.ok(ctx.equals(cuda.Context.getCurrent()));
      assert.strictEqual(typeof t.diagnostic, 'function');
    }));
    test('runs on the CPU', () => {});`,
};

describe('cudadrv/testing in a consumer project', function () {
  this.timeout(60000);
  const standIn = standInDriver();
  let project;
  let linked = false;
  before(function () {
    project = consumerProject('consumer');
    fs.mkdirSync(path.join(project, 'test'));
    for (const [name, text] of Object.entries(FILES)) fs.writeFileSync(path.join(project, name), text);
    if (!fs.existsSync(SELF_LINK)) {
      fs.symlinkSync(ROOT, SELF_LINK);
      linked = true;
    }
  });
  after(function () {
    if (linked) fs.rmSync(SELF_LINK);
    if (project) fs.rmSync(project, { recursive: true, force: true });
  });

  function mocha(files, env) {
    const args = [MOCHA, '--no-config', '--require', 'cudadrv/testing/mocha', '--reporter', 'json', ...files];
    const result = spawnSync(process.execPath, args, {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{\n')));
    return {
      passed: report.passes.map((t) => t.fullTitle),
      pending: report.pending.map((t) => t.fullTitle),
      failed: report.failures.map((t) => [t.fullTitle, t.err.message]),
      stdout: result.stdout,
    };
  }
  const gpu = () => ({ LD_LIBRARY_PATH: standIn.dir, CUDADRV_REQUIRE_GPU: '' });
  const noGpu = () => ({ ...gpu(), FAKE_CUDA_FAIL: `cuInit:1+:${CUDA_ERROR_NO_DEVICE}` });

  it('Mocha: each file has a context; a file that leaks one fails its check, the rest runs', function () {
    const out = mocha(['test/leak.test.js', 'test/gpu.test.js'], gpu());
    const gpuFile = path.join(project, 'test', 'gpu.test.js');
    const leakFile = path.join(project, 'test', 'leak.test.js');
    assert.deepStrictEqual(out.passed.sort(), [
      'a GPU suite runs in this.cudaContext',
      `cudadrv/testing: ${gpuFile} leaves no context behind`,
      'has the file context current',
      'makes a context and leaves it',
      'marked',
      'runs on the CPU',
    ]);
    assert.deepStrictEqual(out.failed, [
      [
        `cudadrv/testing: ${leakFile} leaves no context behind`,
        `cudadrv: ${leakFile} leaked 1 context left current after a test and 1 context never detached; ` +
          'detach (or pop) every context a test makes, or use markCudaTest/describeGpu, which do',
      ],
    ]);
  });

  it("Mocha: a test that detaches its file's context gets the next test a new one; the run goes on", function () {
    // The next root beforeEach pushed the detached context, threw, and Mocha stopped the whole run.
    const out = mocha(['test/detach.test.js', 'test/gpu.test.js'], gpu());
    const file = (name) => path.join(project, 'test', name);
    assert.deepStrictEqual(out.failed, []);
    assert.deepStrictEqual(out.passed.sort(), [
      'a GPU suite runs in this.cudaContext',
      `cudadrv/testing: ${file('detach.test.js')} leaves no context behind`,
      `cudadrv/testing: ${file('gpu.test.js')} leaves no context behind`,
      'detaches the context it was given',
      'gets a context again',
      'has the file context current',
      'marked',
      'runs on the CPU',
    ]);
  });

  it('Mocha without a GPU: GPU tests skip saying why; with CUDADRV_REQUIRE_GPU=1 (or 2) they fail', function () {
    const out = mocha(['test/gpu.test.js'], noGpu());
    assert.deepStrictEqual(out.failed, []);
    assert.deepStrictEqual(out.pending.sort(), [
      'a GPU suite runs in this.cudaContext',
      'has the file context current',
      'marked',
    ]);
    assert.match(out.stdout, /\(GPU tests skipped: cuInit failed/);
    for (const count of ['1', '2']) {
      const required = mocha(['test/gpu.test.js'], { ...noGpu(), CUDADRV_REQUIRE_GPU: count });
      assert.deepStrictEqual(required.failed.map(([title]) => title).sort(), [
        'a GPU suite "before all" hook for "runs in this.cudaContext"',
        'marked',
      ]);
      for (const [, message] of required.failed)
        assert.match(message, new RegExp(`^CUDADRV_REQUIRE_GPU=${count} but no GPU can be used: cuInit failed`));
    }
  });

  function nodeTest(env) {
    const result = spawnSync(process.execPath, ['--test', '--test-reporter=tap', 'node-test.js'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(result.stdout)[1]);
    return { pass: count('pass'), skipped: count('skipped'), fail: count('fail'), stdout: result.stdout };
  }

  it('node:test: describeGpu and markCudaTest run with a context, or skip saying why', function () {
    assert.deepStrictEqual({ ...nodeTest(gpu()), stdout: '' }, { pass: 3, skipped: 0, fail: 0, stdout: '' });
    const without = nodeTest(noGpu());
    assert.deepStrictEqual([without.pass, without.skipped, without.fail], [1, 1, 0]); // and the suite
    assert.match(without.stdout, /^ok \d+ - a GPU suite # SKIP cuInit failed/m);
    assert.match(without.stdout, /^ok \d+ - marked # SKIP cuInit failed/m);
  });
});
