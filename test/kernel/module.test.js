'use strict';
// Modules on the GPU: loading PTX, cubin, fatbin and files with JIT options and logs, globals,
// function attributes, occupancy and the deprecated launch API.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const cuda = require('../..');
const { describeGpu } = require('../support/gpu');
const { normals } = require('../support/kernel-data');

// Texture and surface references can no longer be declared in CUDA C++, but PTX still declares
// them and the driver still binds them.
const TEX_PTX = fs.readFileSync(path.join(__dirname, '..', 'support', 'fixtures', 'texrefs.ptx'), 'utf8');

const BROKEN_PTX = `
.version 7.8
.target sm_75
.address_size 64
.visible .entry broken()
{
    bogus.instruction;
    ret;
}
`;

const SOURCE = String.raw`
extern "C" {
__device__ int counter;
__constant__ float table[64];

__global__ void large_smem(int *d_data)
{
  __shared__ int sdata[4000];
  sdata[threadIdx.x] = threadIdx.x;
  d_data[threadIdx.x] = sdata[threadIdx.x];
}

__global__ void through_shared(const int *in, int *out, int n)
{
  extern __shared__ int sdata[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) sdata[n - 1 - i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = sdata[i] + 1;
}

__global__ void doublify(float *a)
{
  a[threadIdx.x] *= 2;
}
}
`;

