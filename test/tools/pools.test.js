'use strict';
const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');
const cuda = require('../..');
const {
  bitlog2,
  binNumber,
  allocSize,
  DeviceMemoryPool,
  PooledDeviceAllocation,
  PageLockedAllocator,
  PageLockedMemoryPool,
  PooledHostAllocation,
} = require('../../lib/tools');
const { devicePointer, deviceExtent } = require('../../lib/internal/pointer');
const { describeGpu } = require('../support/gpu');

// PyCUDA's mempool.hpp bin_number / alloc_size, in BigInt, with 4 mantissa bits.
const M = 4n;
function refBitlog2(n) {
  return n === 0n ? 0n : BigInt(n.toString(2).length - 1);
}
function shift(x, by) {
  return by >= 0n ? x << by : x >> -by;
}
function refBinNumber(size) {
  const l = refBitlog2(size);
  const shifted = shift(size, M - l);
  return Number((l << M) | (shifted & ((1n << M) - 1n)));
}
function refAllocSize(bin) {
  const b = BigInt(bin);
  const exponent = b >> M;
  const mantissa = b & ((1n << M) - 1n);
  let ones = shift(1n, exponent - M);
  if (ones) ones -= 1n;
  const head = shift((1n << M) | mantissa, exponent - M);
  assert.strictEqual(ones & head, 0n);
  return head | ones;
}

