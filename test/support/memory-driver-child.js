'use strict';
// One scenario of test/memory/device-memory-driver.test.js, run in a process whose libcuda.so.1 is the stand-in
// driver (test/support/fake-driver/), with its call trace on: what JS sees is checked here with
// assert, and each step whose driver calls the parent checks is written between a "mark NAME" and
// an "end" line of the trace log. Prints as JSON what the parent needs besides.
const assert = require('assert');
const crypto = require('crypto');
const fs = require('fs');
const cuda = require('../..');
const binding = require('../../lib/internal/binding');
const { collectGarbage } = require('../../lib/internal/reclaim');

const LOG = process.env.FAKE_CUDA_LOG;
const MIB = 1 << 20;

// Runs fn between a mark and an end in the trace; returns what fn returns.
async function mark(name, fn) {
  fs.appendFileSync(LOG, `mark ${name}\n`);
  try {
    return await fn();
  } finally {
    fs.appendFileSync(LOG, 'end\n');
  }
}

const random = (n) => new Uint8Array(crypto.randomBytes(n));
const settle = () => new Promise((resolve) => setImmediate(resolve)); // finalizers run

function primary() {
  const context = new cuda.Device(0).retainPrimaryContext();
  context.push();
  return context;
}

const scenarios = {
  // Every byte through HtoD and DtoH, whole and through slices at odd offsets, from and to every
  // kind of host buffer.
  async copies() {
    primary();
    const data = random(4099);
    const memory = cuda.memAlloc(4099);
    cuda.memcpyHtoD(memory, data);
    const back = new Uint8Array(4099);
    cuda.memcpyDtoH(back, memory);
    assert.deepStrictEqual(back, data);
    const slice = memory.slice(7, 1001);
    const part = random(1001);
    cuda.memcpyHtoD(slice, Buffer.from(part));
    const whole = new Uint8Array(4099);
    cuda.memcpyDtoH(new DataView(whole.buffer), memory);
    assert.deepStrictEqual(whole.subarray(7, 1008), part);
    assert.deepStrictEqual(whole.subarray(0, 7), data.subarray(0, 7));
    assert.deepStrictEqual(whole.subarray(1008), data.subarray(1008));
    const floats = new Float32Array(250).map(() => Math.random());
    cuda.memcpyHtoD(slice, floats.buffer);
    const floatsBack = new Float32Array(250);
    cuda.memcpyDtoH(floatsBack, slice);
    assert.deepStrictEqual(floatsBack, floats);
    assert.throws(() => cuda.memcpyDtoH(new Uint8Array(1002), slice), { name: 'RangeError' });
    // Every kind of TypedArray (Float16Array where the runtime has it), at the addon itself: C
    // reads each at its own element width, whatever lib/ did.
    const binding = require('../../lib/internal/binding');
    const kinds = [
      Int8Array,
      Uint8Array,
      Uint8ClampedArray,
      Int16Array,
      Uint16Array,
      Int32Array,
      Uint32Array,
      Float32Array,
      Float64Array,
      BigInt64Array,
      BigUint64Array,
      ...(globalThis.Float16Array ? [globalThis.Float16Array] : []),
    ];
    for (const Kind of kinds) {
      cuda.memcpyHtoD(memory, data);
      const sentBytes = Uint8Array.from(random(8 * Kind.BYTES_PER_ELEMENT));
      binding.memcpyHtoD(memory.ptr, new Kind(sentBytes.buffer, 0, 8));
      const got = new Uint8Array(16 * Kind.BYTES_PER_ELEMENT).fill(0xa5);
      binding.memcpyDtoH(new Kind(got.buffer, 0, 16), memory.ptr);
      assert.deepStrictEqual(got.subarray(0, sentBytes.length), sentBytes, Kind.name);
      assert.deepStrictEqual(
        got.subarray(sentBytes.length),
        Uint8Array.from(data.subarray(sentBytes.length, got.length)),
        Kind.name,
      );
    }
    const stream = new cuda.Stream();
    const sent = random(64);
    cuda.memcpyHtoDAsync(memory, sent, stream);
    const received = new Uint8Array(64);
    cuda.memcpyDtoHAsync(received, memory, stream);
    assert.deepStrictEqual(received, sent);
    memory.free();
    return {};
  },

  // The calls of the operations bench/run.js measures, after a first one that sets up.
  async hotPaths() {
    primary();
    const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    const device = cuda.memAlloc(16);
    const host = random(16);
    const ops = {
      alloc: () => cuda.memAlloc(MIB).free(),
      'alloc.async': () => cuda.memAllocAsync(MIB, stream).free(stream),
      'alloc.async.own': () => cuda.memAllocAsync(MIB, stream).free(),
      'alloc.async.default': () => cuda.memAllocAsync(MIB).free(),
      'copy.htod.small': () => cuda.memcpyHtoD(device, host),
      'copy.dtoh.small': () => cuda.memcpyDtoH(host, device),
      'copy.htod.async': () => cuda.memcpyHtoDAsync(device, host, stream),
      'copy.dtoh.async': () => cuda.memcpyDtoHAsync(host, device, stream),
    };
    for (const [name, op] of Object.entries(ops)) {
      op();
      await mark(name, op);
    }
    return {};
  },

  // What the hot paths do where the context the driver needs is not current.
  async otherContexts() {
    const context = primary();
    const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    const memory = cuda.memAlloc(64);
    const ordered = cuda.memAllocAsync(64, stream);
    assert.strictEqual(memory.context, context);
    assert.strictEqual(ordered.context, context);
    cuda.Context.pop();
    assert.strictEqual(cuda.Context.getCurrent(), null);
    await mark('free without a context', () => memory.free());
    await mark('freeAsync without a context', () => ordered.free(stream));
    const late = await mark('allocAsync without a context', () => cuda.memAllocAsync(64, stream));
    assert.strictEqual(late.context, context);
    assert.throws(() => cuda.memAlloc(64), { name: 'LogicError', message: /no CUDA context is current/ });
    context.push();
    await mark('ordered free on the default stream', () => late.free(null));
    cuda.Context.pop();
    // a context made, detached, and made again at the same address: allocations name the new one
    const first = new cuda.Device(0).makeContext();
    const a = cuda.memAlloc(8);
    assert.strictEqual(a.context, first);
    a.free();
    first.detach();
    const second = new cuda.Device(0).makeContext();
    assert.strictEqual(second.address, first.address, 'the stand-in gives the same address');
    const b = cuda.memAlloc(8);
    assert.strictEqual(b.context, second);
    assert.notStrictEqual(b.context, first);
    context.push();
    const c = cuda.memAlloc(8);
    assert.strictEqual(c.context, context);
    cuda.Context.pop();
    const d = cuda.memAlloc(8);
    assert.strictEqual(d.context, second);
    for (const m of [b, c, d]) m.free();
    return {};
  },

  // free() twice, use after free, and ids that name nothing.
  async lifetimes() {
    primary();
    const stream = new cuda.Stream();
    const memory = cuda.memAlloc(100);
    const ptr = memory.ptr;
    assert.strictEqual(typeof ptr, 'bigint');
    assert.match(String(memory), /^DeviceAllocation\(0x[0-9a-f]+, 100 bytes\)$/);
    // Memory made straight through the addon, for its ids (what lib/ keeps private).
    const M = binding.layouts.made;
    const made = new Float64Array(M.count);
    const allocate = (size) => {
      const ptr = binding.memAlloc({}, size, made.buffer);
      return { ptr, size, id: made[M.id], freed: false };
    };
    const first = allocate(100);
    const id = first.id;
    await mark('free twice', () => {
      memory.free();
      memory.free();
      binding.memFree(id, null);
      binding.memFree(id, null);
    });
    assert.throws(() => memory.ptr, { name: 'LogicError', message: /DeviceAllocation has been freed/ });
    assert.throws(() => cuda.memcpyHtoD(memory, new Uint8Array(4)), { name: 'LogicError' });
    const next = allocate(100); // the freed one's slot, another generation
    await mark('stale and bad ids', () => {
      for (const bad of [id, -1, 0.5, NaN, Infinity, 2 ** 53, 2 ** 60, next.id + 2 ** 24, next.id + 1]) {
        assert.strictEqual(binding.memFree(bad, null), undefined);
      }
    });
    for (const bad of ['1', 1n, null, undefined, {}]) {
      assert.throws(() => binding.memFree(bad, null), { name: 'TypeError', message: 'expected a memory id' });
    }
    for (const made of [undefined, new Float64Array(3), new ArrayBuffer(16), new ArrayBuffer(23)]) {
      assert.throws(() => binding.memAlloc({}, 8, made), {
        name: 'TypeError',
        message: /ArrayBuffer of layouts.made.count doubles/,
      });
    }
    const detached = new ArrayBuffer(24);
    structuredClone(detached, { transfer: [detached] });
    assert.throws(() => binding.memAlloc({}, 8, detached), { name: 'TypeError' });
    const ordered = cuda.memAllocAsync(64, stream);
    stream.destroy();
    assert.throws(() => ordered.free(), { name: 'LogicError', message: /Stream has been destroyed/ });
    assert.throws(() => cuda.memAllocAsync(64, stream), { name: 'LogicError', message: /Stream has been destroyed/ });
    assert.throws(() => binding.memFree(next.id, {}), { name: 'TypeError', message: 'expected a Stream' });
    binding.memFree(next.id, null);
    // many live at once: the table grows, and every id names its own memory
    const many = Array.from({ length: 300 }, (_, i) => allocate(i + 1));
    const ids = new Set(many.map((m) => m.id));
    assert.strictEqual(ids.size, 300);
    for (const m of many.filter((_, i) => i % 2)) {
      binding.memFree(m.id, null);
      m.freed = true;
    }
    for (const m of many) {
      const data = random(m.size);
      if (m.freed) continue;
      binding.memcpyHtoD(m.ptr, data);
      const back = new Uint8Array(m.size);
      binding.memcpyDtoH(back, m.ptr);
      assert.deepStrictEqual(back, data);
    }
    await mark('free the rest', () => {
      for (const m of many) binding.memFree(m.id, null);
    });
    return {};
  },

  // Dropped allocations are released once, in their context, off the main thread; freed ones
  // never again.
  async collected() {
    primary();
    const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
    for (let i = 0; i < 20; i++) cuda.memAlloc(1024).free();
    for (let i = 0; i < 20; i++) cuda.memAllocAsync(1024, stream).free();
    await mark('freed, then collected', async () => {
      global.gc();
      await settle();
      collectGarbage();
    });
    (() => {
      for (let i = 0; i < 5; i++) cuda.memAlloc(1024);
      for (let i = 0; i < 3; i++) cuda.memAllocAsync(1024, stream);
    })();
    await mark('dropped, then collected', async () => {
      global.gc();
      await settle();
      await settle();
      collectGarbage(); // waits for the reaper
    });
    (() => {
      for (let i = 0; i < 4; i++) cuda.memAlloc(1024);
    })();
    const dropped = await mark('dropped, then reclaimed when out of memory', () => {
      try {
        cuda.memAlloc(2 ** 52);
        return 'allocated';
      } catch (error) {
        return { name: error.name, api: error.api };
      }
    });
    await mark('their finalizers', async () => {
      await settle();
      await settle();
      collectGarbage();
    });
    return { dropped, stats: cuda.stats() };
  },
};

scenarios[process.argv[2]]().then(
  (out) => process.stdout.write(JSON.stringify(out)),
  (error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  },
);
