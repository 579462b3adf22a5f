'use strict';
// TMA tensor maps through the stand-in driver: what each encoding passes the driver (logged),
// the map's bytes reaching a kernel at the parameter's offset, the checks C makes before the
// driver (the tensor within its allocation), and every bad option.
const { childRunner } = require('../support/graph-child');

describe('TMA tensor maps through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run } = childRunner('cudadrv-tensor-map-');

  const PRELUDE = `
    const maps = () => log().filter((l) => l.startsWith('tensormap'));
    const launches = () => log().filter((l) => /^launch /.test(l)).map((l) => l.split('params=')[1]);
    const hex = (bytes) => Buffer.from(bytes).toString('hex');
    const u64 = (bytes, i) => Buffer.from(bytes.buffer, bytes.byteOffset).readBigUInt64LE(8 * i);
  `;

  it("tiled, im2col and im2colWide pass the driver what was asked; a kernel receives the map's 128 bytes at its parameter", function () {
    run(`${PRELUDE}
      const rows = 8 + Math.floor(Math.random() * 56), cols = 16 * (1 + Math.floor(Math.random() * 8));
      const memory = cuda.memAlloc(4 * rows * cols);
      const at = memory.ptr.toString(16);
      const tiled = cuda.TensorMap.tiled({ memory, dataType: 'float32', globalDim: [cols, rows], boxDim: [16, 8], swizzle: cuda.TensorMapSwizzle['128B'] });
      assert.strictEqual(tiled.memory, memory);
      assert.strictEqual(u64(tiled.bytes, 0), memory.ptr, 'what the driver wrote');
      const image = cuda.memAlloc(2 * 4 * 16 * 16 * 32);
      const im2col = cuda.TensorMap.im2col({
        memory: image, dataType: cuda.TensorMapDataType.FLOAT16, globalDim: [32, 16, 16, 4],
        pixelBoxLowerCorner: [-1, -1], pixelBoxUpperCorner: [1, 1], channelsPerPixel: 32, pixelsPerColumn: 64,
        elementStrides: [1, 2, 2, 1], l2Promotion: cuda.TensorMapL2Promotion.L2_128B,
      });
      const wide = cuda.TensorMap.im2colWide({
        memory: image, dataType: 'float16', globalDim: [32, 16, 16, 4], pixelBoxLowerCornerWidth: -2,
        pixelBoxUpperCornerWidth: 2, channelsPerPixel: 16, pixelsPerColumn: 32, mode: cuda.TensorMapIm2ColWideMode.W128,
      });
      const iat = image.ptr.toString(16);
      assert.deepStrictEqual(maps(), [
        'tensormap tiled type=7 rank=2 address=' + at + ' dims=' + cols + ',' + rows + ' strides=' + 4 * cols + ' estrides=1,1 box=16,8 flags=0,3,0,0',
        'tensormap im2col type=6 rank=4 address=' + iat + ' dims=32,16,16,4 strides=64,1024,16384 estrides=1,2,2,1 lower=-1,-1 upper=1,1 channels=32 pixels=64',
        'tensormap im2colwide type=6 rank=4 address=' + iat + ' dims=32,16,16,4 strides=64,1024,16384 estrides=1,1,1,1 width=-2,2 channels=16 pixels=32 mode=1',
      ]);
      // a kernel whose map lies at byte 128 (after an int), a pointer after it
      const k = new cuda.Module('entry tma 4 128@128 8\\n').getFunction('tma');
      const out = cuda.memAlloc(64);
      k(cuda.int32(7), tiled, out, { block: 1 });
      k.prepare(['i', cuda.TensorMap, 'P']).preparedCall(1, 1, 7, wide, out);
      const params = (map) => '07000000' + '00'.repeat(124) + hex(map.bytes) + Buffer.from(new BigUint64Array([out.ptr]).buffer).toString('hex');
      assert.deepStrictEqual(launches(), [params(tiled), params(wide)]);
      // replaceAddress: the same map over another tensor of its shape, encoded anew from what was
      // checked: bytes changed in JavaScript (reachable by the map's symbol key) reach no driver
      const other = cuda.memAlloc(4 * rows * cols);
      const fresh = cuda.TensorMap.tiled({ memory: other, dataType: 'float32', globalDim: [cols, rows], boxDim: [16, 8], swizzle: cuda.TensorMapSwizzle['128B'] });
      const [key] = Object.getOwnPropertySymbols(tiled);
      tiled[key].fill(0xa5);
      assert.strictEqual(tiled.replaceAddress(other), tiled);
      assert.strictEqual(hex(tiled.bytes), hex(fresh.bytes));
      assert.strictEqual(u64(tiled.bytes, 0), other.ptr);
      assert.strictEqual(tiled.memory, other);
      assert.deepStrictEqual(maps().slice(-2), [maps()[0].replace(at, other.ptr.toString(16)), maps()[0].replace(at, other.ptr.toString(16))]);
      k(cuda.int32(7), tiled, out, { block: 1 });
      assert.strictEqual(launches().at(-1), params(tiled));
    `);
  });

  it('a tensor past its allocation, memory of no allocation and every bad option are refused before the driver', function () {
    run(`${PRELUDE}
      const memory = cuda.memAlloc(4096);
      const base = { memory, dataType: 'float32', globalDim: [32, 32], boxDim: [8, 8] };
      const cases = [
        [{ globalDim: [32, 33] }, 'RangeError', 'the tensor takes 4224 bytes from its address, and its allocation has 4096 there'],
        [{ memory: memory.slice(128, 3968), globalDim: [32, 32] }, 'RangeError', 'the tensor takes 4096 bytes from its address, and its allocation has 3968 there'],
        [{ globalStrides: [2 ** 39], globalDim: [4, 2] }, 'RangeError', /^the tensor takes 549755813904 bytes/],
        [{ memory: 0x1000n }, 'RangeError', 'the tensor\\'s address is not device memory of the current context'],
        [{ memory: 'x' }, 'TypeError', /^memory must be device memory/],
        [{ dataType: 'float8' }, 'TypeError', /^dataType must be a dtype name \\(uint8, /],
        [{ dataType: 99 }, 'RangeError', 'dataType must be a member of cuda.TensorMapDataType, not 99'],
        [{ globalDim: [] }, 'RangeError', 'globalDim must have 1 to 5 dimensions, not 0'],
        [{ globalDim: [1, 2, 3, 4, 5, 6] }, 'RangeError', 'globalDim must have 1 to 5 dimensions, not 6'],
        [{ globalDim: [32, 0] }, 'RangeError', 'globalDim[1] must be an integer from 1 to 4294967296, not 0'],
        [{ globalDim: 32 }, 'TypeError', 'globalDim must be an array of 1 to 5 dimensions, innermost first, not number 32'],
        [{ boxDim: [8] }, 'RangeError', 'boxDim must have 2 entries (one per dimension), not 1'],
        [{ boxDim: [8, 257] }, 'RangeError', 'boxDim[1] must be an integer from 1 to 256, not 257'],
        [{ globalStrides: [8] }, 'RangeError', 'globalStrides[0] must be an integer from 16 to 1099511627760, not 8'],
        [{ elementStrides: [1, 9] }, 'RangeError', 'elementStrides[1] must be an integer from 1 to 8, not 9'],
        [{ swizzle: 7 }, 'RangeError', 'swizzle must be a member of cuda.TensorMapSwizzle, not 7'],
        [{ pixelsPerColumn: 4 }, 'TypeError', /^TensorMap.tiled\\(\\): unknown option 'pixelsPerColumn'/],
        [{ dataType: cuda.TensorMapDataType['16U4_ALIGN8B'] }, 'TypeError', 'globalStrides: a packed sub-byte data type needs its strides given, in bytes'],
      ];
      for (const [change, name, message] of cases) assert.throws(() => cuda.TensorMap.tiled({ ...base, ...change }), { name, message }, JSON.stringify(Object.keys(change)));
      assert.throws(() => cuda.TensorMap.tiled(null), { name: 'TypeError', message: 'TensorMap.tiled() takes an object of options, not null' });
      assert.throws(() => new cuda.TensorMap(), { name: 'TypeError', message: /TensorMap.tiled\\(\\)/ });
      const im2col = { memory, dataType: 'float32', globalDim: [4, 4, 4, 4], channelsPerPixel: 4, pixelsPerColumn: 4, pixelBoxLowerCorner: [0, 0], pixelBoxUpperCorner: [1, 1] };
      assert.throws(() => cuda.TensorMap.im2col({ ...im2col, globalDim: [64, 64] }), { name: 'RangeError', message: 'pixelBoxLowerCorner must have 0 entries (one per dimension), not 2' });
      assert.throws(() => cuda.TensorMap.im2col({ ...im2col, pixelBoxLowerCorner: [0], pixelBoxUpperCorner: [0] }), { name: 'RangeError', message: /pixelBoxLowerCorner must have 2 entries/ });
      assert.throws(() => cuda.TensorMap.im2col({ ...im2col, channelsPerPixel: 0 }), { name: 'RangeError', message: 'channelsPerPixel must be an integer from 1 to 256, not 0' });
      // the driver's own refusals: a stride that is no multiple of 16, an unaligned address
      assert.throws(() => cuda.TensorMap.tiled({ ...base, globalStrides: [136], globalDim: [32, 8] }), { api: 'cuTensorMapEncodeTiled', code: 1 });
      assert.throws(() => cuda.TensorMap.tiled({ ...base, memory: memory.slice(4, 4092), globalDim: [8, 8] }), { api: 'cuTensorMapEncodeTiled' });
      // replaceAddress checks the new tensor as the first
      const map = cuda.TensorMap.tiled(base);
      assert.throws(() => map.replaceAddress(cuda.memAlloc(1024)), { name: 'RangeError', message: 'the tensor takes 4096 bytes from its address, and its allocation has 1024 there' });
      assert.strictEqual(u64(map.bytes, 0), memory.ptr, 'unchanged after a refusal');
      // the driver's offsets are taken as they are (they count from an unaligned base: on sm_90 a
      // first map lies at byte 112); a map where a parameter of another size is, or a prepared
      // call given no map, is refused
      const k = new cuda.Module('entry odd 4 128@112\\nentry good 128@128\\n').getFunction('odd');
      k(cuda.int32(1), map, { block: 1 });
      assert.deepStrictEqual(launches(), ['01000000' + '00'.repeat(108) + hex(map.bytes)]);
      assert.throws(() => k(map, cuda.int32(1), { block: 1 }), { name: 'TypeError', message: /parameter 1 takes 4 bytes, but argument 1 is a TensorMap \\(128 bytes\\)/ });
      const good = new cuda.Module('entry good 128@128\\n').getFunction('good').prepare([cuda.TensorMap]);
      assert.throws(() => good.preparedCall(1, 1, new Uint8Array(128)), { name: 'TypeError', message: 'argument 1 must be a TensorMap (the format says so), not an Uint8Array' });
      assert.strictEqual(launches().length, 1);
      // the binding checks what reaches it, whoever calls it
      const binding = require(${JSON.stringify(require.resolve('../../lib/internal/binding'))});
      const words = new BigUint64Array(11), ints = new Int32Array(24);
      assert.throws(() => binding.tensorMapEncode(new Uint8Array(64), 0, words, ints), { name: 'TypeError' });
      assert.throws(() => binding.tensorMapEncode(new Uint8Array(128), 3, words, ints), { name: 'RangeError' });
      assert.throws(() => binding.tensorMapEncode(new Uint8Array(128), 0, new BigUint64Array(10), ints), { name: 'TypeError' });
      assert.throws(() => binding.tensorMapEncode(new Uint8Array(128), 0, words, ints), { name: 'RangeError', message: 'a tiled tensor map has rank 1 to 5' });
      words[1] = 2n; words[2] = 2n ** 60n; words[3] = 2n;
      assert.throws(() => binding.tensorMapEncode(new Uint8Array(128), 0, words, ints), { name: 'RangeError', message: "the tensor's dimensions and strides reach past 2**64 bytes" });
    `);
  });

  it('on a driver for CUDA 12.7, im2colWide is a RuntimeError naming CUDA 12.8; tiled works', function () {
    run(
      `
      const memory = cuda.memAlloc(1 << 16);
      assert.throws(() => cuda.TensorMap.im2colWide({ memory, dataType: 'uint8', globalDim: [16, 16, 16], pixelBoxLowerCornerWidth: 0, pixelBoxUpperCornerWidth: 1, channelsPerPixel: 16, pixelsPerColumn: 16 }), {
        name: 'RuntimeError',
        message: /^cuTensorMapEncodeIm2colWide is not provided by the installed CUDA driver \\(version 12\\.7\\); it needs a driver for CUDA 12\\.8/,
      });
      cuda.TensorMap.tiled({ memory, dataType: 'uint8', globalDim: [256, 256], boxDim: [16, 16] });
    `,
      { FAKE_CUDA_DRIVER_VERSION: '12070' },
    );
  });
});
