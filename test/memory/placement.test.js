'use strict';
// Where memory lives, through the stand-in driver (test/support/fake-driver/managed.c, batch.c):
// managed memory's prefetches, advice and range attributes, CUDA 13's batched prefetches and
// discards, pointerAttributes() of every kind of memory, and memcpyBatchAsync() checked byte for
// byte against the CPU, with the order and hints the driver received read from its log.
const assert = require('assert');
const path = require('path');
const cuda = require('../..');
const { childRunner } = require('../support/graph-child');

describe('memory placement (checked before the driver)', function () {
  const fake = { ptr: 0x7f0000001000n, size: 64 };
  it('prefetch, advice and range attributes refuse wrong arguments, saying what to give', function () {
    const cases = [
      [() => cuda.memPrefetchAsync('x', 'host'), 'TypeError', /memPrefetchAsync\(\): memory must be device memory/],
      [
        () => cuda.memPrefetchAsync(0x1000n, 'host'),
        'TypeError',
        'memPrefetchAsync(): bytes is required for a raw address',
      ],
      [() => cuda.memPrefetchAsync(fake, 'host', null, { bytes: 65 }), 'RangeError', /65 bytes do not fit in 64 bytes/],
      [
        () => cuda.memPrefetchAsync(new Uint8Array(8), 'host', null, { bytes: 9 }),
        'RangeError',
        'memPrefetchAsync(): bytes 9 is past the 8 bytes of memory',
      ],
      [
        () => cuda.memPrefetchAsync(fake, 'host', null, { size: 1 }),
        'TypeError',
        /unknown option 'size'; the options are bytes/,
      ],
      [() => cuda.memPrefetchAsync(fake, -1), 'RangeError', 'location must be an integer from 0 to 2147483647, not -1'],
      [() => cuda.memPrefetchAsync(fake, { type: 'device', id: 0, node: 1 }), 'TypeError', /unknown option 'node'/],
      [() => cuda.memPrefetchAsync(fake, 'host', 'stream'), 'TypeError', /stream must be a Stream/],
      [() => cuda.memAdvise(fake, 99), 'RangeError', /advice/],
      [
        () => cuda.memAdvise(fake, cuda.MemAdvise.SET_PREFERRED_LOCATION),
        'TypeError',
        'memAdvise(): this advice needs a location',
      ],
      [
        () => cuda.memAdvise(fake, cuda.MemAdvise.SET_READ_MOSTLY, 'host'),
        'TypeError',
        /read-mostly advice and UNSET_PREFERRED_LOCATION take no location/,
      ],
      [() => cuda.memPrefetchBatchAsync([]), 'RangeError', 'memPrefetchBatchAsync(): items is empty'],
      [() => cuda.memPrefetchBatchAsync('x'), 'TypeError', /items must be an array of \{ memory, bytes, location \}/],
      [
        () => cuda.memPrefetchBatchAsync(Array(2 ** 32 - 1)),
        'RangeError',
        'items holds 4294967295 items; at most 65536',
      ],
      [
        () => cuda.memDiscardBatchAsync([{ memory: fake, location: 'host' }]),
        'TypeError',
        /unknown option 'location'; the options are memory, bytes/,
      ],
      [
        () => cuda.memPrefetchBatchAsync([null]),
        'TypeError',
        'memPrefetchBatchAsync(): items[0] must be an object, not null',
      ],
      [() => cuda.pointerAttributes('x'), 'TypeError', /pointer must be device memory/],
    ];
    for (const [call, name, message] of cases) assert.throws(call, { name, message });
  });

  it('memcpyBatchAsync refuses wrong copies before the driver', function () {
    const stream = Object.create(cuda.Stream.prototype);
    const cases = [
      [
        () => cuda.memcpyBatchAsync([{ dest: fake, src: fake }], null),
        'TypeError',
        /stream must be a Stream \(the driver refuses the default stream for batches\), not null/,
      ],
      [() => cuda.memcpyBatchAsync([], stream), 'RangeError', 'memcpyBatchAsync(): copies is empty'],
      [
        () => cuda.memcpyBatchAsync([{ dest: fake, src: 1n }], stream),
        'TypeError',
        'copies[0].bytes is required: neither side has a size',
      ],
      [
        () => cuda.memcpyBatchAsync([{ dest: fake, src: new Uint8Array(65) }], stream),
        'RangeError',
        /copies\[0\]: dest: 65 bytes do not fit in 64 bytes/,
      ],
      [() => cuda.memcpyBatchAsync([{ dest: fake, src: fake, hint: 1 }], stream), 'TypeError', /unknown option 'hint'/],
      [
        () => cuda.memcpyBatchAsync([{ dest: fake, src: fake, preferOverlapWithCompute: 1 }], stream),
        'TypeError',
        'copies[0].preferOverlapWithCompute must be a boolean',
      ],
      [
        () => cuda.memcpyBatchAsync([{ dest: 'x', src: fake }], stream),
        'TypeError',
        /copies\[0\].dest must be device memory/,
      ],
    ];
    for (const [call, name, message] of cases) assert.throws(call, { name, message });
  });
});

