'use strict';
// Pools, managed memory's placement, pointer attributes, batched copies and virtual memory on a
// GPU: every result computed by a kernel is checked against the CPU on random data.
const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');
const cuda = require('../..');
const { SourceModule } = require('../../lib/compiler');
const { describeGpu } = require('../support/gpu');
const { batch3dScenario } = require('../support/batch3d-scenario');

const KERNELS = `
  // y[i] = a * x[i] + y[i] (one fused multiply-add)
  extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaf(a, x[i], y[i]);
  }
  extern "C" __global__ void copy(float *to, const float *from, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) to[i] = from[i];
  }`;
const random = (n) => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
// a * x is exact in a double (two 24-bit significands), so one rounding of a * x + y to float is
// the fused multiply-add's
const saxpyReference = (a, x, y) => y.map((v, i) => Math.fround(a * x[i] + v));

describeGpu('memory pools, placement, batches and virtual memory on the GPU', function () {
  this.timeout(120000);
  let saxpy, copy;
  before(function () {
    const module = new SourceModule(KERNELS, { noExternC: true });
    saxpy = module.getFunction('saxpy');
    copy = module.getFunction('copy');
  });
  const copyKernel = (to, from, n, stream) =>
    copy(to, from, cuda.int32(n), { block: 256, grid: Math.ceil(n / 256), stream });
  const launch = (a, x, y, n, stream) =>
    saxpy(cuda.float32(a), x, y, cuda.int32(n), { block: 256, grid: Math.ceil(n / 256), stream });
  // y = a * x + y computed in device memory dx, dy (filled from x, y) and checked; frees both
  async function saxpyChecked(a, dx, dy, x, y, stream) {
    cuda.memcpyHtoDAsync(dx, x, stream);
    cuda.memcpyHtoDAsync(dy, y, stream);
    launch(a, dx, dy, x.length, stream);
    const out = new Float32Array(x.length);
    cuda.memcpyDtoHAsync(out, dy, stream);
    await stream.synchronize();
    assert.deepStrictEqual(out, saxpyReference(a, x, y));
    dx.free(stream);
    dy.free(stream);
    await stream.synchronize();
  }

  it('a made pool: a kernel computes in its memory (CPU reference); setCurrent, attributes, access and destroy', async function () {
    const n = 1 << 16;
    const stream = new cuda.Stream();
    const pool = new cuda.MemoryPool({ releaseThreshold: 1 << 24, reuseAllowOpportunistic: false });
    assert.strictEqual(pool.attributes.releaseThreshold, 1 << 24);
    assert.strictEqual(pool.attributes.reuseAllowOpportunistic, false);
    assert.strictEqual(pool.getAccess(cuda.Context.getDevice()), 'readwrite');
    const x = random(n);
    const y = random(n);
    const dx = pool.allocate(4 * n, stream);
    pool.setCurrent();
    const dy = cuda.memAllocAsync(4 * n, stream);
    cuda.MemoryPool.getDefault().setCurrent();
    assert.ok(pool.attributes.usedMemCurrent >= 8 * n, 'both allocations came from the pool');
    assert.ok(cuda.pointerAttributes(dy).fromPool);
    await saxpyChecked(2.5, dx, dy, x, y, stream);
    pool.trimTo(0);
    pool.destroy();
    assert.throws(() => pool.allocate(16, stream), { name: 'LogicError' });
  });

  it("a pool getCurrent() gave while a made pool was current stays usable after the made pool's destroy() (a kernel computes in its memory, CPU reference), and the device's own pool is current again (the fuzzer's SIGSEGV in cuMemPoolSetAttribute, driver 580)", async function () {
    const n = 1 << 14;
    const stream = new cuda.Stream();
    const T = cuda.MemPoolAttribute.RELEASE_THRESHOLD;
    const made = new cuda.MemoryPool({ releaseThreshold: 4096 });
    made.setCurrent();
    const alias = cuda.MemoryPool.getCurrent();
    assert.strictEqual(alias.getAttribute(T), 4096, 'getCurrent() gave the made pool');
    made.destroy();
    const own = cuda.MemoryPool.getDefault();
    own.setAttribute(T, 3 << 20);
    assert.strictEqual(cuda.MemoryPool.getCurrent().getAttribute(T), 3 << 20, "the device's own pool is current");
    alias.setAttribute(T, 0);
    assert.strictEqual(alias.getAttribute(T), 0);
    const [dx, dy] = [alias.allocate(4 * n, stream), alias.allocate(4 * n, stream)];
    await saxpyChecked(-1.5, dx, dy, random(n), random(n), stream);
    own.setAttribute(T, 0);
    assert.throws(() => alias.destroy(), { name: 'LogicError', message: /came from getDefault\(\) or getCurrent\(\)/ });
  });

  it('a host-located pool (driver 13): a kernel writes page-locked host memory from the pool', async function () {
    if (cuda.getDriverVersion() < 13000) this.skip();
    const n = 4096;
    const stream = new cuda.Stream();
    const pool = new cuda.MemoryPool({ location: 'host' });
    pool.setAccess(cuda.Context.getDevice(), 'readwrite');
    const x = random(n);
    const y = random(n);
    const hx = pool.allocate(4 * n, stream);
    const hy = pool.allocate(4 * n, stream);
    assert.strictEqual(cuda.pointerAttributes(hx).memoryType, 'host');
    // the driver's copies take no host pool memory as a device side: kernels move it
    const dx = cuda.toDevice(x);
    const dy = cuda.toDevice(y);
    copyKernel(hx, dx, n, stream);
    copyKernel(hy, dy, n, stream);
    launch(-1.5, hx, hy, n, stream);
    copyKernel(dy, hy, n, stream);
    const out = new Float32Array(n);
    cuda.memcpyDtoHAsync(out, dy, stream);
    await stream.synchronize();
    assert.deepStrictEqual(out, saxpyReference(-1.5, x, y));
    hx.free(stream);
    hy.free(stream);
    await stream.synchronize();
    pool.destroy();
  });

  for (const kind of ['pool', 'vmm']) {
    it(`two processes share ${kind === 'pool' ? 'a pool' : 'physical memory'}: one writes with a kernel, the other reads after an IPC event and writes back`, function () {
      const child = spawnSync(
        process.execPath,
        [path.join(__dirname, '..', 'support', 'pool-ipc-child.js'), 'exporter', kind, 'kernel'],
        {
          encoding: 'utf8',
          timeout: 60000,
        },
      );
      assert.strictEqual(child.status, 0, child.stdout + child.stderr);
      assert.deepStrictEqual(JSON.parse(child.stdout), { read: 'ok', written: 'ok' });
    });
  }

  it('pools collected with their allocations, 200 rounds, in a child process: no crash, and each checked memset arrived (the shape of fuzzer seed 6464, which crashes driver 580 in cuMemPoolDestroy)', function () {
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', path.join(__dirname, '..', 'support', 'pool-collect-child.js'), '200'],
      { encoding: 'utf8', timeout: 100000 },
    );
    assert.strictEqual(child.status, 0, `${child.signal ?? ''} ${child.stdout}${child.stderr}`);
    const { rounds, checked } = JSON.parse(child.stdout);
    assert.strictEqual(rounds, 200);
    assert.ok(checked >= 100, `${checked} rounds had allocations to check`); // the 64 KiB pools may hold none
  });

  it('managed memory: advice and prefetches move pages (range attributes say where), and a kernel computes on them (CPU reference)', async function () {
    const n = 1 << 20; // 4 MiB each
    const stream = new cuda.Stream();
    const device = cuda.Context.getDevice();
    const x = cuda.managedEmpty(n, 'float32');
    const y = cuda.managedEmpty(n, 'float32');
    x.set(random(n));
    y.set(random(n));
    const expected = saxpyReference(0.75, x, y);
    cuda.memAdvise(x, cuda.MemAdvise.SET_READ_MOSTLY);
    cuda.memAdvise(y, cuda.MemAdvise.SET_PREFERRED_LOCATION, device);
    cuda.memAdvise(y, cuda.MemAdvise.SET_ACCESSED_BY, device);
    cuda.memPrefetchAsync(x, device, stream);
    cuda.memPrefetchAsync(y, device, stream);
    await stream.synchronize();
    const onDevice = { type: 'device', id: device.ordinal };
    assert.deepStrictEqual(cuda.memRangeAttributes(x), {
      readMostly: true,
      preferredLocation: null,
      lastPrefetchLocation: onDevice,
      accessedBy: [],
    });
    assert.deepStrictEqual(cuda.memRangeAttributes(y), {
      readMostly: false,
      preferredLocation: onDevice,
      lastPrefetchLocation: onDevice,
      accessedBy: [onDevice],
    });
    launch(0.75, x, y, n, stream);
    cuda.memPrefetchAsync(y, 'host', stream);
    await stream.synchronize();
    assert.deepStrictEqual(cuda.memRangeAttributes(y).lastPrefetchLocation, { type: 'host', id: 0 });
    assert.deepStrictEqual(y, expected);
    // CUDA 13's batches: prefetch both back, then discard x's pages and write them anew
    cuda.memPrefetchBatchAsync(
      [
        { memory: x, location: device },
        { memory: y, location: device },
      ],
      stream,
    );
    await stream.synchronize();
    assert.deepStrictEqual(cuda.memRangeAttributes(x).lastPrefetchLocation, onDevice);
    cuda.memDiscardAndPrefetchBatchAsync([{ memory: x, location: device }], stream);
    cuda.memsetD32Async(cuda.hostAllocationOf(x).getDevicePointer(), 0, n, stream);
    launch(1, x, y, n, stream); // y += 0
    await stream.synchronize();
    assert.deepStrictEqual(y, expected);
    assert.ok(x.every((v) => v === 0));
  });

  it('pointerAttributes() on the driver: device, page-locked, managed and pool memory, and an ordinary TypedArray', function () {
    const stream = new cuda.Stream();
    const device = cuda.memAlloc(1000);
    const a = cuda.pointerAttributes(device.ptr + 10n);
    assert.deepStrictEqual(
      [a.memoryType, a.context, a.device, a.devicePointer, a.rangeStart, a.rangeSize, a.isManaged, a.fromPool],
      [
        'device',
        cuda.Context.getCurrent(),
        cuda.Context.getDevice().ordinal,
        device.ptr + 10n,
        device.ptr,
        1000,
        false,
        false,
      ],
    );
    const pinned = cuda.pagelockedEmpty(256, 'uint8');
    const p = cuda.pointerAttributes(pinned);
    assert.strictEqual(p.memoryType, 'host');
    assert.notStrictEqual(p.hostPointer, null);
    const managed = cuda.managedEmpty(64, 'uint8');
    const m = cuda.pointerAttributes(managed);
    assert.strictEqual(m.isManaged, true);
    const pool = new cuda.MemoryPool();
    const pooled = pool.allocate(256, stream);
    assert.strictEqual(cuda.pointerAttributes(pooled).fromPool, true);
    const foreign = cuda.pointerAttributes(new Float64Array(8));
    assert.deepStrictEqual(
      [foreign.memoryType, foreign.context, foreign.device, foreign.devicePointer],
      [null, null, null, null],
    );
    console.log(`      (managed memoryType: ${m.memoryType}; pinned accessFlags ${p.accessFlags})`);
    pooled.free(stream);
    stream.synchronizeSync();
    pool.destroy();
    device.free();
  });

  it('memcpyBatchAsync: 1,000 random copies between device, page-locked and pageable memory, checked against the same copies one by one', async function () {
    const stream = new cuda.Stream();
    const bytes = 1 << 20;
    const source = Uint8Array.from({ length: bytes }, () => Math.floor(Math.random() * 256));
    const device = cuda.toDevice(source);
    const target = cuda.memAlloc(bytes);
    cuda.memsetD8(target, 0, bytes);
    const pinned = cuda.pagelockedZeros(bytes, 'uint8');
    const pageable = new Uint8Array(bytes);
    const copies = [];
    const expectDevice = new Uint8Array(bytes);
    for (let i = 0; i < 1000; i++) {
      const size = 1 + Math.floor(Math.random() * 1024);
      const at = i * 1024; // disjoint slots: copies within a batch run in no set order
      const from = Math.floor(Math.random() * (bytes - size));
      switch (i % 4) {
        case 0:
          copies.push({ dest: target.slice(at, size), src: device.slice(from, size) });
          expectDevice.set(source.subarray(from, from + size), at);
          break;
        case 1:
          copies.push({ dest: target.slice(at, size), src: source.subarray(from, from + size) });
          expectDevice.set(source.subarray(from, from + size), at);
          break;
        case 2:
          copies.push({ dest: pinned.subarray(at, at + size), src: device.slice(from, size) });
          break;
        default:
          copies.push({ dest: pageable.subarray(at, at + size), src: device.slice(from, size) });
      }
    }
    cuda.memcpyBatchAsync(copies, stream);
    await stream.synchronize();
    assert.deepStrictEqual(cuda.fromDevice(target, bytes, 'uint8'), expectDevice);
    copies.forEach((copy, i) => {
      if (i % 4 < 2) return;
      const src = copy.src;
      const expected = cuda.fromDevice(src, src.size, 'uint8');
      assert.deepStrictEqual(copy.dest, expected, `copy ${i}`);
    });
    // a capture refuses batches (driver 13.0), and goes on
    const capturing = new cuda.Stream();
    capturing.beginCapture();
    assert.throws(() => cuda.memcpyBatchAsync([{ dest: target, src: pinned.subarray(0, 64) }], capturing), {
      api: 'cuMemcpyBatchAsync',
      codeName: 'CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED',
    });
    capturing.endCapture().destroy();
  });

  it('memcpy3DBatchAsync: boxes between page-locked, pageable, pitched device memory and a CUDA array (CPU reference)', function () {
    batch3dScenario(cuda);
  });

  it('a GrowableBuffer keeps its address as it grows: a kernel given its pointer before growth computes on memory mapped after (CPU reference)', async function () {
    const g = cuda.memGetAllocationGranularity();
    const n = (3 * g) / 4; // floats in three granules
    const stream = new cuda.Stream();
    const buffer = new cuda.GrowableBuffer({ maxBytes: 8 * g, initialBytes: g });
    const address = buffer.ptr;
    const x = random(n);
    const y = random(n);
    cuda.memcpyHtoD(buffer, x.subarray(0, g / 4));
    buffer.grow(2 * 4 * n);
    assert.strictEqual(buffer.ptr, address);
    cuda.memcpyHtoD(buffer.ptr + BigInt(g), x.subarray(g / 4));
    cuda.memcpyHtoD(buffer.ptr + BigInt(4 * n), y);
    launch(3, address, address + BigInt(4 * n), n, stream);
    await stream.synchronize();
    assert.deepStrictEqual(cuda.fromDevice(address + BigInt(4 * n), n, 'float32'), saxpyReference(3, x, y));
    buffer.free();
    // physical memory mapped twice: one range's writes read through the other
    const physical = new cuda.PhysicalMemory(g);
    const a = new cuda.VirtualAddressRange(g);
    const b = new cuda.VirtualAddressRange(g);
    a.map(0, physical);
    b.map(0, physical);
    physical.release();
    a.setAccess(0, g, cuda.Context.getDevice());
    b.setAccess(0, g, cuda.Context.getDevice());
    const data = random(g / 4);
    cuda.memcpyHtoD(a, data);
    assert.deepStrictEqual(cuda.fromDevice(b, g / 4, 'float32'), data);
    a.free();
    b.free();
  });
});
