'use strict';
// GPU test support: suites that need a device skip, saying why, where there is none, and fail
// instead where CUDADRV_REQUIRE_GPU=1 (as on the GPU machine).
const cuda = require('..');

function noGpuReason() {
  if (!cuda.isAvailable()) {
    try {
      cuda.Device.count();
    } catch (error) {
      return error.message;
    }
    return 'the CUDA driver is not available';
  }
  return cuda.Device.count() > 0 ? null : 'the driver reports no CUDA device';
}

const reason = noGpuReason();
const required = process.env.CUDADRV_REQUIRE_GPU === '1';
let told = false;

// Skips (or fails) the current suite when there is no GPU. Call from a before() hook.
function requireGpu(ctx) {
  if (!reason) return;
  if (required) throw new Error(`CUDADRV_REQUIRE_GPU=1 but no GPU can be used: ${reason}`);
  if (!told) {
    told = true;
    console.log(`      (GPU tests skipped: ${reason})`);
  }
  ctx.skip();
}

// describe() for a suite that runs with a fresh context current, popped and detached after.
function describeGpu(title, body) {
  describe(title, function () {
    before(function () {
      requireGpu(this);
      this.cudaContext = new cuda.Device(0).makeContext();
    });
    after(function () {
      if (this.cudaContext) {
        this.cudaContext.detach();
      }
    });
    body.call(this);
  });
}

module.exports = { hasGpu: !reason, noGpuReason: reason, requireGpu, describeGpu };
