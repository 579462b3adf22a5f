'use strict';
const assert = require('assert');
const crypto = require('crypto');
const cuda = require('../..');
const binding = require('../../lib/internal/binding');
const reclaim = require('../../lib/internal/reclaim');
const path = require('path');
const { describeGpu } = require('../support/gpu');
const { childRunner, ROOT } = require('../support/graph-child');

function random(bytes) {
  const data = crypto.randomBytes(bytes);
  data[0] |= 1;
  return data;
}

// Runs fn with CUDADRV_NO_EXTERNAL_BUFFERS=1: the path of runtimes that refuse external ArrayBuffers.
function withoutExternalBuffers(fn) {
  process.env.CUDADRV_NO_EXTERNAL_BUFFERS = '1';
  try {
    return fn();
  } finally {
    delete process.env.CUDADRV_NO_EXTERNAL_BUFFERS;
  }
}

// Whether array starts at a page boundary: registerHostMemory checks that before anything else,
// with a RangeError (without a context or a driver, it fails afterwards for another reason).
function pageAligned(array) {
  try {
    cuda.hostAllocationOf(cuda.registerHostMemory(array)).unregister();
  } catch (error) {
    if (error instanceof RangeError) return false;
    assert.ok(error instanceof cuda.CudaError, error.message);
  }
  return true;
}

const paths = [
  ['external ArrayBuffers', (fn) => fn()],
  ['V8-owned ArrayBuffers', withoutExternalBuffers],
];

