'use strict';
// Every constant group against the header the addon was built with, read independently here.
const assert = require('assert');
const path = require('path');
const cuda = require('../..');
const { GROUPS, readGroups } = require('../../scripts/cuda-header');

const include = path.join(process.env.CUDA_PATH || process.env.CUDA_HOME || '/usr/local/cuda', 'include');

// Members of PyCUDA's own groups that must exist whatever the header.
const PYCUDA_SEED = {
  CtxFlags: [
    'SCHED_AUTO',
    'SCHED_SPIN',
    'SCHED_YIELD',
    'SCHED_MASK',
    'BLOCKING_SYNC',
    'SCHED_BLOCKING_SYNC',
    'MAP_HOST',
    'LMEM_RESIZE_TO_MAX',
    'FLAGS_MASK',
  ],
  EventFlags: ['DEFAULT', 'BLOCKING_SYNC', 'DISABLE_TIMING', 'INTERPROCESS'],
  DeviceAttribute: [
    'MAX_THREADS_PER_BLOCK',
    'MAX_BLOCK_DIM_X',
    'MAX_GRID_DIM_X',
    'MAX_SHARED_MEMORY_PER_BLOCK',
    'TOTAL_CONSTANT_MEMORY',
    'WARP_SIZE',
    'MAX_PITCH',
    'MAX_REGISTERS_PER_BLOCK',
    'CLOCK_RATE',
    'TEXTURE_ALIGNMENT',
    'MULTIPROCESSOR_COUNT',
    'KERNEL_EXEC_TIMEOUT',
    'INTEGRATED',
    'CAN_MAP_HOST_MEMORY',
    'COMPUTE_MODE',
    'MAXIMUM_TEXTURE1D_WIDTH',
    'CONCURRENT_KERNELS',
    'ECC_ENABLED',
    'PCI_BUS_ID',
    'PCI_DEVICE_ID',
    'TCC_DRIVER',
    'MEMORY_CLOCK_RATE',
    'GLOBAL_MEMORY_BUS_WIDTH',
    'L2_CACHE_SIZE',
    'MAX_THREADS_PER_MULTIPROCESSOR',
    'ASYNC_ENGINE_COUNT',
    'UNIFIED_ADDRESSING',
    'COMPUTE_CAPABILITY_MAJOR',
    'COMPUTE_CAPABILITY_MINOR',
    'MANAGED_MEMORY',
    'MULTI_GPU_BOARD',
    'MAX_SHARED_MEMORY_PER_MULTIPROCESSOR',
    'MAX_REGISTERS_PER_MULTIPROCESSOR',
  ],
  FunctionAttribute: [
    'MAX_THREADS_PER_BLOCK',
    'SHARED_SIZE_BYTES',
    'CONST_SIZE_BYTES',
    'LOCAL_SIZE_BYTES',
    'NUM_REGS',
    'PTX_VERSION',
    'BINARY_VERSION',
    'CACHE_MODE_CA',
    'MAX_DYNAMIC_SHARED_SIZE_BYTES',
    'PREFERRED_SHARED_MEMORY_CARVEOUT',
  ],
  FuncCache: ['PREFER_NONE', 'PREFER_SHARED', 'PREFER_L1', 'PREFER_EQUAL'],
  SharedConfig: ['DEFAULT_BANK_SIZE', 'FOUR_BYTE_BANK_SIZE', 'EIGHT_BYTE_BANK_SIZE'],
  ArrayFormat: [
    'UNSIGNED_INT8',
    'UNSIGNED_INT16',
    'UNSIGNED_INT32',
    'SIGNED_INT8',
    'SIGNED_INT16',
    'SIGNED_INT32',
    'HALF',
    'FLOAT',
  ],
  Array3DFlags: ['LAYERED', '2DARRAY', 'SURFACE_LDST', 'CUBEMAP', 'TEXTURE_GATHER'],
  AddressMode: ['WRAP', 'CLAMP', 'MIRROR', 'BORDER'],
  FilterMode: ['POINT', 'LINEAR'],
  MemoryType: ['HOST', 'DEVICE', 'ARRAY', 'UNIFIED'],
  ComputeMode: ['DEFAULT', 'PROHIBITED', 'EXCLUSIVE_PROCESS'],
  JitOption: [
    'MAX_REGISTERS',
    'THREADS_PER_BLOCK',
    'WALL_TIME',
    'INFO_LOG_BUFFER',
    'INFO_LOG_BUFFER_SIZE_BYTES',
    'ERROR_LOG_BUFFER',
    'ERROR_LOG_BUFFER_SIZE_BYTES',
    'OPTIMIZATION_LEVEL',
    'TARGET_FROM_CUCONTEXT',
    'TARGET',
    'FALLBACK_STRATEGY',
  ],
  JitTarget: [
    'COMPUTE_10',
    'COMPUTE_11',
    'COMPUTE_12',
    'COMPUTE_13',
    'COMPUTE_20',
    'COMPUTE_21',
    'COMPUTE_30',
    'COMPUTE_35',
    'COMPUTE_50',
    'COMPUTE_60',
    'COMPUTE_70',
    'COMPUTE_75',
    'COMPUTE_80',
    'COMPUTE_90',
  ],
  JitFallback: ['PREFER_PTX', 'PREFER_BINARY'],
  HostAllocFlags: ['PORTABLE', 'DEVICEMAP', 'WRITECOMBINED'],
  MemAttachFlags: ['GLOBAL', 'HOST', 'SINGLE'],
  MemHostRegisterFlags: ['PORTABLE', 'DEVICEMAP'],
  Limit: [
    'STACK_SIZE',
    'PRINTF_FIFO_SIZE',
    'MALLOC_HEAP_SIZE',
    'DEV_RUNTIME_SYNC_DEPTH',
    'DEV_RUNTIME_PENDING_LAUNCH_COUNT',
  ],
  IpcMemFlags: ['LAZY_ENABLE_PEER_ACCESS'],
  GraphicsRegisterFlags: ['NONE', 'READ_ONLY', 'WRITE_DISCARD', 'SURFACE_LDST', 'TEXTURE_GATHER'],
  ArrayCubemapFace: ['POSITIVE_X', 'NEGATIVE_X', 'POSITIVE_Y', 'NEGATIVE_Y', 'POSITIVE_Z', 'NEGATIVE_Z'],
  ProfilerOutputMode: ['KEY_VALUE_PAIR', 'CSV'],
  PointerAttribute: ['CONTEXT', 'MEMORY_TYPE', 'DEVICE_POINTER', 'HOST_POINTER'],
};

