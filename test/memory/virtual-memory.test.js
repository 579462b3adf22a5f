'use strict';
// Virtual memory management through the stand-in driver (test/support/fake-driver/vmm.c), whose
// physical allocations are memfds mapped into reserved host addresses: bytes written through one
// mapping are read through another, and a GrowableBuffer keeps its address and contents as it grows.
const assert = require('assert');
const path = require('path');
const cuda = require('../..');
const { childRunner, ROOT } = require('../support/graph-child');

describe('virtual memory (checked before the driver)', function () {
  it('wrong options and arguments are TypeErrors and RangeErrors saying what to give', function () {
    const cases = [
      [() => new cuda.PhysicalMemory(1, { device: 0 }), 'TypeError', 'device must be a Device, not number 0'],
      [() => new cuda.PhysicalMemory(1, { handleType: 'x', device: {} }), 'TypeError', /device must be a Device/],
      [
        () => new cuda.PhysicalMemory(1, { size: 1 }),
        'TypeError',
        /unknown option 'size'; the options are device, handleType/,
      ],
      [() => cuda.PhysicalMemory.importHandle(3, -1), 'RangeError', /bytes must be/],
      [() => new cuda.VirtualAddressRange('1'), 'TypeError', 'bytes must be an integer number, not the string "1"'],
      [
        () => new cuda.VirtualAddressRange(1, { align: 1 }),
        'TypeError',
        /unknown option 'align'; the options are alignment/,
      ],
      [() => new cuda.GrowableBuffer(), 'TypeError', 'maxBytes must be an integer number, not undefined'],
      [() => new cuda.GrowableBuffer({ maxBytes: 1, device: 1 }), 'TypeError', 'device must be a Device, not number 1'],
      [() => cuda.memGetAllocationGranularity({ recommended: 1, device: {} }), 'TypeError', /device must be a Device/],
    ];
    for (const [call, name, message] of cases) assert.throws(call, { name, message });
  });
});