describe('aligned host memory (no GPU needed)', function () {
  for (const [name, using] of paths) {
    it(`alignedEmpty/Zeros give arrays of (shape, dtype), aligned, over ${name}`, function () {
      const zeros = using(() => cuda.alignedZeros([3, 5], 'float64', { alignment: 8192 }));
      assert.ok(zeros instanceof Float64Array);
      assert.strictEqual(zeros.length, 15);
      assert.ok(zeros.every((x) => x === 0));
      const allocation = cuda.hostAllocationOf(zeros);
      assert.ok(allocation instanceof cuda.AlignedHostAllocation);
      assert.strictEqual(allocation.size, 120);
      assert.strictEqual(cuda.hostAllocationOf(zeros.buffer), allocation);
      assert.strictEqual(cuda.hostAllocationOf(new Uint8Array(zeros.buffer, zeros.byteOffset, 8)), allocation);
      assert.strictEqual(allocation.byteOffset, zeros.byteOffset);
      if (name === 'external ArrayBuffers') {
        assert.strictEqual(zeros.byteOffset, 0);
        assert.strictEqual(zeros.buffer.byteLength, 120);
      } else {
        assert.strictEqual(zeros.buffer.byteLength, 120 + 8192, 'a V8 buffer an alignment larger');
      }
      for (const alignment of [4096, 8192, 65536]) {
        assert.ok(pageAligned(using(() => cuda.alignedEmpty(100, 'uint8', { alignment }))), `alignment ${alignment}`);
      }
      assert.ok(pageAligned(using(() => cuda.alignedEmpty(100, Int32Array))), 'the default alignment is 4096');
      const small = using(() => cuda.alignedEmpty(7, Int16Array, { alignment: 2 }));
      assert.ok(small instanceof Int16Array && small.length === 7);
      small.set([1, 2, 3, 4, 5, 6, 7]);
      assert.deepStrictEqual([...small], [1, 2, 3, 4, 5, 6, 7]);
      const scalar = using(() => cuda.alignedZeros([], 'uint64'));
      assert.deepStrictEqual(scalar, new BigUint64Array(1));
      assert.strictEqual(using(() => cuda.alignedEmpty(0, 'float32')).length, 0);
      // its memory is released on this thread: a transfer to another is refused (Node 21 on) or
      // ignored (Node 20), never a detach
      try {
        structuredClone(zeros, { transfer: [zeros.buffer] });
      } catch (error) {
        assert.strictEqual(error.name, 'DataCloneError');
      }
      assert.strictEqual(zeros.length, 15);
    });

    it(`free() detaches the memory over ${name}: its arrays read as empty and copies refuse them`, function () {
      const array = using(() => cuda.alignedZeros(1000, 'uint32'));
      const view = new Uint8Array(array.buffer, array.byteOffset, 16);
      array.fill(0xdeadbeef);
      const allocation = cuda.hostAllocationOf(array);
      allocation.free();
      assert.strictEqual(array.length, 0);
      assert.strictEqual(array.byteLength, 0);
      assert.strictEqual(view.length, 0);
      assert.strictEqual(array[5], undefined);
      assert.strictEqual(cuda.hostAllocationOf(array), allocation);
      assert.throws(() => cuda.memcpyHtoD({ ptr: 0x1000n, size: 4000 }, array), {
        name: 'LogicError',
        message: /src is an array of host memory that was freed \(AlignedHostAllocation.free\(\)\)/,
      });
      assert.throws(() => cuda.memcpyDtoH(view, { ptr: 0x1000n, size: 4000 }), { name: 'LogicError', message: /dest/ });
      assert.throws(() => cuda.toDevice(array.buffer), { name: 'LogicError' });
      allocation.free();
      const disposed = cuda.hostAllocationOf(using(() => cuda.alignedEmpty(4, 'int8')));
      disposed[Symbol.dispose]();
      assert.throws(() => cuda.memcpyHtoD(0x1000n, disposed._buffer), { name: 'LogicError' });
    });
  }

  it('*Like variants keep the length and dtype of their array', function () {
    const like = cuda.alignedZerosLike(new Int16Array(9));
    assert.ok(like instanceof Int16Array);
    assert.strictEqual(like.length, 9);
    assert.ok(like.every((x) => x === 0));
    const empty = cuda.alignedEmptyLike(Buffer.alloc(5), { alignment: 64 });
    assert.ok(empty instanceof Uint8Array);
    assert.strictEqual(empty.length, 5);
    assert.throws(() => cuda.alignedEmptyLike([1, 2]), {
      name: 'TypeError',
      message: /alignedEmptyLike: the array must be a TypedArray/,
    });
    assert.throws(() => cuda.alignedZerosLike(new DataView(new ArrayBuffer(4))), { name: 'TypeError' });
  });

  it('bad shapes, dtypes and alignments are refused', function () {
    assert.throws(() => cuda.alignedEmpty(-1, 'float32'), { name: 'RangeError', message: /shape/ });
    assert.throws(() => cuda.alignedEmpty([2, 1.5], 'float32'), { name: 'RangeError', message: /shape/ });
    assert.throws(() => cuda.alignedEmpty('2', 'float32'), { name: 'TypeError', message: /shape/ });
    assert.throws(() => cuda.alignedEmpty(2, 'double'), { name: 'TypeError', message: /dtype/ });
    assert.throws(() => cuda.alignedEmpty(2), { name: 'TypeError', message: /dtype/ });
    for (const alignment of [0, 3, 48, 2 ** 31, -8, 1.5]) {
      assert.throws(() => cuda.alignedEmpty(2, 'int8', { alignment }), { name: 'RangeError', message: /alignment/ });
    }
    assert.throws(() => cuda.alignedEmpty(2, 'int8', { alignment: '64' }), { name: 'TypeError', message: /alignment/ });
    assert.throws(() => cuda.alignedEmpty(2, 'int8', 64), { name: 'TypeError', message: /options must be an object/ });
    assert.throws(() => new cuda.AlignedHostAllocation(), { name: 'TypeError', message: /alignedEmpty/ });
  });

  it('hostAllocationOf answers undefined for memory made elsewhere', function () {
    assert.strictEqual(cuda.hostAllocationOf(new Float32Array(4)), undefined);
    assert.strictEqual(cuda.hostAllocationOf(new ArrayBuffer(4)), undefined);
    assert.strictEqual(cuda.hostAllocationOf([1, 2]), undefined);
    assert.strictEqual(cuda.hostAllocationOf(undefined), undefined);
  });

  it('garbage collection reclaims dropped allocations at once when asked (global.gc or V8 pressure)', function () {
    (() => {
      for (let i = 0; i < 8; i++) cuda.alignedEmpty(1 << 20, 'uint8');
    })();
    assert.ok(reclaim.collectGarbage() >= 8 << 20, 'with global.gc');
    (() => {
      for (let i = 0; i < 8; i++) cuda.alignedEmpty(1 << 20, 'uint8');
    })();
    assert.ok(binding.memReclaim(true) >= 8 << 20, 'through external-memory pressure alone');
    const kept = cuda.alignedZeros(1 << 20, 'uint8');
    assert.strictEqual(binding.memReclaim(true), 0);
    kept[0] = 1;
    assert.strictEqual(kept[0], 1, 'live arrays are left alone');
  });

  it('an out-of-memory error is retried once after collecting garbage; other errors are not', function () {
    let calls = 0;
    const value = reclaim.retryOutOfMemory(() => {
      calls++;
      if (calls === 1) throw new cuda.MemoryError('out of memory', { code: 2 });
      return 'second time';
    });
    assert.strictEqual(value, 'second time');
    assert.strictEqual(calls, 2);
    calls = 0;
    assert.throws(
      () =>
        reclaim.retryOutOfMemory(() => {
          calls++;
          throw new cuda.MemoryError('still out of memory');
        }),
      { name: 'MemoryError', message: 'still out of memory' },
    );
    assert.strictEqual(calls, 2);
    calls = 0;
    assert.throws(
      () =>
        reclaim.retryOutOfMemory(() => {
          calls++;
          throw new cuda.LogicError('no');
        }),
      { name: 'LogicError' },
    );
    assert.strictEqual(calls, 1);
  });
});

