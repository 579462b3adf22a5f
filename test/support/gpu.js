'use strict';
// GPU test support: cudadrv/testing, as users' suites get it. Tests and suites that need a device
// skip, saying why, where there is none, and fail instead where CUDADRV_REQUIRE_GPU=1 (as on the
// GPU machine). Tests: it('...', markCudaTest(function (ctx) { ... })). Suites: describeGpu.
const { markCudaTest, describeGpu, noGpuReason, skipWithoutGpu } = require('../../lib/testing');

const reason = noGpuReason();

// Skips (or fails) the current suite when there is no GPU. Call from a before() hook.
function requireGpu(ctx) {
  skipWithoutGpu(ctx);
}

module.exports = { hasGpu: !reason, noGpuReason: reason, requireGpu, describeGpu, markCudaTest };
