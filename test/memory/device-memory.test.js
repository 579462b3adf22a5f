'use strict';
const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');
const cuda = require('../..');
const binding = require('../../lib/internal/binding');
const { describeGpu } = require('../support/gpu');
const { random, referenceCopy, peerBoxCopy, peerBoxReference } = require('../support/copy-data');

// A stand-in for device memory of a known size at a fake address: argument checks run before any
// driver call, so they can be tested here.
const fakeDevice = (size) => ({ ptr: 0x7f0000001000n, size });

describe('memory arguments (checked before the driver)', function () {
  it('memAlloc refuses sizes that are not positive integers', function () {
    assert.throws(() => cuda.memAlloc('16'), { name: 'TypeError', message: /bytes must be an integer number/ });
    for (const bad of [-1, 1.5, NaN, Infinity, -1n, 2n ** 60n]) {
      assert.throws(() => cuda.memAlloc(bad), { name: 'RangeError', message: /bytes must be/ });
    }
    assert.throws(() => cuda.memAlloc(0), { name: 'RangeError', message: /bytes must be at least 1/ });
    assert.throws(() => cuda.memAllocPitch(16, 4, 3), { name: 'RangeError', message: /accessSize must be 4, 8 or 16/ });
    assert.throws(() => cuda.memAllocPitch(0, 4), { name: 'RangeError', message: /widthInBytes must be at least 1/ });
    assert.throws(() => cuda.memAllocAsync(16, 'stream'), { name: 'TypeError', message: /stream must be a Stream/ });
    assert.throws(() => cuda.memAllocAsync(16, null, { pool: {} }), {
      name: 'TypeError',
      message: /pool must be a MemoryPool/,
    });
  });

  it('DeviceAllocation and IPCMemoryHandle are not made by hand', function () {
    assert.throws(() => new cuda.DeviceAllocation(), { name: 'TypeError', message: /use memAlloc/ });
    assert.throws(() => new cuda.IPCMemoryHandle('x'), { name: 'TypeError', message: /memGetIpcHandle/ });
    assert.throws(() => new cuda.IPCMemoryHandle(Buffer.alloc(10)), { name: 'RangeError', message: /64 bytes/ });
    assert.throws(() => new cuda.IPCMemoryHandle(Buffer.alloc(64), 7), { name: 'RangeError', message: /flags/ });
  });

  it('copies refuse what is not device memory or not a host buffer', function () {
    const host = new Uint8Array(8);
    for (const bad of [undefined, null, 'x', {}, 1.5]) {
      assert.throws(
        () => cuda.memcpyHtoD(bad, host),
        (e) => /dest must be/.test(e.message) && (e instanceof TypeError || e instanceof RangeError),
      );
    }
    assert.throws(() => cuda.memcpyHtoD(-1, host), { name: 'RangeError', message: /dest must be a non-negative/ });
    assert.throws(() => cuda.memcpyHtoD(fakeDevice(8), 'bytes'), {
      name: 'TypeError',
      message: /src must be a TypedArray, DataView, Buffer, ArrayBuffer or SharedArrayBuffer/,
    });
    assert.throws(() => cuda.memcpyDtoH([1, 2], fakeDevice(8)), {
      name: 'TypeError',
      message: /dest must be a TypedArray/,
    });
    assert.throws(() => cuda.memcpyDtoH(host, {}), { name: 'TypeError', message: /src must be device memory/ });
    assert.throws(() => cuda.memcpyHtoDAsync(fakeDevice(8), host, 'stream'), {
      name: 'TypeError',
      message: /stream must be a Stream/,
    });
    assert.throws(() => cuda.memcpyDtoHAsync(host, fakeDevice(8), {}), {
      name: 'TypeError',
      message: /stream must be a Stream/,
    });
    assert.throws(() => cuda.toDevice([1, 2, 3]), { name: 'TypeError', message: /array must be a TypedArray/ });
    assert.throws(() => cuda.toDevice(new Float32Array(0)), { name: 'RangeError', message: /empty/ });
  });

  it('copies are checked against the size of the device memory', function () {
    const dest = fakeDevice(15);
    assert.throws(() => cuda.memcpyHtoD(dest, new Float32Array(4)), {
      name: 'RangeError',
      message: /16 bytes do not fit in 15 bytes/,
    });
    assert.throws(() => cuda.memcpyHtoD(dest, new ArrayBuffer(16)), { name: 'RangeError' });
    assert.throws(() => cuda.memcpyHtoD(dest, new DataView(new ArrayBuffer(32), 8, 16)), { name: 'RangeError' });
    assert.throws(() => cuda.memcpyDtoH(new BigInt64Array(2), dest), {
      name: 'RangeError',
      message: /16 bytes do not fit/,
    });
    assert.throws(() => cuda.memcpyHtoDAsync(dest, Buffer.alloc(16)), { name: 'RangeError' });
    assert.throws(() => cuda.memcpyDtoHAsync(Buffer.alloc(16), dest), { name: 'RangeError' });
    assert.throws(() => cuda.memcpyDtoD(fakeDevice(8), fakeDevice(16)), { name: 'RangeError', message: /dest/ });
    assert.throws(() => cuda.memcpyDtoD(fakeDevice(16), fakeDevice(8), 9), { name: 'RangeError', message: /src/ });
    assert.throws(() => cuda.memcpyDtoD(fakeDevice(16), 0x1000n), { name: 'TypeError', message: /size is required/ });
    assert.throws(() => cuda.memcpyDtoDAsync(fakeDevice(16), fakeDevice(16), -1), {
      name: 'RangeError',
      message: /size/,
    });
    assert.throws(() => cuda.fromDevice(fakeDevice(15), 4, 'float32'), {
      name: 'RangeError',
      message: /16 bytes do not fit in 15/,
    });
    assert.throws(() => cuda.fromDeviceLike(fakeDevice(15), new Int32Array(4)), { name: 'RangeError' });
  });

  it('fromDevice checks shape and dtype; fromDeviceLike wants a TypedArray', function () {
    assert.throws(() => cuda.fromDevice(fakeDevice(64), [2, -2], 'float32'), { name: 'RangeError', message: /shape/ });
    assert.throws(() => cuda.fromDevice(fakeDevice(64), 4, 'float128'), { name: 'TypeError', message: /dtype/ });
    // the fuzzer's: more elements than a TypedArray holds was the engine's RangeError
    assert.throws(() => cuda.fromDevice(2n ** 40n, 2 ** 32 + 1, 'uint16'), {
      name: 'RangeError',
      message: /^fromDevice\(\): a Uint16Array of 4294967297 elements cannot be made \(Invalid typed array length/,
    });
    assert.throws(() => cuda.fromDeviceLike(fakeDevice(64), [1, 2]), { name: 'TypeError', message: /TypedArray/ });
    assert.throws(() => cuda.fromDeviceLike(fakeDevice(64), new DataView(new ArrayBuffer(4))), { name: 'TypeError' });
  });

  it('peer copies want Context objects', function () {
    assert.throws(() => cuda.memcpyPeer(fakeDevice(8), fakeDevice(8), 8, {}, {}), {
      name: 'TypeError',
      message: /destContext must be a Context/,
    });
    assert.throws(() => cuda.memcpyPeerAsync(fakeDevice(8), fakeDevice(8), 16), { name: 'RangeError' });
    assert.throws(() => cuda.memcpyPeerAsync(fakeDevice(8), fakeDevice(8), 8, undefined, undefined, 'x'), {
      name: 'TypeError',
      message: /stream/,
    });
  });

  it('memsets check values, counts and extents', function () {
    const dest = fakeDevice(16);
    assert.throws(() => cuda.memsetD8(dest, 256, 1), {
      name: 'RangeError',
      message: /value must be an integer from -128 to 255/,
    });
    assert.throws(() => cuda.memsetD16(dest, -32769, 1), { name: 'RangeError', message: /value/ });
    assert.throws(() => cuda.memsetD32(dest, 2 ** 32, 1), { name: 'RangeError', message: /value/ });
    assert.throws(() => cuda.memsetD32(dest, 1.5, 1), { name: 'RangeError', message: /value/ });
    assert.throws(() => cuda.memsetD8(dest, '1', 1), { name: 'TypeError', message: /value/ });
    assert.throws(() => cuda.memsetD8(dest, 1, 17), { name: 'RangeError', message: /17 bytes do not fit in 16/ });
    assert.throws(() => cuda.memsetD16(dest, 1, 9), { name: 'RangeError', message: /18 bytes/ });
    assert.throws(() => cuda.memsetD32Async(dest, 1, 5), { name: 'RangeError', message: /20 bytes/ });
    assert.throws(() => cuda.memsetD32(dest, 1, -1), { name: 'RangeError', message: /count/ });
    assert.throws(() => cuda.memsetD8Async(dest, 1, 1, 'x'), { name: 'TypeError', message: /stream/ });
    assert.throws(() => cuda.memsetD2D8(fakeDevice(64), 4, 0, 8, 2), {
      name: 'RangeError',
      message: /pitch 4 is less than a row/,
    });
    assert.throws(() => cuda.memsetD2D32(fakeDevice(64), 16, 0, 4, 5), {
      name: 'RangeError',
      message: /80 bytes do not fit in 64/,
    });
    assert.throws(() => cuda.memsetD2D16Async(fakeDevice(64), 16, 0, 4, 2, 5), {
      name: 'TypeError',
      message: /stream/,
    });
  });

  it('PointerHolderBase: subclasses provide getPointer(), and size bounds asBuffer', function () {
    class Bare extends cuda.PointerHolderBase {}
    assert.throws(() => new Bare().ptr, { name: 'TypeError', message: /Bare must implement getPointer/ });
    assert.throws(() => cuda.memcpyHtoD(new Bare(), new Uint8Array(1)), { name: 'TypeError', message: /getPointer/ });
    class Holder extends cuda.PointerHolderBase {
      constructor() {
        super();
        this.size = 32;
      }

      getPointer() {
        return 0x1000;
      }
    }
    const holder = new Holder();
    assert.strictEqual(holder.ptr, 0x1000n);
    assert.throws(() => holder.asBuffer(16, 17), { name: 'RangeError', message: /reaches past the 32 bytes/ });
    assert.throws(() => holder.asBuffer(-1), { name: 'RangeError', message: /size/ });
    assert.throws(() => cuda.memcpyDtoH(new Uint8Array(33), holder), {
      name: 'RangeError',
      message: /33 bytes do not fit in 32/,
    });
  });

  it('Memcpy2D/3D refuse missing sides, bad fields and copies past a buffer', function () {
    const copy = new cuda.Memcpy2D();
    assert.throws(() => copy.run(), {
      name: 'LogicError',
      message: 'src: call setSrcHost(), ...Device(), ...Array() or ...Unified() before run()',
    });
    copy.setSrcHost(new Uint8Array(100));
    copy.setDstDevice(fakeDevice(100));
    copy.srcPitch = 10;
    copy.dstPitch = 10;
    copy.widthInBytes = 10;
    copy.height = 11;
    assert.throws(() => copy.run(), { name: 'RangeError', message: /reaches byte 110 of src, which holds 100/ });
    copy.height = 10;
    copy.dstY = 1;
    assert.throws(() => copy.run(), { name: 'RangeError', message: /reaches byte 110 of dst, which holds 100/ });
    copy.dstY = -1;
    assert.throws(() => copy.run(), { name: 'RangeError', message: /dstY/ });
    copy.dstY = 0;
    assert.throws(() => copy.run('stream'), {
      name: 'TypeError',
      message: /run\(\) takes a Stream, null or \{ aligned \}/,
    });
    assert.throws(() => copy.setSrcDevice('x'), { name: 'TypeError', message: /srcDevice must be device memory/ });
    assert.throws(() => copy.setDstHost(42), { name: 'TypeError', message: /dstHost must be/ });
    const copy3 = new cuda.Memcpy3D();
    copy3.setSrcHost(new Uint8Array(1000));
    copy3.setDstHost(new Uint8Array(1000));
    Object.assign(copy3, {
      srcPitch: 10,
      srcHeight: 10,
      dstPitch: 10,
      dstHeight: 10,
      widthInBytes: 10,
      height: 10,
      depth: 10,
    });
    copy3.srcZ = 1;
    assert.throws(() => copy3.run(), { name: 'RangeError', message: /reaches byte 1100 of src/ });
    const peer = new cuda.Memcpy3DPeer();
    assert.throws(() => peer.setSrcContext({}), { name: 'TypeError', message: /context must be a Context/ });
  });

  it('the addon checks host extents of 2D/3D copies again, whatever lib/ passed', function () {
    const F = binding.layouts.copy;
    const fields = new BigUint64Array(F.count);
    fields[F.type] = BigInt(cuda.MemoryType.HOST);
    fields[F.pitch] = 16n;
    fields[F.side + F.type] = BigInt(cuda.MemoryType.DEVICE);
    fields[F.side + F.device] = 0x1000n;
    fields[F.side + F.pitch] = 16n;
    fields[F.width] = 16n;
    fields[F.rows] = 5n;
    fields[F.depth] = 1n;
    assert.throws(() => binding.memcpy2DUnaligned(fields, new Uint8Array(79), undefined), {
      name: 'RangeError',
      message: /src: the copy reaches past the end of the host buffer/,
    });
    // A 2D copy has no third dimension: a depth of 0 in the fields skipped this check while the
    // copy went ahead (ASan: heap-buffer-overflow WRITE in memcpy_2d_unaligned), and so does a z.
    for (const [field, value] of [
      ['depth', 0n],
      ['z', 2n ** 40n],
    ]) {
      fields[F[field]] = value;
      for (const copy2D of [binding.memcpy2DUnaligned, binding.memcpy2D]) {
        assert.throws(() => copy2D(fields, new Uint8Array(16), undefined, undefined, undefined), {
          name: 'RangeError',
          message: /src: the copy reaches past the end of the host buffer/,
        });
      }
      fields[F[field]] = field === 'depth' ? 1n : 0n;
    }
    const copy = new cuda.Memcpy2D();
    copy.setSrcHost(new Uint8Array(4096 * 1024));
    copy.setDstHost(new Uint8Array(16));
    Object.assign(copy, { srcPitch: 4096, dstPitch: 4096, widthInBytes: 4096, height: 1024 });
    copy._depth = () => 0; // what a subclass may do
    for (const aligned of [false, true]) {
      assert.throws(() => copy.run({ aligned }), {
        name: 'RangeError',
        message: /dest: the copy reaches past the end/,
      });
    }
    fields[F.pitch] = 2n ** 62n; // a pitch whose product overflows
    assert.throws(() => binding.memcpy3D(fields, new Uint8Array(80), undefined, undefined, undefined), {
      name: 'RangeError',
      message: 'src: the copy reaches past 2**64 bytes',
    });
    fields[F.type] = BigInt(cuda.MemoryType.ARRAY); // the array comes in the host buffer's place
    assert.throws(() => binding.memcpy2D(fields, new Uint8Array(80), undefined, undefined, undefined), {
      name: 'TypeError',
      message: 'expected a CudaArray',
    });
    fields[F.type] = 5n; // no such memory type
    assert.throws(() => binding.memcpy2D(fields, new Uint8Array(80), undefined, undefined, undefined), {
      name: 'RangeError',
      message: 'src memory type must be host, device, array or unified',
    });
    assert.throws(() => binding.memcpy2D(new Float64Array(F.count), undefined, undefined), {
      name: 'TypeError',
      message: /BigUint64Array/,
    });
    assert.throws(() => binding.memcpyHtoD(0x1000n, [1, 2]), {
      name: 'TypeError',
      message: /src must be a TypedArray/,
    });
  });

  it('the addon reads addresses as safe integers or 64-bit unsigned bigints, whatever lib/ passed', function () {
    // An address that passes goes on to the next argument, whose check fails.
    const next = { name: 'TypeError', message: /src must be a TypedArray/ };
    for (const address of [0, 2 ** 53 - 1, 0n, 2n ** 63n + 5n, 2n ** 64n - 1n]) {
      assert.throws(() => binding.memcpyHtoD(address, [1, 2]), next, String(address));
    }
    const range = { name: 'RangeError', message: 'dest must be from 0 to 2**64 - 1' };
    for (const address of [-1n, -(2n ** 63n), -(2n ** 70n), 2n ** 64n, 2n ** 70n]) {
      assert.throws(() => binding.memcpyHtoD(address, [1, 2]), range, String(address));
    }
    for (const address of [-1, 0.5, 2 ** 53, NaN, Infinity]) {
      assert.throws(() => binding.memcpyHtoD(address, [1, 2]), {
        name: 'RangeError',
        message: 'dest must be an integer in range',
      });
    }
    for (const address of ['1', null, undefined, {}]) {
      assert.throws(() => binding.memcpyHtoD(address, [1, 2]), {
        name: 'TypeError',
        message: 'dest must be a number or a bigint',
      });
    }
  });
});

describeGpu('device memory', function () {
  it('memAlloc gives ptr, size and context; free() twice is fine; a freed allocation is a LogicError', function () {
    const memory = cuda.memAlloc(1000);
    assert.ok(memory instanceof cuda.DeviceAllocation);
    assert.ok(memory instanceof cuda.PointerHolderBase);
    assert.strictEqual(typeof memory.ptr, 'bigint');
    assert.ok(memory.ptr > 0n);
    assert.strictEqual(memory.getPointer(), memory.ptr);
    assert.strictEqual(memory.size, 1000);
    assert.strictEqual(memory.context, cuda.Context.getCurrent());
    assert.match(String(memory), /^DeviceAllocation\(0x[0-9a-f]+, 1000 bytes\)$/);
    memory.free();
    memory.free();
    assert.throws(() => memory.ptr, { name: 'LogicError', message: /DeviceAllocation has been freed/ });
    assert.throws(() => cuda.memcpyHtoD(memory, new Uint8Array(4)), { name: 'LogicError' });
    assert.throws(() => memory.slice(0, 4), { name: 'LogicError' });
    const disposed = cuda.memAlloc(4);
    disposed[Symbol.dispose]();
    assert.throws(() => disposed.ptr, { name: 'LogicError' });
  });

  it('memGetInfo reports free and total bytes; a freed allocation is returned', function () {
    const { free, total } = cuda.memGetInfo();
    const deviceMemory = new cuda.Device(0).totalMemory();
    assert.ok(total <= deviceMemory && total > deviceMemory * 0.9, `total ${total} of ${deviceMemory}`);
    assert.ok(free > 0 && free <= total);
    const big = cuda.memAlloc(256 << 20);
    assert.ok(cuda.memGetInfo().free <= free - (256 << 20) + (64 << 20));
    big.free();
    assert.ok(cuda.memGetInfo().free >= free - (64 << 20));
  });

  it('HtoD and DtoH copy every byte, through slices at odd offsets, and from every buffer kind', function () {
    const data = random(4099);
    const memory = cuda.memAlloc(4099);
    cuda.memcpyHtoD(memory, data);
    const back = Buffer.alloc(4099);
    cuda.memcpyDtoH(back, memory);
    assert.ok(back.equals(data));

    const piece = random(1001);
    cuda.memcpyHtoD(memory.slice(13, 1001), piece);
    const expected = Buffer.from(data);
    piece.copy(expected, 13);
    cuda.memcpyDtoH(back, memory);
    assert.ok(back.equals(expected));
    assert.ok(Buffer.from(cuda.fromDevice(memory.slice(7), 4092, 'uint8')).equals(expected.subarray(7)));

    const words = new Uint8Array(random(64));
    cuda.memcpyHtoD(memory.slice(101), new DataView(words.buffer, words.byteOffset + 3, 40));
    cuda.memcpyHtoD(memory.slice(301), words.buffer.slice(words.byteOffset, words.byteOffset + 64));
    const shared = new SharedArrayBuffer(24);
    new Uint8Array(shared).set(words.subarray(0, 24));
    cuda.memcpyHtoD(memory.slice(501), shared);
    assert.deepStrictEqual(cuda.fromDevice(memory.slice(101), 40, 'uint8'), words.subarray(3, 43));
    assert.deepStrictEqual(cuda.fromDevice(memory.slice(301), 64, 'uint8'), words);
    assert.deepStrictEqual(cuda.fromDevice(memory.slice(501), 24, 'uint8'), words.subarray(0, 24));
    const out = new SharedArrayBuffer(24);
    cuda.memcpyDtoH(out, memory.slice(501));
    assert.deepStrictEqual(new Uint8Array(out), words.subarray(0, 24));
    memory.free();
  });

  it('toDevice / fromDevice / fromDeviceLike keep dtype and shape', function () {
    const values = Float32Array.from(random(257), (b, i) => b * 1.5 - i);
    const memory = cuda.toDevice(values);
    assert.strictEqual(memory.size, 257 * 4);
    assert.deepStrictEqual(cuda.fromDevice(memory, 257, Float32Array), values);
    assert.deepStrictEqual(cuda.fromDevice(memory, [257], 'float32'), values);
    assert.deepStrictEqual(cuda.fromDeviceLike(memory, values), values);
    const bigs = new BigUint64Array(Uint8Array.from(random(80)).buffer);
    assert.deepStrictEqual(cuda.fromDevice(cuda.toDevice(bigs), [2, 5], 'uint64'), bigs);
    assert.deepStrictEqual(cuda.fromDevice(memory.ptr, 0, 'int8'), new Int8Array(0));
  });

  it('slices keep their parent alive, are bounds-checked, and release only themselves', function () {
    const parent = cuda.memAlloc(64);
    const slice = parent.slice(8, 16);
    assert.strictEqual(slice.ptr, parent.ptr + 8n);
    assert.strictEqual(slice.size, 16);
    assert.strictEqual(slice.context, parent.context);
    const inner = slice.slice(4);
    assert.strictEqual(inner.ptr, parent.ptr + 12n);
    assert.strictEqual(inner.size, 12);
    assert.throws(() => parent.slice(60, 8), { name: 'RangeError', message: /reaches past the end of 64 bytes/ });
    // bigint and number mixed (the fuzzer: the engine's "Cannot mix BigInt and other types")
    assert.strictEqual(parent.slice(8n, 16).ptr, parent.ptr + 8n);
    assert.strictEqual(parent.slice(8, 16n).size, 16);
    assert.throws(() => parent.slice(65), { name: 'RangeError', message: /past the end/ });
    assert.throws(() => slice.slice(-1), { name: 'RangeError' });
    assert.throws(() => cuda.memcpyHtoD(slice, new Uint8Array(17)), {
      name: 'RangeError',
      message: /17 bytes do not fit in 16/,
    });
    assert.throws(() => cuda.memcpyDtoH(new Uint8Array(13), inner), { name: 'RangeError' });
    assert.throws(() => cuda.memsetD32(inner, 0, 4), { name: 'RangeError' });
    slice.free();
    assert.throws(() => slice.ptr, { name: 'LogicError', message: /slice has been released/ });
    assert.strictEqual(inner.ptr, parent.ptr + 12n, 'a released slice leaves its own slices alone');
    parent.free();
    assert.throws(() => inner.ptr, { name: 'LogicError', message: /freed/ });
  });

  it('memsets set exactly their elements, at offsets, sync and async', async function () {
    const memory = cuda.memAlloc(256);
    const expected = random(256);
    cuda.memcpyHtoD(memory, expected);
    cuda.memsetD8(memory.slice(3), 0xab, 50);
    expected.fill(0xab, 3, 53);
    cuda.memsetD16(memory.slice(54), 0xbeef, 10);
    for (let i = 0; i < 10; i++) expected.writeUInt16LE(0xbeef, 54 + 2 * i);
    cuda.memsetD32(memory.slice(76), -2, 5);
    for (let i = 0; i < 5; i++) expected.writeUInt32LE(0xfffffffe, 76 + 4 * i);
    const stream = new cuda.Stream();
    cuda.memsetD8Async(memory.slice(97), -1, 3, stream);
    expected.fill(0xff, 97, 100);
    cuda.memsetD16Async(memory.slice(100), 0x1234, 6, stream);
    for (let i = 0; i < 6; i++) expected.writeUInt16LE(0x1234, 100 + 2 * i);
    cuda.memsetD32Async(memory.slice(112), 0x3f800000, 4, stream);
    for (let i = 0; i < 4; i++) expected.writeUInt32LE(0x3f800000, 112 + 4 * i);
    cuda.memsetD32Async(memory.slice(128), 7, 2);
    for (let i = 0; i < 2; i++) expected.writeUInt32LE(7, 128 + 4 * i);
    await stream.synchronize();
    cuda.Context.synchronizeSync();
    assert.ok(Buffer.from(cuda.fromDevice(memory, 256, 'uint8')).equals(expected));
  });

  it('2D memsets fill width elements of height rows, pitch apart', async function () {
    const { allocation, pitch } = cuda.memAllocPitch(40, 6, 4);
    assert.ok(pitch >= 40);
    assert.strictEqual(allocation.size, pitch * 6);
    const expected = random(pitch * 6);
    cuda.memcpyHtoD(allocation, expected);
    const fill = (offset, width, height, size, value) => {
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) expected.writeUIntLE(value, offset + y * pitch + x * size, size);
      }
    };
    cuda.memsetD2D8(allocation.slice(1), pitch, 0x5a, 7, 2);
    fill(1, 7, 2, 1, 0x5a);
    cuda.memsetD2D16(allocation.slice(pitch * 2 + 2), pitch, 0xcafe, 5, 2);
    fill(pitch * 2 + 2, 5, 2, 2, 0xcafe);
    const stream = new cuda.Stream();
    cuda.memsetD2D32Async(allocation.slice(pitch * 4 + 12), pitch, 0xdeadbeef, 6, 2, stream);
    fill(pitch * 4 + 12, 6, 2, 4, 0xdeadbeef);
    cuda.memsetD2D8Async(allocation.slice(20), pitch, 3, 1, 6, stream);
    fill(20, 1, 6, 1, 3);
    cuda.memsetD2D16Async(allocation.slice(24), pitch, 9, 2, 1, stream);
    fill(24, 2, 1, 2, 9);
    cuda.memsetD2D32(allocation.slice(32), pitch, 11, 1, 1);
    fill(32, 1, 1, 4, 11);
    await stream.synchronize();
    assert.ok(Buffer.from(cuda.fromDevice(allocation, pitch * 6, 'uint8')).equals(expected));
  });

  it('DtoD copies between allocations and slices, sync and async', async function () {
    const data = random(512);
    const a = cuda.toDevice(data);
    const b = cuda.toDevice(random(512));
    const expected = Buffer.from(cuda.fromDevice(b, 512, 'uint8'));
    cuda.memcpyDtoD(b.slice(5), a.slice(3), 100);
    data.copy(expected, 5, 3, 103);
    const stream = new cuda.Stream();
    cuda.memcpyDtoDAsync(b.slice(301), a.slice(11), 77, stream);
    data.copy(expected, 301, 11, 88);
    cuda.memcpyDtoDAsync(b.slice(400), a.slice(500), undefined, stream);
    data.copy(expected, 400, 500, 512);
    await stream.synchronize();
    assert.ok(Buffer.from(cuda.fromDevice(b, 512, 'uint8')).equals(expected));
    const whole = cuda.memAlloc(512);
    cuda.memcpyDtoD(whole, a);
    assert.ok(Buffer.from(cuda.fromDevice(whole, 512, 'uint8')).equals(data));
  });

  it('async copies through pageable memory give every byte back', async function () {
    const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    const data = random(1 << 16);
    const memory = cuda.memAlloc(1 << 16);
    cuda.memcpyHtoDAsync(memory, data, stream);
    const back = new Uint8Array(1 << 16);
    cuda.memcpyDtoHAsync(back, memory, stream);
    await stream.synchronize();
    assert.ok(Buffer.from(back).equals(data));
  });

  it('peer copies between two contexts of one device, with their context arguments', async function () {
    const first = cuda.Context.getCurrent();
    const data = random(3000);
    const source = cuda.toDevice(data);
    const second = new cuda.Device(0).makeContext();
    try {
      assert.strictEqual(cuda.Context.getCurrent(), second);
      const target = cuda.memAlloc(3000);
      cuda.memcpyPeer(target, source, 3000, second, first);
      assert.ok(Buffer.from(cuda.fromDevice(target, 3000, 'uint8')).equals(data));
      const stream = new cuda.Stream();
      cuda.memsetD8(target, 0, 3000);
      cuda.memcpyPeerAsync(target.slice(1), source.slice(2), 2000, second, first, stream);
      await stream.synchronize();
      const expected = Buffer.alloc(3000);
      data.copy(expected, 1, 2, 2002);
      assert.ok(Buffer.from(cuda.fromDevice(target, 3000, 'uint8')).equals(expected));
      // back the other way, with the current context (second) as the default destination context
      const back = cuda.memAlloc(3000);
      cuda.memcpyPeer(back, target, undefined, undefined, second);
      assert.ok(Buffer.from(cuda.fromDevice(back, 3000, 'uint8')).equals(expected));
    } finally {
      second.detach();
    }
    assert.strictEqual(cuda.Context.getCurrent(), first);
  });

  it('memory of one context, allocated on its stream and freed while another context is current', async function () {
    const first = cuda.Context.getCurrent();
    const device = new cuda.Device(0);
    const pools = device.getAttribute(cuda.DeviceAttribute.MEMORY_POOLS_SUPPORTED);
    const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    const data = random(1 << 20);
    const plain = cuda.memAlloc(256 << 20);
    const second = device.makeContext(); // current from here
    try {
      const ordered = pools ? cuda.memAllocAsync(1 << 20, stream) : null;
      if (ordered) {
        assert.strictEqual(ordered.context, first);
        first.push();
        cuda.memcpyHtoDAsync(ordered, data, stream);
        const back = new Uint8Array(1 << 20);
        cuda.memcpyDtoHAsync(back, ordered, stream); // pageable: filled before it returns
        assert.ok(Buffer.from(back).equals(data));
        cuda.Context.pop();
        assert.strictEqual(cuda.Context.getCurrent(), second);
        ordered.free(stream);
        await stream.synchronize();
        assert.throws(() => ordered.ptr, { name: 'LogicError' });
      }
      const free = cuda.memGetInfo().free;
      plain.free();
      assert.ok(cuda.memGetInfo().free >= free + (192 << 20), 'the memory came back');
      assert.strictEqual(cuda.Context.getCurrent(), second);
    } finally {
      second.detach();
    }
    assert.strictEqual(cuda.Context.getCurrent(), first);
  });

  it('Memcpy2D copies host ↔ pitched device memory exactly, aligned or not, sync and async', async function () {
    const { allocation, pitch } = cuda.memAllocPitch(37, 9, 4);
    const device = random(pitch * 9);
    cuda.memcpyHtoD(allocation, device);
    const source = random(50 * 9);
    const up = new cuda.Memcpy2D();
    up.setSrcHost(source);
    Object.assign(up, {
      srcXInBytes: 3,
      srcY: 0,
      srcPitch: 50,
      dstXInBytes: 5,
      dstY: 1,
      dstPitch: pitch,
      widthInBytes: 32,
      height: 8,
    });
    up.setDstDevice(allocation);
    assert.strictEqual(up.srcMemoryType, cuda.MemoryType.HOST);
    assert.strictEqual(up.dstMemoryType, cuda.MemoryType.DEVICE);
    up.run();
    referenceCopy(source, { x: 3, y: 0, z: 0, pitch: 50, h: 0 }, device, { x: 5, y: 1, z: 0, pitch, h: 0 }, 32, 8);
    assert.ok(Buffer.from(cuda.fromDevice(allocation, pitch * 9, 'uint8')).equals(device));

    const host = random(30 * 7);
    const down = new cuda.Memcpy2D();
    down.setSrcDevice(allocation);
    down.setDstHost(host);
    Object.assign(down, {
      srcXInBytes: 2,
      srcY: 2,
      srcPitch: pitch,
      dstXInBytes: 1,
      dstY: 1,
      dstPitch: 30,
      widthInBytes: 29,
      height: 6,
    });
    const expected = Buffer.from(host);
    referenceCopy(device, { x: 2, y: 2, z: 0, pitch, h: 0 }, expected, { x: 1, y: 1, z: 0, pitch: 30, h: 0 }, 29, 6);
    down.run({ aligned: true });
    assert.ok(Buffer.from(host).equals(expected));

    const pinned = cuda.pagelockedZeros(30 * 7, 'uint8');
    down.setDstHost(pinned);
    const stream = new cuda.Stream();
    down.run(stream);
    await stream.synchronize();
    const fromZeros = Buffer.alloc(30 * 7);
    referenceCopy(device, { x: 2, y: 2, z: 0, pitch, h: 0 }, fromZeros, { x: 1, y: 1, z: 0, pitch: 30, h: 0 }, 29, 6);
    assert.ok(Buffer.from(pinned).equals(fromZeros));

    const other = cuda.memAlloc(pitch * 9);
    cuda.memsetD8(other, 0, pitch * 9);
    const across = new cuda.Memcpy2D();
    across.setSrcDevice(allocation);
    across.setDstUnified(other.ptr);
    Object.assign(across, { srcPitch: pitch, dstPitch: pitch, widthInBytes: 37, height: 9 });
    across.run();
    const copied = Buffer.from(cuda.fromDevice(other, pitch * 9, 'uint8'));
    const rows = Buffer.alloc(pitch * 9);
    referenceCopy(device, { x: 0, y: 0, z: 0, pitch, h: 0 }, rows, { x: 0, y: 0, z: 0, pitch, h: 0 }, 37, 9);
    assert.ok(copied.equals(rows));
  });

  it('Memcpy3D and Memcpy3DPeer copy boxes exactly', async function () {
    const source = random(20 * 6 * 4);
    const memory = cuda.memAlloc(64 * 10 * 5);
    const device = random(64 * 10 * 5);
    cuda.memcpyHtoD(memory, device);
    const up = new cuda.Memcpy3D();
    up.setSrcHost(source);
    up.setDstDevice(memory);
    Object.assign(up, {
      srcXInBytes: 1,
      srcY: 1,
      srcZ: 1,
      srcPitch: 20,
      srcHeight: 6,
      dstXInBytes: 7,
      dstY: 2,
      dstZ: 0,
      dstPitch: 64,
      dstHeight: 10,
      widthInBytes: 17,
      height: 5,
      depth: 3,
    });
    up.run();
    referenceCopy(
      source,
      { x: 1, y: 1, z: 1, pitch: 20, h: 6 },
      device,
      { x: 7, y: 2, z: 0, pitch: 64, h: 10 },
      17,
      5,
      3,
    );
    assert.ok(Buffer.from(cuda.fromDevice(memory, 64 * 10 * 5, 'uint8')).equals(device));

    const host = cuda.pagelockedEmpty(16 * 4 * 3, 'uint8');
    host.set(random(16 * 4 * 3));
    const expected = Buffer.from(host);
    const down = new cuda.Memcpy3D();
    down.setSrcDevice(memory);
    down.setDstHost(host);
    Object.assign(down, {
      srcXInBytes: 30,
      srcY: 5,
      srcZ: 2,
      srcPitch: 64,
      srcHeight: 10,
      dstXInBytes: 2,
      dstY: 0,
      dstZ: 0,
      dstPitch: 16,
      dstHeight: 4,
      widthInBytes: 14,
      height: 4,
      depth: 3,
    });
    referenceCopy(
      device,
      { x: 30, y: 5, z: 2, pitch: 64, h: 10 },
      expected,
      { x: 2, y: 0, z: 0, pitch: 16, h: 4 },
      14,
      4,
      3,
    );
    const stream = new cuda.Stream();
    down.run(stream);
    await stream.synchronize();
    assert.ok(Buffer.from(host).equals(expected));

    const first = cuda.Context.getCurrent();
    const second = new cuda.Device(0).makeContext();
    try {
      const target = cuda.memAlloc(32 * 8 * 2);
      const before = random(32 * 8 * 2);
      cuda.memcpyHtoD(target, before);
      const peer = peerBoxCopy(memory, first, target, second);
      peer.run();
      peerBoxReference(device, before);
      assert.ok(Buffer.from(cuda.fromDevice(target, 32 * 8 * 2, 'uint8')).equals(before));
      const stream2 = new cuda.Stream();
      cuda.memsetD8(target, 0, 32 * 8 * 2);
      peer.run(stream2);
      await stream2.synchronize();
      const again = peerBoxReference(device, Buffer.alloc(32 * 8 * 2));
      assert.ok(Buffer.from(cuda.fromDevice(target, 32 * 8 * 2, 'uint8')).equals(again));
    } finally {
      second.detach();
    }
  });

  it('asBuffer refuses device memory, and views managed memory', function () {
    const memory = cuda.memAlloc(64);
    assert.throws(() => memory.asBuffer(16), { name: 'LogicError', message: /not host-accessible/ });
    assert.throws(() => memory.asBuffer(65), { name: 'RangeError' });
    if (!new cuda.Device(0).getAttribute(cuda.DeviceAttribute.MANAGED_MEMORY)) return;
    const array = cuda.managedZeros(64, 'uint8');
    const managed = cuda.hostAllocationOf(array);
    class Holder extends cuda.PointerHolderBase {
      getPointer() {
        return managed.getDevicePointer();
      }

      get size() {
        return managed.size;
      }
    }
    const view = new Uint8Array(new Holder().asBuffer(16, 8));
    const data = random(16);
    view.set(data);
    assert.ok(Buffer.from(array.subarray(8, 24)).equals(data));
    assert.throws(() => new Holder().asBuffer(64, 1), { name: 'RangeError' });
  });

  it("an allocation past the device's memory is a MemoryError from cuMemAlloc", function () {
    const total = new cuda.Device(0).totalMemory();
    assert.throws(
      () => cuda.memAlloc(total * 2),
      (e) =>
        e instanceof cuda.MemoryError &&
        e.api === 'cuMemAlloc' &&
        e.codeName === 'CUDA_ERROR_OUT_OF_MEMORY' &&
        /^cuMemAlloc failed: /.test(e.message),
    );
  });

  for (const how of ['global.gc', 'external-memory pressure']) {
    it(`out of memory, memAlloc collects dropped allocations (${how}) and retries`, function () {
      this.timeout(120000);
      const savedGc = globalThis.gc;
      const big = Math.floor(cuda.memGetInfo().free * 0.7);
      (() => {
        cuda.memAlloc(big);
      })(); // dropped at once, not yet collected
      if (how !== 'global.gc') globalThis.gc = undefined;
      try {
        const again = cuda.memAlloc(big);
        assert.strictEqual(again.size, big);
        again.free();
      } finally {
        globalThis.gc = savedGc;
      }
    });
  }

  it('allocations dropped and collected are freed off the main thread', async function () {
    const failed = cuda.stats().cleanupsFailed;
    const before = cuda.memGetInfo().free;
    (() => {
      for (let i = 0; i < 16; i++) cuda.memAlloc(32 << 20);
    })();
    assert.ok(cuda.memGetInfo().free <= before - (400 << 20));
    global.gc();
    await new Promise((resolve) => setImmediate(resolve)); // finalizers run
    await new Promise((resolve) => setTimeout(resolve, 200)); // the reaper frees
    const { collectGarbage } = require('../../lib/memory/host-memory');
    collectGarbage(); // waits for the reaper
    assert.ok(cuda.memGetInfo().free >= before - (64 << 20), 'the memory came back');
    assert.strictEqual(cuda.stats().cleanupsFailed, failed);
  });

  it("stream-ordered allocation and the driver's memory pools", async function () {
    const device = new cuda.Device(0);
    if (!device.getAttribute(cuda.DeviceAttribute.MEMORY_POOLS_SUPPORTED)) this.skip();
    const failed = cuda.stats().cleanupsFailed;
    const stream = new cuda.Stream();
    const data = random(4096);
    const memory = cuda.memAllocAsync(4096, stream);
    assert.strictEqual(memory.size, 4096);
    cuda.memcpyHtoDAsync(memory, data, stream);
    const back = cuda.pagelockedZeros(4096, 'uint8');
    cuda.memcpyDtoHAsync(back, memory, stream);
    memory.free(); // in stream order, after the copies
    await stream.synchronize();
    assert.ok(Buffer.from(back).equals(data));
    assert.throws(() => memory.ptr, { name: 'LogicError' });

    const pool = cuda.MemoryPool.getDefault(device);
    const current = cuda.MemoryPool.getCurrent();
    assert.strictEqual(
      current.getAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD),
      pool.getAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD),
    );
    const threshold = pool.getAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD);
    pool.setAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD, 1 << 20);
    assert.strictEqual(pool.getAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD), 1 << 20);
    pool.setAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD, threshold);
    const reuse = pool.getAttribute(cuda.MemPoolAttribute.REUSE_ALLOW_OPPORTUNISTIC);
    assert.ok(reuse === 0 || reuse === 1);
    pool.setAttribute(cuda.MemPoolAttribute.REUSE_ALLOW_OPPORTUNISTIC, !reuse);
    assert.strictEqual(pool.getAttribute(cuda.MemPoolAttribute.REUSE_ALLOW_OPPORTUNISTIC), reuse ? 0 : 1);
    pool.setAttribute(cuda.MemPoolAttribute.REUSE_ALLOW_OPPORTUNISTIC, Boolean(reuse));

    const pooled = pool.allocate(1 << 20, stream);
    cuda.memsetD32Async(pooled, 0x01020304, 1 << 18, stream);
    await stream.synchronize();
    assert.ok(pool.getAttribute(cuda.MemPoolAttribute.USED_MEM_CURRENT) >= 1 << 20);
    const words = new Uint32Array(1 << 18);
    cuda.memcpyDtoHAsync(words, pooled, stream); // pageable: returns once copied
    assert.ok(words.every((w) => w === 0x01020304));
    pooled.free(stream);
    await stream.synchronize();
    pool.trimTo(0);
    assert.throws(() => pool.getAttribute(99), { name: 'RangeError', message: /MemPoolAttribute/ });

    (() => {
      cuda.memAllocAsync(1 << 20, stream);
    })(); // dropped: freed by the reaper
    const { collectGarbage } = require('../../lib/memory/host-memory');
    global.gc();
    assert.ok(collectGarbage() >= 1 << 20, 'the dropped allocation is released');
    assert.strictEqual(cuda.stats().cleanupsFailed, failed);
  });

  it("IPC handles: 64 bytes; opening in the same process is the driver's error", function () {
    const memory = cuda.memAlloc(1024);
    const handle = cuda.memGetIpcHandle(memory);
    assert.ok(Buffer.isBuffer(handle));
    assert.strictEqual(handle.length, 64);
    assert.throws(
      () => new cuda.IPCMemoryHandle(handle),
      (e) => e instanceof cuda.CudaError && e.api === 'cuIpcOpenMemHandle',
    );
    assert.throws(() => cuda.memGetIpcHandle({}), { name: 'TypeError' });
  });

  it('IPC handles open and read in a second process', function () {
    const data = random(5000);
    const memory = cuda.toDevice(data);
    const script = `
      const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
      new cuda.Device(0).makeContext();
      const handle = new cuda.IPCMemoryHandle(Buffer.from(process.argv[1], 'hex'));
      const bytes = cuda.fromDevice(handle, 5000, 'uint8');
      const size = handle.size;
      handle.close();
      handle.close();
      let closed = false;
      try { handle.ptr; } catch (e) { closed = e instanceof cuda.LogicError; }
      console.log(JSON.stringify({ hex: Buffer.from(bytes).toString('hex'), size, closed }));`;
    const child = spawnSync(process.execPath, ['-e', script, cuda.memGetIpcHandle(memory).toString('hex')]);
    assert.strictEqual(child.stderr.toString(), '');
    const answer = JSON.parse(child.stdout.toString());
    assert.strictEqual(answer.hex, data.toString('hex'));
    assert.ok(answer.size >= 5000);
    assert.strictEqual(answer.closed, true);
    memory.free();
  });
});
