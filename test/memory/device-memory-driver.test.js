'use strict';
// Device memory through the stand-in driver (test/support/fake-driver/), no GPU needed: copies
// move every byte (the stand-in's device memory is host memory), and the stand-in's call trace
// shows which driver calls each operation makes: on the hot paths, those bench/floor.c makes for
// the same operation; where a context is not current, the fallbacks; for collected memory, the
// reaper's, once per allocation (a second free of the same memory would crash the stand-in).
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { standInDriver, tracedCalls } = require('../support/stand-in-driver');

describe('device memory through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const standIn = standInDriver();

  // Runs a scenario of memory-driver-child.js: { result, calls: { mark: [symbol, ...] } }.
  function run(scenario) {
    const log = path.join(standIn.dir, `${scenario}.log`);
    fs.rmSync(log, { force: true });
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', path.join(__dirname, '..', 'support', 'memory-driver-child.js'), scenario],
      {
        encoding: 'utf8',
        env: { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_LOG: log, FAKE_CUDA_TRACE: '1' },
      },
    );
    if (child.status !== 0) throw new Error(`scenario ${scenario} failed:\n${child.stderr}`);
    return { result: JSON.parse(child.stdout), calls: tracedCalls(log) };
  }

  it('copies move every byte both ways, through slices, from every kind of host buffer', function () {
    run('copies');
  });

  it('the hot paths make the driver calls that C makes for them, and nothing else', function () {
    const { calls } = run('hotPaths');
    assert.deepStrictEqual(calls, {
      // the one query: which context owns the memory (stream-ordered memory takes its stream's)
      alloc: ['cuCtxGetCurrent', 'cuMemAlloc_v2', 'cuMemFree_v2'],
      'alloc.async': ['cuMemAllocAsync', 'cuMemFreeAsync'],
      'alloc.async.own': ['cuMemAllocAsync', 'cuMemFreeAsync'],
      'alloc.async.default': [
        'cuCtxGetCurrent',
        'cuMemAllocAsync',
        'cuCtxPushCurrent_v2',
        'cuMemFreeAsync',
        'cuCtxPopCurrent_v2',
      ],
      'copy.htod.small': ['cuMemcpyHtoD_v2'],
      'copy.dtoh.small': ['cuMemcpyDtoH_v2'],
      // and after an async copy, whether the driver may still use the host array (page-locked
      // memory, kept until the stream has passed the copy): this one is pageable, not kept
      'copy.htod.async': ['cuMemcpyHtoDAsync_v2', 'cuPointerGetAttributes'],
      'copy.dtoh.async': ['cuMemcpyDtoHAsync_v2', 'cuPointerGetAttributes'],
    });
  });

  it('where the context a call needs is not current, it is made current for that call', function () {
    const { calls } = run('otherContexts');
    const inContext = (call) => ['cuCtxPushCurrent_v2', call, 'cuCtxPopCurrent_v2'];
    assert.deepStrictEqual(calls['free without a context'], ['cuMemFree_v2', ...inContext('cuMemFree_v2')]);
    assert.deepStrictEqual(calls['freeAsync without a context'], ['cuMemFreeAsync', ...inContext('cuMemFreeAsync')]);
    assert.deepStrictEqual(calls['allocAsync without a context'], ['cuMemAllocAsync', ...inContext('cuMemAllocAsync')]);
    assert.deepStrictEqual(
      calls['ordered free on the default stream'],
      inContext('cuMemFreeAsync'),
      "the default stream is the current context's: the memory's is made current",
    );
  });

  it('free() twice does nothing; freed memory and ids that name nothing are refused or ignored', function () {
    const { calls } = run('lifetimes');
    // once for memAlloc()'s memory, once for the memory made straight through the addon
    assert.deepStrictEqual(calls['free twice'], ['cuMemFree_v2', 'cuMemFree_v2']);
    assert.deepStrictEqual(calls['stale and bad ids'], []);
    assert.strictEqual(calls['free the rest'].length, 150);
    assert.ok(calls['free the rest'].every((call) => call === 'cuMemFree_v2'));
  });

  it('collected memory is released once, in its context, off the main thread; freed memory never again', function () {
    const { result, calls } = run('collected');
    assert.deepStrictEqual(calls['freed, then collected'], [], 'explicitly freed: nothing left for the collector');
    const released = calls['dropped, then collected'];
    const frees = released.filter((call) => call === 'cuMemFree_v2');
    assert.strictEqual(frees.length, 8, released.join(' '));
    // each after the device: cuMemFree waiting for it held other streams' work back
    const afterSync = released.filter((call, i) => call === 'cuMemFree_v2' && released[i - 1] === 'cuCtxSynchronize');
    assert.strictEqual(afterSync.length, 8, released.join(' '));
    assert.strictEqual(released.filter((call) => call === 'cuCtxPushCurrent_v2').length, 8);
    assert.strictEqual(released.filter((call) => call === 'cuCtxPopCurrent_v2').length, 8);
    const outOfMemory = calls['dropped, then reclaimed when out of memory'];
    assert.deepStrictEqual(result.dropped, { name: 'MemoryError', api: 'cuMemAlloc' });
    const attempts = outOfMemory.map((call, i) => (call === 'cuMemAlloc_v2' ? i : -1)).filter((i) => i >= 0);
    assert.strictEqual(attempts.length, 2, outOfMemory.join(' '));
    const between = outOfMemory.slice(attempts[0] + 1, attempts[1]);
    assert.strictEqual(between.filter((call) => call === 'cuMemFree_v2').length, 4, 'reclaimed before the retry');
    assert.deepStrictEqual(calls['their finalizers'], [], 'reclaimed memory is not released again');
    const { liveHandles, ...counters } = result.stats;
    assert.ok(Number.isInteger(liveHandles), 'the count of live handles is reported');
    assert.deepStrictEqual(counters, {
      cleanupsFailed: 0,
      cleanupsSkipped: 0,
      nodeApiFailures: 0,
      capturesUnderWay: 0,
    });
  });
});
