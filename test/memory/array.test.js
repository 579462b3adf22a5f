'use strict';
// CUDA arrays, the copies into and out of them, texture and surface objects and references.
const assert = require('assert');
const path = require('path');
const cuda = require('../..');
const { SourceModule } = require('../../lib/compiler');
const { describeGpu } = require('../support/gpu');

const {
  ArrayDescriptor,
  ArrayDescriptor3D,
  CudaArray,
  TextureObject,
  SurfaceObject,
  ArrayFormat,
  Array3DFlags,
  AddressMode,
  FilterMode,
} = cuda;

function randomFloats(n) {
  return Float32Array.from({ length: n }, () => Math.fround(Math.random() * 200 - 100));
}

function randomInts(n) {
  return Int32Array.from({ length: n }, () => Math.floor(Math.random() * 2 ** 32) - 2 ** 31);
}

describe('arrays (checked before the driver)', function () {
  it("descriptors default like PyCUDA's and carry every field", function () {
    assert.deepStrictEqual(
      { ...new ArrayDescriptor() },
      { width: 0, height: 0, format: ArrayFormat.FLOAT, numChannels: 1 },
    );
    const d = new ArrayDescriptor3D({
      width: 4,
      height: 3,
      depth: 2,
      format: ArrayFormat.SIGNED_INT32,
      numChannels: 2,
      flags: 2,
    });
    assert.deepStrictEqual(
      { ...d },
      { width: 4, height: 3, depth: 2, format: ArrayFormat.SIGNED_INT32, numChannels: 2, flags: 2 },
    );
    assert.ok(d instanceof ArrayDescriptor);
  });

  it('bad descriptors, resources and arguments are TypeError or RangeError naming them', function () {
    assert.throws(() => new CudaArray(), { name: 'TypeError', message: /^descriptor must be an ArrayDescriptor/ });
    assert.throws(() => new CudaArray({ width: 0, height: 1, format: ArrayFormat.FLOAT }), {
      name: 'RangeError',
      message: 'descriptor.width must be at least 1',
    });
    assert.throws(() => new CudaArray({ width: 4, format: 77 }), {
      name: 'RangeError',
      message: /descriptor.format must be/,
    });
    assert.throws(() => new CudaArray({ width: 4, format: ArrayFormat.FLOAT, numChannels: 3 }), {
      name: 'RangeError',
      message: 'descriptor.numChannels must be 1, 2 or 4, not 3',
    });
    assert.throws(() => new CudaArray({ width: -1, format: ArrayFormat.FLOAT }), {
      name: 'RangeError',
      message: /descriptor.width/,
    });
    assert.throws(() => cuda.memcpyHtoA({}, 0, new Uint8Array(4)), {
      name: 'TypeError',
      message: /array must be a CudaArray/,
    });
    const unmade = Object.create(CudaArray.prototype); // passes lib/'s check, not the addon's
    assert.throws(() => cuda.memcpyHtoA(unmade, 0, 42), { name: 'TypeError', message: /^src must be a TypedArray/ });
    assert.throws(() => cuda.memcpyAtoHAsync('x', unmade, 0), {
      name: 'TypeError',
      message: /^dest must be a TypedArray/,
    });
    assert.throws(() => cuda.memcpyHtoA(unmade, -1, new Uint8Array(4)), { name: 'RangeError', message: /index/ });
    assert.throws(() => cuda.memcpyHtoA(unmade, 0, new Uint8Array(4)), {
      name: 'TypeError',
      message: 'expected a CudaArray',
    });
    assert.throws(() => new TextureObject(42), { name: 'TypeError', message: /^resource must be a CudaArray/ });
    assert.throws(
      () => new TextureObject({ linear: 0x1000n, format: ArrayFormat.FLOAT, bytes: 64 }, { addressMode: 9 }),
      { name: 'RangeError', message: /addressMode\[0\] must be/ },
    );
    assert.throws(
      () => new TextureObject({ linear: 0x1000n, format: ArrayFormat.FLOAT, bytes: 64 }, { borderColor: [1, 2] }),
      { name: 'RangeError', message: 'borderColor must hold 4 numbers' },
    );
    assert.throws(
      () => new TextureObject({ linear: { ptr: 0x1000n, size: 16 }, format: ArrayFormat.FLOAT, bytes: 64 }),
      { name: 'RangeError', message: 'TextureObject: 64 bytes do not fit in 16 bytes of device memory' },
    );
    assert.throws(() => new TextureObject({ linear: 0x1000n, format: ArrayFormat.FLOAT }), {
      name: 'TypeError',
      message: 'resource.bytes must be given: the size of memory at a bare address is not known',
    });
    for (const [field, value] of [
      ['width', 0],
      ['height', 0],
      ['pitch', 0],
      ['height', -1],
    ]) {
      const resource = { pitch2D: 0x1000n, format: ArrayFormat.FLOAT, width: 4, height: 4, pitch: 64, [field]: value };
      assert.throws(() => new TextureObject(resource), {
        name: 'RangeError',
        message: new RegExp(`^resource.${field} must be`),
      });
    }
    // rows of 64 bytes, the last 4 texels long; UNORM_INT16X4 names its 4 channels (8 bytes a texel)
    for (const [format, size, bytes] of [
      [ArrayFormat.FLOAT, 100, 208],
      [ArrayFormat.UNORM_INT16X4, 200, 224],
    ]) {
      const resource = { pitch2D: { ptr: 0x1000n, size }, format, width: 4, height: 4, pitch: 64 };
      assert.throws(() => new TextureObject(resource), {
        name: 'RangeError',
        message: `TextureObject: ${bytes} bytes do not fit in ${size} bytes of device memory`,
      });
    }
    const compressed = { pitch2D: 0x1000n, format: ArrayFormat.BC1_UNORM, width: 4, height: 4, pitch: 64 };
    assert.throws(() => new TextureObject(compressed), {
      name: 'RangeError',
      message: 'TextureObject: pitched memory of this format is not supported; read it through a CudaArray',
    });
    assert.throws(() => new SurfaceObject(new Uint8Array(4)), {
      name: 'TypeError',
      message: /array must be a CudaArray/,
    });
    assert.throws(() => cuda.matrixToArray(new Float32Array(6), [2, 2]), {
      name: 'RangeError',
      message: 'shape [2,2] holds 4 values, the array 6',
    });
    assert.throws(() => cuda.matrixToArray(new Float32Array(4), [2, 2], 'X'), {
      name: 'RangeError',
      message: "order must be 'C' or 'F', not the string \"X\"",
    });
    assert.throws(() => cuda.toArray(new BigInt64Array(4), [2, 2]), {
      name: 'TypeError',
      message: /arrays hold int8 to int32/,
    });
    assert.throws(() => cuda.toArray(new Float32Array(4), [4]), {
      name: 'RangeError',
      message: /shape must have 2 or 3 dimensions/,
    });
    assert.throws(() => cuda.makeMultichannel2DArray(new Float32Array(12), [2, 2, 3]), {
      name: 'RangeError',
      message: 'the channel count must be 1, 2 or 4, not 3',
    });
    const copy = new cuda.Memcpy2D();
    assert.throws(() => copy.setDstArray({}), { name: 'TypeError', message: /dstArray must be a CudaArray/ });
  });

  it('the addon re-checks what memory safety depends on, whatever lib/ passed', function () {
    const binding = require('../../lib/internal/binding');
    const notArray = { name: 'TypeError', message: 'expected a CudaArray' };
    assert.throws(() => binding.memcpyHtoA({}, 0, new Uint8Array(4)), notArray);
    assert.throws(() => binding.memcpyAtoA(new Uint8Array(4), 0, {}, 0, 4), notArray);
    assert.throws(() => binding.arrayGetDescriptor(Object.create(CudaArray.prototype)), notArray);
    assert.throws(() => binding.surfObjectCreate({}, {}), notArray);
    const T = binding.layouts.texture;
    const fields = new BigUint64Array(T.count);
    fields[T.kind] = BigInt(T.kindArray); // an array, which {} is not
    assert.throws(() => binding.texObjectCreate({}, {}, fields, new Float32Array(4)), notArray);
    for (const [bad, border] of [
      [new BigUint64Array(T.count - 1), new Float32Array(4)],
      [fields, new Float32Array(3)],
      [new Float64Array(T.count), new Float32Array(4)],
    ]) {
      assert.throws(() => binding.texObjectCreate({}, null, bad, border), {
        name: 'TypeError',
        message: /texture object's fields/,
      });
    }
    fields[T.kind] = 7n;
    assert.throws(() => binding.texObjectCreate({}, null, fields, new Float32Array(4)), {
      name: 'RangeError',
      message: 'unknown texture resource kind',
    });
    assert.throws(() => binding.texObjectDestroy({}), {
      name: 'TypeError',
      message: 'expected a TextureObject or SurfaceObject',
    });
    assert.throws(() => binding.texrefSetArray({}, {}, 0), {
      name: 'TypeError',
      message: 'expected a TextureReference',
    });
    assert.throws(() => binding.surfrefSetArray({}, {}, 0), {
      name: 'TypeError',
      message: 'expected a SurfaceReference',
    });
  });
});