describe('host memory arguments (checked before the driver)', function () {
  it('pagelocked flags are HostAllocFlags bits', function () {
    assert.throws(() => cuda.pagelockedEmpty(4, 'float32', { flags: 8 }), {
      name: 'RangeError',
      message: /flags must combine members of cuda.HostAllocFlags/,
    });
    assert.throws(() => cuda.pagelockedZeros(4, 'float32', { flags: -1 }), { name: 'RangeError', message: /flags/ });
    assert.throws(() => cuda.pagelockedZeros(4, 'float32', { flags: '2' }), { name: 'TypeError', message: /flags/ });
    assert.throws(() => cuda.pagelockedEmpty(4, 'float32', 'x'), {
      name: 'TypeError',
      message: /options must be an object/,
    });
    assert.throws(() => cuda.pagelockedEmpty(-4, 'float32'), { name: 'RangeError', message: /shape/ });
    assert.throws(() => cuda.pagelockedEmpty(4, 'half'), { name: 'TypeError', message: /dtype/ });
    assert.throws(() => cuda.pagelockedEmptyLike('x'), { name: 'TypeError', message: /pagelockedEmptyLike/ });
    assert.throws(() => cuda.pagelockedZerosLike({ length: 3 }), { name: 'TypeError' });
    assert.throws(() => new cuda.PagelockedHostAllocation(), { name: 'TypeError', message: /pagelockedEmpty/ });
    assert.strictEqual(cuda.HostAllocation, cuda.PagelockedHostAllocation);
  });

  it('managed flags are GLOBAL or HOST; managed memory needs external ArrayBuffers', function () {
    assert.throws(() => cuda.managedEmpty(4, 'float32', { flags: cuda.MemAttachFlags.SINGLE }), {
      name: 'RangeError',
      message: /GLOBAL or HOST/,
    });
    assert.throws(() => cuda.managedZerosLike(new Float32Array(2), { flags: 0 }), { name: 'RangeError' });
    assert.throws(() => cuda.managedEmptyLike(7), { name: 'TypeError' });
    assert.throws(() => withoutExternalBuffers(() => cuda.managedZeros(4, 'float32')), {
      name: 'RuntimeError',
      message: /managed memory needs external ArrayBuffers/,
    });
    assert.throws(() => new cuda.ManagedAllocation(), { name: 'TypeError', message: /managedEmpty/ });
  });

  it('registerHostMemory wants a page-aligned, non-empty array and MemHostRegisterFlags', function () {
    assert.throws(() => cuda.registerHostMemory(new ArrayBuffer(4096)), {
      name: 'TypeError',
      message: /TypedArray or DataView/,
    });
    assert.throws(() => cuda.registerHostMemory('x'), { name: 'TypeError' });
    const aligned = cuda.alignedEmpty(8192, 'uint8');
    assert.throws(() => cuda.registerHostMemory(aligned.subarray(1)), {
      name: 'RangeError',
      message: /must start at a page boundary \(a multiple of \d+ bytes\); allocate it with alignedEmpty/,
    });
    assert.throws(() => cuda.registerHostMemory(new Float64Array(4096).subarray(1)), {
      name: 'RangeError',
      message: /page boundary/,
    });
    assert.throws(() => cuda.registerHostMemory(aligned.subarray(0, 0)), { name: 'RangeError', message: /empty/ });
    assert.throws(() => cuda.registerHostMemory(aligned, 16), { name: 'RangeError', message: /MemHostRegisterFlags/ });
    assert.throws(() => new cuda.RegisteredHostMemory(), { name: 'TypeError', message: /registerHostMemory/ });
  });
});