describeGpu('Module', function () {
  it('loads PTX text with JIT options; messageHandler receives the logs', function () {
    const calls = [];
    const module = new cuda.Module(TEX_PTX, {
      options: [
        [cuda.JitOption.MAX_REGISTERS, 32],
        [cuda.JitOption.LOG_VERBOSE, 1],
      ],
      messageHandler: (...args) => calls.push(args),
    });
    assert.strictEqual(calls.length, 1);
    assert.strictEqual(calls[0][0], true);
    assert.strictEqual(typeof calls[0][1], 'string');
    assert.strictEqual(typeof calls[0][2], 'string');
    assert.strictEqual(module.context, cuda.Context.getCurrent());
    assert.ok(module.getFunction('fetch1d') instanceof cuda.Kernel);
    module.free();
    const again = cuda.moduleFromBuffer(Buffer.from(TEX_PTX), { options: { maxRegisters: 16, optimizationLevel: 1 } });
    assert.ok(again.getFunction('fetch2d') instanceof cuda.Kernel);
  });

  it("a PTX error is the driver's error, with the JIT error log in its message and the handler", function () {
    const calls = [];
    let error = null;
    try {
      new cuda.Module(BROKEN_PTX, { messageHandler: (...args) => calls.push(args) });
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof cuda.CudaError, String(error));
    assert.strictEqual(error.api, 'cuModuleLoadDataEx');
    assert.ok(error.errorLog.length > 0);
    assert.ok(error.message.startsWith('cuModuleLoadDataEx failed: '));
    assert.ok(error.message.endsWith(error.errorLog.trimEnd()));
    assert.deepStrictEqual(calls, [[false, error.infoLog, error.errorLog]]);
  });

  it("loads cubin from a Buffer and from a file; a missing file is the driver's error", async function () {
    const { compileSync } = require('../../lib/compiler');
    const cubin = compileSync(SOURCE);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-module-'));
    try {
      const file = path.join(dir, 'kernels.cubin');
      fs.writeFileSync(file, cubin);
      const ptxFile = path.join(dir, 'tex.ptx');
      fs.writeFileSync(ptxFile, TEX_PTX);
      for (const module of [cuda.moduleFromBuffer(cubin), cuda.moduleFromFile(file)]) {
        const doublify = module.getFunction('doublify');
        const a = normals(32);
        const b = a.slice();
        await doublify(cuda.InOut(b), { block: [32] });
        assert.deepStrictEqual(
          b,
          a.map((x) => 2 * x),
        );
      }
      assert.ok(cuda.moduleFromFile(ptxFile).getTexref('tex') instanceof cuda.TextureReference);
      assert.throws(() => cuda.moduleFromFile(path.join(dir, 'missing.cubin')), {
        name: 'RuntimeError',
        api: 'cuModuleLoad',
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads a fatbin made by nvcc (test/support/fixtures/scale.fatbin) from a Buffer and from its file', async function () {
    const [major] = cuda.Context.getDevice().computeCapability();
    if (major < 9) this.skip(); // it holds sm_90 code and compute_90 PTX
    const file = path.join(__dirname, '..', 'support', 'fixtures', 'scale.fatbin');
    const image = fs.readFileSync(file);
    const modules = [cuda.moduleFromBuffer(image), new cuda.Module(new Uint8Array(image)), cuda.moduleFromFile(file)];
    for (const module of modules) {
      const scale = module.getFunction('scale');
      assert.deepStrictEqual(scale.paramInfo(), [
        { offset: 0, size: 8 },
        { offset: 8, size: 4 },
        { offset: 12, size: 4 },
      ]);
      const n = 1000 + Math.floor(Math.random() * 1000);
      const a = normals(n);
      const s = Math.fround(1 + Math.random());
      const b = a.slice();
      await scale(cuda.InOut(b), cuda.float32(s), cuda.int32(n), { block: [128], grid: [Math.ceil(n / 128)] });
      assert.deepStrictEqual(
        b,
        a.map((x) => Math.fround(x * s)),
      );
    }
  });

  it('getGlobal gives { ptr, size } usable as device memory', function () {
    const { compileSync } = require('../../lib/compiler');
    const module = new cuda.Module(compileSync(SOURCE));
    const counter = module.getGlobal('counter');
    assert.strictEqual(counter.size, 4);
    assert.strictEqual(typeof counter.ptr, 'bigint');
    const table = module.getGlobal('table');
    assert.strictEqual(table.size, 256);
    const values = normals(64);
    cuda.memcpyHtoD(table, values);
    const back = new Float32Array(64);
    cuda.memcpyDtoH(back, table);
    assert.deepStrictEqual(back, values);
    assert.throws(() => module.getGlobal('nothing'), { api: 'cuModuleGetGlobal' });
    assert.throws(() => module.getFunction('nothing'), { api: 'cuModuleGetFunction' });
  });
});

describeGpu('Kernel attributes, occupancy, deprecated launches', function () {
  let module;
  let dev;
  before(function () {
    const { compileSync } = require('../../lib/compiler');
    module = new cuda.Module(compileSync(SOURCE));
    dev = cuda.Context.getDevice();
  });

  it('getters for every FunctionAttribute; 16000 bytes of static shared memory', async function () {
    const kernel = module.getFunction('large_smem');
    assert.strictEqual(kernel.sharedSizeBytes, 16000);
    assert.strictEqual(kernel.getAttribute(cuda.FunctionAttribute.SHARED_SIZE_BYTES), 16000);
    assert.ok(kernel.numRegs > 0 && kernel.numRegs <= 255, `${kernel.numRegs} registers`);
    assert.ok(kernel.maxThreadsPerBlock > 0 && kernel.maxThreadsPerBlock <= dev.maxThreadsPerBlock);
    const [major, minor] = dev.computeCapability();
    assert.strictEqual(kernel.binaryVersion, major * 10 + minor);
    assert.strictEqual(kernel.localSizeBytes, 0);
    const out = new Int32Array(1);
    await kernel(cuda.Out(out), { block: [1, 1, 1] });
    assert.strictEqual(out[0], 0);
  });

  it('setAttribute raises the dynamic shared memory limit past 48 KiB', async function () {
    const kernel = module.getFunction('through_shared');
    const bytes = 64 * 1024;
    const n = bytes / 4;
    const input = Int32Array.from({ length: n }, () => Math.floor(Math.random() * 2 ** 30));
    const output = new Int32Array(n);
    assert.throws(() => kernel(cuda.In(input), cuda.Out(output), cuda.int32(n), { block: [512], shared: bytes }), {
      api: 'cuLaunchKernel',
    });
    kernel.setAttribute(cuda.FunctionAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
    assert.strictEqual(kernel.maxDynamicSharedSizeBytes, bytes);
    await kernel(cuda.In(input), cuda.Out(output), cuda.int32(n), { block: [512], shared: bytes });
    for (let i = 0; i < n; i++) assert.strictEqual(output[i], input[n - 1 - i] + 1, `element ${i}`);
    kernel.setCacheConfig(cuda.FuncCache.PREFER_SHARED);
    kernel.setSharedConfig(cuda.SharedConfig.FOUR_BYTE_BANK_SIZE);
  });

  it("occupancy agrees with the device's limits", function () {
    const kernel = module.getFunction('doublify');
    assert.strictEqual(kernel.maxActiveBlocksPerMultiprocessor(256), dev.maxThreadsPerMultiprocessor / 256);
    const { minGridSize, blockSize } = kernel.maxPotentialBlockSize();
    assert.ok(blockSize > 0 && blockSize <= dev.maxThreadsPerBlock && blockSize % dev.warpSize === 0, `${blockSize}`);
    assert.strictEqual(minGridSize, dev.multiprocessorCount * kernel.maxActiveBlocksPerMultiprocessor(blockSize));
    const asked = [];
    const limited = kernel.maxPotentialBlockSize((b) => {
      asked.push(b);
      return 0;
    }, 128);
    assert.ok(asked.length > 0 && asked.every((b) => b >= 1 && b <= 128));
    assert.ok(limited.blockSize <= 128);
  });

  it('the deprecated launch API still launches, warning once per method', async function () {
    const warnings = [];
    const listener = (w) => w.name === 'DeprecationWarning' && warnings.push(w.message);
    process.on('warning', listener);
    try {
      const kernel = module.getFunction('doublify');
      const a = normals(64);
      const aGpu = cuda.toDevice(a);
      kernel.setBlockShape(64);
      kernel.paramSet(aGpu);
      kernel.launch();
      kernel.paramSetSize(8);
      kernel.paramSeti(0, Number(aGpu.ptr & 0xffffffffn));
      kernel.paramSeti(4, Number(aGpu.ptr >> 32n));
      kernel.launchGrid(1);
      const stream = new cuda.Stream();
      kernel.launchGridAsync(1, 1, stream);
      await stream.synchronize();
      const back = new Float32Array(64);
      cuda.memcpyDtoH(back, aGpu);
      assert.deepStrictEqual(
        back,
        a.map((x) => 8 * x),
      );
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(warnings.every((m) => /^kernel\.\w+\(\) is deprecated/.test(m)));
      assert.strictEqual(new Set(warnings).size, warnings.length, 'once per method');
      aGpu.free();
    } finally {
      process.off('warning', listener);
    }
  });
});
