'use strict';
// GPU test support: cudadrv/testing, as users' suites get it. Tests and suites that need a device
// skip, saying why, where there is none, and fail instead where CUDADRV_REQUIRE_GPU=1. Tests:
// it('...', markCudaTest(function (ctx) { ... })). Suites: describeGpu; describeTwoGpus for two
// devices (skipped where fewer can be used, failed instead where CUDADRV_REQUIRE_GPU=2).
const { markCudaTest, describeGpu, noGpuReason, skipWithoutGpu } = require('../../lib/testing');
const { requiredGpus } = require('../../lib/tools/mark-cuda-test');
const { Device } = require('../../lib/driver/device');

const reason = noGpuReason();

// Skips (or fails) the current suite when there is no GPU. Call from a before() hook.
function requireGpu(ctx) {
  skipWithoutGpu(ctx);
}

// Why two devices cannot be used here, or null.
function noTwoGpusReason() {
  if (reason) return reason;
  const count = Device.count();
  return count < 2 ? `two devices are needed, and the driver reports ${count}` : null;
}

/** A suite for two devices: its tests get this.devices, [Device(0), Device(1)], and make their
 * own contexts. */
function describeTwoGpus(title, body) {
  return describe(title, function () {
    before(function () {
      const why = noTwoGpusReason();
      if (why) {
        if (requiredGpus() >= 2) throw new Error(`CUDADRV_REQUIRE_GPU=${requiredGpus()} but ${why}`);
        console.log(`      (skipped: ${why})`);
        this.skip();
      }
      this.devices = [new Device(0), new Device(1)];
    });
    body.call(this);
  });
}

module.exports = { hasGpu: !reason, noGpuReason: reason, requireGpu, describeGpu, describeTwoGpus, markCudaTest };
