'use strict';
// One kind of resource made and dropped `cycles` times in a process of its own, on the stand-in
// driver (test/reliability/leaks/run.js starts it with FAKE_CUDA_COUNTS set). Prints one line of JSON: the
// resident set after a full collection early (EARLY), half-way and at the end, and the
// stand-in's live counts before the cycles and after them.
const fs = require('fs');
const cuda = require('../../..');
const tools = require('../../../lib/tools');
const compiler = require('../../../lib/compiler');
const { collectGarbage } = require('../../../lib/internal/reclaim');
const { liveCounts } = require('../../support/stand-in-driver');

const [kind, cyclesText] = process.argv.slice(2);
const cycles = Number(cyclesText);
// Where the resident set is first taken: at 10,000 cycles (the warm-up of a compile's first run
// and of malloc's arenas is over by then), or at a quarter of a shorter run.
const EARLY = Math.min(10000, Math.floor(cycles / 4));
const IMAGE = 'entry add 8 8 4\nglobal table 256\n';
const SOURCE = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] *= 2; }';

const context = new cuda.Device(0).makeContext();
const stream = new cuda.Stream();
const base = cuda.memAlloc(4096);
const kernel = new cuda.Module(IMAGE).getFunction('add');
const array = new cuda.CudaArray({ width: 16, format: cuda.ArrayFormat.FLOAT, numChannels: 1 });
const capturing = new cuda.Stream();
const devicePool = new tools.DeviceMemoryPool();
const arrayDescriptor = { width: 16, format: cuda.ArrayFormat.FLOAT, numChannels: 1 };
const granularity = cuda.memGetAllocationGranularity();
const pinnedSource = cuda.pagelockedZeros(256, 'uint8');
const [smGroup] = new cuda.Device(0).smResource().split({ minCount: 8 }).groups;
const stagedSource = new Uint8Array(40000).fill(7); // three chunks a copy
const stagedBack = new Uint8Array(40000);
let staged = null; // { memory, streams }, made before the run's cycles
let stagedRound = 0;
const stagedPlane = new cuda.Memcpy2D(); // 40 rows of 1000 bytes into 1024-byte host rows
stagedPlane.setDstHost(new Uint8Array(40 * 1024));
Object.assign(stagedPlane, { srcPitch: 1000, dstPitch: 1024, widthInBytes: 1000, height: 40 });

