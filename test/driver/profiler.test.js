'use strict';
// The profiler (lib/driver/profiler.js): start, stop, and what the driver says of a configuration.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const cuda = require('../..');
const { describeGpu } = require('../support/gpu');

describeGpu('profiler', function () {
  it('start and stop; initializeProfiler surfaces what the driver says', function () {
    cuda.startProfiler();
    cuda.stopProfiler();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-profiler-'));
    try {
      const config = path.join(dir, 'profiler.cfg');
      fs.writeFileSync(config, 'gpustarttimestamp\n');
      try {
        cuda.initializeProfiler(config, path.join(dir, 'profile.csv'), cuda.ProfilerOutputMode.CSV);
      } catch (error) {
        assert.ok(error instanceof cuda.CudaError, String(error));
        assert.strictEqual(error.api, 'cuProfilerInitialize');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
