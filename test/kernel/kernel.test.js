'use strict';
// Kernel launches on the GPU: PyCUDA's classic driver checks ported (multiply_them, pointer
// offsets, streams, dynamic shared memory, prepared calls, constant memory, vector types), In /
// Out / InOut, timing, every scalar type round-tripping through a kernel, and bad input. Random
// data, exact comparison with CPU references.
const assert = require('assert');
const cuda = require('../..');
const kargs = { ...require('../../lib/kernel/packing'), ...require('../../lib/kernel/formats') };
const { describeGpu } = require('../support/gpu');
const { normals, randomInt, halfValue } = require('../support/kernel-data');

const SOURCE = String.raw`
struct __align__(2) half_t { unsigned short bits; };

extern "C" {
__global__ void multiply_them(float *dest, float *a, float *b)
{
  const int i = threadIdx.x;
  dest[i] = a[i] * b[i];
}

__global__ void multiply_them_2d(float *dest, float *a, float *b)
{
  const int i = threadIdx.x * blockDim.y + threadIdx.y;
  dest[i] = a[i] * b[i];
}

__global__ void doublify(float *a)
{
  int idx = threadIdx.x + threadIdx.y * blockDim.x;
  a[idx] *= 2;
}

__global__ void scale(float *a, float s, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}

__global__ void reverse_shared(const int *in, int *out, int n)
{
  extern __shared__ int sdata[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) sdata[i] = in[i] * 3;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = sdata[n - 1 - i];
}

__constant__ float const_array[32];

__global__ void copy_constant_into_global(float *global_result_array)
{
  global_result_array[threadIdx.x] = const_array[threadIdx.x];
}

__global__ void set_them(float3 *dest, float3 x)
{
  const int i = threadIdx.x;
  dest[i] = x;
}

__global__ void vectors(signed char c, float4 f, int4 v, signed char c2, double2 d, float *fo,
                        int *io, double *dout, signed char *co)
{
  fo[0] = f.x; fo[1] = f.y; fo[2] = f.z; fo[3] = f.w;
  io[0] = v.x; io[1] = v.y; io[2] = v.z; io[3] = v.w;
  dout[0] = d.x; dout[1] = d.y;
  co[0] = c; co[1] = c2;
}

// every scalar type, written back at the offsets of the same C layout
__global__ void echo(signed char a, unsigned char b, short c, unsigned short d, int e,
                     unsigned int f, long long g, unsigned long long h, half_t i, float j,
                     double k, bool l, const void *m, unsigned char *out)
{
  *(signed char *)(out + 0) = a;
  *(unsigned char *)(out + 1) = b;
  *(short *)(out + 2) = c;
  *(unsigned short *)(out + 4) = d;
  *(int *)(out + 8) = e;
  *(unsigned int *)(out + 12) = f;
  *(long long *)(out + 16) = g;
  *(unsigned long long *)(out + 24) = h;
  *(unsigned short *)(out + 32) = i.bits;
  *(float *)(out + 36) = j;
  *(double *)(out + 40) = k;
  *(bool *)(out + 48) = l;
  *(const void **)(out + 56) = m;
}

__global__ void empty() {}
}
`;

function load(options = {}) {
  const { compileSync } = require('../../lib/compiler');
  return new cuda.Module(compileSync(SOURCE), options);
}