describe('memory placement through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run } = childRunner('cudadrv-placement-', { FAKE_CUDA_DEVICES: '2' });

  it('prefetches and advice reach the driver with their ranges and locations; range attributes report them', function () {
    run(`
      const stream = new cuda.Stream();
      const data = cuda.managedZeros(1024, 'float32');
      const address = cuda.pointerAttributes(data).devicePointer;
      assert.deepStrictEqual(cuda.memRangeAttributes(data), { readMostly: false, preferredLocation: null, lastPrefetchLocation: null, accessedBy: [] });
      cuda.memPrefetchAsync(data, new cuda.Device(1), stream);
      cuda.memPrefetchAsync(data.subarray(256), 'host', stream, { bytes: 1024 });
      cuda.memAdvise(data, cuda.MemAdvise.SET_READ_MOSTLY);
      cuda.memAdvise(data, cuda.MemAdvise.SET_PREFERRED_LOCATION, { type: 'host-numa', id: 0 });
      cuda.memAdvise(data, cuda.MemAdvise.SET_ACCESSED_BY, 1);
      cuda.memAdvise(data, cuda.MemAdvise.SET_ACCESSED_BY, 0);
      assert.deepStrictEqual(cuda.memRangeAttributes(data), {
        readMostly: true,
        preferredLocation: { type: 'host', id: 0 },
        lastPrefetchLocation: { type: 'host', id: 0 },
        accessedBy: [{ type: 'device', id: 0 }, { type: 'device', id: 1 }],
      });
      cuda.memAdvise(data, cuda.MemAdvise.UNSET_ACCESSED_BY, new cuda.Device(0));
      cuda.memAdvise(data, cuda.MemAdvise.UNSET_READ_MOSTLY);
      const memory = cuda.hostAllocationOf(data);
      assert.deepStrictEqual(cuda.memRangeAttributes(memory.getDevicePointer(), { bytes: 4096 }).accessedBy, [{ type: 'device', id: 1 }]);
      assert.strictEqual(cuda.memRangeAttributes(data).readMostly, false);
      const lines = log().filter((l) => /^cuMem(Prefetch|Advise)/.test(l));
      assert.deepStrictEqual(lines, [
        \`cuMemPrefetchAsync ptr=\${address} bytes=4096 location=1:1\`,
        \`cuMemPrefetchAsync ptr=\${address + 1024n} bytes=1024 location=2:0\`,
        \`cuMemAdvise ptr=\${address} bytes=4096 advice=1 location=2:0\`,
        \`cuMemAdvise ptr=\${address} bytes=4096 advice=3 location=3:0\`,
        \`cuMemAdvise ptr=\${address} bytes=4096 advice=5 location=1:1\`,
        \`cuMemAdvise ptr=\${address} bytes=4096 advice=5 location=1:0\`,
        \`cuMemAdvise ptr=\${address} bytes=4096 advice=6 location=1:0\`,
        \`cuMemAdvise ptr=\${address} bytes=4096 advice=2 location=2:0\`,
      ]);
      // memory that is not managed is the driver's error
      const plain = cuda.memAlloc(64);
      assert.throws(() => cuda.memPrefetchAsync(plain, 0, stream), { message: /cuMemPrefetchAsync failed/ });
      assert.throws(() => cuda.memPrefetchAsync(new Float32Array(4), 0, stream), { message: /cuMemPrefetchAsync failed/ });
    `);
  });

  it('batched prefetches and discards: one call for many ranges, each with its location; discarded bytes are dropped', function () {
    run(`
      const stream = new cuda.Stream();
      const a = cuda.managedZeros(256, 'uint8');
      const b = cuda.managedEmpty(512, 'uint8');
      b.fill(7);
      const at = (view) => cuda.pointerAttributes(view).devicePointer;
      cuda.memPrefetchBatchAsync([{ memory: a, location: 1 }, { memory: b, bytes: 100, location: 'host' }], stream);
      assert.deepStrictEqual(cuda.memRangeAttributes(a).lastPrefetchLocation, { type: 'device', id: 1 });
      assert.deepStrictEqual(cuda.memRangeAttributes(b).lastPrefetchLocation, { type: 'host', id: 0 });
      cuda.memDiscardBatchAsync([{ memory: b.subarray(10), bytes: 20 }], stream);
      assert.deepStrictEqual([b[9], b[10], b[29], b[30]], [7, 0xdd, 0xdd, 7], 'exactly the 20 bytes were discarded');
      cuda.memDiscardAndPrefetchBatchAsync([{ memory: a, location: 0 }], stream);
      assert.deepStrictEqual(cuda.memRangeAttributes(a).lastPrefetchLocation, { type: 'device', id: 0 });
      assert.deepStrictEqual(log().filter((l) => /^(prefetch|discard)/.test(l)), [
        \`prefetch ptr=\${at(a)} bytes=256 location=1:1\`,
        \`prefetch ptr=\${at(b)} bytes=100 location=2:0\`,
        \`discard ptr=\${at(b) + 10n} bytes=20\`,
        \`discard ptr=\${at(a)} bytes=256\`,
        \`prefetch ptr=\${at(a)} bytes=256 location=1:0\`,
      ]);
    `);
  });

  it('pointerAttributes() tells each kind of memory: device, pool, page-locked, managed, and memory CUDA never saw', function () {
    run(`
      const stream = new cuda.Stream();
      const device = cuda.memAlloc(256);
      const a = cuda.pointerAttributes(device);
      assert.deepStrictEqual([a.memoryType, a.context, a.device, a.devicePointer, a.hostPointer, a.isManaged, a.rangeStart, a.rangeSize, a.fromPool, a.legacyIpcCapable],
        ['device', ctx, 0, device.ptr, null, false, device.ptr, 256, false, true]);
      const inside = cuda.pointerAttributes(device.ptr + 100n);
      assert.deepStrictEqual([inside.rangeStart, inside.rangeSize, inside.devicePointer], [device.ptr, 256, device.ptr + 100n]);
      const pinned = cuda.pagelockedEmpty(64, 'uint8');
      const p = cuda.pointerAttributes(pinned);
      assert.deepStrictEqual([p.memoryType, p.isManaged, p.hostPointer === p.devicePointer, p.rangeSize], ['host', false, true, 64]);
      const managed = cuda.managedEmpty(32, 'float64');
      const m = cuda.pointerAttributes(managed);
      assert.deepStrictEqual([m.memoryType, m.isManaged, m.rangeSize], ['device', true, 256]);
      const pool = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 });
      const pooled = cuda.pointerAttributes(pool.allocate(64, stream));
      assert.deepStrictEqual([pooled.fromPool, pooled.allowedHandleTypes], [true, cuda.MemAllocationHandleType.POSIX_FILE_DESCRIPTOR]);
      const foreign = cuda.pointerAttributes(new Float32Array(16));
      assert.deepStrictEqual([foreign.memoryType, foreign.context, foreign.device, foreign.devicePointer, foreign.rangeStart, foreign.rangeSize, foreign.isManaged],
        [null, null, null, null, null, 0, false]);
      assert.strictEqual(cuda.pointerAttributes(0x10n).memoryType, null);
    `);
  });

  it('memcpyBatchAsync: random copies between device, pinned, managed and pageable memory land as the CPU says; orders follow pageability', function () {
    run(`
      const stream = new cuda.Stream();
      const rand = (n) => Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256));
      const n = 1000;
      const d1 = cuda.memAlloc(n), d2 = cuda.memAlloc(n);
      const pinned = cuda.pagelockedEmpty(n, 'uint8');
      const managed = cuda.managedEmpty(n, 'uint8');
      const pageable = rand(n);
      pinned.set(rand(n));
      managed.set(rand(n));
      cuda.memcpyHtoD(d1, rand(n));
      const expectD1 = cuda.fromDevice(d1, n, 'uint8');
      const before = { pinned: pinned.slice(), managed: managed.slice(), pageable: pageable.slice() };
      const out = new Uint8Array(300);
      const copies = [
        { dest: d2, src: pageable, bytes: 400 },               // pageable source: read during the call
        { dest: d2.slice(400), src: pinned.subarray(0, 300) }, // page-locked: in stream order
        { dest: d2.slice(700), src: d1.slice(0, 300), dstLocation: 0, srcLocation: 'host', preferOverlapWithCompute: true },
        { dest: out, src: d1.slice(500), bytes: 300 },          // a pageable destination: filled before return
        { dest: managed.subarray(0, 100), src: d1.slice(100), bytes: 100 },
      ];
      cuda.memcpyBatchAsync(copies, stream);
      stream.synchronizeSync();
      const got = cuda.fromDevice(d2, n, 'uint8');
      const expected = new Uint8Array(n);
      expected.set(before.pageable.subarray(0, 400), 0);
      expected.set(before.pinned.subarray(0, 300), 400);
      expected.set(expectD1.subarray(0, 300), 700);
      assert.deepStrictEqual(got, expected);
      assert.deepStrictEqual(out, expectD1.subarray(500, 800));
      assert.deepStrictEqual(managed.subarray(0, 100), expectD1.subarray(100, 200));
      assert.deepStrictEqual(managed.subarray(100), before.managed.subarray(100));
      assert.deepStrictEqual(log().filter((l) => l.startsWith('cuMemcpyBatchAsync')).map((l) => l.replace(/^cuMemcpyBatchAsync /, '')), [
        'copy=0 bytes=400 dst=device src=pageable order=2 flags=0 srcHint=0:0 dstHint=0:0',
        'copy=1 bytes=300 dst=device src=pinned order=1 flags=0 srcHint=0:0 dstHint=0:0',
        'copy=2 bytes=300 dst=device src=device order=1 flags=1 srcHint=2:0 dstHint=1:0',
        'copy=3 bytes=300 dst=pageable src=device order=1 flags=0 srcHint=0:0 dstHint=0:0',
        'copy=4 bytes=100 dst=managed src=device order=1 flags=0 srcHint=0:0 dstHint=0:0',
      ]);
      // a host side shorter than bytes is refused in C too (lib/ computes the bytes; C checks them)
      const binding = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'internal', 'binding'))});
      assert.throws(() => binding.memcpyBatchAsync([d1.ptr, new Uint8Array(8), 16], new Int32Array(5), stream, null), { name: 'RangeError', message: 'copies[0].src holds 8 bytes, fewer than the 16 to copy' });
      assert.throws(() => binding.memcpyBatchAsync([d1.ptr, d2.ptr, 16], new Int32Array(4), stream, null), { name: 'RangeError', message: 'one hint a copy' });
      // batches cannot be captured (driver 13.0 refuses them, whatever the memory)
      stream.beginCapture();
      assert.throws(() => cuda.memcpyBatchAsync([{ dest: d1, src: pinned.subarray(0, 8) }], stream), { api: 'cuMemcpyBatchAsync', codeName: 'CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED' });
      stream.endCapture().destroy(); // the stand-in's capture goes on; the driver's is invalidated
    `);
  });

  it('a batch never hands the driver an address it does not know: freed memory, addresses of nothing and copies past an allocation are refused', function () {
    run(`
      const stream = new cuda.Stream();
      const live = cuda.memAlloc(256);
      const freed = cuda.memAlloc(256);
      const address = freed.ptr;
      freed.free(); // (nothing allocated after it may take its address)
      const host = new Uint8Array(256);
      const refused = (what, ptr, bytes) => ({
        name: 'RangeError',
        message: what + ': 0x' + ptr.toString(16) + ' is not memory CUDA knows, or ' + bytes + ' bytes from it run past its allocation; pass device memory that is not freed, or a host buffer',
      });
      // 1D: the driver would read and write an unknown address as pageable host memory
      assert.throws(() => cuda.memcpyBatchAsync([{ dest: host, src: address, bytes: 64 }], stream), refused('copies[0].src', address, 64), 'case 1');
      assert.throws(() => cuda.memcpyBatchAsync([{ dest: address, src: host, bytes: 64 }], stream), refused('copies[0].dest', address, 64), 'case 2');
      assert.throws(() => cuda.memcpyBatchAsync([{ dest: host, src: 0x7f0000000000n, bytes: 8 }], stream), refused('copies[0].src', 0x7f0000000000n, 8), 'case 3');
      assert.throws(() => cuda.memcpyBatchAsync([{ dest: host, src: live.ptr + 128n, bytes: 129 }], stream), refused('copies[0].src', live.ptr + 128n, 129), 'case 4');
      cuda.memcpyBatchAsync([{ dest: host, src: live.ptr + 128n, bytes: 128 }], stream); // to its last byte
      // 3D: a device side of freed memory, and one whose box runs past its allocation
      const copy = new cuda.Memcpy3D();
      Object.assign(copy, { widthInBytes: 16, height: 4, depth: 2, srcPitch: 16, srcHeight: 4, dstPitch: 16, dstHeight: 4 });
      copy.setSrcDevice(address);
      copy.setDstHost(host);
      assert.throws(() => cuda.memcpy3DBatchAsync([copy], stream), refused('src', address, 128), 'case 5');
      copy.setSrcDevice(live.ptr); // a bare address: lib cannot tell its allocation's size, C asks the driver
      copy.srcZ = 2; // 16 x 4 x 2 of pitch 16 from byte 128: to the allocation's last byte
      cuda.memcpy3DBatchAsync([copy], stream);
      copy.srcZ = 3;
      assert.throws(() => cuda.memcpy3DBatchAsync([copy], stream), refused('src', live.ptr, 320), 'case 6');
      // a 2D copy's unified side given by address: the driver would take it for host memory too
      const unified = new cuda.Memcpy2D();
      unified.setSrcUnified(address);
      unified.setDstHost(host);
      Object.assign(unified, { srcPitch: 16, dstPitch: 16, widthInBytes: 16, height: 4 });
      assert.throws(() => unified.run(), refused('src', address, 64), 'case 7');
      await stream.synchronize();
      assert.strictEqual(log().filter((l) => l.startsWith('cuMemcpy3DBatchAsync')).length, 1);
    `);
  });

  it('memcpy3DBatchAsync: boxes between page-locked, pageable, pitched device memory and CUDA arrays land as the CPU says', function () {
    run(`
      require(${JSON.stringify(require.resolve('../support/batch3d-scenario'))}).batch3dScenario(cuda);
      assert.deepStrictEqual(log().filter((l) => l.startsWith('cuMemcpy3DBatchAsync')).map((l) => l.replace(/^cuMemcpy3DBatchAsync /, '')), [
        'copy=0 extent=30x6x2 element=1 order=1',
        'copy=1 extent=20x5x1 element=1 order=1',
        'copy=2 extent=8x4x2 element=4 order=1',
        'copy=0 extent=8x4x2 element=4 order=1',
      ]);
    `);
  });
});
