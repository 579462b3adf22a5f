'use strict';
// Kernel arguments without a GPU: typed scalars, the C layout of parameter lists (byte by byte),
// prepare() formats, signatures parsed from source, and the argument checks that come first.
const assert = require('assert');
const cuda = require('../..');
const { parseKernelSignatures } = require('../../lib/kernel/formats');
const { float16Bits } = require('../../lib/kernel/scalars');
const { randomInt, randomBigInt, halfValue } = require('../support/kernel-data');

describe('typed scalars', function () {
  const integers = [
    ['int8', -128, 127],
    ['uint8', 0, 255],
    ['int16', -32768, 32767],
    ['uint16', 0, 65535],
    ['int32', -(2 ** 31), 2 ** 31 - 1],
    ['uint32', 0, 2 ** 32 - 1],
  ];

  it('integer constructors take their whole range and refuse one past it', function () {
    for (const [name, lo, hi] of integers) {
      assert.strictEqual(cuda[name](lo).value, lo, name);
      assert.strictEqual(cuda[name](hi).value, hi, name);
      assert.strictEqual(cuda[name](hi).type, name);
      assert.throws(() => cuda[name](hi + 1), {
        name: 'RangeError',
        message: new RegExp(`cuda\\.${name}\\(value\\) must be an integer from ${lo} to ${hi}`),
      });
      assert.throws(() => cuda[name](lo - 1), { name: 'RangeError' });
      assert.throws(() => cuda[name](1.5), { name: 'RangeError', message: /not 1\.5/ });
      assert.throws(() => cuda[name]('7'), { name: 'TypeError', message: /not the string "7"/ });
    }
  });

  it('64-bit integers take bigints (and safe integers), stored as bigints', function () {
    assert.strictEqual(cuda.uint64(1n).value, 1n);
    assert.strictEqual(cuda.uint64(2n ** 64n - 1n).value, 2n ** 64n - 1n);
    assert.strictEqual(cuda.int64(-(2n ** 63n)).value, -(2n ** 63n));
    assert.strictEqual(cuda.int64(-5).value, -5n);
    assert.throws(() => cuda.uint64(2n ** 64n), { name: 'RangeError', message: /uint64/ });
    assert.throws(() => cuda.uint64(-1n), { name: 'RangeError' });
    assert.throws(() => cuda.int64(2n ** 63n), { name: 'RangeError' });
    assert.throws(() => cuda.int64(2 ** 53), { name: 'RangeError', message: /safe integer/ });
    assert.throws(() => cuda.int64('1'), { name: 'TypeError' });
  });

  it('floats, bools and pointers', function () {
    assert.strictEqual(cuda.float32(0.1).value, 0.1);
    assert.strictEqual(cuda.float64(-2.5).format, 'd');
    assert.strictEqual(cuda.float16(1.5).format, 'e');
    assert.throws(() => cuda.float32('1'), { name: 'TypeError', message: /float32 \(a number\)/ });
    assert.strictEqual(cuda.bool(true).value, true);
    assert.strictEqual(cuda.bool(0).value, false);
    assert.throws(() => cuda.bool('yes'), { name: 'TypeError', message: /boolean/ });
    const allocation = { ptr: 0x7f0000001000n, size: 64 };
    const p = cuda.pointer(allocation);
    assert.strictEqual(p.value, 0x7f0000001000n);
    assert.strictEqual(p.memory, allocation, 'keeps the memory alive');
    assert.strictEqual(cuda.pointer(4096).value, 4096n);
    assert.throws(() => cuda.pointer(-1n), { name: 'RangeError' });
    assert.throws(() => cuda.pointer({}), { name: 'TypeError', message: /device memory/ });
    assert.throws(() => cuda.pointer(new Float32Array(4)), { name: 'TypeError', message: /host memory/ });
    assert.ok(cuda.int32(3) instanceof cuda.TypedScalar);
    assert.strictEqual(`${cuda.int32(3)}`, 'cuda.int32(3)');
    assert.strictEqual(+cuda.float64(2.5), 2.5);
  });

  it('every scalar type packs to its C bytes (random values, little-endian)', function () {
    for (let round = 0; round < 20; round++) {
      const values = {
        int8: randomInt(-128, 127),
        uint8: randomInt(0, 255),
        int16: randomInt(-32768, 32767),
        uint16: randomInt(0, 65535),
        int32: randomInt(-(2 ** 31), 2 ** 31 - 1),
        uint32: randomInt(0, 2 ** 32 - 1),
        int64: randomBigInt(64, true),
        uint64: randomBigInt(64, false),
        float32: Math.fround((Math.random() - 0.5) * 1e6),
        float64: (Math.random() - 0.5) * 1e300,
        bool: Math.random() < 0.5,
      };
      const names = Object.keys(values);
      const bytes = cuda.packArguments(names.map((n) => cuda[n](values[n])));
      const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
      // int8 0, uint8 1, int16 2, uint16 4, int32 8, uint32 12, int64 16, uint64 24, float32 32,
      // float64 40, bool 48
      assert.strictEqual(bytes.length, 49);
      assert.strictEqual(dv.getInt8(0), values.int8);
      assert.strictEqual(dv.getUint8(1), values.uint8);
      assert.strictEqual(dv.getInt16(2, true), values.int16);
      assert.strictEqual(dv.getUint16(4, true), values.uint16);
      assert.strictEqual(dv.getInt32(8, true), values.int32);
      assert.strictEqual(dv.getUint32(12, true), values.uint32);
      assert.strictEqual(dv.getBigInt64(16, true), values.int64);
      assert.strictEqual(dv.getBigUint64(24, true), values.uint64);
      assert.strictEqual(dv.getFloat32(32, true), values.float32);
      assert.strictEqual(dv.getFloat64(40, true), values.float64);
      assert.strictEqual(dv.getUint8(48), values.bool ? 1 : 0);
    }
  });

  it('float16 rounds to nearest even, once, with subnormals, infinities and NaN', function () {
    const cases = [
      [1, 0x3c00],
      [-2, 0xc000],
      [65504, 0x7bff],
      [65519.99, 0x7bff],
      [65520, 0x7c00],
      [2 ** -24, 0x0001],
      [2 ** -25, 0x0000],
      [3 * 2 ** -25, 0x0002],
      [2 ** -14, 0x0400],
      [2 ** -14 - 2 ** -25, 0x0400],
      [0.1, 0x2e66],
      [1 / 3, 0x3555],
      [1 + 2 ** -11, 0x3c00],
      [1 + 3 * 2 ** -11, 0x3c02],
      [1 + 2 ** -11 + 2 ** -40, 0x3c01],
      [-0, 0x8000],
      [Infinity, 0x7c00],
      [-Infinity, 0xfc00],
      [NaN, 0x7e00],
      [1e-10, 0],
    ];
    for (const [value, bits] of cases) {
      assert.strictEqual(float16Bits(value), bits, `${value} → 0x${bits.toString(16)}`);
      const packed = cuda.packArguments([cuda.float16(value)]);
      assert.strictEqual(packed.readUInt16LE(0), bits);
    }
    for (let i = 0; i < 2000; i++) {
      const bits = randomInt(0, 0xffff);
      if (((bits >> 10) & 0x1f) === 31) continue;
      assert.strictEqual(float16Bits(halfValue(bits)), bits, `0x${bits.toString(16)} round-trips`);
    }
  });
});