describeGpu("kernel launches (PyCUDA's driver checks)", function () {
  let module;
  before(function () {
    module = load();
  });

  it('multiply_them with In and Out (test_simple_kernel)', async function () {
    const multiply = module.getFunction('multiply_them');
    const a = normals(400);
    const b = normals(400);
    const dest = new Float32Array(400);
    const pending = multiply(cuda.Out(dest), cuda.In(a), cuda.In(b), { block: [400, 1, 1] });
    assert.ok(pending instanceof Promise);
    assert.strictEqual(await pending, undefined);
    for (let i = 0; i < 400; i++) assert.strictEqual(dest[i], Math.fround(a[i] * b[i]), `element ${i}`);
  });

  it('device memory, and a pointer 4 bytes in with 399 threads (test_simple_kernel_2)', async function () {
    const multiply = module.getFunction('multiply_them');
    const a = normals(400);
    const b = normals(400);
    const aGpu = cuda.toDevice(a);
    const bGpu = cuda.toDevice(b);
    let dest = new Float32Array(400);
    await multiply(cuda.Out(dest), aGpu, bGpu, { block: [400, 1, 1] });
    for (let i = 0; i < 400; i++) assert.strictEqual(dest[i], Math.fround(a[i] * b[i]));
    await cuda.Context.synchronize();
    dest = new Float32Array(400);
    await multiply(cuda.Out(dest), cuda.pointer(aGpu.ptr + 4n), bGpu, { block: [399, 1, 1] });
    for (let i = 0; i < 399; i++) assert.strictEqual(dest[i], Math.fround(a[i + 1] * b[i]), `element ${i}`);
    aGpu.free();
    bGpu.free();
  });

  it('a kernel on a stream with async copies of page-locked memory (test_streamed_kernel)', async function () {
    const multiply = module.getFunction('multiply_them_2d');
    const a = cuda.pagelockedZeros([32, 8], Float32Array);
    const b = cuda.pagelockedZeros([32, 8], Float32Array);
    a.set(normals(256));
    b.set(normals(256));
    const expected = a.map((x, i) => Math.fround(x * b[i]));
    const aGpu = cuda.memAlloc(a.byteLength);
    const bGpu = cuda.memAlloc(b.byteLength);
    const stream = new cuda.Stream();
    cuda.memcpyHtoDAsync(aGpu, a, stream);
    cuda.memcpyHtoDAsync(bGpu, b, stream);
    await stream.synchronize();
    const dest = cuda.pagelockedEmptyLike(a);
    await multiply(cuda.Out(dest), aGpu, bGpu, { block: [32, 8, 1], stream });
    a.fill(0);
    b.fill(0);
    cuda.memcpyDtoHAsync(a, aGpu, stream);
    cuda.memcpyDtoHAsync(b, bGpu, stream);
    await stream.synchronize();
    assert.deepStrictEqual(dest, expected);
    assert.deepStrictEqual(
      a.map((x, i) => Math.fround(x * b[i])),
      expected,
    );
  });

  it('16000 bytes of dynamic shared memory', async function () {
    const reverse = module.getFunction('reverse_shared');
    const n = 4000;
    const input = Int32Array.from({ length: n }, () => randomInt(-1e6, 1e6));
    const output = new Int32Array(n);
    await reverse(cuda.In(input), cuda.Out(output), cuda.int32(n), { block: [256], shared: 16000 });
    for (let i = 0; i < n; i++) assert.strictEqual(output[i], 3 * input[n - 1 - i], `element ${i}`);
  });

  it('prepared invocation gives exactly 2×, then 4× past a 4-byte offset (test_prepared_invocation)', async function () {
    const a = normals(16);
    const aGpu = cuda.toDevice(a);
    const doublify = module.getFunction('doublify');
    assert.strictEqual(doublify.prepare('P'), doublify);
    doublify.preparedCall([1, 1], [4, 4, 1], aGpu, { shared: 20 });
    const doubled = new Float32Array(16);
    cuda.memcpyDtoH(doubled, aGpu);
    assert.deepStrictEqual(
      doubled,
      a.map((x) => 2 * x),
    );
    doublify.prepare('P');
    doublify.preparedCall([1, 1], [15, 1, 1], aGpu.ptr + 4n);
    const quadrupled = new Float32Array(16);
    cuda.memcpyDtoH(quadrupled, aGpu);
    assert.strictEqual(quadrupled[0], 2 * a[0]);
    for (let i = 1; i < 16; i++) assert.strictEqual(quadrupled[i], 4 * a[i], `element ${i}`);
    const stream = new cuda.Stream();
    doublify.preparedAsyncCall(1, [16], stream, aGpu);
    await stream.synchronize();
    const seconds = await doublify.preparedTimedCall(1, [16], aGpu)();
    assert.ok(seconds >= 0 && seconds < 1, `${seconds} s`);
    cuda.memcpyDtoH(quadrupled, aGpu);
    assert.strictEqual(quadrupled[0], 8 * a[0]);
    for (let i = 1; i < 16; i++) assert.strictEqual(quadrupled[i], 16 * a[i]);
    aGpu.free();
  });

  it('constant memory filled through getGlobal (test_constant_memory)', async function () {
    const copy = module.getFunction('copy_constant_into_global');
    const constArray = module.getGlobal('const_array');
    assert.strictEqual(typeof constArray.ptr, 'bigint');
    assert.strictEqual(constArray.size, 128);
    const host = Float32Array.from({ length: 32 }, () => randomInt(0, 255));
    const result = cuda.memAlloc(host.byteLength);
    cuda.memcpyHtoD(constArray, host);
    copy(result, { grid: [1, 1], block: [32, 1, 1] });
    const back = new Float32Array(32);
    cuda.memcpyDtoH(back, result);
    assert.deepStrictEqual(back, host);
    result.free();
  });

  it('vector types by value (test_vector_types): float3', async function () {
    const setThem = module.getFunction('set_them');
    const x = normals(3);
    const dest = new Float32Array(3 * 400);
    await setThem(cuda.Out(dest), x, { block: [400, 1, 1] });
    for (let i = 0; i < 400; i++) assert.deepStrictEqual(dest.subarray(3 * i, 3 * i + 3), x, `element ${i}`);
  });

  it('float4, int4 and double2 arrive 16-byte aligned, as C lays them out', async function () {
    const vectors = module.getFunction('vectors');
    const c = randomInt(-128, 127);
    const c2 = randomInt(-128, 127);
    const f = normals(4);
    const v = Int32Array.from({ length: 4 }, () => randomInt(-(2 ** 31), 2 ** 31 - 1));
    const d = Float64Array.from({ length: 2 }, () => Math.random() * 1e200);
    const fo = new Float32Array(4);
    const io = new Int32Array(4);
    const dout = new Float64Array(2);
    const co = new Int8Array(2);
    const args = [cuda.int8(c), f, v, cuda.int8(c2), d, cuda.Out(fo), cuda.Out(io), cuda.Out(dout), cuda.Out(co)];
    await vectors(...args, { block: 1 });
    assert.deepStrictEqual([fo, io, dout, [...co]], [f, v, d, [c, c2]]);
    // cudadrv's own layout (used where the driver cannot report one) agrees with the driver's
    const fields = args.map((arg, i) => kargs.fieldOf(kargs.classify(arg, i, null)));
    assert.deepStrictEqual(
      kargs.layout(fields, null, 'vectors').offsets,
      vectors.paramInfo().map((p) => p.offset),
    );
    assert.deepStrictEqual(
      vectors.paramInfo().map((p) => p.offset),
      [0, 16, 32, 48, 64, 80, 88, 96, 104],
    );
  });
});

