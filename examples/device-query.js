#!/usr/bin/env node
'use strict';
// Lists every CUDA device with its key attributes, and the driver and NVRTC versions.
// Without a GPU or driver it says so in one line and exits 1.
const cuda = require('cudadrv');

if (!cuda.isAvailable()) {
  try {
    cuda.Device.count();
  } catch (error) {
    console.error(`No CUDA driver or device: ${error.message}`);
    process.exit(1);
  }
}

function gib(bytes) {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

const driver = cuda.getDriverVersion();
const [major, minor] = cuda.getVersion();
let nvrtc;
try {
  nvrtc = cuda.nvrtcVersion().join('.');
} catch (error) {
  nvrtc = `unavailable (${error.message})`;
}
console.log(
  `CUDA driver ${Math.floor(driver / 1000)}.${(driver % 1000) / 10}, built against CUDA ${major}.${minor}, NVRTC ${nvrtc}`,
);
const count = cuda.Device.count();
if (count === 0) {
  console.error('The CUDA driver loaded, but it reports no device.');
  process.exit(1);
}
for (let i = 0; i < count; i++) {
  const dev = new cuda.Device(i);
  const [ccMajor, ccMinor] = dev.computeCapability();
  console.log(`\nDevice ${i}: ${dev.name()} (${dev.pciBusId()})`);
  const rows = [
    ['compute capability', `${ccMajor}.${ccMinor}`],
    ['total memory', gib(dev.totalMemory())],
    ['multiprocessors', dev.multiprocessorCount],
    ['max threads per block', dev.maxThreadsPerBlock],
    ['max threads per multiprocessor', dev.maxThreadsPerMultiprocessor],
    ['max block dims', `${dev.maxBlockDimX} x ${dev.maxBlockDimY} x ${dev.maxBlockDimZ}`],
    ['max grid dims', `${dev.maxGridDimX} x ${dev.maxGridDimY} x ${dev.maxGridDimZ}`],
    ['shared memory per block (opt-in)', `${dev.maxSharedMemoryPerBlockOptin} bytes`],
    ['shared memory per multiprocessor', `${dev.maxSharedMemoryPerMultiprocessor} bytes`],
    ['registers per multiprocessor', dev.maxRegistersPerMultiprocessor],
    ['warp size', dev.warpSize],
    ['L2 cache', `${dev.l2CacheSize} bytes`],
    ['memory bus width', `${dev.globalMemoryBusWidth} bits`],
    ['clock rate', `${dev.clockRate / 1000} MHz`],
    ['async engines', dev.asyncEngineCount],
    ['managed memory', dev.managedMemory ? 'yes' : 'no'],
    ['memory pools', dev.memoryPoolsSupported ? 'yes' : 'no'],
    ['compute mode', Object.keys(cuda.ComputeMode).find((k) => cuda.ComputeMode[k] === dev.computeMode)],
  ];
  for (const [label, value] of rows) console.log(`  ${label.padEnd(34)} ${value}`);
}