describe('parameter layout (C alignment)', function () {
  const char = cuda.int8(7);

  function offsetOf(view) {
    const bytes = cuda.packArguments([char, view]);
    return { bytes, offset: bytes.length - view.byteLength };
  }

  it('float4, int4 and double2 are 16-byte aligned (PyCUDA puts them at 4 or 8)', function () {
    const float4 = new Float32Array([1.5, -2, 3.25, 4]);
    const { bytes, offset } = offsetOf(float4);
    assert.strictEqual(offset, 16);
    assert.deepStrictEqual([...bytes.subarray(0, 16)], [7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepStrictEqual(new Float32Array(bytes.buffer.slice(bytes.byteOffset + 16, bytes.byteOffset + 32)), float4);
    assert.strictEqual(offsetOf(new Int32Array([1, -2, 3, 4])).offset, 16);
    const double2 = new Float64Array([Math.PI, -Math.E]);
    const packed = offsetOf(double2);
    assert.strictEqual(packed.offset, 16);
    assert.strictEqual(packed.bytes.readDoubleLE(16), Math.PI);
    assert.strictEqual(packed.bytes.readDoubleLE(24), -Math.E);
  });

  it('smaller vector types and structs align to their size or widest element', function () {
    assert.strictEqual(offsetOf(new Float32Array(2)).offset, 8, 'float2');
    assert.strictEqual(offsetOf(new Float32Array(3)).offset, 4, 'float3');
    assert.strictEqual(offsetOf(new Uint8Array(4)).offset, 4, 'uchar4');
    assert.strictEqual(offsetOf(new Uint8Array(3)).offset, 1, 'uchar3');
    assert.strictEqual(offsetOf(new Int16Array(2)).offset, 4, 'short2');
    assert.strictEqual(offsetOf(new Float64Array(3)).offset, 8, 'double3');
    assert.strictEqual(offsetOf(new DataView(new ArrayBuffer(12))).offset, 1, 'a DataView: bytes');
  });

  it('scalars align to their size; pointers to 8', function () {
    const bytes = cuda.packArguments([
      cuda.int16(-1),
      cuda.int8(2),
      cuda.int32(3),
      cuda.int8(4),
      cuda.float64(0.5),
      cuda.uint8(5),
      cuda.pointer(0x1122334455667788n),
      cuda.bool(true),
    ]);
    assert.deepStrictEqual(
      [...bytes],
      [
        0xff, 0xff, 2, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 5, 0, 0, 0, 0, 0, 0, 0,
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 1,
      ],
    );
  });

  it('device memory passes its address', function () {
    const bytes = cuda.packArguments([
      cuda.int32(1),
      { ptr: 0xabcdef00n },
      { getPointer: () => 0x1000 },
      cuda.pointer(9n),
    ]);
    assert.strictEqual(bytes.length, 32);
    assert.strictEqual(bytes.readBigUInt64LE(8), 0xabcdef00n);
    assert.strictEqual(bytes.readBigUInt64LE(16), 0x1000n);
    assert.strictEqual(bytes.readBigUInt64LE(24), 9n);
  });

  it("a TypedScalar of another type holding an object is named in the TypeError, not the engine's words", function () {
    const odd = new cuda.TypedScalar(Object.create(null)); // String() of it throws
    Object.defineProperty(odd, 'type', { value: 'int16' });
    assert.throws(() => cuda.packArguments([cuda.int8(odd)]), {
      name: 'TypeError',
      message: /must be int8, not cuda\.int16\(.*\) \(int16\)/,
    });
  });

  it('more arguments than a kernel takes is a RangeError at once (a sparse array of 2**32-1 hung it)', function () {
    const started = Date.now();
    for (const length of [2 ** 32 - 1, 32765]) {
      assert.throws(() => cuda.packArguments(new Array(length)), {
        name: 'RangeError',
        message: `packArguments(args): a kernel takes at most 32764 arguments (32,764 bytes of parameters), not ${length}`,
      });
    }
    assert.ok(Date.now() - started < 1000);
    assert.strictEqual(cuda.packArguments(new Array(32764).fill(cuda.int8(7))).length, 32764);
  });

  it('prepare formats: struct characters with repeat counts, dtype names, TypedArray constructors', function () {
    const a = cuda.packArguments('bP', [-1, { ptr: 0x10n }]);
    assert.deepStrictEqual([...a], [0xff, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0]);
    const b = cuda.packArguments('2i f', [1, -2, 0.5]);
    assert.deepStrictEqual([b.readInt32LE(0), b.readInt32LE(4), b.readFloatLE(8)], [1, -2, 0.5]);
    const c = cuda.packArguments(['float32', Float64Array, 'uint16', '?', 'e'], [0.25, -1e100, 65535, true, 1]);
    assert.strictEqual(c.length, 22);
    assert.deepStrictEqual(
      [c.readFloatLE(0), c.readDoubleLE(8), c.readUInt16LE(16), c[18], c.readUInt16LE(20)],
      [0.25, -1e100, 65535, 1, 0x3c00],
    );
    const d = cuda.packArguments('lLqQnN', [-1, 2n, -3n, 4, -5n, 6n]);
    assert.deepStrictEqual(
      [0, 8, 16, 24, 32, 40].map((o) => d.readBigInt64LE(o)),
      [-1n, 2n, -3n, 4n, -5n, 6n],
    );
    const e = cuda.packArguments('hHB', [-32768, 65535, 255]);
    assert.deepStrictEqual([e.readInt16LE(0), e.readUInt16LE(2), e[4]], [-32768, 65535, 255]);
    assert.strictEqual(cuda.packArguments('', []).length, 0);
  });

  it('prepared values are checked, naming the argument', function () {
    assert.throws(() => cuda.packArguments('ib', [1, 300]), {
      name: 'RangeError',
      message: /^argument 2 must be an integer from -128 to 127 \(int8\), not 300$/,
    });
    assert.throws(() => cuda.packArguments('i', [1.5]), { name: 'RangeError', message: /argument 1/ });
    assert.throws(() => cuda.packArguments('I', [-1]), { name: 'RangeError', message: /from 0 to 4294967295/ });
    assert.throws(() => cuda.packArguments('f', ['x']), { name: 'TypeError', message: /argument 1 must be float32/ });
    assert.throws(() => cuda.packArguments('q', [2 ** 53]), { name: 'RangeError', message: /safe integer/ });
    assert.throws(() => cuda.packArguments('Q', [-1n]), { name: 'RangeError' });
    assert.throws(() => cuda.packArguments('P', [{}]), {
      name: 'TypeError',
      message: /argument 1 must be device memory/,
    });
    assert.throws(() => cuda.packArguments('P', [new Float32Array(2)]), { name: 'TypeError', message: /host memory/ });
    assert.throws(() => cuda.packArguments('i', [cuda.float32(1)]), {
      name: 'TypeError',
      message: /must be int32, not cuda\.float32\(1\)/,
    });
    assert.strictEqual(cuda.packArguments('i', [cuda.int32(-7)]).readInt32LE(0), -7, 'a typed scalar of the same type');
    assert.throws(() => cuda.packArguments('ii', [1]), { name: 'TypeError', message: /2 fields but 1 values/ });
  });

  it('bad formats are TypeErrors naming what is wrong', function () {
    assert.throws(() => cuda.packArguments('iz', [1, 2]), {
      name: 'TypeError',
      message: /unknown format character "z" in "iz"/,
    });
    assert.throws(() => cuda.packArguments('@i', [1]), { name: 'TypeError', message: /"@"/ });
    assert.throws(() => cuda.packArguments(42, [1]), { name: 'TypeError', message: /format must be/ });
    assert.throws(() => cuda.packArguments([{}], [1]), { name: 'TypeError', message: /format item/ });
  });

  it('arguments that cannot be passed are TypeErrors naming the argument', function () {
    assert.throws(() => cuda.packArguments([cuda.int32(1), 5]), {
      name: 'TypeError',
      message:
        /^argument 2 is a bare number \(5\) and the kernel's parameter types are not known; wrap it in the constructor of its C type: cuda\.int32\(n\)/,
    });
    assert.throws(() => cuda.packArguments([7n]), { name: 'TypeError', message: /argument 1 is a bare bigint/ });
    assert.throws(() => cuda.packArguments(['x']), {
      name: 'TypeError',
      message: /argument 1 cannot be passed to a kernel: the string "x"/,
    });
    assert.throws(() => cuda.packArguments([null]), { name: 'TypeError', message: /argument 1 cannot be passed/ });
    assert.throws(() => cuda.packArguments([{}]), {
      name: 'TypeError',
      message: /argument 1 cannot be passed to a kernel: an Object/,
    });
    assert.throws(() => cuda.packArguments([cuda.In(new Float32Array(1))]), {
      name: 'TypeError',
      message: /In\/Out\/InOut/,
    });
    assert.throws(() => cuda.packArguments(5), { name: 'TypeError', message: /array of kernel arguments/ });
    assert.deepStrictEqual([...cuda.packArguments([true, false])], [1, 0], 'booleans are C bools');
  });
});

describe('In, Out and InOut', function () {
  it('wrap TypedArrays and DataViews, with or without new', function () {
    const a = new Float32Array(4);
    for (const Handler of [cuda.In, cuda.Out, cuda.InOut]) {
      const made = new Handler(a);
      const called = Handler(new DataView(a.buffer));
      assert.ok(made instanceof Handler && made instanceof cuda.ArgumentHandler, Handler.name);
      assert.ok(called instanceof Handler);
      assert.strictEqual(made.array, a);
      assert.throws(() => Handler([1, 2]), {
        name: 'TypeError',
        message: new RegExp(`^${Handler.name}\\(array\\): array must be a TypedArray or DataView, not an Array`),
      });
      assert.throws(() => Handler(new Float32Array(0)), { name: 'RangeError', message: /must not be empty/ });
    }
    assert.deepStrictEqual([cuda.In(a).copyIn, cuda.In(a).copyOut], [true, false]);
    assert.deepStrictEqual([cuda.Out(a).copyIn, cuda.Out(a).copyOut], [false, true]);
    assert.deepStrictEqual([cuda.InOut(a).copyIn, cuda.InOut(a).copyOut], [true, true]);
  });
});

describe('kernel signatures parsed from CUDA C++', function () {
  it('reads the parameter types of each __global__ function', function () {
    const source = `
      #define KERNEL __global__ void broken(
      // __global__ void commented(int x)
      /* __global__ void commented2(int x) */
      extern "C" __global__ void __launch_bounds__(256, 2) saxpy(int n, float a,
          const float * __restrict__ x, float *y) { const char *s = "__global__ void no(int)"; }
      extern "C" {
      __global__ void mixed(unsigned int u, long long q, unsigned char c, double d, bool b,
                            size_t z, int64_t i64, uint16_t h, __half e, float4 v, const int &r) {}
      }
      __global__ void empty() {}
      __global__ void voided(void) {}
      __global__ void twice(int a);
      __global__ void twice(int a) {}
      __global__ void overloaded(int a) {}
      __global__ void overloaded(float a) {}
      template <typename T> __global__ void templated(T x) {}
      namespace ns { template <int N>
      __global__ void templated2(int x) {} }`;
    const s = parseKernelSignatures(source);
    assert.deepStrictEqual([...s.keys()].sort(), ['empty', 'mixed', 'saxpy', 'twice', 'voided']);
    assert.deepStrictEqual(
      s.get('saxpy').map((p) => p.char),
      ['i', 'f', 'P', 'P'],
    );
    assert.strictEqual(s.get('saxpy')[2].text, 'const float * __restrict__ x');
    assert.deepStrictEqual(
      s.get('mixed').map((p) => p.char),
      ['I', 'q', 'B', 'd', '?', 'N', 'q', 'H', 'e', null, null],
    );
    assert.deepStrictEqual(s.get('empty'), []);
    assert.deepStrictEqual(s.get('voided'), []);
    assert.deepStrictEqual(
      s.get('twice').map((p) => p.char),
      ['i'],
    );
  });
});

describe('modules and kernels: checks before the driver', function () {
  it('Kernel, TextureReference and SurfaceReference come from a module', function () {
    assert.throws(() => new cuda.Kernel(), { name: 'TypeError', message: /module\.getFunction/ });
    assert.throws(() => new cuda.TextureReference(), { name: 'TypeError', message: /module\.getTexref/ });
    assert.throws(() => new cuda.SurfaceReference(), { name: 'TypeError', message: /module\.getSurfref/ });
  });

  it('refuses bad images and options with TypeError or RangeError', function () {
    assert.throws(() => new cuda.Module(42), { name: 'TypeError', message: /image must be PTX, cubin or fatbin/ });
    assert.throws(() => new cuda.Module('x', { options: { notAnOption: 1 } }), {
      name: 'RangeError',
      message: /unknown JIT option 'notAnOption'/,
    });
    assert.throws(() => new cuda.Module('x', { options: [[999, 1]] }), {
      name: 'RangeError',
      message: /member of cuda\.JitOption/,
    });
    assert.throws(() => new cuda.Module('x', { options: [cuda.JitOption.MAX_REGISTERS] }), {
      name: 'TypeError',
      message: /\[JitOption\.X, value\] pair/,
    });
    assert.throws(() => new cuda.Module('x', { options: { maxRegisters: -1 } }), {
      name: 'RangeError',
      message: /JIT option 0 value/,
    });
    assert.throws(() => new cuda.Module('x', { options: 'fast' }), { name: 'TypeError' });
    assert.throws(() => new cuda.Module('x', { options: [[cuda.JitOption.TARGET, cuda.JitTarget.COMPUTE_10]] }), {
      name: 'RangeError',
      message: /COMPUTE_10 is no longer supported/,
    });
    assert.throws(() => new cuda.Module('x', { messageHandler: 'log' }), {
      name: 'TypeError',
      message: /messageHandler must be a function/,
    });
    assert.throws(() => new cuda.Module('x', { source: 5 }), { name: 'TypeError', message: /source must be/ });
    assert.throws(() => cuda.moduleFromFile(5), { name: 'TypeError', message: /path must be a string/ });
    assert.throws(() => cuda.moduleFromBuffer(null), { name: 'TypeError', message: /image must be/ });
  });
});