describeGpu('kernel launches: arguments, In/Out/InOut, timing', function () {
  let module;
  before(function () {
    module = load({ source: SOURCE });
  });

  // Random values of every scalar type, the kernel's echo of them, and the expected bytes.
  function echoCase() {
    const halfBits = randomInt(0, 0x7bff) | (Math.random() < 0.5 ? 0x8000 : 0);
    const values = {
      int8: randomInt(-128, 127),
      uint8: randomInt(0, 255),
      int16: randomInt(-32768, 32767),
      uint16: randomInt(0, 65535),
      int32: randomInt(-(2 ** 31), 2 ** 31 - 1),
      uint32: randomInt(0, 2 ** 32 - 1),
      int64: BigInt.asIntN(64, BigInt(randomInt(0, 2 ** 48)) << 16n),
      uint64: (BigInt(randomInt(0, 2 ** 48)) << 16n) | 0xffffn,
      float16: halfValue(halfBits),
      float32: normals(1)[0],
      float64: Math.random() * 1e-300,
      bool: Math.random() < 0.5,
    };
    const pointer = BigInt(randomInt(1, 2 ** 40)) * 16n;
    const expected = Buffer.alloc(64);
    expected.writeInt8(values.int8, 0);
    expected.writeUInt8(values.uint8, 1);
    expected.writeInt16LE(values.int16, 2);
    expected.writeUInt16LE(values.uint16, 4);
    expected.writeInt32LE(values.int32, 8);
    expected.writeUInt32LE(values.uint32, 12);
    expected.writeBigInt64LE(values.int64, 16);
    expected.writeBigUInt64LE(values.uint64, 24);
    expected.writeUInt16LE(halfBits, 32);
    expected.writeFloatLE(values.float32, 36);
    expected.writeDoubleLE(values.float64, 40);
    expected.writeUInt8(values.bool ? 1 : 0, 48);
    expected.writeBigUInt64LE(pointer, 56);
    return { values, pointer, expected };
  }

  it('every scalar type round-trips through a kernel: typed scalars, prepared, bare numbers', async function () {
    const echo = module.getFunction('echo');
    const out = new Uint8Array(64);
    for (let round = 0; round < 5; round++) {
      const { values, pointer, expected } = echoCase();
      const typed = Object.entries(values).map(([type, value]) => cuda[type](value));
      await echo(...typed, cuda.pointer(pointer), cuda.Out(out), { block: 1 });
      assert.deepStrictEqual(Buffer.from(out), expected, 'typed scalars');
      out.fill(0);
      const bare = Object.values(values);
      bare[8] = cuda.float16(values.float16); // half_t: a struct, so its type is given
      await echo(...bare, pointer, cuda.Out(out), { block: 1 });
      assert.deepStrictEqual(Buffer.from(out), expected, 'bare numbers, typed by the parsed signature');
    }
    const outGpu = cuda.memAlloc(64);
    echo.prepare('bBhHiIqQefd?PP');
    const { values, pointer, expected } = echoCase();
    echo.preparedCall(1, 1, ...Object.values(values), pointer, outGpu);
    cuda.memcpyDtoH(out, outGpu);
    assert.deepStrictEqual(Buffer.from(out), expected, 'prepared');
    outGpu.free();
  });

  it('In, Out and InOut copy around the launch; with a stream, asynchronously', async function () {
    const doublify = module.getFunction('doublify');
    const a = normals(16);
    const original = a.slice();
    await doublify(cuda.InOut(a), { block: [4, 4] });
    assert.deepStrictEqual(
      a,
      original.map((x) => 2 * x),
    );
    const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    const b = normals(1000);
    const c = normals(1000);
    const dest = new Float32Array(1000);
    const multiply = module.getFunction('multiply_them');
    const pending = [];
    for (let start = 0; start < 1000; start += 200) {
      pending.push(
        multiply(
          cuda.Out(dest.subarray(start, start + 200)),
          cuda.In(b.subarray(start, start + 200)),
          cuda.In(c.subarray(start, start + 200)),
          { block: [200], stream },
        ),
      );
    }
    await Promise.all(pending);
    assert.deepStrictEqual(
      dest,
      b.map((x, i) => Math.fround(x * c[i])),
    );
  });

  it("timeKernel resolves to the kernel's time in seconds, after the Out data", async function () {
    const multiply = module.getFunction('multiply_them');
    const a = normals(256);
    const b = normals(256);
    const dest = new Float32Array(256);
    const seconds = await multiply(cuda.Out(dest), cuda.In(a), cuda.In(b), { block: [256], timeKernel: true });
    assert.strictEqual(typeof seconds, 'number');
    assert.ok(seconds >= 0 && seconds < 1, `${seconds} s`);
    assert.deepStrictEqual(
      dest,
      a.map((x, i) => Math.fround(x * b[i])),
    );
    const empty = module.getFunction('empty');
    const alone = await empty({ block: 1, timeKernel: true });
    assert.ok(alone >= 0 && alone < 1, `${alone} s`);
  });

  it('a managed TypedArray passes as its pointer; bare numbers take the parsed signature', async function () {
    const scale = module.getFunction('scale');
    const m = cuda.managedZeros(1000, Float32Array);
    const values = normals(1000);
    m.set(values);
    scale(m, 0.5, 1000, { block: [128], grid: [8] });
    await cuda.Context.synchronize();
    assert.deepStrictEqual(
      m,
      values.map((x) => x * 0.5),
    );
  });

  it('SourceModule is a full Module', async function () {
    const { SourceModule } = require('../../lib/compiler');
    const sm = new SourceModule(SOURCE);
    assert.ok(sm instanceof cuda.Module);
    const multiply = sm.getFunction('multiply_them');
    assert.ok(multiply instanceof cuda.Kernel);
    const a = normals(64);
    const dest = new Float32Array(64);
    await multiply(cuda.Out(dest), cuda.In(a), cuda.In(a), { block: [64] });
    assert.deepStrictEqual(
      dest,
      a.map((x) => Math.fround(x * x)),
    );
    sm.free();
  });
});