describe('texture objects over device memory (stand-in driver)', function () {
  this.timeout(60000);
  const { childRunner } = require('../support/graph-child');
  const { run } = childRunner('cudadrv-texobj-');

  it('the addon checks the memory a texture reads against its allocation, whatever lib/ passed', function () {
    run(`
      const binding = require(${JSON.stringify(path.join(__dirname, '../../lib/internal/binding'))});
      const T = binding.layouts.texture;
      const memory = cuda.memAlloc(4096);
      const at = memory.ptr;
      const border = new Float32Array(4);
      const fields = (kind, set) => {
        const f = new BigUint64Array(T.count);
        Object.assign(f, { [T.kind]: BigInt(kind), [T.address]: at, [T.format]: BigInt(cuda.ArrayFormat.FLOAT), [T.channels]: 1n });
        for (const [key, value] of Object.entries(set)) f[T[key]] = BigInt(value);
        return f;
      };
      const past = (bytes) => ({ name: 'RangeError', message: 'TextureObject: 0x' + at.toString(16) + ' is not memory CUDA knows, or ' + bytes + ' bytes from it run past its allocation; pass device memory that is not freed, or a host buffer' });
      // what fits is made; a byte more is refused before the driver
      assert.strictEqual(typeof binding.texObjectCreate({}, null, fields(T.kindLinear, { bytes: 4096 }), border), 'bigint');
      assert.throws(() => binding.texObjectCreate({}, null, fields(T.kindLinear, { bytes: 4097 }), border), past(4097));
      // pitched: 15 rows of 64 bytes apart, then a last row of 16 texels of 4 floats (256 bytes)
      const pitched = { width: 16, height: 16, pitch: 64 * 4, channels: 4 };
      assert.strictEqual(typeof binding.texObjectCreate({}, null, fields(T.kindPitch2D, { ...pitched, pitch: 256 }), border), 'bigint');
      assert.throws(() => binding.texObjectCreate({}, null, fields(T.kindPitch2D, { ...pitched, pitch: 257 }), border), past(257 * 15 + 256));
      // the texel of a format that names its channels (UNORM_INT16X4: 8 bytes), whatever numChannels says
      const x4 = { ...pitched, format: cuda.ArrayFormat.UNORM_INT16X4, channels: 1, width: 32, pitch: 256 };
      assert.strictEqual(typeof binding.texObjectCreate({}, null, fields(T.kindPitch2D, x4), border), 'bigint');
      assert.throws(() => binding.texObjectCreate({}, null, fields(T.kindPitch2D, { ...x4, width: 33 }), border), past(256 * 15 + 264));
      for (const [set, message] of [
        [{ channels: 0 }, 'numChannels must be from 1 to 4'],
        [{ channels: 2 ** 40 }, 'numChannels must be from 1 to 4'],
        [{ format: cuda.ArrayFormat.BC1_UNORM }, 'TextureObject: pitched memory of this format is not supported; read it through a CudaArray'],
        [{ pitch: 2n ** 63n, height: 3 }, "TextureObject: the pitched memory's size overflows"],
        [{ height: 0 }, 'TextureObject: height must be at least 1'],
      ]) {
        assert.throws(() => binding.texObjectCreate({}, null, fields(T.kindPitch2D, { ...pitched, ...set }), border), { name: 'RangeError', message });
      }
      memory.free();
      assert.throws(() => binding.texObjectCreate({}, null, fields(T.kindLinear, { bytes: 16 }), border), past(16));
    `);
  });
});

