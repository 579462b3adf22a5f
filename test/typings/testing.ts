// Compiled by `tsc --strict` in npm test: a describeGpu body's `this` is typed (a Mocha suite).
import testing = require('cudadrv/testing');

testing.describeGpu('kernels', function () {
  this.timeout(120000).retries(1);
  this.slow('2s');
  // @ts-expect-error: a suite has no such member
  this.cudaContext.detach();
});

const why: string | null = testing.noGpuReason();
void why;
export {};