describeGpu('kernel launches: bad input', function () {
  let module;
  before(function () {
    module = load();
  });

  it("the driver's refusals are surfaced, and the context stays usable", async function () {
    const multiply = module.getFunction('multiply_them');
    const dev = cuda.Context.getDevice();
    const a = cuda.toDevice(new Float32Array(256));
    assert.throws(() => multiply(a, a, a, { block: 1, grid: [1, dev.maxGridDimY + 1] }), {
      name: 'LogicError',
      api: 'cuLaunchKernel',
    });
    assert.throws(() => multiply(a, a, a, { block: [dev.maxThreadsPerBlock + 1] }), {
      name: 'LogicError',
      api: 'cuLaunchKernel',
    });
    assert.throws(() => multiply(a, a, a, { block: 1, shared: dev.maxSharedMemoryPerBlockOptin + 1 }), {
      api: 'cuLaunchKernel',
    });
    assert.throws(() => multiply(a, a, { block: 1 }), {
      name: 'TypeError',
      message: "kernel 'multiply_them' takes 3 parameters, but 2 arguments were given",
    });
    assert.throws(() => multiply(a, a, cuda.int32(1), { block: 1 }), {
      name: 'TypeError',
      message: /parameter 3 takes 8 bytes, but argument 3 is int32/,
    });
    assert.throws(() => multiply(a, a, a), {
      name: 'TypeError',
      message: /the last argument must be the launch options/,
    });
    assert.throws(() => multiply(a, a, a, { grid: 1 }), { name: 'TypeError', message: /block is required/ });
    assert.throws(() => multiply(a, a, a, { block: [1, 1, 1, 1] }), { name: 'RangeError' });
    assert.throws(() => multiply(a, a, a, { block: [0] }), { name: 'RangeError' });
    assert.throws(() => multiply(a, a, a, { block: [2.5] }), { name: 'RangeError' });
    const dest = new Float32Array(4);
    await multiply(cuda.Out(dest), a, a, { block: 4 });
    assert.deepStrictEqual(dest, new Float32Array(4), 'zeros times zeros');
    a.free();
  });

  it('a freed module refuses getFunction and launches of its kernels', function () {
    const own = load();
    const empty = own.getFunction('empty');
    const prepared = own.getFunction('doublify').prepare('P');
    own.free();
    assert.throws(() => empty({ block: 1 }), { name: 'LogicError', message: /Module has been freed/ });
    assert.throws(() => prepared.preparedCall(1, 1, 0n), { name: 'LogicError', message: /Module has been freed/ });
    assert.throws(() => own.getFunction('empty'), {
      name: 'LogicError',
      message: 'this Module has been freed; load it again',
    });
    module.getFunction('empty')({ block: 1 });
  });
});
