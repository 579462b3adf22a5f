'use strict';
// One case of test/reliability/missing-entry.test.js, in a process whose stand-in driver lacks the entry point
// named by FAKE_CUDA_MISSING: runs the public operation that reaches it and prints what it threw
// (or rejected with) as JSON.
const cuda = require('../..');

const OPERATIONS = {
  cuMemAlloc: () => cuda.memAlloc(64),
  cuMemHostAlloc: () => cuda.pagelockedEmpty(16, 'uint8'),
  cuStreamCreateWithPriority: () => new cuda.Stream(),
  cuEventCreate: () => new cuda.Event(),
  cuStreamQuery: () => new cuda.Stream().synchronize(),
  cuStreamSynchronize: () => new cuda.Stream().synchronizeSync(),
  cuCtxSynchronize: () => cuda.Context.synchronize(),
  cuModuleLoadDataEx: () => cuda.moduleFromBuffer(Buffer.from('entry k 8\n')),
  cuMemAllocAsync: () => cuda.memAllocAsync(64, new cuda.Stream()),
  cuMemsetD8: () => cuda.memsetD8(cuda.memAlloc(64), 1, 64),
  cuMemcpyHtoD: () => cuda.memcpyHtoD(cuda.memAlloc(64), new Uint8Array(64)),
};

async function main() {
  const symbol = process.env.FAKE_CUDA_MISSING;
  new cuda.Device(0).retainPrimaryContext().push();
  try {
    await OPERATIONS[symbol]();
    console.log(JSON.stringify(null));
  } catch (error) {
    console.log(JSON.stringify({ name: error.constructor.name, api: error.api, message: error.message }));
  }
}

if (require.main === module) main();
module.exports = { OPERATIONS };
