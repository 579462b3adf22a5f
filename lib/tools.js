'use strict';
/**
 * cudadrv/tools: PyCUDA's pycuda.tools. Default contexts, memoization per context, the Mocha
 * helper, occupancy, and memory pools. `const tools = require('cudadrv/tools')` (or `cuda.tools`).
 */
// lib/'s modules load through V8's code cache (lib/code-cache.js)
const load = require('./code-cache').requireFrom(module);
const { makeDefaultContext, getDefaultDevice } = load('./tools/default-context');
const { contextDependentMemoize, clearContextCaches } = load('./tools/memoize');
const { markCudaTest } = load('./tools/mark-cuda-test');
const { DeviceData, OccupancyRecord } = load('./tools/occupancy');
const {
  bitlog2, binNumber, allocSize, DeviceMemoryPool, PooledDeviceAllocation, PageLockedAllocator,
  PageLockedMemoryPool, PooledHostAllocation,
} = load('./tools/pools');

module.exports = {
  makeDefaultContext,
  getDefaultDevice,
  contextDependentMemoize,
  clearContextCaches,
  markCudaTest,
  DeviceData,
  OccupancyRecord,
  bitlog2,
  binNumber,
  allocSize,
  DeviceMemoryPool,
  PooledDeviceAllocation,
  PageLockedAllocator,
  PageLockedMemoryPool,
  PooledHostAllocation,
};