describeGpu('arrays, textures and surfaces', function () {
  // tex: reads a float array at (x, y) through a texture object; copy: writes a surface from a
  // texture, doubled; fetch: reads linear memory through a texture.
  const SOURCE = `
#include <cudadrv/texture.cuh>
extern "C" {
__global__ void read2d(cudaTextureObject_t t, float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}
__global__ void read2dNormalized(cudaTextureObject_t t, float *out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, (i + 0.5f) / n, 0.5f);
}
__global__ void double2d(cudaTextureObject_t t, cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) surf2Dwrite(2.0f * tex2D<float>(t, x + 0.5f, y + 0.5f), s, x * 4, y);
}
__global__ void fetch(cudaTextureObject_t t, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(t, i);
}
__global__ void readDouble(cudaTextureObject_t t, double *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) out[y * w + x] = cudadrv::tex2D_double(t, x, y);
}
__global__ void readComplex(cudaTextureObject_t t, float2 *out, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * w + x] = tex2D<float2>(t, x + 0.5f, y + 0.5f);
}
__global__ void read3d(cudaTextureObject_t t, float *out, int w, int h, int d) {
  int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
  if (x < w && y < h && z < d) out[(z * h + y) * w + x] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}
__global__ void channels(cudaTextureObject_t t, float4 *out, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * w + x] = tex2D<float4>(t, x + 0.5f, y + 0.5f);
}
}`;
  let module;
  before(function () {
    module = new SourceModule(SOURCE, { noExternC: true });
  });

  // out = read2d through a texture over array, for w × h values
  function readThrough(array, w, h, opts) {
    const out = cuda.memAlloc(w * h * 4);
    const tex = new TextureObject(array, opts);
    module.getFunction('read2d')(tex, out, cuda.int32(w), cuda.int32(h), {
      block: [64, 1, 1],
      grid: [Math.ceil(w / 64), h],
    });
    const result = cuda.fromDevice(out, w * h, 'float32');
    tex.destroy();
    out.free();
    return result;
  }

  // Memcpy3D of one w × h layer of float32 from array into back (on stream, when given).
  function oneLayerToHost(array, back, w, h, stream = undefined) {
    const copy = new cuda.Memcpy3D();
    copy.setSrcArray(array);
    copy.setDstHost(back);
    copy.widthInBytes = copy.dstPitch = w * 4;
    copy.height = copy.dstHeight = h;
    copy.depth = 1;
    copy.run(stream);
  }

  it('a 2D array: Memcpy2D from host in, texture fetches and Memcpy2D back out give the values', function () {
    const w = 37 + Math.floor(Math.random() * 60);
    const h = 5 + Math.floor(Math.random() * 20);
    const values = randomFloats(w * h);
    const array = new CudaArray(
      new ArrayDescriptor({ width: w, height: h, format: ArrayFormat.FLOAT, numChannels: 1 }),
    );
    assert.deepStrictEqual(
      { ...array.getDescriptor() },
      { width: w, height: h, format: ArrayFormat.FLOAT, numChannels: 1 },
    );
    assert.deepStrictEqual(
      { ...array.getDescriptor3D() },
      { width: w, height: h, depth: 0, format: ArrayFormat.FLOAT, numChannels: 1, flags: 0 },
    );
    assert.strictEqual(typeof array.handle, 'bigint');
    const copyIn = new cuda.Memcpy2D();
    copyIn.setSrcHost(values);
    copyIn.setDstArray(array);
    copyIn.widthInBytes = copyIn.srcPitch = w * 4;
    copyIn.height = h;
    copyIn.run({ aligned: true });
    assert.deepStrictEqual(readThrough(array, w, h), values);
    const back = new Float32Array(w * h);
    const copyOut = new cuda.Memcpy2D();
    copyOut.setSrcArray(array);
    copyOut.setDstHost(back);
    copyOut.widthInBytes = copyOut.dstPitch = w * 4;
    copyOut.height = h;
    copyOut.run();
    assert.deepStrictEqual(back, values);
    array.free();
    array.free();
    assert.throws(() => array.getDescriptor(), {
      name: 'LogicError',
      message: 'this CudaArray has been freed; create a new CudaArray',
    });
    assert.throws(() => copyOut.run(), { name: 'LogicError', message: /CudaArray has been freed/ });
  });

  it('matrixToArray in C and F order, and an asynchronous Memcpy3D out of an array', async function () {
    const rows = 3 + Math.floor(Math.random() * 9);
    const cols = 17 + Math.floor(Math.random() * 30);
    const values = randomFloats(rows * cols);
    // C order: rows × cols, row-major; the array is cols wide
    const c = cuda.matrixToArray(values, [rows, cols], 'C');
    assert.deepStrictEqual(
      { ...c.getDescriptor() },
      { width: cols, height: rows, format: ArrayFormat.FLOAT, numChannels: 1 },
    );
    assert.deepStrictEqual(readThrough(c, cols, rows), values);
    // F order: the same memory read as a cols × rows column-major matrix
    const f = cuda.matrixToArray(values, [cols, rows], 'F');
    assert.deepStrictEqual(
      { ...f.getDescriptor() },
      { width: cols, height: rows, format: ArrayFormat.FLOAT, numChannels: 1 },
    );
    const stream = new cuda.Stream();
    const back = cuda.pagelockedEmpty(rows * cols, 'float32');
    oneLayerToHost(f, back, cols, rows, stream);
    await stream.synchronize();
    assert.deepStrictEqual(back, values);
  });

  it('toArray with allowSurfaceBind: a surface object writes what a texture read, doubled', function () {
    const w = 20 + Math.floor(Math.random() * 40);
    const h = 4 + Math.floor(Math.random() * 8);
    const values = randomFloats(w * h);
    const source = cuda.toArray(values, [h, w]);
    const target = cuda.toArray(new Float32Array(w * h), [h, w], { allowSurfaceBind: true });
    const d = target.getDescriptor3D();
    assert.strictEqual(d.flags, Array3DFlags.SURFACE_LDST | Array3DFlags.LAYERED);
    assert.strictEqual(d.depth, 1);
    const tex = new TextureObject(source);
    const surf = new SurfaceObject(target);
    assert.strictEqual(surf.resource, target);
    module.getFunction('double2d')(tex, surf, cuda.int32(w), cuda.int32(h), {
      block: [32, 1, 1],
      grid: [Math.ceil(w / 32), h],
    });
    const back = new Float32Array(w * h);
    oneLayerToHost(target, back, w, h);
    assert.deepStrictEqual(
      back,
      values.map((v) => Math.fround(2 * v)),
    );
    surf.destroy();
    surf.destroy();
    assert.throws(() => surf.handle, {
      name: 'LogicError',
      message: 'this SurfaceObject has been destroyed; create a new one',
    });
    assert.throws(() => module.getFunction('double2d')(tex, surf, cuda.int32(w), cuda.int32(h), { block: 1 }), {
      name: 'LogicError',
      message: /SurfaceObject has been destroyed/,
    });
    tex.destroy();
  });

  it('texture options: clamp, wrap, border and linear filtering over normalized coordinates', function () {
    const n = 16;
    const values = randomFloats(n);
    const array = cuda.matrixToArray(values, [1, n]);
    const out = cuda.memAlloc(n * 4);
    const readNormalized = (opts) => {
      const tex = new TextureObject(array, { flags: cuda.TRSF_NORMALIZED_COORDINATES, ...opts });
      module.getFunction('read2dNormalized')(tex, out, cuda.int32(n), { block: n });
      return cuda.fromDevice(out, n, 'float32');
    };
    assert.deepStrictEqual(readNormalized({ filterMode: FilterMode.POINT }), values);
    // linear filtering at texel centres gives the texels themselves (within the 9-bit weights)
    const linear = readNormalized({ filterMode: FilterMode.LINEAR, addressMode: AddressMode.CLAMP });
    linear.forEach((v, i) =>
      assert.ok(Math.abs(v - values[i]) <= 1e-4 * Math.abs(values[i]) + 1e-4, `${v} vs ${values[i]}`),
    );
    out.free();
  });

  it('texture objects over linear and pitched device memory, kept alive by the texture', function () {
    const n = 1000 + Math.floor(Math.random() * 1000);
    const ints = randomInts(n);
    const memory = cuda.toDevice(ints);
    const tex = new TextureObject({ linear: memory, format: ArrayFormat.SIGNED_INT32, numChannels: 1 });
    assert.strictEqual(tex.resource.linear, memory);
    const out = cuda.memAlloc(n * 4);
    module.getFunction('fetch')(tex, out, cuda.int32(n), { block: 256, grid: Math.ceil(n / 256) });
    assert.deepStrictEqual(cuda.fromDevice(out, n, 'int32'), ints);
    // pitched 2D memory
    const w = 33;
    const h = 7;
    const values = randomFloats(w * h);
    const { allocation, pitch } = cuda.memAllocPitch(w * 4, h, 4);
    const copy = new cuda.Memcpy2D();
    copy.setSrcHost(values);
    copy.setDstDevice(allocation);
    copy.srcPitch = w * 4;
    copy.dstPitch = pitch;
    copy.widthInBytes = w * 4;
    copy.height = h;
    copy.run();
    const pitched = new TextureObject({
      pitch2D: allocation,
      format: ArrayFormat.FLOAT,
      numChannels: 1,
      width: w,
      height: h,
      pitch,
    });
    const read = cuda.memAlloc(w * h * 4);
    module.getFunction('read2d')(pitched, read, cuda.int32(w), cuda.int32(h), { block: [64, 1, 1], grid: [1, h] });
    assert.deepStrictEqual(cuda.fromDevice(read, w * h, 'float32'), values);
  });

  it('float64 and complex arrays read through include/cudadrv/texture.cuh and float2 fetches', function () {
    const w = 9 + Math.floor(Math.random() * 20);
    const h = 3 + Math.floor(Math.random() * 5);
    const doubles = Float64Array.from({ length: w * h }, () => Math.random() * 1e10 - 5e9);
    const array = cuda.toArray(doubles, [h, w]);
    assert.deepStrictEqual(
      [array.getDescriptor().format, array.getDescriptor().numChannels],
      [ArrayFormat.SIGNED_INT32, 2],
    );
    const out = cuda.memAlloc(w * h * 8);
    module.getFunction('readDouble')(new TextureObject(array), out, cuda.int32(w), cuda.int32(h), {
      block: [32, 1, 1],
      grid: [1, h],
    });
    assert.deepStrictEqual(cuda.fromDevice(out, w * h, 'float64'), doubles);
    // complex64: (re, im) pairs, from device memory this time
    const pairs = randomFloats(2 * w * h);
    const complex = cuda.deviceToArray(cuda.toDevice(pairs), [h, w], 'float32', { complex: true });
    assert.deepStrictEqual(
      [complex.getDescriptor().format, complex.getDescriptor().numChannels],
      [ArrayFormat.FLOAT, 2],
    );
    const out2 = cuda.memAlloc(w * h * 8);
    module.getFunction('readComplex')(new TextureObject(complex), out2, cuda.int32(w), cuda.int32(h), {
      block: w,
      grid: h,
    });
    assert.deepStrictEqual(cuda.fromDevice(out2, 2 * w * h, 'float32'), pairs);
  });

  it('3D arrays and multichannel 2D arrays', function () {
    const [w, h, d] = [8 + Math.floor(Math.random() * 8), 5, 3];
    const values = randomFloats(w * h * d);
    const array = cuda.toArray(values, [d, h, w]);
    assert.deepStrictEqual(
      { ...array.getDescriptor3D() },
      { width: w, height: h, depth: d, format: ArrayFormat.FLOAT, numChannels: 1, flags: 0 },
    );
    assert.throws(() => array.getDescriptor(), {
      name: 'LogicError',
      message: `this CudaArray is 3D (depth ${d}): use getDescriptor3D()`,
    });
    const out = cuda.memAlloc(values.byteLength);
    module.getFunction('read3d')(new TextureObject(array), out, cuda.int32(w), cuda.int32(h), cuda.int32(d), {
      block: w,
      grid: [h, d],
    });
    assert.deepStrictEqual(cuda.fromDevice(out, values.length, 'float32'), values);
    // four channels, [rows, columns, channels] in C order
    const quad = randomFloats(h * w * 4);
    const multi = cuda.makeMultichannel2DArray(quad, [h, w, 4]);
    assert.strictEqual(multi.getDescriptor().numChannels, 4);
    const out4 = cuda.memAlloc(quad.byteLength);
    module.getFunction('channels')(new TextureObject(multi), out4, cuda.int32(w), cuda.int32(h), { block: w, grid: h });
    assert.deepStrictEqual(cuda.fromDevice(out4, quad.length, 'float32'), quad);
  });

  it('1D array copies: host, device and array to array, synchronous and on a stream', async function () {
    const n = 500 + Math.floor(Math.random() * 500);
    const ints = randomInts(n);
    const a = new CudaArray({ width: n, format: ArrayFormat.SIGNED_INT32, numChannels: 1 });
    const b = new CudaArray({ width: n, format: ArrayFormat.SIGNED_INT32, numChannels: 1 });
    cuda.memcpyHtoA(a, 0, ints);
    const offset = 4 * Math.floor(n / 3);
    cuda.memcpyAtoA(b, 0, a, 0, n * 4);
    const half = new Int32Array(n - offset / 4);
    cuda.memcpyAtoH(half, b, offset);
    assert.deepStrictEqual(half, ints.subarray(offset / 4));
    const device = cuda.memAlloc(n * 4);
    cuda.memcpyAtoD(device, a, 0, n * 4);
    assert.deepStrictEqual(cuda.fromDevice(device, n, 'int32'), ints);
    const other = randomInts(n);
    const onDevice = cuda.toDevice(other);
    cuda.memcpyDtoA(a, 0, onDevice, n * 4);
    const stream = new cuda.Stream();
    const pinned = cuda.pagelockedEmpty(n, 'int32');
    cuda.memcpyAtoHAsync(pinned, a, 0, stream);
    await stream.synchronize();
    assert.deepStrictEqual(pinned, other);
    cuda.memcpyHtoAAsync(b, 0, ints, stream);
    await stream.synchronize();
    cuda.memcpyAtoH(pinned, b, 0);
    assert.deepStrictEqual(pinned, ints);
    assert.throws(() => cuda.memcpyHtoA(a, 4, new Int32Array(n)), { code: 1, api: 'cuMemcpyHtoA' }); // past the array's end
    assert.throws(() => cuda.memcpyDtoA(a, 0, onDevice, n * 8), { name: 'RangeError', message: /do not fit/ });
  });

  it('texture and surface references bind arrays (setArray, getArray) and keep them', function () {
    const m = cuda.moduleFromFile(path.join(__dirname, '..', 'support', 'fixtures', 'texrefs.ptx'));
    const [w, h] = [8 + Math.floor(Math.random() * 24), 4];
    const values = randomFloats(w * h);
    const array = cuda.matrixToArray(values, [h, w]);
    const tex = m.getTexref('tex2d');
    assert.strictEqual(tex.getArray(), null);
    tex.setArray(array, cuda.TRSA_OVERRIDE_FORMAT);
    tex.setFormat(ArrayFormat.FLOAT, 1);
    assert.strictEqual(tex.getArray(), array);
    const out = cuda.memAlloc(w * h * 4);
    m.getFunction('fetch2d')(out, { block: [w, h], texrefs: [tex] });
    assert.deepStrictEqual(cuda.fromDevice(out, w * h, 'float32'), values);
    // a 1D surface: suld reads 4 bytes at byte offset tid.x * 4
    const n = 16;
    const ints = randomInts(n);
    const surfArray = new CudaArray(
      new ArrayDescriptor3D({ width: n, format: ArrayFormat.SIGNED_INT32, flags: Array3DFlags.SURFACE_LDST }),
    );
    cuda.memcpyHtoA(surfArray, 0, ints);
    const surf = m.getSurfref('surf');
    assert.strictEqual(surf.getArray(), null);
    surf.setArray(surfArray);
    assert.strictEqual(surf.getArray(), surfArray);
    const got = cuda.memAlloc(n * 4);
    m.getFunction('surfread')(got, { block: n });
    assert.deepStrictEqual(cuda.fromDevice(got, n, 'int32'), ints);
    assert.throws(() => surf.setArray(array, 1), { name: 'RangeError', message: /flags must be/ });
    assert.throws(() => tex.setArray('array'), { name: 'TypeError', message: /array must be a CudaArray/ });
    array.free();
    assert.throws(() => tex.setArray(array), { name: 'LogicError', message: /CudaArray has been freed/ });
  });
});
