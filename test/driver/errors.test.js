'use strict';
const assert = require('assert');
const cuda = require('../..');
const binding = require('../../lib/internal/binding');

const expectedClass = {
  ERROR_OUT_OF_MEMORY: 'MemoryError',
  ERROR_INVALID_VALUE: 'LogicError',
  ERROR_INVALID_CONTEXT: 'LogicError',
  ERROR_INVALID_HANDLE: 'LogicError',
  ERROR_CONTEXT_IS_DESTROYED: 'LogicError',
  ERROR_PEER_ACCESS_ALREADY_ENABLED: 'LogicError',
  ERROR_ILLEGAL_ADDRESS: 'LaunchError',
  ERROR_LAUNCH_OUT_OF_RESOURCES: 'LaunchError',
  ERROR_LAUNCH_TIMEOUT: 'LaunchError',
  ERROR_ASSERT: 'LaunchError',
  ERROR_HARDWARE_STACK_ERROR: 'LaunchError',
  ERROR_ILLEGAL_INSTRUCTION: 'LaunchError',
  ERROR_MISALIGNED_ADDRESS: 'LaunchError',
  ERROR_INVALID_ADDRESS_SPACE: 'LaunchError',
  ERROR_INVALID_PC: 'LaunchError',
  ERROR_LAUNCH_FAILED: 'LaunchError',
  ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: 'LaunchError',
  ERROR_NO_DEVICE: 'RuntimeError',
  ERROR_NO_BINARY_FOR_GPU: 'RuntimeError',
  ERROR_FILE_NOT_FOUND: 'RuntimeError',
  ERROR_NOT_FOUND: 'RuntimeError',
  ERROR_NOT_READY: 'RuntimeError',
  ERROR_UNKNOWN: 'RuntimeError',
  ERROR_TIMEOUT: 'RuntimeError',
  ERROR_INVALID_CLUSTER_SIZE: 'LogicError',
  ERROR_STREAM_CAPTURE_INVALIDATED: 'LogicError',
};

describe('errors', function () {
  it('every class derives from CudaError and Error and names itself', function () {
    for (const name of ['MemoryError', 'LogicError', 'LaunchError', 'RuntimeError', 'CompileError', 'AbortError']) {
      const error = new cuda[name]('x');
      assert.ok(error instanceof cuda.CudaError, name);
      assert.ok(error instanceof Error, name);
      assert.strictEqual(error.name, name);
    }
  });

  it('maps each CUresult to its class, with code, codeName, api and message', function () {
    for (const [name, code] of Object.entries(cuda.CudaResult)) {
      if (code === 0) continue;
      const error = binding.errorForResult(code, 'cuTestCall');
      assert.ok(error instanceof cuda.CudaError, name);
      assert.strictEqual(error.code, code);
      assert.strictEqual(error.api, 'cuTestCall');
      assert.strictEqual(cuda.CudaResult[error.codeName.replace(/^CUDA_/, '')], code);
      assert.match(error.message, /^cuTestCall failed: /);
      if (expectedClass[name]) assert.strictEqual(error.name, expectedClass[name], name);
    }
  });

  it('covers the sticky faults 700-720 that a kernel leaves behind', function () {
    const faults = Object.entries(cuda.CudaResult).filter(
      ([n, c]) =>
        c >= 700 && c <= 720 && /ILLEGAL|MISALIGNED|ASSERT|LAUNCH|STACK|INVALID_PC|INVALID_ADDRESS_SPACE/.test(n),
    );
    assert.ok(faults.length >= 10);
    for (const [name, code] of faults) {
      assert.strictEqual(binding.errorForResult(code, 'cuLaunchKernel').name, 'LaunchError', name);
    }
  });

  it('a message names the call and the driver description (or the code name without a driver)', function () {
    const error = binding.errorForResult(2, 'cuMemAlloc');
    if (cuda.isAvailable()) assert.strictEqual(error.message, 'cuMemAlloc failed: out of memory');
    else assert.strictEqual(error.message, 'cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY');
    assert.strictEqual(error.codeName, 'CUDA_ERROR_OUT_OF_MEMORY');
  });

  it('CompileError carries log, options and source', function () {
    const e = new cuda.CompileError('bad', { log: 'L', options: ['-a'], source: 'k.cu' });
    assert.deepStrictEqual([e.log, e.options, e.source], ['L', ['-a'], 'k.cu']);
  });
});
