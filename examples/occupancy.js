#!/usr/bin/env node
'use strict';
// The occupancy of a kernel at each block size: cudadrv/tools' OccupancyRecord, computed from the
// device's attributes, beside the driver's own calculator, and the block size that keeps the most
// warps resident. Without a GPU or driver it says so in one line and exits 1.
const { makeDefaultContext, DeviceData, OccupancyRecord } = require('cudadrv/tools');
const { SourceModule } = require('cudadrv/compiler');

let context;
try {
  context = makeDefaultContext();
} catch (error) {
  console.error(`No CUDA device to use: ${error.message}`);
  process.exit(1);
}
// A block-wide sum: one float of dynamic shared memory per thread.
const kernel = new SourceModule(`
  __global__ void blockSum(float *out, const float *in, int n) {
    extern __shared__ float partial[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
      if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
  }`).getFunction('blockSum');

const data = new DeviceData(context.device);
console.log(
  `${context.device.name()} (sm_${data.computeCapability.join('')}): per multiprocessor ` +
    `${data.warpsPerMp} warps, ${data.threadBlocksPerMp} blocks, ${data.registers} registers, ` +
    `${data.sharedMemory} bytes of shared memory`,
);
console.log(
  `blockSum: ${kernel.numRegs} registers a thread, ${kernel.sharedSizeBytes} bytes of static ` +
    'shared memory, 4 bytes of dynamic shared memory a thread\n',
);
console.log('threads  blocks/SM  warps/SM  occupancy  limited by  driver');
let best = null;
for (let threads = 32; threads <= data.maxThreads; threads *= 2) {
  const dynamic = threads * 4;
  const occ = new OccupancyRecord(data, threads, kernel.sharedSizeBytes + dynamic, kernel.numRegs);
  const driver = kernel.maxActiveBlocksPerMultiprocessor(threads, dynamic);
  console.log(
    `${String(threads).padStart(7)}  ${String(occ.tbPerMp).padStart(9)}  ` +
      `${String(occ.warpsPerMp).padStart(8)}  ${(occ.occupancy * 100).toFixed(1).padStart(8)}%  ` +
      `${occ.limitedBy.padEnd(10)}  ${driver}${driver === occ.tbPerMp ? '' : '  (disagrees!)'}`,
  );
  if (!best || occ.warpsPerMp > best.occ.warpsPerMp) best = { threads, occ };
}
console.log(`\nBest: ${best.threads} threads a block, ${(best.occ.occupancy * 100).toFixed(0)}% occupancy`);
context.detach();