describe('virtual memory through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run, dir } = childRunner('cudadrv-vmm-', { FAKE_CUDA_DEVICES: '2' });

  it('physical memory mapped into two ranges: what is written through one is read through the other; mappings are checked', function () {
    run(`
      const g = cuda.memGetAllocationGranularity();
      assert.strictEqual(cuda.memGetAllocationGranularity({ recommended: true }) % g, 0);
      const physical = new cuda.PhysicalMemory(2 * g);
      const a = new cuda.VirtualAddressRange(4 * g);
      const b = new cuda.VirtualAddressRange(2 * g);
      a.map(g, physical);
      b.map(0, physical, { physicalOffset: g, bytes: g });
      b.map(g, physical, { bytes: g });
      physical.release(); // the mappings keep it
      a.setAccess(g, 2 * g, 0);
      for (const offset of [0, g]) b.setAccess(offset, g, new cuda.Device(0), 'readwrite');
      const data = Uint8Array.from({ length: 2 * g }, () => Math.floor(Math.random() * 256));
      cuda.memcpyHtoD(a.ptr + BigInt(g), data);
      const back = cuda.fromDevice(b, 2 * g, 'uint8');
      assert.deepStrictEqual(back.subarray(0, g), data.subarray(g), 'b starts at the second half');
      assert.deepStrictEqual(back.subarray(g), data.subarray(0, g), 'and goes on with the first');
      // mappings are checked against the range and the allocation, and against each other
      const more = new cuda.PhysicalMemory(g);
      assert.throws(() => a.map(0, more, { bytes: 2 * g }), { name: 'RangeError', message: 'the mapping reaches past the end of the PhysicalMemory' });
      assert.throws(() => a.map(4 * g, more), { name: 'RangeError', message: 'offset and bytes must name a non-empty part of the range' });
      assert.throws(() => a.map(2 * g, more), { name: 'LogicError', message: 'the mapping overlaps one already made; unmap that first' });
      assert.throws(() => a.unmap(g, g), { name: 'LogicError', message: /no mapping was made at that offset of that size/ });
      assert.throws(() => a.setAccess(0, g, 0, 'rw'), { name: 'TypeError', message: /access must be 'none', 'read' or 'readwrite'/ });
      assert.throws(() => a.map(0, {}), { name: 'TypeError', message: 'physical must be a PhysicalMemory, not an Object' });
      a.map(0, more);
      a.unmap(0, g);
      a.unmap(g, 2 * g);
      assert.throws(() => cuda.memcpyHtoD(a.ptr + BigInt(g), data), { name: 'LogicError', message: /cuMemcpyHtoD failed/ }, 'unmapped addresses are no memory');
      more.release();
      more.release();
      assert.throws(() => a.map(0, more), { name: 'LogicError', message: 'this PhysicalMemory has been released; make a new one' });
      a.free();
      a.free();
      assert.throws(() => a.ptr, { name: 'LogicError', message: 'this VirtualAddressRange has been freed; reserve a new one' });
      assert.throws(() => a.map(0, physical), { name: 'LogicError' });
      b.free(); // unmaps what it still maps
    `);
  });

  it('a GrowableBuffer keeps its address and contents as it grows, in granules, up to maxBytes', function () {
    run(`
      const g = cuda.memGetAllocationGranularity();
      const buffer = new cuda.GrowableBuffer({ maxBytes: 10 * g, initialBytes: 100, peers: [new cuda.Device(1)] });
      assert.deepStrictEqual([buffer.size, buffer.maxBytes], [100, 10 * g]);
      const address = buffer.ptr;
      const first = Uint8Array.from({ length: 100 }, () => Math.floor(Math.random() * 256));
      cuda.memcpyHtoD(buffer, first);
      assert.throws(() => cuda.memcpyHtoD(buffer, new Uint8Array(101)), { name: 'RangeError', message: /101 bytes do not fit in 100 bytes/ });
      for (const size of [g + 1, 3 * g, 3 * g - 5, 10 * g]) {
        buffer.grow(size);
        assert.strictEqual(buffer.ptr, address);
        assert.strictEqual(buffer.size, Math.max(size, 3 * g * (size >= 3 * g - 5 ? 1 : 0), g + 1));
        assert.deepStrictEqual(cuda.fromDevice(buffer, 100, 'uint8'), first);
      }
      const tail = Uint8Array.from({ length: g }, (_, i) => i * 13);
      cuda.memcpyHtoD(buffer.ptr + BigInt(9 * g), tail);
      assert.deepStrictEqual(cuda.fromDevice(buffer.ptr + BigInt(9 * g), g, 'uint8'), tail);
      assert.throws(() => buffer.grow(10 * g + 1), { name: 'RangeError', message: \`grow(\${10 * g + 1}): past the \${10 * g} bytes reserved (maxBytes)\` });
      buffer.free();
      assert.throws(() => buffer.ptr, { name: 'LogicError' });
    `);
  });

  it('dropped ranges are unmapped and freed, and dropped physical memory released, by the garbage collector', function () {
    const counts = path.join(dir(), 'counts');
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'stand-in-driver'))});
      const fds = () => fs.readdirSync('/proc/self/fd').length;
      const before = fds();
      (() => {
        const g = cuda.memGetAllocationGranularity();
        for (let i = 0; i < 10; i++) {
          new cuda.GrowableBuffer({ maxBytes: 4 * g, initialBytes: 2 * g });
          new cuda.PhysicalMemory(g, { handleType: 'posix-fd' }).exportHandle();
        }
      })();
      assert.strictEqual(liveCounts(${JSON.stringify(counts)}).mapped, 10);
      for (let i = 0; i < 10 && (liveCounts(${JSON.stringify(counts)}).mapped || fds() > before); i++) {
        globalThis.gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.strictEqual(liveCounts(${JSON.stringify(counts)}).mapped, 0);
      assert.strictEqual(fds(), before, 'every allocation and exported descriptor was closed');
    `,
      { FAKE_CUDA_COUNTS: counts },
    );
  });
});
