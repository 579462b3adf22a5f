'use strict';
/**
 * cudadrv/tools: PyCUDA's pycuda.tools. Default contexts, memoization per context, the Mocha
 * helper, occupancy, and memory pools. `const tools = require('cudadrv/tools')` (or `cuda.tools`).
 */
const { makeDefaultContext, getDefaultDevice } = require('./tools/default-context');
const { contextDependentMemoize, clearContextCaches } = require('./tools/memoize');
const { markCudaTest } = require('./tools/mark-cuda-test');
const { DeviceData, OccupancyRecord } = require('./tools/occupancy');
const {
  bitlog2, binNumber, allocSize, DeviceMemoryPool, PooledDeviceAllocation, PageLockedAllocator,
  PageLockedMemoryPool, PooledHostAllocation,
} = require('./tools/pools');

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