// Deterministic random numbers (xorshift), so a failure can be replayed.
function random(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

// Sizes to check: every size to 2^16, around every power of two and every bin edge to 2^53, and
// random ones of every magnitude.
function sizesToCheck() {
  const sizes = new Set();
  for (let s = 0; s <= 1 << 16; s++) sizes.add(s);
  const near = (v) => {
    for (let d = -2; d <= 2; d++) if (v + d >= 0 && v + d <= Number.MAX_SAFE_INTEGER) sizes.add(v + d);
  };
  for (let k = 0; k <= 53; k++) near(2 ** k);
  for (let bin = 0; bin < 53 * 16; bin++) near(Number(refAllocSize(bin)));
  const rand = random(12345);
  for (let k = 1; k <= 53; k++) {
    for (let i = 0; i < 2000; i++) sizes.add(Math.min(Number.MAX_SAFE_INTEGER, Math.floor(rand() * 2 ** k)));
  }
  return [...sizes].sort((a, b) => a - b);
}

describe("memory pool bins (PyCUDA's binning, 4 significant bits)", function () {
  const sizes = sizesToCheck();

  it("binNumber and allocSize equal PyCUDA's formulas in 64-bit integers", function () {
    for (const s of sizes) {
      const bin = binNumber(s);
      if (bin !== refBinNumber(BigInt(s))) assert.fail(`binNumber(${s}) = ${bin}, PyCUDA's ${refBinNumber(BigInt(s))}`);
      if (BigInt(allocSize(bin)) !== refAllocSize(bin))
        assert.fail(`allocSize(${bin}) = ${allocSize(bin)}, PyCUDA's ${refAllocSize(bin)}`);
      if (bitlog2(s) !== Number(refBitlog2(BigInt(s)))) assert.fail(`bitlog2(${s})`);
    }
  });

  it("a bin's blocks hold every size of the bin, rounding up by less than 6.25%", function () {
    let worst = 0;
    for (const s of sizes) {
      const alloc = allocSize(binNumber(s));
      if (s === 0) {
        assert.strictEqual(alloc, 1);
        continue;
      }
      if (!(alloc >= s)) assert.fail(`allocSize(binNumber(${s})) = ${alloc} < ${s}`);
      if (!(16n * BigInt(alloc - s) < BigInt(s))) assert.fail(`${s} rounds up to ${alloc}: more than 1/16`);
      if (s < 16 && alloc !== s) assert.fail(`small size ${s} rounds to ${alloc}`);
      worst = Math.max(worst, (alloc - s) / s);
    }
    assert.ok(worst > 0.0624 && worst < 0.0625, `worst rounding ${worst}`);
  });

  it("bins grow with sizes; a bin's block size falls in the bin and the next size in the next bin", function () {
    let previous = -1;
    for (const s of sizes) {
      const bin = binNumber(s);
      if (bin < previous) assert.fail(`binNumber(${s}) = ${bin} after ${previous}`);
      previous = bin;
      const alloc = allocSize(bin);
      if (binNumber(alloc) !== bin) assert.fail(`binNumber(allocSize(${bin})) = ${binNumber(alloc)}`);
      if (alloc < Number.MAX_SAFE_INTEGER && binNumber(alloc + 1) <= bin)
        assert.fail(`${alloc + 1} is not past bin ${bin}`);
    }
    assert.strictEqual(binNumber(Number.MAX_SAFE_INTEGER), 52 * 16 + 15);
    assert.strictEqual(allocSize(52 * 16 + 15), Number.MAX_SAFE_INTEGER);
    assert.strictEqual(binNumber(1 << 20), 320);
    assert.strictEqual(allocSize(320), (1 << 20) + (1 << 16) - 1);
  });

  it('takes bigints; refuses sizes that are not safe non-negative integers', function () {
    assert.strictEqual(binNumber(1000n), binNumber(1000));
    assert.throws(() => binNumber(-1), { name: 'RangeError', message: /size must be an integer from 0/ });
    assert.throws(() => binNumber(2 ** 53), { name: 'RangeError' });
    assert.throws(() => binNumber(1.5), { name: 'RangeError' });
    assert.throws(() => binNumber('8'), { name: 'TypeError', message: /size must be an integer number/ });
    assert.throws(() => allocSize(53 * 16), { name: 'RangeError', message: /bin must be an integer from 0 to 847/ });
  });
});

// A device allocator over a pretend device of `capacity` bytes, with a log of what it did.
function fakeDevice(capacity = Infinity) {
  const dev = {
    used: 0,
    live: new Set(),
    log: [],
    next: 0x7f0000000000n,
    allocate(bytes) {
      if (dev.used + bytes > capacity) {
        dev.log.push(`oom ${bytes}`);
        throw new cuda.MemoryError('cuMemAlloc failed: out of memory', {
          code: 2,
          codeName: 'CUDA_ERROR_OUT_OF_MEMORY',
          api: 'cuMemAlloc',
        });
      }
      dev.used += bytes;
      dev.log.push(`alloc ${bytes}`);
      const ptr = dev.next;
      dev.next += BigInt(bytes) + 256n;
      const raw = {
        ptr,
        size: bytes,
        free() {
          assert.ok(dev.live.delete(raw), 'freed once');
          dev.used -= bytes;
          dev.log.push(`free ${bytes}`);
        },
      };
      dev.live.add(raw);
      return raw;
    },
  };
  dev.pool = () => new DeviceMemoryPool(dev.allocate);
  return dev;
}

function counts(pool) {
  return {
    held: pool.heldBlocks,
    active: pool.activeBlocks,
    managed: pool.managedBytes,
    activeBytes: pool.activeBytes,
  };
}

async function collect(until) {
  for (let i = 0; i < 50 && !until(); i++) {
    global.gc();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('DeviceMemoryPool (with a pretend device)', function () {
  it("hands out a block of the bin's size, and the same block again after free()", function () {
    const dev = fakeDevice();
    const pool = dev.pool();
    const a = pool.allocate(1000);
    assert.ok(a instanceof PooledDeviceAllocation);
    assert.strictEqual(a.size, 1000);
    assert.strictEqual(a.pool, pool);
    assert.strictEqual(typeof a.ptr, 'bigint');
    assert.strictEqual(a.getPointer(), a.ptr);
    assert.strictEqual(devicePointer(a), a.ptr);
    assert.strictEqual(deviceExtent(a), 1000);
    const block = allocSize(binNumber(1000));
    assert.deepStrictEqual(dev.log, [`alloc ${block}`]);
    assert.deepStrictEqual(counts(pool), { held: 0, active: 1, managed: block, activeBytes: 1000 });
    const ptr = a.ptr;
    a.free();
    assert.deepStrictEqual(counts(pool), { held: 1, active: 0, managed: block, activeBytes: 0 });
    const b = pool.allocate(block); // the largest size of the same bin
    assert.strictEqual(b.ptr, ptr);
    assert.strictEqual(b.size, block);
    assert.deepStrictEqual(dev.log, [`alloc ${block}`], 'no second driver allocation');
    const c = pool.allocate(2000n);
    assert.notStrictEqual(c.ptr, ptr);
    assert.strictEqual(c.size, 2000);
    assert.deepStrictEqual(counts(pool), {
      held: 0,
      active: 2,
      managed: block + allocSize(binNumber(2000)),
      activeBytes: block + 2000,
    });
  });

  it('free() twice does nothing; a freed allocation refuses use; Symbol.dispose frees', function () {
    const pool = fakeDevice().pool();
    const a = pool.allocate(64);
    a.free();
    a.free();
    assert.strictEqual(pool.heldBlocks, 1);
    assert.throws(() => a.ptr, { name: 'LogicError', message: /pooled allocation has been freed/ });
    assert.throws(() => a.getPointer(), { name: 'LogicError' });
    assert.throws(() => devicePointer(a), { name: 'LogicError' });
    assert.strictEqual(String(a), 'PooledDeviceAllocation(freed)');
    const b = pool.allocate(64);
    b[Symbol.dispose]();
    assert.deepStrictEqual(counts(pool), { held: 1, active: 0, managed: allocSize(binNumber(64)), activeBytes: 0 });
    assert.throws(() => new PooledDeviceAllocation(), { name: 'TypeError', message: /pool\.allocate/ });
  });

  it('freeHeld() frees the held blocks only; stopHolding() frees them and every later one', function () {
    const dev = fakeDevice();
    const pool = dev.pool();
    const allocs = [100, 200, 300, 4000].map((s) => pool.allocate(s));
    allocs[0].free();
    allocs[1].free();
    dev.log.length = 0;
    pool.freeHeld();
    assert.deepStrictEqual(dev.log, [`free ${allocSize(binNumber(100))}`, `free ${allocSize(binNumber(200))}`]);
    assert.deepStrictEqual(counts(pool), {
      held: 0,
      active: 2,
      managed: allocSize(binNumber(300)) + allocSize(binNumber(4000)),
      activeBytes: 4300,
    });
    allocs[2].free();
    assert.strictEqual(pool.heldBlocks, 1);
    dev.log.length = 0;
    pool.stopHolding();
    assert.deepStrictEqual(dev.log, [`free ${allocSize(binNumber(300))}`]);
    allocs[3].free();
    assert.deepStrictEqual(dev.log, [`free ${allocSize(binNumber(300))}`, `free ${allocSize(binNumber(4000))}`]);
    assert.deepStrictEqual(counts(pool), { held: 0, active: 0, managed: 0, activeBytes: 0 });
    assert.strictEqual(dev.live.size, 0);
  });

  it('[Symbol.dispose]() stops holding: a pool in a using block frees what it held at its end', function () {
    const dev = fakeDevice();
    const pool = dev.pool();
    const kept = pool.allocate(500);
    pool.allocate(100).free();
    dev.log.length = 0;
    pool[Symbol.dispose]();
    assert.deepStrictEqual(dev.log, [`free ${allocSize(binNumber(100))}`]);
    kept.free();
    assert.deepStrictEqual(dev.log, [`free ${allocSize(binNumber(100))}`, `free ${allocSize(binNumber(500))}`]);
  });

  it('out of memory: frees held blocks largest first until the allocation fits', function () {
    const dev = fakeDevice(8000);
    const pool = dev.pool();
    for (const s of [1000, 3000, 2000, 500]) pool.allocate(s).free(); // held: 4 blocks, 6652 bytes
    const held = [1000, 3000, 2000, 500].map((s) => allocSize(binNumber(s)));
    dev.log.length = 0;
    const big = pool.allocate(5000); // a 5119-byte block: needs the 3071 and 2047 blocks gone
    const need = allocSize(binNumber(5000));
    assert.deepStrictEqual(dev.log, [
      `oom ${need}`,
      `free ${held[1]}`,
      `oom ${need}`,
      `free ${held[2]}`,
      `alloc ${need}`,
    ]);
    assert.deepStrictEqual(counts(pool), { held: 2, active: 1, managed: held[0] + held[3] + need, activeBytes: 5000 });
    big.free();
  });

  it('out of memory after freeing every held block is a MemoryError; active blocks are untouched', function () {
    const dev = fakeDevice(10000);
    const pool = dev.pool();
    const active = pool.allocate(5000);
    pool.allocate(3000).free();
    dev.log.length = 0;
    assert.throws(
      () => pool.allocate(6000),
      (error) => {
        assert.ok(error instanceof cuda.MemoryError);
        assert.strictEqual(
          error.message,
          `DeviceMemoryPool: out of memory for a ${allocSize(binNumber(6000))}-byte block ` +
            '(6000 bytes asked for) after freeing every held block (cuMemAlloc failed: out of memory); in use: 1 blocks, 5000 bytes',
        );
        assert.strictEqual(error.code, 2);
        assert.strictEqual(error.api, 'cuMemAlloc');
        assert.ok(error.cause instanceof cuda.MemoryError);
        return true;
      },
    );
    assert.deepStrictEqual(counts(pool), {
      held: 0,
      active: 1,
      managed: allocSize(binNumber(5000)),
      activeBytes: 5000,
    });
    assert.strictEqual(active.size, 5000);
    assert.strictEqual(dev.live.size, 1);
  });

  it('an allocator failure other than out-of-memory passes through and frees nothing', function () {
    const dev = fakeDevice();
    let fail = false;
    const pool = new DeviceMemoryPool((bytes) => {
      if (fail) throw new cuda.LogicError('cuMemAlloc failed: invalid context');
      return dev.allocate(bytes);
    });
    pool.allocate(100).free();
    fail = true;
    assert.throws(() => pool.allocate(5000), { name: 'LogicError', message: 'cuMemAlloc failed: invalid context' });
    assert.strictEqual(pool.heldBlocks, 1);
  });

  it('random allocations and frees on a small device match a model of the pool exactly', function () {
    const capacity = 1 << 20;
    const dev = fakeDevice(capacity);
    const pool = dev.pool();
    const rand = random(777);
    const live = [];
    const heldByBin = new Map();
    let held = 0;
    let activeManaged = 0;
    let activeBytes = 0;
    let failures = 0;
    for (let step = 0; step < 20000; step++) {
      if (live.length > 0 && rand() < 0.45) {
        const [a] = live.splice(Math.floor(rand() * live.length), 1);
        const bin = binNumber(a.size);
        heldByBin.set(bin, (heldByBin.get(bin) || 0) + 1);
        held++;
        activeManaged -= allocSize(bin);
        activeBytes -= a.size;
        a.free();
      } else {
        const size = Math.floor(rand() ** 3 * capacity * 0.6);
        const bin = binNumber(size);
        if (heldByBin.get(bin)) {
          heldByBin.set(bin, heldByBin.get(bin) - 1);
          held--;
        } else if (allocSize(bin) > capacity - activeManaged) {
          // Only when even freeing every held block would not make room.
          assert.throws(() => pool.allocate(size), cuda.MemoryError);
          heldByBin.clear();
          held = 0;
          failures++;
          continue;
        } else {
          // Fits once enough of the largest held blocks are gone.
          let free = capacity - dev.used;
          const bins = [...heldByBin.keys()].sort((x, y) => y - x);
          while (free < allocSize(bin)) {
            const b = bins.find((x) => heldByBin.get(x) > 0);
            heldByBin.set(b, heldByBin.get(b) - 1);
            held--;
            free += allocSize(b);
          }
        }
        const a = pool.allocate(size);
        live.push(a);
        activeManaged += allocSize(bin);
        activeBytes += size;
      }
      const heldBytes = [...heldByBin].reduce((sum, [b, n]) => sum + n * allocSize(b), 0);
      const actual = counts(pool);
      const expected = { held, active: live.length, managed: activeManaged + heldBytes, activeBytes };
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        assert.deepStrictEqual(actual, expected, `at step ${step}`);
      }
      if (dev.used !== actual.managed) assert.fail(`device holds ${dev.used}, pool says ${actual.managed}`);
    }
    assert.ok(failures > 10, `${failures} allocations failed`);
    for (const a of live) a.free();
    pool.freeHeld();
    assert.strictEqual(dev.used, 0);
  });

  it('an allocation collected without free() gives its block back', async function () {
    const pool = fakeDevice().pool();
    (() => pool.allocate(12345))();
    const kept = pool.allocate(100);
    await collect(() => pool.heldBlocks === 1);
    assert.deepStrictEqual(counts(pool), {
      held: 1,
      active: 1,
      managed: allocSize(binNumber(12345)) + allocSize(binNumber(100)),
      activeBytes: 100,
    });
    kept.free();
  });

  it("checks its arguments and its allocator's results", function () {
    assert.throws(() => new DeviceMemoryPool(5), { name: 'TypeError', message: /allocator must be a function/ });
    const pool = fakeDevice().pool();
    assert.throws(() => pool.allocate(-1), { name: 'RangeError', message: /size/ });
    assert.throws(() => pool.allocate('1'), { name: 'TypeError', message: /size/ });
    assert.deepStrictEqual(counts(pool), { held: 0, active: 0, managed: 0, activeBytes: 0 });
    assert.throws(() => new DeviceMemoryPool(() => 42).allocate(8), {
      name: 'TypeError',
      message: /allocator must return device memory with free\(\), not number 42/,
    });
    let freed = 0;
    const junk = new DeviceMemoryPool(() => ({ ptr: 'x', free: () => freed++ }));
    assert.throws(() => junk.allocate(8), { name: 'TypeError', message: /allocator result must be device memory/ });
    assert.strictEqual(freed, 1, 'a block it cannot use goes back to the allocator');
    assert.deepStrictEqual(counts(junk), { held: 0, active: 0, managed: 0, activeBytes: 0 });
  });
});

// A host allocator over ordinary memory, with a log.
function fakeHost() {
  const host = {
    log: [],
    allocate(bytes) {
      host.log.push(`alloc ${bytes}`);
      return new Uint8Array(bytes);
    },
    free(array) {
      host.log.push(`free ${array.byteLength}`);
    },
  };
  return host;
}

describe('PageLockedMemoryPool (with a pretend allocator)', function () {
  it('allocate(shape, dtype) gives a TypedArray over a pooled block, reused after free()', function () {
    const host = fakeHost();
    const pool = new PageLockedMemoryPool(host);
    const a = pool.allocate([2, 3], 'float32');
    assert.ok(a instanceof Float32Array);
    assert.strictEqual(a.length, 6);
    const block = allocSize(binNumber(24));
    assert.strictEqual(a.buffer.byteLength, block);
    assert.deepStrictEqual(host.log, [`alloc ${block}`]);
    const alloc = PooledHostAllocation.of(a);
    assert.ok(alloc instanceof PooledHostAllocation);
    assert.strictEqual(cuda.hostAllocationOf(a), alloc, "the array's base is its pooled allocation");
    assert.strictEqual(alloc.size, 24);
    assert.strictEqual(alloc.pool, pool);
    assert.strictEqual(PooledHostAllocation.of(new Float32Array(6)), null);
    assert.deepStrictEqual(counts(pool), { held: 0, active: 1, managed: block, activeBytes: 24 });
    alloc.free();
    alloc.free();
    assert.deepStrictEqual(counts(pool), { held: 1, active: 0, managed: block, activeBytes: 0 });
    const b = pool.allocate(6, Int32Array);
    assert.strictEqual(b.buffer, a.buffer);
    assert.ok(b instanceof Int32Array && b.length === 6);
    assert.deepStrictEqual(host.log, [`alloc ${block}`]);
    PooledHostAllocation.of(b)[Symbol.dispose]();
    pool.stopHolding();
    assert.deepStrictEqual(host.log, [`alloc ${block}`, `free ${block}`]);
  });

  it('an array collected without free() gives its block back; its allocation then frees nothing', async function () {
    const pool = new PageLockedMemoryPool(fakeHost());
    let alloc = (() => PooledHostAllocation.of(pool.allocate(1000, 'uint8')))();
    await collect(() => pool.heldBlocks === 1);
    assert.deepStrictEqual(counts(pool), { held: 1, active: 0, managed: allocSize(binNumber(1000)), activeBytes: 0 });
    alloc.free();
    assert.strictEqual(pool.heldBlocks, 1);
    alloc = null;
  });

  it('checks its allocator and its results', function () {
    assert.throws(() => new PageLockedMemoryPool({}), {
      name: 'TypeError',
      message: /allocator must be a PageLockedAllocator/,
    });
    const returned = [];
    const pool = new PageLockedMemoryPool({ allocate: () => new Float32Array(100), free: (a) => returned.push(a) });
    assert.throws(() => pool.allocate(4, 'uint8'), {
      name: 'TypeError',
      message: /allocate\(4\) must return a Uint8Array of at least 4 bytes/,
    });
    assert.ok(returned[0] instanceof Float32Array, 'what it cannot use goes back to the allocator');
    assert.throws(() => new PageLockedAllocator(-1), { name: 'RangeError', message: /flags/ });
    // host memory of another kind is not the allocator's to free (found by the fuzzer: a registered
    // array's allocation has no free(), and the engine's TypeError named that)
    const aligned = cuda.alignedEmpty(64, Uint8Array);
    for (const array of [aligned, new Uint8Array(8), null]) {
      assert.throws(() => new PageLockedAllocator().free(/** @type {any} */ (array)), {
        name: 'TypeError',
        message: /^free\(array\): array must be pinned memory from allocate\(\), not /,
      });
    }
    assert.strictEqual(aligned.length, 64, 'the aligned array was not freed');
    assert.strictEqual(new PageLockedAllocator(cuda.HostAllocFlags.PORTABLE).flags, cuda.HostAllocFlags.PORTABLE);
  });
});

function random32(n, seed) {
  const rand = random(seed);
  return Float32Array.from({ length: n }, () => rand() * 2 - 1);
}

describeGpu('memory pools on the GPU', function () {
  it('pooled device memory goes wherever device memory goes, and comes back to the pool', async function () {
    const pool = new DeviceMemoryPool();
    const n = 1 << 18; // 1 MiB of float32
    const a = pool.allocate(n * 4);
    const data = random32(n, 1);
    cuda.memcpyHtoD(a, data);
    const back = new Float32Array(n);
    cuda.memcpyDtoH(back, a);
    assert.deepStrictEqual(back, data);
    const b = pool.allocate(n * 4);
    cuda.memcpyDtoD(b, a, n * 4);
    cuda.memsetD32(a, 0, n);
    const { SourceModule } = require('../../lib/compiler');
    const scale = new SourceModule(`
      __global__ void scale(float *y, const float *x, float k, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = k * x[i];
      }`).getFunction('scale');
    scale(a, b, cuda.float32(3), cuda.int32(n), { block: [256, 1, 1], grid: [n / 256, 1] });
    await cuda.Context.synchronize();
    cuda.memcpyDtoH(back, a);
    assert.deepStrictEqual(
      back,
      data.map((x) => Math.fround(3 * x)),
    );
    const ptr = a.ptr;
    a.free();
    const before = cuda.memGetInfo().free;
    // 1 MiB is the bottom of its bin (PyCUDA's binning), so a little more shares its block
    const c = pool.allocate(n * 4 + 100);
    assert.strictEqual(c.ptr, ptr);
    assert.strictEqual(cuda.memGetInfo().free, before, 'served from the pool');
    assert.throws(() => cuda.memcpyHtoD(c, new Float32Array(n + 26)), RangeError, 'bounds are the requested size');
    c.free();
    b.free();
    assert.deepStrictEqual(counts(pool), {
      held: 2,
      active: 0,
      managed: 2 * allocSize(binNumber(n * 4)),
      activeBytes: 0,
    });
    pool.freeHeld();
    assert.strictEqual(pool.managedBytes, 0);
  });

  it('out of device memory: frees held blocks and retries, then a MemoryError', function () {
    this.timeout(120000);
    const pool = new DeviceMemoryPool();
    const gib = 2 ** 30;
    const blocks = [];
    while (cuda.memGetInfo().free > 3 * gib) blocks.push(pool.allocate(gib));
    for (const b of blocks) b.free();
    const held = pool.heldBlocks;
    assert.strictEqual(held, blocks.length);
    const { free } = cuda.memGetInfo();
    const big = pool.allocate(free + 2 * gib); // fits only once some held blocks are freed
    assert.ok(pool.heldBlocks < held && pool.heldBlocks > 0, `held ${pool.heldBlocks} of ${held}`);
    big.free();
    const total = cuda.memGetInfo().total;
    assert.throws(() => pool.allocate(total + gib), cuda.MemoryError);
    assert.strictEqual(pool.heldBlocks, 0);
    pool.freeHeld();
  });

  it('PageLockedMemoryPool gives pinned arrays that copies use, and reuses them', function () {
    const pool = new PageLockedMemoryPool();
    const n = 4096;
    const host = pool.allocate([n], 'float32');
    host.set(random32(n, 2));
    const dev = cuda.memAlloc(n * 4);
    cuda.memcpyHtoD(dev, host);
    const back = pool.allocate(n, Float32Array);
    cuda.memcpyDtoH(back, dev);
    assert.deepStrictEqual(back, host);
    const buffer = host.buffer;
    PooledHostAllocation.of(host).free();
    assert.strictEqual(pool.allocate(n, 'int32').buffer, buffer);
    pool.freeHeld();
    dev.free();
  });

  it('a process that exits with held and active blocks exits 0 and prints nothing', function () {
    const root = JSON.stringify(path.join(__dirname, '..', '..'));
    const scripts = [
      // active and held blocks of both pools at exit
      `require('cudadrv/autoinit');
       const { DeviceMemoryPool, PageLockedMemoryPool } = require('cudadrv/tools');
       const pool = new DeviceMemoryPool();
       const keep = [pool.allocate(1 << 20), pool.allocate(12345)];
       pool.allocate(1 << 22).free();
       const host = new PageLockedMemoryPool();
       const arrays = [host.allocate(1000, 'float32')];
       host.allocate(5000, 'uint8');
       globalThis.keep = { pool, keep, host, arrays };`,
      // the context detached first, the pool still holding its blocks
      `const { context } = require('cudadrv/autoprimaryctx');
       const { DeviceMemoryPool } = require('cudadrv/tools');
       const pool = new DeviceMemoryPool();
       const a = pool.allocate(4096);
       pool.allocate(8192).free();
       context.detach();
       globalThis.keep = { pool, a };`,
      // process.exit() in the middle of work, with collected allocations pending
      `require(${root}).Device.count();
       const { makeDefaultContext, DeviceMemoryPool } = require(${root} + '/lib/tools');
       makeDefaultContext();
       const pool = new DeviceMemoryPool();
       for (let i = 0; i < 1000; i++) pool.allocate(i * 1000);
       global.gc();
       process.exit(0);`,
    ];
    for (const script of scripts) {
      const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], {
        cwd: path.join(__dirname, '..', '..'),
      });
      assert.strictEqual(child.stderr.toString(), '', script);
      assert.strictEqual(child.stdout.toString(), '');
      assert.strictEqual(child.signal, null);
      assert.strictEqual(child.status, 0);
    }
  });
});
