'use strict';
// A process that a test sends SIGINT or SIGTERM to (test/reliability/signals.test.js): it gets
// into the state named by its argument, prints "ready", and stays there. With a second argument
// "handler", it first installs a handler of the user's own that prints "handled" and exits 7.
const path = require('path');
const root = path.join(__dirname, '..', '..');
const cuda = require(root);
const { compile, compileSync, Linker } = require(path.join(root, 'lib', 'compiler'));

const [state, handler] = process.argv.slice(2);
if (handler === 'handler')
  process.on(process.env.SIGNAL_NAME, () => {
    console.log('handled');
    process.exit(7);
  });
const ready = () => console.log('ready');
setInterval(() => {}, 60000); // alive until the signal

// A source NVRTC's front end takes about a second over, new to every run.
function slowSource(count = 3000) {
  let source = '';
  for (let i = 0; i < count; i++)
    source += `__device__ int f${i}(int x) { return x * ${i} + ${Math.floor(Math.random() * 1e6)}; }\n`;
  return source + `__global__ void k(int *x) { x[0] = f${count - 1}(x[0]); }\n`;
}

const STATES = {
  // After a compile: NVRTC had replaced Node's handlers, and put them back without SA_RESETHAND.
  'after-compile'() {
    compileSync('__global__ void k(float *x) { x[0] = 1; }', { arch: 'compute_90', cacheDir: false });
    ready();
  },
  'during-compile'() {
    compile(slowSource(), { arch: 'compute_90', cacheDir: false });
    ready();
  },
  'during-compile-sync'() {
    ready();
    setTimeout(() => compileSync(slowSource(), { arch: 'compute_90', cacheDir: false }), 0);
  },
  'during-link'() {
    const input = compileSync(slowSource(1500), { arch: 'sm_90', relocatable: true, lto: true, cacheDir: false });
    new Linker({ arch: 'sm_90', lto: true, cacheDir: false }).add(input).linkAsync();
    ready();
  },
  // Isolated: the compile and the link run in a helper process of cudadrv's.
  'during-isolated-compile'() {
    compile(slowSource(), { arch: 'compute_90', cacheDir: false, isolated: true });
    ready();
  },
  'during-isolated-link'() {
    const input = compileSync(slowSource(1500), { arch: 'sm_90', relocatable: true, lto: true, cacheDir: false });
    new Linker({ arch: 'sm_90', lto: true, cacheDir: false, isolated: true }).add(input).linkAsync();
    ready();
  },
  // On the stand-in driver: contexts, memory, streams, a compiled module and a Promise pending.
  idle() {
    const context = new cuda.Device(0).makeContext();
    globalThis.kept = [context, cuda.memAlloc(1 << 20), new cuda.Stream(), cuda.pagelockedEmpty(1024, 'float32')];
    ready();
  },
  // On the stand-in driver with FAKE_CUDA_SYNC_MS: a thread blocked in cuCtxSynchronize.
  'during-context-wait'() {
    globalThis.kept = new cuda.Device(0).makeContext();
    cuda.Context.synchronize();
    ready();
  },
  // On a GPU: a kernel that spins for 10 s, awaited.
  'during-kernel'() {
    const { SourceModule } = require(path.join(root, 'lib', 'compiler'));
    globalThis.kept = new cuda.Device(0).makeContext();
    const spin = new SourceModule(`__global__ void spin(unsigned long long ns) {
      unsigned long long start; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
      for (unsigned long long now = start; now - start < ns;) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }`).getFunction('spin');
    const stream = new cuda.Stream();
    spin(cuda.uint64(10_000_000_000n), { block: [1], grid: [1], stream });
    stream.synchronize();
    ready();
  },
  // Shareable pools, batched copies, prefetches and a growing GrowableBuffer in a loop, with a pool's
  // descriptor exported and open (on the stand-in or a GPU).
  'during-pool-work'() {
    globalThis.kept = new cuda.Device(0).makeContext();
    const stream = new cuda.Stream();
    const pool = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 24 });
    globalThis.handle = pool.exportHandle();
    pool.setCurrent(); // another object on the pool, held at the signal
    globalThis.current = cuda.MemoryPool.getCurrent();
    const managed = cuda.managedZeros(1 << 16, 'uint8');
    const pinned = cuda.pagelockedZeros(1 << 16, 'uint8');
    const g = cuda.memGetAllocationGranularity();
    let rounds = 0;
    const work = () => {
      const memory = pool.allocate(1 << 16, stream);
      cuda.memcpyBatchAsync(
        [
          { dest: memory, src: pinned },
          { dest: managed, src: memory },
        ],
        stream,
      );
      cuda.memPrefetchAsync(managed, 'host', stream);
      const buffer = new cuda.GrowableBuffer({ maxBytes: 4 * g, initialBytes: g });
      buffer.grow(3 * g);
      buffer.free();
      memory.free(stream);
      if (++rounds === 10) ready();
      setImmediate(work);
    };
    work();
  },
  // Launches with attributes and their events, another stream waiting on each programmatic event,
  // the events dropped to the collector as they go (on the stand-in).
  'during-attribute-launches'() {
    globalThis.kept = new cuda.Device(0).makeContext();
    const kernel = new cuda.Module('entry empty\n').getFunction('empty');
    const [stream, other] = [new cuda.Stream(), new cuda.Stream()];
    let rounds = 0;
    const work = () => {
      const event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      kernel({ block: 1, stream, priority: 1, programmaticStreamSerialization: true, programmaticEvent: event });
      other.waitForEvent(event);
      kernel({ block: 1, stream: other, completionEvent: new cuda.Event(cuda.EventFlags.DISABLE_TIMING) });
      if (rounds % 50 === 0) global.gc?.();
      if (++rounds === 10) ready();
      setImmediate(work);
    };
    work();
  },
  // Staged copies of pageable memory back and forth on the main thread while two workers stage
  // their own, so that the signal finds the helper threads and the buffers in use (on the stand-in).
  'during-staged-copies'() {
    globalThis.kept = new cuda.Device(0).makeContext();
    cuda.pageableStaging({ threshold: 0, bufferBytes: 65536, helpers: 3 });
    const { Worker } = require('worker_threads');
    const code = `const cuda = require(${JSON.stringify(root)});
      const ctx = new cuda.Device(0).makeContext();
      for (;;) cuda.fromDevice(cuda.toDevice(new Float64Array(40000)), 40000, 'float64');`;
    globalThis.workers = [0, 1].map(() => new Worker(code, { eval: true }));
    const data = new Uint8Array(300000).fill(3);
    let rounds = 0;
    const work = () => {
      const back = cuda.fromDevice(cuda.toDevice(data), data.length, 'uint8');
      if (back[data.length - 1] !== 3) throw new Error('a staged copy lost bytes');
      if (++rounds === 10) ready();
      setImmediate(work);
    };
    work();
  },
  // Green contexts made, worked in and detached in a loop, events recorded in one and waited for
  // in another (on the stand-in).
  'during-green-work'() {
    globalThis.kept = new cuda.Device(0).makeContext();
    const device = new cuda.Device(0);
    const { groups } = device.smResource().split({ groups: 2, minCount: 8 });
    let rounds = 0;
    const work = () => {
      const [a, b] = groups.map((g) => device.makeGreenContext(g));
      a.push();
      cuda.memsetD8Async(cuda.memAlloc(1 << 16), 1, 1 << 16, new cuda.Stream());
      globalThis.held = new cuda.Stream(); // outlives a's detach(), which a's destroy waits for
      const event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      a.recordEvent(event);
      cuda.Context.pop();
      b.waitEvent(event);
      a.detach();
      b.detach();
      if (++rounds === 10) ready();
      setImmediate(work);
    };
    work();
  },
  // A graph with host-function nodes relaunched without end, so that the signal finds host calls
  // posted to the main thread and the driver calling more (on the stand-in or a GPU).
  'during-host-calls'() {
    globalThis.kept = new cuda.Device(0).makeContext();
    // registered memory held at the signal, one registration by JS, one (dropped) by the addon alone
    globalThis.registered = cuda.registerHostMemory(cuda.alignedEmpty(8192, 'uint8'));
    cuda.registerHostMemory(cuda.alignedEmpty(8192, 'uint8'));
    const memory = cuda.memAlloc(1 << 20);
    const graph = new cuda.Graph();
    let calls = 0;
    let said = false;
    let node = graph.addMemset(memory, 1, 1 << 20);
    for (let i = 0; i < 8; i++) {
      node = graph.addHostFunc(() => calls++, { after: node });
      node = graph.addMemset(memory, i, 1 << 20, { after: node });
    }
    const exec = graph.instantiate();
    const stream = new cuda.Stream();
    const relaunch = () => {
      for (let i = 0; i < 16; i++) exec.launch(stream);
      if (calls > 0 && !said) {
        said = true;
        ready();
      }
      setImmediate(relaunch);
    };
    relaunch();
  },
};
STATES[state]();
