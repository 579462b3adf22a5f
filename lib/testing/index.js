'use strict';
/**
 * cudadrv/testing: helpers for the test suites of projects that use cudadrv, under Mocha or
 * node:test. GPU tests skip, saying why, where no GPU can be used, and fail instead where
 * CUDADRV_REQUIRE_GPU=1. `mocha --require cudadrv/testing/mocha` adds a context per file and a
 * check that each file detaches what it made (./mocha.js).
 */
const {
  markCudaTest,
  noGpuReason,
  requiredGpus,
  skipWithoutGpu,
  beginCudaTest,
  endCudaTest,
} = require('../tools/mark-cuda-test');

/* node:test's functions, where the caller runs under it rather than Mocha (whose are globals). */
function runner() {
  if (typeof globalThis.describe === 'function' && typeof globalThis.before === 'function') {
    return { describe: globalThis.describe, before: globalThis.before, after: globalThis.after, mocha: true };
  }
  const { describe, before, after } = require('node:test');
  return { describe, before, after, mocha: false };
}

/**
 * A suite whose tests run with a context of makeDefaultContext() current (Mocha: this.cudaContext
 * in its tests and hooks), detached after the suite. Where no GPU can be used the suite is
 * skipped with the reason (or fails, with CUDADRV_REQUIRE_GPU=1).
 */
function describeGpu(title, body) {
  const { describe, before, after, mocha } = runner();
  if (mocha) {
    return describe(title, function () {
      before(function () {
        this.cudaContext = beginCudaTest(this);
      });
      after(function () {
        if (this.cudaContext) endCudaTest(this.cudaContext);
      });
      body.call(this);
    });
  }
  const why = requiredGpus() ? null : noGpuReason();
  return describe(title, { skip: why ?? false }, function () {
    let ctx = null;
    before(() => {
      ctx = beginCudaTest(null); // throws where CUDADRV_REQUIRE_GPU=1 and there is no GPU
    });
    after(() => {
      if (ctx) endCudaTest(ctx);
    });
    body.call(this);
  });
}

/** Whether a GPU can be used here. */
function hasGpu() {
  return noGpuReason() === null;
}

module.exports = { describeGpu, markCudaTest, hasGpu, noGpuReason, skipWithoutGpu };
