'use strict';
// A kernel that faults (an illegal address) on a real device, and all that follows: the wait that
// finds the fault, frees, further calls, the context's destroy, new contexts, and an
// exit with allocations of the faulted context still alive. What each call did goes to fd 3 as
// JSON, so that stdout and stderr stay empty: the test (test/reliability/device-fault.test.js)
// requires them empty and the exit status 0.
const fs = require('fs');
const cuda = require('../..');
const { compileSync } = require('../../lib/compiler');

const SOURCE = `
extern "C" __global__ void poke(int *p) { *(volatile int *)(p + (1ull << 40)) = 1; } // 4 TiB past p
extern "C" __global__ void twice(int *p) { p[threadIdx.x] *= 2; }`;

// { ok: true } where fn() returns, else the error's class, code name and the call it names.
function outcome(fn) {
  try {
    fn();
    return { ok: true };
  } catch (error) {
    return { name: error.name, codeName: error.codeName, api: error.api };
  }
}

const report = {};
const ctx = new cuda.Device(0).makeContext();
const image = compileSync(SOURCE); // for the current device
const kernels = cuda.moduleFromBuffer(image);
const data = cuda.toDevice(new Int32Array(64));
const freed = [cuda.memAlloc(1 << 20), cuda.memAlloc(4096)];
globalThis.keptUntilExit = [cuda.memAlloc(1 << 20), cuda.pagelockedEmpty(1024, 'float32'), kernels];

kernels.getFunction('poke')(data, { block: 1 });
report.wait = outcome(() => cuda.Context.synchronizeSync());
report.frees = freed.map((allocation) => outcome(() => allocation.free()));
report.calls = {
  memAlloc: outcome(() => cuda.memAlloc(4096)),
  launch: outcome(() => {
    kernels.getFunction('twice')(data, { block: 64 });
    cuda.Context.synchronizeSync();
  }),
  copyToDevice: outcome(() => cuda.memcpyHtoD(data, new Int32Array(64))),
  copyFromDevice: outcome(() => cuda.memcpyDtoH(new Int32Array(64), data)),
  moduleLoad: outcome(() => cuda.moduleFromBuffer(image)),
  synchronize: outcome(() => cuda.Context.synchronizeSync()),
};
report.detach = outcome(() => ctx.detach());

// The fault is the process's: the driver refuses new contexts too, primary or not (what
// docs/troubleshooting.md tells users: restart the process).
report.newContext = outcome(() => new cuda.Device(0).makeContext().detach());
report.primaryContext = outcome(() => new cuda.Device(0).retainPrimaryContext().detach());

fs.writeSync(3, JSON.stringify(report));
