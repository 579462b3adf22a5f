'use strict';
// Memory pools through the stand-in driver (test/support/fake-driver/pools.c): pools made with
// new MemoryPool(), their attributes, access and lifetimes, and pool IPC between two processes
// whose shared bytes the stand-in keeps in a memfd, so that what one process writes the other reads.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const cuda = require('../..');
const { childRunner, ROOT } = require('../support/graph-child');

describe('memory pools (checked before the driver)', function () {
  it('options and arguments that are wrong are TypeErrors and RangeErrors saying what to give', function () {
    const cases = [
      [
        () => new cuda.MemoryPool('x'),
        'TypeError',
        'new MemoryPool(): the options must be an object, not the string "x"',
      ],
      [() => new cuda.MemoryPool({ size: 1 }), 'TypeError', /unknown option 'size'; the options are device, location/],
      [() => new cuda.MemoryPool({ device: 0 }), 'TypeError', 'device must be a Device, not number 0'],
      [
        () => new cuda.MemoryPool({ device: {}, location: 'host' }),
        'TypeError',
        'new MemoryPool(): give device or location, not both',
      ],
      [
        () => new cuda.MemoryPool({ location: 'gpu' }),
        'TypeError',
        /location must be 'host', a Device, a device ordinal/,
      ],
      [
        () => new cuda.MemoryPool({ location: { type: 'numa' } }),
        'TypeError',
        /location.type must be device, host, host-numa, host-numa-current/,
      ],
      [
        () => new cuda.MemoryPool({ location: 'host', handleType: 'fd' }),
        'TypeError',
        /handleType must be 'none' or 'posix-fd', not the string "fd"/,
      ],
      [() => new cuda.MemoryPool({ location: 'host', maxSize: -1 }), 'RangeError', /maxSize must be/],
      [() => cuda.MemoryPool.importHandle(-1), 'RangeError', 'fd must be an integer from 0 to 2147483647, not -1'],
      [() => cuda.MemoryPool.importHandle('3'), 'TypeError', 'fd must be an integer number, not the string "3"'],
      [() => new cuda.ShareableHandle(), 'TypeError', 'a ShareableHandle comes from pool.exportHandle()'],
    ];
    for (const [call, name, message] of cases) assert.throws(call, { name, message });
  });

  it("a detached TypedArray where a name is wanted is cudadrv's TypeError, not the engine's (the fuzzer's find)", function () {
    const detached = new Float32Array(4);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    const pool = Object.create(cuda.MemoryPool.prototype);
    assert.throws(() => pool.setAccess(0, detached), {
      name: 'TypeError',
      message: "access must be 'none', 'read' or 'readwrite', not a Float32Array",
    });
    assert.throws(() => new cuda.MemoryPool({ location: { type: detached } }), {
      name: 'TypeError',
      message: 'location.type must be device, host, host-numa, host-numa-current, not a Float32Array',
    });
  });
});