describe('constants', function () {
  const header = readGroups(include);

  it('has every group, frozen', function () {
    for (const { name } of GROUPS) {
      assert.ok(cuda[name], `cuda.${name}`);
      assert.ok(Object.isFrozen(cuda[name]), `cuda.${name} is frozen`);
    }
  });

  it('has every member of every group with the value in cuda.h', function () {
    let checked = 0;
    for (const [group, members] of Object.entries(header)) {
      for (const { name, value } of members) {
        assert.strictEqual(cuda[group][name], value, `cuda.${group}.${name}`);
        checked++;
      }
    }
    assert.ok(checked > 400, `checked ${checked} members`);
    assert.ok(header.DeviceAttribute.length > 140);
  });

  it('has no member the header lacks, except removed ones kept for PyCUDA code', function () {
    for (const [group, members] of Object.entries(header)) {
      const names = new Set(members.map((m) => m.name));
      for (const name of Object.keys(cuda[group])) {
        if (!names.has(name)) assert.ok(group === 'JitTarget' || group === 'CtxFlags', `cuda.${group}.${name}`);
      }
    }
  });

  it("has every member of PyCUDA's groups", function () {
    for (const [group, names] of Object.entries(PYCUDA_SEED)) {
      for (const name of names) assert.strictEqual(typeof cuda[group][name], 'number', `cuda.${group}.${name}`);
    }
  });

  it('refuses members the header removed, with a clear error', function () {
    assert.strictEqual(cuda.JitTarget.COMPUTE_10, 10);
    assert.throws(() => require('../../lib/driver/constants').refuseRemoved('JitTarget', 10, 'moduleFromBuffer'), {
      name: 'RangeError',
      message: /JitTarget\.COMPUTE_10 is no longer supported/,
    });
  });

  it('has the texture constants at the top level', function () {
    assert.strictEqual(cuda.TRSA_OVERRIDE_FORMAT, 1);
    assert.strictEqual(cuda.TRSF_READ_AS_INTEGER, 1);
    assert.strictEqual(cuda.TRSF_NORMALIZED_COORDINATES, 2);
    assert.strictEqual(cuda.TR_DEFAULT, -1);
  });
});