describeGpu('page-locked host memory', function () {
  for (const [name, using] of paths) {
    it(`pagelockedZeros/Empty over ${name}: arrays of (shape, dtype) that copy every byte both ways`, async function () {
      const zeros = using(() => cuda.pagelockedZeros([4, 8], 'float32'));
      assert.ok(zeros instanceof Float32Array);
      assert.strictEqual(zeros.length, 32);
      assert.ok(zeros.every((x) => x === 0));
      const allocation = cuda.hostAllocationOf(zeros);
      assert.ok(allocation instanceof cuda.PagelockedHostAllocation);
      assert.ok(allocation instanceof cuda.HostPointer);
      assert.strictEqual(allocation.size, 128);
      assert.strictEqual(allocation.context, cuda.Context.getCurrent());
      assert.strictEqual(allocation.getFlags() & cuda.HostAllocFlags.PORTABLE, 0);

      const source = using(() => cuda.pagelockedEmpty(3001, 'uint8'));
      const data = random(3001);
      source.set(data);
      const memory = cuda.memAlloc(3001);
      cuda.memcpyHtoD(memory, source);
      const back = using(() => cuda.pagelockedZerosLike(source));
      cuda.memcpyDtoH(back, memory);
      assert.ok(Buffer.from(back).equals(data));
      const stream = new cuda.Stream();
      const again = using(() => cuda.pagelockedEmptyLike(source));
      cuda.memcpyDtoHAsync(again.subarray(1), memory.slice(1), stream);
      again[0] = data[0];
      await stream.synchronize();
      assert.ok(Buffer.from(again).equals(data));
      source.set(random(3001));
      cuda.memcpyHtoDAsync(memory, source, stream);
      await stream.synchronize();
      assert.ok(Buffer.from(cuda.fromDevice(memory, 3001, 'uint8')).equals(Buffer.from(source)));

      cuda.hostAllocationOf(source).free();
      cuda.hostAllocationOf(source).free();
      assert.strictEqual(source.length, 0);
      assert.throws(() => cuda.memcpyHtoD(memory, source), {
        name: 'LogicError',
        message: /PagelockedHostAllocation.free/,
      });
      assert.throws(() => cuda.hostAllocationOf(source).getFlags(), { name: 'LogicError', message: /freed/ });
      assert.throws(() => cuda.hostAllocationOf(source).getDevicePointer(), { name: 'LogicError', message: /freed/ });
      cuda.hostAllocationOf(back)[Symbol.dispose]();
      assert.strictEqual(back.length, 0);
    });

    it(`flags and device pointers over ${name}`, function () {
      const { PORTABLE, DEVICEMAP, WRITECOMBINED } = cuda.HostAllocFlags;
      const mapped = using(() => cuda.pagelockedZeros(1024, 'uint8', { flags: PORTABLE | DEVICEMAP }));
      const allocation = cuda.hostAllocationOf(mapped);
      // (driver 580 leaves PORTABLE out of cuMemHostGetFlags: with unified addressing every
      // page-locked allocation is portable)
      assert.strictEqual(allocation.getFlags() & DEVICEMAP, DEVICEMAP);
      const pointer = allocation.getDevicePointer();
      assert.strictEqual(typeof pointer, 'bigint');
      assert.strictEqual(allocation.getPointer(), pointer);
      assert.strictEqual(allocation.byteOffset, mapped.byteOffset);
      // an array over part of the memory, through its device address
      const part = new Uint8Array(mapped.buffer, mapped.byteOffset + 100, 24);
      const bytes = random(24);
      cuda.memcpyHtoD(pointer + BigInt(part.byteOffset - allocation.byteOffset), bytes);
      assert.ok(Buffer.from(part).equals(bytes));
      // the device writes through the pointer, the host sees it
      const data = random(1024);
      cuda.memcpyHtoD(allocation, data);
      assert.ok(Buffer.from(mapped).equals(data));
      const copy = cuda.memAlloc(1024);
      cuda.memcpyDtoD(copy, allocation);
      assert.ok(Buffer.from(cuda.fromDevice(copy, 1024, 'uint8')).equals(data));
      assert.throws(() => cuda.memcpyHtoD(allocation, new Uint8Array(1025)), { name: 'RangeError' });

      const combined = using(() => cuda.pagelockedEmpty(256, 'uint32', { flags: WRITECOMBINED }));
      combined.set(new Uint32Array(Uint8Array.from(random(1024)).buffer));
      const on = cuda.toDevice(combined);
      assert.deepStrictEqual(cuda.fromDeviceLike(on, combined), combined);
    });
  }

  it('asBuffer views mapped page-locked memory through its device pointer', function () {
    const array = cuda.pagelockedZeros(256, 'uint8', { flags: cuda.HostAllocFlags.DEVICEMAP });
    const allocation = cuda.hostAllocationOf(array);
    class Holder extends cuda.PointerHolderBase {
      getPointer() {
        return allocation.getDevicePointer();
      }
    }
    const view = new Uint8Array(new Holder().asBuffer(100, 50));
    const data = random(100);
    view.set(data);
    assert.ok(Buffer.from(array.subarray(50, 150)).equals(data));
  });

  it('async copies keep their arrays alive under garbage-collection pressure; every byte arrives', async function () {
    this.timeout(60000);
    const failed = cuda.stats().cleanupsFailed;
    const stream = new cuda.Stream();
    const size = 1 << 20;
    const checks = [];
    // page-locked sources only: an Async copy from pageable memory may wait for the stream
    const sources = [
      () => cuda.pagelockedEmpty(size, 'uint8'),
      () => withoutExternalBuffers(() => cuda.pagelockedEmpty(size, 'uint8')),
      () => cuda.registerHostMemory(cuda.alignedEmpty(size, 'uint8')),
    ];
    // everything made first, so that the stream's wait covers only the enqueues and collections
    // below, however slow the host is at allocating
    const prepared = [];
    for (let i = 0; i < 12; i++) {
      const data = random(size);
      const source = sources[i % sources.length]();
      source.set(data);
      prepared.push({ data, source, memory: cuda.memAlloc(size), back: cuda.pagelockedZeros(size, 'uint8') });
    }
    const watched = new WeakRef(prepared[0].source);
    binding.streamEnqueueSleep(stream, 1500); // the copies wait behind this
    for (const { data, source, memory, back } of prepared) {
      cuda.memcpyHtoDAsync(memory, source, stream);
      cuda.memcpyDtoHAsync(back, memory, stream);
      checks.push([data, back]);
    }
    prepared.length = 0; // from here on, only the queued copies hold the sources and the memory
    assert.strictEqual(stream.isDone(), false, 'the copies are still queued');
    for (let i = 0; i < 10; i++) {
      global.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.strictEqual(stream.isDone(), false, 'the copies are still queued');
    assert.ok(watched.deref(), 'a queued copy holds its page-locked source');
    await stream.synchronize();
    for (const [data, back] of checks) assert.ok(Buffer.from(back).equals(data));
    // deref() keeps its target alive to the end of the job: collect in the next one
    let released = false;
    for (let i = 0; i < 100 && !released; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      global.gc();
      await new Promise((resolve) => setImmediate(resolve));
      released = watched.deref() === undefined;
    }
    assert.ok(released, 'and lets it go once the stream has passed the copy');
    reclaim.collectGarbage();
    assert.strictEqual(cuda.stats().cleanupsFailed, failed);
  });
});

describeGpu('managed memory', function () {
  before(function () {
    if (!new cuda.Device(0).getAttribute(cuda.DeviceAttribute.MANAGED_MEMORY)) this.skip();
  });

  it('managedZeros/Empty: arrays both host and device address', async function () {
    const array = cuda.managedZeros(1 << 20, 'float32'); // 4 MB
    assert.ok(array instanceof Float32Array);
    assert.strictEqual(array.length, 1 << 20);
    assert.ok(array.every((x) => x === 0));
    const allocation = cuda.hostAllocationOf(array);
    assert.ok(allocation instanceof cuda.ManagedAllocation);
    assert.ok(allocation instanceof cuda.HostPointer);
    assert.strictEqual(allocation.size, 4 << 20);
    const pointer = allocation.getDevicePointer();
    assert.strictEqual(typeof pointer, 'bigint');
    const values = new Float32Array(random(4 << 20).buffer.slice(0, 4 << 20)).map((x) => (Number.isFinite(x) ? x : 1));
    array.set(values);
    const copy = cuda.memAlloc(4 << 20);
    cuda.memcpyDtoD(copy, allocation);
    assert.deepStrictEqual(cuda.fromDevice(copy, 1 << 20, 'float32'), values);
    cuda.memsetD32(allocation, 0x40490fdb, 16); // the device writes, the host reads
    cuda.Context.synchronizeSync();
    assert.ok(array.subarray(0, 16).every((x) => x === Math.fround(Math.PI)));

    const stream = new cuda.Stream();
    allocation.attach(cuda.MemAttachFlags.GLOBAL, stream);
    await stream.synchronize();
    assert.throws(() => allocation.attach(99, stream), { name: 'RangeError', message: /MemAttachFlags/ });
    assert.throws(() => allocation.attach(cuda.MemAttachFlags.HOST, 'x'), { name: 'TypeError', message: /stream/ });

    const host = cuda.managedEmptyLike(new Int32Array(10), { flags: cuda.MemAttachFlags.HOST });
    assert.ok(host instanceof Int32Array && host.length === 10);
    assert.ok(cuda.managedZerosLike(new Uint16Array(3)).every((x) => x === 0));

    allocation.free();
    allocation.free();
    assert.strictEqual(array.length, 0);
    assert.throws(() => allocation.getDevicePointer(), { name: 'LogicError' });
    assert.throws(() => cuda.memcpyDtoD(copy, allocation, 4), { name: 'LogicError' });
  });
});

describeGpu('registered host memory', function () {
  it('registerHostMemory page-locks an aligned array; unregister() and base', async function () {
    const { DEVICEMAP } = cuda.MemHostRegisterFlags;
    const base = cuda.alignedEmpty(16384, 'uint8');
    base.set(random(16384));
    const registered = cuda.registerHostMemory(base, DEVICEMAP);
    assert.notStrictEqual(registered, base);
    assert.ok(registered instanceof Uint8Array);
    assert.strictEqual(registered.buffer, base.buffer);
    assert.strictEqual(registered.byteOffset, base.byteOffset);
    assert.strictEqual(registered.length, base.length);
    const registration = cuda.hostAllocationOf(registered);
    assert.ok(registration instanceof cuda.RegisteredHostMemory);
    assert.strictEqual(registration.base, base);
    assert.strictEqual(registration.size, 16384);
    assert.strictEqual(registration.getFlags(), DEVICEMAP);
    assert.strictEqual(typeof registration.getDevicePointer(), 'bigint');
    assert.ok(cuda.hostAllocationOf(base) instanceof cuda.AlignedHostAllocation);

    const memory = cuda.memAlloc(16384);
    const stream = new cuda.Stream();
    cuda.memcpyHtoDAsync(memory, registered, stream);
    await stream.synchronize();
    assert.ok(Buffer.from(cuda.fromDevice(memory, 16384, 'uint8')).equals(Buffer.from(base)));
    const onDevice = cuda.memAlloc(16384);
    cuda.memcpyDtoD(onDevice, registration);
    assert.ok(Buffer.from(cuda.fromDevice(onDevice, 16384, 'uint8')).equals(Buffer.from(base)));

    assert.throws(() => cuda.hostAllocationOf(base).free(), {
      name: 'LogicError',
      message: /unregister\(\) on its RegisteredHostMemory first/,
    });
    assert.throws(
      () => cuda.registerHostMemory(base),
      (e) => e instanceof cuda.CudaError && e.api === 'cuMemHostRegister',
    );
    registration.unregister();
    registration.unregister();
    assert.throws(() => registration.getDevicePointer(), { name: 'LogicError' });
    assert.strictEqual(registered.length, 16384, 'the memory stays usable');
    const dataview = cuda.registerHostMemory(new DataView(base.buffer, base.byteOffset, 4096));
    assert.ok(dataview instanceof DataView && dataview.byteLength === 4096);
    cuda.hostAllocationOf(dataview)[Symbol.dispose]();
    cuda.hostAllocationOf(base).free();
    assert.strictEqual(registered.length, 0);
  });
});

describe('host memory through the stand-in driver (in a child process)', function () {
  const { run } = childRunner('cudadrv-host-');

  it("the addon detaches what it frees whatever lib/ asks, refuses aligned memory a registration pins, and a registration keeps its array's buffer alive (a freed array left writable corrupted the heap: the fuzzer's crashes of driver 580)", function () {
    run(`
      const binding = require(${JSON.stringify(path.join(ROOT, 'lib', 'internal', 'binding'))});
      const settle = async () => {
        for (let i = 0; i < 3; i++) {
          globalThis.gc();
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      for (const make of ['alignedZeros', 'pagelockedZeros', 'managedZeros']) {
        const array = cuda[make](8192, 'uint8');
        binding.hostFree(cuda.hostAllocationOf(array), false); // the old addon left array over freed memory
        assert.strictEqual(array.length, 0, make + ': freed memory reads as empty');
      }

      const base = cuda.alignedZeros(8192, 'uint8');
      const registered = cuda.registerHostMemory(base);
      assert.throws(() => binding.hostFree(cuda.hostAllocationOf(base)), {
        name: 'LogicError',
        message: 'free(): this memory is registered with the driver; call unregister() on its RegisteredHostMemory first',
      });
      binding.hostFree(cuda.hostAllocationOf(registered), true);
      base.fill(7);
      assert.strictEqual(registered[8191], 7, "a registration's memory stays usable once unregistered");
      cuda.hostAllocationOf(base).free();
      assert.strictEqual(base.length, 0);

      let registration = {};
      let weak;
      (() => {
        const array = cuda.alignedEmpty(8192, 'uint8');
        weak = new WeakRef(array.buffer);
        binding.hostRegister(registration, array, 0);
      })();
      await settle();
      assert.ok(weak.deref(), 'the registered buffer lives while its registration does');
      const ties = Object.getOwnPropertySymbols(registration);
      assert.strictEqual(ties.length, 1);
      assert.strictEqual(Reflect.deleteProperty(registration, ties[0]), false);
      assert.strictEqual(Reflect.set(registration, ties[0], null), false);
      await settle();
      assert.ok(weak.deref(), 'and JS cannot cut the tie');
      binding.hostFree(registration);
      registration = null;
      await settle();
      assert.strictEqual(weak.deref(), undefined, 'and is collected with it');
    `);
  });
});