// What one cycle makes and drops: nothing is freed by hand (but contexts), the collector
// releases it all.
const KINDS = {
  deviceMemory: () => cuda.memAlloc(256),
  slices: () => base.slice(256, 512),
  streamOrderedMemory: () => cuda.memAllocAsync(256, stream),
  pinned: () => cuda.pagelockedEmpty(256, 'uint8'),
  aligned: () => cuda.alignedEmpty(256, 'uint8'),
  managed: () => cuda.managedEmpty(64, 'float32'),
  registered: () => cuda.registerHostMemory(cuda.alignedEmpty(4096, 'uint8', { alignment: 4096 })),
  streams: () => new cuda.Stream(),
  events: () => new cuda.Event(),
  modules: () => new cuda.Module(IMAGE),
  launches: () => kernel(base, base, cuda.int32(1), { block: 1, stream }),
  // a launch whose attributes bind an event to the kernel's launcher, which lets the last one go
  attributeLaunches: () =>
    kernel(base, base, cuda.int32(1), {
      block: 1,
      stream,
      priority: 1,
      completionEvent: new cuda.Event(cuda.EventFlags.DISABLE_TIMING),
    }),
  arrays: () => new cuda.CudaArray(arrayDescriptor),
  textureObjects: () => new cuda.TextureObject(array),
  graphs: () => {
    capturing.beginCapture();
    cuda.memsetD8Async(base, 1, 16, capturing);
    const exec = capturing.endCapture().instantiate();
    exec.launch(capturing); // through its launcher, bound in C to it and the stream, dropped with it
    return exec;
  },
  // A context lives until detach(), dropped or not (one may be current with nothing else holding
  // it): its cycle ends with detach().
  contexts: () => {
    const made = new cuda.Device(0).makeContext();
    made.detach();
  },
  // a green context is used until detach(), as a made one; what is made in it goes to the collector,
  // and the green context with the last of it
  greenContexts: () => {
    const green = new cuda.Device(0).makeGreenContext(smGroup);
    green.push();
    cuda.memsetD8Async(cuda.memAlloc(64), 1, 64, new cuda.Stream());
    green.detach();
  },
  pools: () => devicePool.allocate(256),
  madePools: () => {
    const pool = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 });
    pool.exportHandle();
    return pool.allocate(256, stream);
  },
  growableBuffers: () => new cuda.GrowableBuffer({ maxBytes: 2 * granularity, initialBytes: 2 * granularity }),
  batchCopies: () =>
    cuda.memcpyBatchAsync(
      [
        { dest: base, src: pinnedSource },
        { dest: pinnedSource, src: base },
      ],
      stream,
    ),
  compileResults: () => compiler.compileSync(SOURCE),
  // through the staging buffers both ways (set up below: staged from 0 bytes, 16 KiB buffers):
  // sync, async on two streams in turn (the held transfers waited for, or found done), and 2D;
  // what a cycle makes and drops is the staging's own (events, held transfers), into memory and
  // arrays made once, so that no garbage of the cycle's moves the resident set
  stagedCopies: () => {
    cuda.memcpyHtoD(staged.memory, stagedSource);
    cuda.memcpyHtoDAsync(staged.memory, stagedSource, staged.streams[stagedRound++ % 2]);
    stagedPlane.run(staged.streams[stagedRound % 2]);
    cuda.memcpyDtoH(stagedBack, staged.memory);
  },
  // a leak of 256 bytes a cycle, which the harness must report (leaks.test.js; not in run.js's list)
  retained: () => retained.push(Buffer.alloc(256, 1)),
  // the same in the first run in a directory only: the harness runs it again, and passes it
  retainedOnce: () => firstRun && retained.push(Buffer.alloc(256, 1)),
};
const firstRun = !fs.existsSync('retained-once'); // in the run's directory (the child's cwd)
if (process.argv[2] === 'retainedOnce') fs.writeFileSync('retained-once', '');
const retained = [];

const settle = () => new Promise((resolve) => setImmediate(resolve));
async function collect() {
  for (let i = 0; i < 4; i++) {
    global.gc();
    await settle();
  }
}

async function main() {
  const make = KINDS[kind];
  if (kind === 'stagedCopies') {
    cuda.pageableStaging({ threshold: 0, bufferBytes: 16384, helpers: 2 });
    staged = { memory: cuda.memAlloc(stagedSource.length), streams: [new cuda.Stream(), new cuda.Stream()] };
    stagedPlane.setSrcDevice(staged.memory);
    make(); // the buffers, registered once for the run
  }
  await collect();
  const before = liveCounts(process.env.FAKE_CUDA_COUNTS);
  let early = 0;
  let mid = 0;
  for (let i = 1; i <= cycles; i++) {
    make();
    if (i % 1000 === 0) {
      // at most a thousand dropped at a time: the high-water mark comes early
      global.gc();
      await settle(); // finalizers run from immediates
    }
    if (i === EARLY) {
      await collect();
      early = process.memoryUsage().rss;
    }
    if (i === Math.floor(cycles / 2)) {
      await collect();
      mid = process.memoryUsage().rss;
    }
  }
  devicePool.freeHeld();
  kernel(base, base, cuda.int32(1), { block: 1, stream }); // lets go of the last event attributeLaunches bound
  await collect();
  collectGarbage(); // waits for the reaper's releases, which lag under AddressSanitizer
  const late = process.memoryUsage().rss;
  console.log(
    JSON.stringify({ kind, cycles, early, mid, late, before, after: liveCounts(process.env.FAKE_CUDA_COUNTS) }),
  );
  void context;
}

main();
