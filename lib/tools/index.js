'use strict';
/**
 * cudadrv/tools: PyCUDA's pycuda.tools. Default contexts, memoization per context, the Mocha
 * helper, occupancy, and memory pools. `const tools = require('cudadrv/tools')` (or `cuda.tools`).
 */
const { makeDefaultContext, getDefaultDevice } = require('./default-context');
const { contextDependentMemoize, clearContextCaches } = require('./memoize');
const { markCudaTest } = require('./mark-cuda-test');
const { DeviceData, OccupancyRecord } = require('./occupancy');
const {
  bitlog2,
  binNumber,
  allocSize,
  DeviceMemoryPool,
  PooledDeviceAllocation,
  PageLockedAllocator,
  PageLockedMemoryPool,
  PooledHostAllocation,
} = require('./pools');

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
