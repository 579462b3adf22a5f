'use strict';
// GPU test support, built on cudadrv/tools' markCudaTest: tests and suites that need a device skip,
// saying why, where there is none, and fail instead where CUDADRV_REQUIRE_GPU=1 (as on the GPU
// machine). Tests: it('...', markCudaTest(function (ctx) { ... })). Suites: describeGpu.
const {
  markCudaTest,
  noGpuReason,
  skipWithoutGpu,
  beginCudaTest,
  endCudaTest,
} = require('../../lib/tools/mark-cuda-test');

const reason = noGpuReason();

// Skips (or fails) the current suite when there is no GPU. Call from a before() hook.
function requireGpu(ctx) {
  skipWithoutGpu(ctx);
}

// describe() for a suite that runs with a context of makeDefaultContext() current (this.cudaContext),
// detached after.
function describeGpu(title, body) {
  describe(title, function () {
    before(function () {
      this.cudaContext = beginCudaTest(this);
    });
    after(function () {
      if (this.cudaContext) endCudaTest(this.cudaContext);
    });
    body.call(this);
  });
}

module.exports = { hasGpu: !reason, noGpuReason: reason, requireGpu, describeGpu, markCudaTest };