describe('memory pools through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run, dir, standIn } = childRunner('cudadrv-pools-');

  it('a made pool: its options set its attributes, allocations come from it, setCurrent() makes memAllocAsync use it, destroy() ends it', function () {
    run(
      `
      const stream = new cuda.Stream();
      const pool = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 20, releaseThreshold: 4096, reuseAllowOpportunistic: true });
      assert.deepStrictEqual(pool.attributes, {
        reuseFollowEventDependencies: false, reuseAllowOpportunistic: true, reuseAllowInternalDependencies: false,
        releaseThreshold: 4096, reservedMemCurrent: 1 << 20, reservedMemHigh: 1 << 20, usedMemCurrent: 0, usedMemHigh: 0,
      });
      const a = pool.allocate(1000, stream);
      assert.strictEqual(pool.attributes.usedMemCurrent, 1024, 'the stand-in carves 256-byte steps');
      assert.strictEqual(cuda.pointerAttributes(a).fromPool, true);
      // the pool's bytes are real: what goes in comes out
      const data = Uint8Array.from({ length: 1000 }, () => Math.floor(Math.random() * 256));
      cuda.memcpyHtoD(a, data);
      assert.deepStrictEqual(cuda.fromDevice(a, 1000, 'uint8'), data);
      // the device's pools are others until setCurrent()
      assert.notStrictEqual(cuda.pointerAttributes(cuda.memAllocAsync(64, stream)).fromPool, true);
      pool.setCurrent();
      const b = cuda.memAllocAsync(64, stream);
      assert.strictEqual(pool.attributes.usedMemCurrent, 1280, 'memAllocAsync drew from the pool');
      assert.strictEqual(cuda.pointerAttributes(b).fromPool, true);
      cuda.MemoryPool.getDefault().setCurrent();
      // access: the pool's own device keeps read and write
      assert.strictEqual(pool.getAccess(0), 'readwrite');
      assert.strictEqual(pool.getAccess(new cuda.Device(1)), 'none');
      pool.setAccess(1, 'read');
      assert.strictEqual(pool.getAccess(1), 'read');
      assert.throws(() => pool.setAccess(0, 'none'), { message: /cuMemPoolSetAccess failed/ });
      assert.throws(() => pool.setAccess(1, 'rw'), { name: 'TypeError', message: "access must be 'none', 'read' or 'readwrite', not the string \\"rw\\"" });
      assert.throws(() => pool.setAttribute(cuda.MemPoolAttribute.REUSE_ALLOW_OPPORTUNISTIC, 1), { name: 'TypeError', message: 'a reuse attribute takes a boolean, not number 1' });
      // destroyed with allocations out: they stay usable until freed; the pool refuses use
      pool.destroy();
      pool.destroy();
      assert.deepStrictEqual(cuda.fromDevice(a, 1000, 'uint8'), data);
      for (const use of [() => pool.allocate(16, stream), () => pool.attributes, () => pool.exportHandle(), () => pool.setCurrent()])
        assert.throws(use, { name: 'LogicError', message: 'this MemoryPool has been destroyed; make a new one' });
      a.free(stream);
      b.free(stream);
      // a device's own pool is not destroyed
      const own = cuda.MemoryPool.getDefault();
      assert.throws(() => own.destroy(), { name: 'LogicError', message: /this MemoryPool came from getDefault/ });
      own[Symbol.dispose]();
      own.trimTo(0);
      // a host pool is not shareable (the driver's rule)
      assert.throws(() => new cuda.MemoryPool({ location: 'host', handleType: 'posix-fd' }), { message: /cuMemPoolCreate failed/ });
      const hostPool = new cuda.MemoryPool({ location: 'host' });
      hostPool[Symbol.dispose]();
      assert.throws(() => hostPool.attributes, { name: 'LogicError' });
    `,
      { FAKE_CUDA_DEVICES: '2' },
    );
  });

  for (const [kind, what] of [
    ['pool', 'a pool and an allocation from it'],
    ['vmm', 'physical memory mapped into address ranges'],
  ]) {
    it(`two processes share ${what}: the importer reads what the exporter wrote after its event, writes it over, and the exporter sees that`, function () {
      const child = spawnSync(
        process.execPath,
        [path.join(ROOT, 'test', 'support', 'pool-ipc-child.js'), 'exporter', kind, 'copy'],
        {
          encoding: 'utf8',
          env: { ...process.env, LD_LIBRARY_PATH: standIn.dir },
          timeout: 30000,
        },
      );
      assert.strictEqual(child.status, 0, child.stdout + child.stderr);
      assert.deepStrictEqual(JSON.parse(child.stdout), { read: 'ok', written: 'ok' });
    });
  }

  it('export and import refuse what cannot be shared, and pointer data that is not 64 bytes', function () {
    run(`
      const stream = new cuda.Stream();
      const plain = new cuda.MemoryPool();
      assert.throws(() => plain.exportHandle(), { message: /cuMemPoolExportToShareableHandle failed/ });
      const shared = new cuda.MemoryPool({ handleType: 'posix-fd' });
      const memory = shared.allocate(256, stream);
      assert.strictEqual(shared.exportPointer(memory).length, 64);
      assert.throws(() => shared.exportPointer('x'), { name: 'TypeError', message: /memory must be device memory/ });
      assert.throws(() => shared.importPointer(Buffer.alloc(10)), { name: 'RangeError', message: 'data must be 64 bytes long, not 10' });
      assert.throws(() => shared.importPointer('x'), { name: 'TypeError', message: "data must be the Buffer exportPointer() gave, not the string \\"x\\"" });
      // an fd that is no pool's
      const fd = fs.openSync(${JSON.stringify(__filename)}, 'r');
      assert.throws(() => cuda.MemoryPool.importHandle(fd), { message: /cuMemPoolImportFromShareableHandle failed/ });
      fs.closeSync(fd);
      const handle = shared.exportHandle();
      const number = handle.fd;
      assert.ok(fs.fstatSync(number).isFile());
      handle.close();
      handle.close();
      assert.throws(() => fs.fstatSync(number), { code: 'EBADF' });
      assert.throws(() => handle.fd, { name: 'LogicError', message: 'this ShareableHandle has been closed' });
      memory.free(stream);
      shared.destroy();
    `);
  });

  it("pools collected with their allocations, 60 rounds (some pools small, current, or in a context of their own): each memset's words arrive, every pool is destroyed, no stale handle reaches the driver (the shape of fuzzer seed 6464, which crashes driver 580)", function () {
    const counts = path.join(dir(), 'counts');
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', path.join(ROOT, 'test', 'support', 'pool-collect-child.js'), '60'],
      {
        encoding: 'utf8',
        env: { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_STALE_ABORT: '1', FAKE_CUDA_COUNTS: counts },
        timeout: 30000,
      },
    );
    assert.strictEqual(child.status, 0, child.stdout + child.stderr);
    assert.deepStrictEqual(JSON.parse(child.stdout), { rounds: 60, checked: 60 });
    const { liveCounts } = require('../support/stand-in-driver');
    assert.strictEqual(liveCounts(counts).pools, 0, 'every pool was destroyed');
    assert.strictEqual(liveCounts(counts).stale, 0);
  });

  it("a pool made after an imported pool went with its context is its own, though the driver gives it the dead pool's handle: set current, used, destroyed", function () {
    const counts = path.join(dir(), 'counts');
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'stand-in-driver'))});
      const stream = new cuda.Stream();
      const pool = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 });
      const handle = pool.exportHandle();
      const importer = new cuda.Device(0).makeContext();
      const imported = cuda.MemoryPool.importHandle(handle.fd);
      importer.detach(); // the driver destroys the imported pool with it; the object stays
      // without tcache (GLIBC_TUNABLES below) the stand-in's next pool takes the dead one's memory,
      // and so its handle
      for (let i = 0; i < 4; i++) {
        const made = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 });
        made.setCurrent();
        const a = cuda.memAllocAsync(256, stream);
        a.free(stream);
        made.destroy();
      }
      stream.synchronizeSync();
      assert.throws(() => imported.attributes, { name: 'LogicError' });
      handle.close();
      pool.destroy();
      assert.strictEqual(liveCounts(${JSON.stringify(counts)}).pools, 0, 'every pool made was destroyed');
      assert.strictEqual(liveCounts(${JSON.stringify(counts)}).stale, 0);
    `,
      { FAKE_CUDA_COUNTS: counts, GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0' },
    );
  });

  it('dropped pools are destroyed and dropped handles closed by the garbage collector; a device pool is not', function () {
    const counts = path.join(dir(), 'counts');
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'stand-in-driver'))});
      const fds = () => fs.readdirSync('/proc/self/fd').length;
      const before = fds();
      (() => {
        for (let i = 0; i < 20; i++) {
          const pool = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 });
          pool.exportHandle();
          cuda.MemoryPool.getDefault();
        }
      })();
      assert.strictEqual(liveCounts(${JSON.stringify(counts)}).pools, 20);
      for (let i = 0; i < 10 && (liveCounts(${JSON.stringify(counts)}).pools || fds() > before); i++) {
        globalThis.gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.strictEqual(liveCounts(${JSON.stringify(counts)}).pools, 0);
      assert.strictEqual(fds(), before, 'every exported descriptor and every pool file was closed');
      assert.strictEqual(liveCounts(${JSON.stringify(counts)}).stale, 0);
    `,
      { FAKE_CUDA_COUNTS: counts },
    );
  });

  it("a pool getCurrent() gave while a made pool was current outlives the made pool's destroy(), on any thread, and the device's own pool is current again (a destroyed pool's handle crashed driver 580: the fuzzer's find)", function () {
    const counts = path.join(dir(), 'counts');
    run(
      `
      const { Worker } = require('worker_threads');
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'stand-in-driver'))});
      const pools = () => liveCounts(${JSON.stringify(counts)}).pools;
      const T = cuda.MemPoolAttribute.RELEASE_THRESHOLD;
      const stream = new cuda.Stream();
      cuda.MemoryPool.getDefault().setAttribute(T, 777);
      // an alias dropped while its pool lives leaves the pool alone
      const kept = new cuda.MemoryPool({ releaseThreshold: 1 });
      kept.setCurrent();
      (() => cuda.MemoryPool.getCurrent().getAttribute(T))();
      for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((resolve) => setImmediate(resolve)); }
      kept.allocate(64, stream).free(stream);
      assert.strictEqual(pools(), 1);
      kept.destroy();
      assert.strictEqual(pools(), 0);

      const made = new cuda.MemoryPool({ releaseThreshold: 4096 });
      made.setCurrent();
      let alias = cuda.MemoryPool.getCurrent();
      assert.strictEqual(alias.getAttribute(T), 4096, 'getCurrent() gave the made pool');
      const worker = new Worker(\`
        const cuda = require(\${JSON.stringify(${JSON.stringify(ROOT)})});
        const { parentPort } = require('worker_threads');
        cuda.init();
        const ctx = new cuda.Device(0).makeContext();
        const pool = cuda.MemoryPool.getCurrent();
        parentPort.postMessage(pool.getAttribute(\${T}));
        parentPort.once('message', () => {
          pool.setAttribute(\${T}, 8192);
          const stream = new cuda.Stream();
          const a = pool.allocate(64, stream);
          cuda.memcpyHtoD(a, new Uint8Array(64).fill(9));
          parentPort.postMessage([pool.getAttribute(\${T}), cuda.fromDevice(a, 64, 'uint8').every((b) => b === 9)]);
        });\`, { eval: true });
      const next = () => new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
      assert.strictEqual(await next(), 4096, "the worker's getCurrent() gave the made pool too");
      made.destroy();
      assert.strictEqual(pools(), 1, 'the made pool lives while the others hold it');
      assert.strictEqual(cuda.MemoryPool.getCurrent().getAttribute(T), 777, "the device's own pool is current again");
      alias.setAttribute(T, 1234);
      assert.strictEqual(alias.getAttribute(T), 1234);
      const data = Uint8Array.from({ length: 256 }, () => Math.floor(Math.random() * 256));
      const a = alias.allocate(256, stream);
      cuda.memcpyHtoD(a, data);
      assert.deepStrictEqual(cuda.fromDevice(a, 256, 'uint8'), data);
      a.free(stream);
      assert.throws(() => alias.destroy(), {
        name: 'LogicError',
        message: 'destroy(): this MemoryPool came from getDefault() or getCurrent(); destroy a pool through the object new MemoryPool() or importHandle() gave',
      });
      worker.postMessage('go');
      assert.deepStrictEqual(await next(), [8192, true]);
      await worker.terminate();
      assert.strictEqual(pools(), 1, 'the main thread still holds it');
      alias = null;
      for (let i = 0; i < 10 && pools(); i++) { globalThis.gc(); await new Promise((resolve) => setImmediate(resolve)); }
      assert.strictEqual(pools(), 0, 'the last holder destroyed it');
      assert.strictEqual(liveCounts(${JSON.stringify(counts)}).stale, 0);
    `,
      { FAKE_CUDA_COUNTS: counts, FAKE_CUDA_STALE_ABORT: '1' },
    );
  });

  it("memAllocAsync() on a stream of another context than the current one allocates in the stream's: detaching the current context leaves the memory, and its collection frees it there (the stand-in had it go with the current context, and the fuzzer's stale free)", function () {
    const counts = path.join(dir(), 'counts');
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'stand-in-driver'))});
      const live = () => liveCounts(${JSON.stringify(counts)});
      const owner = new cuda.Device(0).makeContext();
      const stream = new cuda.Stream();
      cuda.Context.pop();
      const current = new cuda.Device(0).makeContext();
      const before = live().device_memory;
      let memory = cuda.memAllocAsync(256, stream);
      const data = Uint8Array.from({ length: 256 }, () => Math.floor(Math.random() * 256));
      cuda.memcpyHtoDAsync(memory, data, stream);
      current.detach();
      owner.push();
      assert.deepStrictEqual(cuda.fromDevice(memory, 256, 'uint8'), data);
      memory = null;
      for (let i = 0; i < 4; i++) { globalThis.gc(); await new Promise((resolve) => setImmediate(resolve)); }
      require(${JSON.stringify(path.join(ROOT, 'lib', 'internal', 'binding'))}).memReclaim(false);
      assert.strictEqual(live().device_memory, before, 'freed in its context');
      assert.strictEqual(live().stale, 0);
      owner.detach();
    `,
      { FAKE_CUDA_COUNTS: counts, FAKE_CUDA_STALE_ABORT: '1' },
    );
  });

  it('a pool imported in a context goes with it: once that context is detached the pool is refused, and destroy() or collection leaves it to the driver (driver 580 destroys it with that context, and refused a second destroy as an invalid value on an H200: a stale handle)', function () {
    const counts = path.join(dir(), 'counts');
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'stand-in-driver'))});
      const live = () => liveCounts(${JSON.stringify(counts)});
      const before = live().pools;
      const shared = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 });
      const handle = shared.exportHandle();
      const importer = new cuda.Device(0).makeContext();
      const kept = cuda.MemoryPool.importHandle(handle.fd);
      let dropped = cuda.MemoryPool.importHandle(handle.fd);
      assert.strictEqual(kept.getAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD), 0);
      assert.strictEqual(live().pools, before + 3);
      importer.detach();
      assert.strictEqual(live().pools, before + 1, 'the driver destroyed the imported pools with their context');
      const gone = { name: 'LogicError', message: 'the Context of this MemoryPool has been detached, and the MemoryPool with it; make it again in a live context' };
      assert.throws(() => kept.getAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD), gone);
      assert.throws(() => kept.trimTo(0), gone);
      kept.destroy();
      dropped = null;
      for (let i = 0; i < 4; i++) { globalThis.gc(); await new Promise((resolve) => setImmediate(resolve)); }
      assert.strictEqual(live().stale, 0, 'no destroyed pool reached the driver');
      // the made pool is the device's, and outlives any context
      assert.strictEqual(shared.getAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD), 0);
      shared.destroy();
      handle.close();
      assert.strictEqual(live().pools, before);
      cuda.Context.pop(); // none current: an import would have no context to go with
      assert.throws(() => cuda.MemoryPool.importHandle(0), { name: 'LogicError', message: /^no CUDA context is current on this thread/ });
      ctx.push();
    `,
      { FAKE_CUDA_COUNTS: counts, FAKE_CUDA_STALE_ABORT: '1' },
    );
  });

  it('on a driver older than 13.0 the batched calls are a RuntimeError naming the version they need', function () {
    run(
      `
      const stream = new cuda.Stream();
      const m = cuda.managedZeros(64, 'uint8');
      assert.throws(() => cuda.memPrefetchBatchAsync([{ memory: m, location: 'host' }], stream), { name: 'RuntimeError', message: /cuMemPrefetchBatchAsync.*13\\.0/ });
      assert.throws(() => cuda.memcpyBatchAsync([{ dest: m, src: new Uint8Array(64) }], stream), { name: 'RuntimeError', message: /cuMemcpyBatchAsync.*13\\.0/ });
      cuda.memPrefetchAsync(m, 'host', stream); // 12.2
    `,
      { FAKE_CUDA_DRIVER_VERSION: '12080' },
    );
    run(
      `
      const m = cuda.managedZeros(64, 'uint8');
      assert.throws(() => cuda.memPrefetchAsync(m, 'host'), { name: 'RuntimeError', message: /cuMemPrefetchAsync.*12\\.2/ });
      assert.throws(() => cuda.memAdvise(m, cuda.MemAdvise.SET_READ_MOSTLY), { name: 'RuntimeError', message: /cuMemAdvise.*12\\.2/ });
      assert.deepStrictEqual(cuda.memRangeAttributes(m).readMostly, false);
    `,
      { FAKE_CUDA_DRIVER_VERSION: '12000' },
    );
  });

  it('workers that make, share, import, set current and use pools, terminated mid-work in 20 rounds, then the main thread: no crash, exit 0', function () {
    const out = run(`
      const { Worker } = require('worker_threads');
      const body = \`
        const cuda = require(\${JSON.stringify(${JSON.stringify(ROOT)})});
        const { parentPort } = require('worker_threads');
        cuda.init();
        const ctx = new cuda.Device(0).makeContext();
        const stream = new cuda.Stream();
        const managed = cuda.managedZeros(4096, 'uint8');
        parentPort.postMessage('ready');
        for (;;) {
          const pool = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 });
          pool.setCurrent(); // and another object on it, which outlives a destroy() below
          cuda.MemoryPool.getCurrent().setAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD, 0);
          const handle = pool.exportHandle();
          const a = pool.allocate(4096, stream);
          cuda.memcpyBatchAsync([{ dest: a, src: managed }, { dest: managed, src: a }], stream);
          cuda.memPrefetchAsync(managed, 'host', stream);
          cuda.pointerAttributes(a);
          // a pool imported in a context of its own, which goes with it (destroyed or dropped)
          const importer = new cuda.Device(0).makeContext();
          const imported = cuda.MemoryPool.importHandle(handle.fd);
          importer.detach();
          if (Math.random() < 0.5) imported.destroy();
          if (Math.random() < 0.5) { a.free(stream); handle.close(); pool.destroy(); }
        }\`;
      for (let round = 0; round < 20; round++) {
        const worker = new Worker(body, { eval: true });
        await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
        await worker.terminate();
      }
      const stream = new cuda.Stream();
      const pool = new cuda.MemoryPool({ handleType: 'posix-fd' });
      const a = pool.allocate(64, stream);
      const data = Uint8Array.from({ length: 64 }, (_, i) => i * 7);
      const back = new Uint8Array(64);
      cuda.memcpyBatchAsync([{ dest: a, src: data }], stream);
      cuda.memcpyBatchAsync([{ dest: back, src: a, bytes: 64 }], stream);
      assert.deepStrictEqual(back, data);
      console.log('rounds done');
    `);
    assert.match(out, /rounds done/);
  });
});
