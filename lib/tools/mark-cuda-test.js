'use strict';
// markCudaTest (PyCUDA's mark_cuda_test) for Mocha, and the steps it is made of, which test
// suites share (test/support/gpu.js builds describeGpu on them).
const binding = require('../internal/binding');
const { Device } = require('../driver/device');
const { RuntimeError } = require('../driver/errors');
const check = require('../internal/checks');
const { makeDefaultContext } = require('./default-context');
const { clearContextCaches } = require('./memoize');

let reason; // null where a GPU can be used, else why not; found on first use

/** Why no GPU can be used here (the driver's own words), or null when one can. */
function noGpuReason() {
  if (reason === undefined) {
    if (!binding.isAvailable()) {
      try {
        Device.count();
        reason = 'the CUDA driver is not available';
      } catch (error) {
        reason = error.message;
      }
    } else {
      reason = Device.count() > 0 ? null : 'the driver reports no CUDA device';
    }
  }
  return reason;
}

/** The number of devices CUDADRV_REQUIRE_GPU asks for (1, or 2 for tests of two devices): where
 * set, tests fail instead of skipping when fewer can be used; 0 where it is unset. */
function requiredGpus() {
  const value = process.env.CUDADRV_REQUIRE_GPU ?? '';
  return /^[1-9]\d*$/.test(value) ? Number(value) : 0;
}

let told = false;

/**
 * Where no GPU can be used: skips the running Mocha test or suite (`mochaContext` is `this` in a
 * test or hook), saying why once per process, or fails where CUDADRV_REQUIRE_GPU=1. Outside Mocha
 * it throws a RuntimeError. Returns where a GPU can be used. (CUDADRV_REQUIRE_GPU=2 requires one
 * too.)
 */
function skipWithoutGpu(mochaContext) {
  const why = noGpuReason();
  if (why === null) return;
  if (requiredGpus()) {
    throw new RuntimeError(`CUDADRV_REQUIRE_GPU=${requiredGpus()} but no GPU can be used: ${why}`);
  }
  if (!told) {
    told = true;
    console.log(`      (GPU tests skipped: ${why})`);
  }
  if (mochaContext && typeof mochaContext.skip === 'function') mochaContext.skip(); // throws
  throw new RuntimeError(`no GPU can be used: ${why}`);
}

/** skipWithoutGpu, then a context from makeDefaultContext(), current on this thread. */
function beginCudaTest(mochaContext) {
  skipWithoutGpu(mochaContext);
  return makeDefaultContext();
}

/** Detaches the context of beginCudaTest, empties the context caches and collects garbage. */
function endCudaTest(ctx) {
  ctx.detach();
  clearContextCaches();
  if (typeof global.gc === 'function') global.gc();
}

/**
 * A test function from fn: `it('adds', markCudaTest(async function (ctx) { ... }))`, for Mocha or
 * node:test. fn runs (with Mocha's `this`) while a context of makeDefaultContext() is current, and
 * gets it as its argument (then node:test's test context); afterwards, even when fn throws or its Promise rejects, the context is detached, the
 * context caches emptied and garbage collected. Where no GPU can be used the test is skipped, saying
 * why, or fails where CUDADRV_REQUIRE_GPU=1.
 */
function markCudaTest(fn) {
  check.func('fn', fn);
  return function cudaTest(...args) {
    // node:test's test context (this, and the first argument): its skip() does not throw.
    const t = [this, args[0]].find((c) => typeof c?.diagnostic === 'function' && typeof c.skip === 'function');
    if (t) {
      const why = requiredGpus() ? null : noGpuReason();
      if (why !== null) return t.skip(why);
    }
    const ctx = beginCudaTest(t ? null : this);
    let result;
    try {
      result = fn.call(this, ctx, ...args);
    } catch (error) {
      endCudaTest(ctx);
      throw error;
    }
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      return Promise.resolve(result).finally(() => endCudaTest(ctx));
    }
    endCudaTest(ctx);
    return result;
  };
}

module.exports = { markCudaTest, noGpuReason, requiredGpus, skipWithoutGpu, beginCudaTest, endCudaTest };
