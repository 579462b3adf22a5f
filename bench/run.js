#!/usr/bin/env node
'use strict';
// cudadrv's benchmarks, side by side with C. Every operation runs in cudadrv and, where C has a
// counterpart, in bench/floor.c (plain C making the same driver calls, built here at bench time),
// in the same run: warm-up batches, then timed batches; the median and the spread of the samples
// go into one table, `operation | cudadrv | C | ratio | target | ok`, and the exit status is 1 when
// a target is missed or cannot be measured.
//
//   npm run bench [-- --out results.json] [--only REGEX] [--dry-run]
//
// --out writes every sample and verdict as JSON; --only measures the operations whose id matches
// (and those their targets refer to); --dry-run needs no GPU: it builds floor.c, checks that it
// measures what this file expects, and runs the table and the verdicts on made-up samples.
const { execFileSync, spawn, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { performance } = require('perf_hooks');
const { ratioAtMost, bandwidthAtLeast, atMost, overC, ofOperation, assemble, report } = require('./report');

const ROOT = path.join(__dirname, '..');
const KERNELS_FILE = path.join(__dirname, 'kernels.cu');
const COMPILE_FILE = path.join(__dirname, 'compile.cu');
const FLOOR_SOURCE = path.join(__dirname, 'floor.c');
const FLOOR_BINARY = path.join(ROOT, 'build', 'bench', 'floor');

// The sizes floor.c uses too (it reports its own, and they are checked against these).
const SIZES = {
  big: 256 * 2 ** 20,
  small: 16,
  alloc: 2 ** 20,
  graphKernels: 100,
  whileShort: 10,
  whileLong: 1000,
  batchCopies: 1000,
};

// ---- the operations ----
// id, title, unit; c: the floor.c operation measured beside it; spec: [warm-up batches, timed
// batches, steps per batch]; target; js(env): returns { step, after?, async? } (a step timed in
// batches; after() runs untimed after each batch) or { samples: async () => values in unit }.
// bytes (GB/s lines): moved per step; per: steps counted per step (a graph of 100 kernels).
// rounds: C and cudadrv take turns, rounds times, each round running spec on each side (the
// lines sharing a C operation all take part in its turns); see alternate().

// Launches: a batch of 128 with the stream synchronized after it (untimed), so that the launch
// queue never fills and what is timed is the host's cost of enqueueing; 50 rounds of a warm-up
// batch and 10 timed ones.
const LAUNCH_ROUNDS = { rounds: 50, spec: [1, 10, 128] };
const LAUNCH_NOTE =
  'C and cudadrv take turns: 50 rounds of 10 timed batches of 128 launches each, ' +
  'after a warm-up batch; the stream synchronized after each batch, untimed';

const OPERATIONS = [
  {
    id: 'launch.callable',
    title: 'empty kernel launch, callable',
    unit: 'us',
    c: 'launch.empty',
    ...LAUNCH_ROUNDS,
    target: ratioAtMost(1.15),
    note: LAUNCH_NOTE,
    js: (env) => {
      const { empty } = env.kernels();
      const stream = env.stream();
      return {
        step: () => empty({ block: BLOCK, grid: GRID, stream }),
        after: () => stream.synchronizeSync(),
      };
    },
  },
  {
    id: 'launch.prepared',
    title: 'empty kernel launch, prepared',
    unit: 'us',
    c: 'launch.empty',
    ...LAUNCH_ROUNDS,
    target: ratioAtMost(1.03),
    js: (env) => {
      const { launch, drain } = emptyLaunch(env);
      return { step: launch, after: drain };
    },
  },
  {
    id: 'launch.prepared4',
    title: '4-argument prepared launch',
    unit: 'us',
    c: 'launch.args4',
    ...LAUNCH_ROUNDS,
    target: ratioAtMost(1.05),
    note: 'C passes the same 24 bytes as one buffer, as cudadrv does',
    js: (env) => {
      const args4 = prepared(env.kernels().args4, 'PPif');
      const { a, b } = env.argumentBuffers();
      const { stream, drain } = emptyLaunch(env);
      return { step: () => args4.preparedAsyncCall(GRID, BLOCK, stream, a, b, 1000, 2.5), after: drain };
    },
  },
  {
    id: 'launch.sync',
    title: 'launch + synchronizeSync()',
    unit: 'us',
    c: 'launch.sync',
    rounds: 25,
    spec: [1, 8, 20],
    target: ratioAtMost(1.1),
    note: 'C and cudadrv take turns: 25 rounds of 8 timed batches of 20',
    js: (env) => {
      const { launch, drain } = emptyLaunch(env);
      return {
        step: () => {
          launch();
          drain();
        },
      };
    },
  },
  {
    id: 'launch.await',
    title: 'launch + await synchronize()',
    unit: 'us',
    c: 'launch.sync',
    rounds: 25,
    spec: [1, 8, 20],
    target: ratioAtMost(2),
    note: 'C: launch + cuStreamSynchronize',
    js: (env) => {
      const { launch, stream } = emptyLaunch(env);
      return {
        async: true,
        step: () => {
          launch();
          return stream.synchronize();
        },
      };
    },
  },
  {
    id: 'await.complete',
    title: 'await of a complete stream',
    unit: 'us',
    c: 'stream.query',
    spec: [5, 100, 100],
    target: atMost(0.4, 'us'), // issue 32
    note: 'C: cuStreamQuery',
    js: (env) => {
      const stream = env.stream();
      return { async: true, step: () => stream.synchronize() };
    },
  },
  ...['htod', 'dtoh'].flatMap((direction) =>
    ['pinned', 'pageable'].map((kind) => ({
      id: `copy.${direction}.${kind}`,
      title: `256 MiB ${direction === 'htod' ? 'host→device' : 'device→host'}, ${kind === 'pinned' ? kind : 'pageable (staged)'}`,
      unit: 'GB/s',
      bytes: SIZES.big,
      c: `copy.${direction}.${kind}`,
      rounds: 5,
      spec: [1, 2, 1],
      note:
        'C and cudadrv take turns: 5 rounds of 2 timed copies after a warm-up one' +
        (kind === 'pinned'
          ? ''
          : "; cudadrv's through its staging buffers, C's the driver's (bench/staging.js: all sizes)"),
      // pageable: issue 32's targets for staged copies
      target: bandwidthAtLeast(kind === 'pinned' ? 0.98 : direction === 'htod' ? 2.5 : 1.8),
      js: (env) => {
        const { cuda } = env;
        const { device } = env.bigBuffers();
        const host = env.bigBuffers()[kind];
        return {
          step: direction === 'htod' ? () => cuda.memcpyHtoD(device, host) : () => cuda.memcpyDtoH(host, device),
        };
      },
    })),
  ),
  ...['htod', 'dtoh'].map((direction) => ({
    id: `copy.${direction}.small`,
    title: `16 B ${direction === 'htod' ? 'host→device' : 'device→host'} latency`,
    unit: 'us',
    c: `copy.${direction}.small`,
    rounds: 20,
    spec: [1, 10, 20],
    target: overC(0.5, 'us'),
    note: 'C and cudadrv take turns: 20 rounds of 10 timed batches of 20 copies',
    js: (env) => {
      const { cuda } = env;
      const { device, host } = env.smallBuffers();
      return {
        step: direction === 'htod' ? () => cuda.memcpyHtoD(device, host) : () => cuda.memcpyDtoH(host, device),
      };
    },
  })),
  {
    id: 'alloc',
    title: 'memAlloc + free, 1 MiB',
    unit: 'us',
    c: 'alloc',
    rounds: 20,
    spec: [1, 5, 20],
    target: ratioAtMost(1.2), // issue 32
    js: ({ cuda }) => ({ step: () => cuda.memAlloc(SIZES.alloc).free() }),
  },
  {
    id: 'alloc.async',
    title: 'memAllocAsync + free, 1 MiB',
    unit: 'us',
    c: 'alloc.async',
    rounds: 20,
    spec: [1, 10, 50],
    target: ratioAtMost(1.1),
    note: 'C and cudadrv take turns: 20 rounds of 10 timed batches of 50',
    js: (env) => {
      const { cuda } = env;
      const stream = env.stream();
      return {
        step: () => cuda.memAllocAsync(SIZES.alloc, stream).free(stream),
        after: () => stream.synchronizeSync(),
      };
    },
  },
  {
    id: 'pool.alloc',
    title: 'DeviceMemoryPool allocate + free, 1 MiB',
    unit: 'us',
    c: null,
    spec: [5, 100, 100],
    target: atMost(1.5, 'us'),
    js: () => {
      const { DeviceMemoryPool } = require('../lib/tools');
      const pool = new DeviceMemoryPool();
      return { step: () => pool.allocate(SIZES.alloc).free() };
    },
  },
  {
    id: 'compile.cold',
    title: 'NVRTC compile, cold (bench/compile.cu)',
    unit: 'ms',
    c: 'compile.cold',
    rounds: 15,
    spec: [1, 1, 1],
    target: ratioAtMost(1.05),
    note:
      'C and cudadrv take turns: 15 rounds of a warm-up compile and a timed one, each of a source ' +
      'of its own, the cache disabled; C gets the same name and options',
    js: coldCompiles,
  },
  {
    id: 'compile.cached',
    title: 'NVRTC compile, cache hit in-process',
    unit: 'us',
    c: null,
    spec: [1, 50, 20],
    target: atMost(50, 'us'),
    js: (env) => {
      const { compileSync } = require('../lib/compiler');
      const options = { cacheDir: env.tempDir('cache'), noExternC: true };
      compileSync(env.compileSource, options);
      return { step: () => compileSync(env.compileSource, options) };
    },
  },
  {
    id: 'copy.dtod',
    title: '256 MiB device→device',
    unit: 'GB/s',
    bytes: SIZES.big,
    c: 'copy.dtod',
    spec: [2, 10, 1],
    target: null,
    note: 'each copy followed by Context.synchronizeSync()',
    js: (env) => {
      const { cuda } = env;
      const { device, device2 } = env.bigBuffers();
      return {
        step: () => {
          cuda.memcpyDtoD(device2, device, SIZES.big);
          cuda.Context.synchronizeSync();
        },
      };
    },
  },
  ...[
    ['batch', 'in one memcpyBatchAsync', (cuda, copies, stream) => () => cuda.memcpyBatchAsync(copies, stream)],
    [
      'calls',
      'by memcpyHtoDAsync calls',
      (cuda, copies, stream) => () => {
        for (const { dest, src } of copies) cuda.memcpyHtoDAsync(dest, src, stream);
      },
    ],
  ].map(([how, words, enqueue]) => ({
    id: `copy.${how}`,
    title: `${SIZES.batchCopies} copies of ${SIZES.small} B page-locked→device ${words}, per copy`,
    unit: 'us',
    per: SIZES.batchCopies,
    c: `copy.${how}`,
    spec: [2, 20, 1],
    target: null,
    note:
      'each batch of copies followed by stream.synchronizeSync(), timed; cudadrv checks and converts ' +
      'each copy object before the one driver call (about 0.2 us a copy on the build machine)',
    js: (env) => {
      const { cuda } = env;
      const stream = env.stream();
      const device = cuda.memAlloc(SIZES.batchCopies * SIZES.small);
      const host = cuda.pagelockedEmpty(SIZES.batchCopies * SIZES.small, 'uint8').fill(1);
      const copies = Array.from({ length: SIZES.batchCopies }, (_, i) => ({
        dest: device.slice(i * SIZES.small, SIZES.small),
        src: host.subarray(i * SIZES.small, (i + 1) * SIZES.small),
      }));
      const copy = enqueue(cuda, copies, stream);
      return {
        step: () => {
          copy();
          stream.synchronizeSync();
        },
      };
    },
  })),
  {
    id: 'lag.wait',
    title: 'timer lag awaiting a 500 ms kernel',
    unit: 'ms',
    c: null,
    spec: [0, 3, 1],
    target: atMost(2, 'ms'),
    js: (env) => {
      const stream = env.stream();
      const busy = env.occupier();
      return {
        samples: () =>
          lagDuring(env, 'the waits', () => {
            busy(stream, 500);
            return stream.synchronize();
          }),
      };
    },
  },
  {
    id: 'lag.compile',
    title: 'timer lag during an async compile',
    unit: 'ms',
    c: null,
    spec: [0, 3, 1],
    target: atMost(5, 'ms'),
    js: (env) => {
      const { compile } = require('../lib/compiler');
      const options = { cacheDir: false, noExternC: true };
      let serial = 0;
      return {
        samples: () =>
          lagDuring(env, 'the compiles', () => compile(`${env.compileSource}\n// lag sample ${serial++}\n`, options)),
      };
    },
  },
  {
    id: 'readfile.waits',
    title: 'fs.promises.readFile with 64 pending waits',
    unit: 'ms',
    c: null,
    spec: [0, 30, 1],
    target: atMost(5, 'ms'),
    js: (env) => {
      const { cuda } = env;
      const streams = Array.from({ length: 64 }, () => new cuda.Stream(cuda.StreamFlags.NON_BLOCKING));
      const busy = env.occupier();
      const file = path.join(env.tempDir('files'), 'small.txt');
      fs.writeFileSync(file, 'cudadrv');
      let late = 0;
      return {
        samples: async () => {
          const rounds = await repeat(3, async () => {
            for (const s of streams) busy(s, 100);
            const waits = streams.map((s) => s.synchronize());
            const latencies = await repeat(10, async () => {
              const start = performance.now();
              await fs.promises.readFile(file);
              return performance.now() - start;
            });
            if (streams.every((s) => s.isDone())) late++;
            await Promise.all(waits);
            return latencies;
          });
          if (late) env.note(`in ${late} of 3 rounds every wait had ended before the reads did`);
          return rounds.flat();
        },
      };
    },
  },
  {
    id: 'graph.launch',
    title: `${SIZES.graphKernels}-kernel graph, host cost per kernel`,
    unit: 'us',
    per: SIZES.graphKernels,
    c: 'graph.launch',
    spec: [2, 100, 5],
    target: ofOperation('launch.prepared', 0.2),
    js: (env) => {
      const { empty } = env.kernels();
      const stream = env.stream();
      empty({ block: BLOCK, grid: GRID, stream });
      stream.synchronizeSync();
      stream.beginCapture();
      try {
        for (let i = 0; i < SIZES.graphKernels; i++) empty({ block: BLOCK, grid: GRID, stream });
      } catch (error) {
        try {
          stream.endCapture();
        } catch {
          // the capture was invalidated: the first error says why
        }
        throw error;
      }
      const graph = stream.endCapture();
      if (graph.nodeCount !== SIZES.graphKernels) throw new Error(`captured ${graph.nodeCount} nodes`);
      const exec = graph.instantiate().upload(stream);
      return { step: () => exec.launch(stream), after: () => stream.synchronizeSync() };
    },
  },
  {
    id: 'graph.explicit.launch',
    title: `${SIZES.graphKernels}-kernel graph built node by node, host cost per kernel`,
    unit: 'us',
    per: SIZES.graphKernels,
    c: 'graph.explicit.launch',
    rounds: 40,
    spec: [3, 20, 5],
    note: 'C and cudadrv take turns: 40 rounds of 3 warm-up and 20 timed batches of 5 launches, the stream synchronized after each batch, untimed (fewer warm-ups and samples gave 1.10x to 1.43x from run to run)',
    target: ratioAtMost(1.05),
    js: (env) => {
      const stream = env.stream();
      const exec = explicitGraph(env).instantiate().upload(stream); // as floor.c: no flags, then upload
      return { step: () => exec.launch(stream), after: () => stream.synchronizeSync() };
    },
  },
  {
    id: 'graph.instantiate',
    title: `${SIZES.graphKernels}-kernel graph built node by node, instantiate and destroy`,
    unit: 'us',
    c: 'graph.instantiate',
    rounds: 10,
    spec: [1, 5, 4],
    note: 'C and cudadrv take turns: 10 rounds of 5 timed batches of 4 instantiations, each destroyed at once',
    target: ratioAtMost(1.05),
    js: (env) => {
      const graph = explicitGraph(env);
      return { step: () => graph.instantiate().destroy() };
    },
  },
  {
    id: 'graph.while.short',
    title: `WHILE loop of ${SIZES.whileShort} kernels, host cost of a launch`,
    unit: 'us',
    c: 'graph.while.short',
    rounds: 20,
    spec: [3, 20, 1],
    target: ratioAtMost(1.05),
    note: 'C and cudadrv take turns: 20 rounds of 3 warm-up and 20 timed launches, the stream synchronized after each, untimed (a loop still running holds the next launch of its GraphExec back)',
    js: (env) => whileLoop(env, SIZES.whileShort),
  },
  {
    id: 'graph.while.long',
    title: `WHILE loop of ${SIZES.whileLong} kernels, host cost of a launch`,
    unit: 'us',
    c: 'graph.while.long',
    rounds: 20,
    spec: [3, 20, 1],
    target: ratioAtMost(1.05),
    note:
      "held to C's own launch of the same loop, not to the 10-iteration one: the driver's launch of the " +
      'longer loop costs more than of the shorter (C: 4.9 -> 6.5 and 5.1 -> 20.8 us in two H100 runs); ' +
      'the line below is what the loop costs launched from JavaScript, kernel by kernel',
    js: (env) => whileLoop(env, SIZES.whileLong),
  },
  {
    id: 'graph.while.js',
    title: `the same ${SIZES.whileLong} kernels launched from JavaScript, host cost`,
    unit: 'us',
    spec: [2, 10, 1],
    js: (env) => {
      const { countDown } = env.kernels();
      const stream = env.stream();
      const left = env.cuda.memAlloc(4);
      env.cuda.memsetD32(left, 2 ** 30, 1); // never counted down to 0: no condition to clear
      const handle = 0n;
      const prepared = countDown.prepare('QP');
      return {
        step: () => {
          for (let i = 0; i < SIZES.whileLong; i++) prepared.preparedAsyncCall([1, 1], [1, 1, 1], stream, handle, left);
        },
        after: () => stream.synchronizeSync(),
      };
    },
  },
];

// A memset of the count, then a WHILE node whose body counts it down (bench/kernels.cu's
// count_down) and clears the condition at 0: iterations kernels a launch. Its launch on the stream.
function whileLoop(env, iterations) {
  const { cuda } = env;
  const { countDown } = env.kernels();
  const stream = env.stream();
  const left = cuda.memAlloc(4);
  const graph = new cuda.Graph();
  const reset = graph.addMemset(left, iterations, 1, { elementSize: 4 });
  const loop = graph.conditionalHandle({ default: 1 });
  const { bodies } = graph.addConditional(loop, 'while', { after: reset });
  bodies[0].addKernel(countDown, cuda.uint64(loop.value), left, { block: 1 });
  const exec = graph.instantiate().upload(stream);
  return { step: () => exec.launch(stream), after: () => stream.synchronizeSync() };
}

// SIZES.graphKernels empty kernels in a chain, each node after the one before.
function explicitGraph(env) {
  const { empty } = env.kernels();
  const graph = new env.cuda.Graph();
  let last;
  for (let i = 0; i < SIZES.graphKernels; i++) {
    last = graph.addKernel(empty, { block: BLOCK, grid: GRID, ...(last ? { after: last } : {}) });
  }
  return graph;
}

// One thread: the launches measure the host's cost, not the GPU's.
const GRID = [1, 1];
const BLOCK = [1, 1, 1];

// The prepared empty kernel's launch on the bench stream, and the wait that drains the stream.
function emptyLaunch(env) {
  const empty = env.preparedEmpty();
  const stream = env.stream();
  return {
    stream,
    launch: () => empty.preparedAsyncCall(GRID, BLOCK, stream),
    drain: () => stream.synchronizeSync(),
  };
}

// A prepared kernel (prepare() returning the kernel or a prepared twin of it).
function prepared(kernel, format) {
  const result = kernel.prepare(format);
  return result && typeof result.preparedAsyncCall === 'function' ? result : kernel;
}

async function repeat(times, fn) {
  const results = [];
  for (let i = 0; i < times; i++) results.push(await fn(i));
  return results;
}

// The worst lateness (ms) of a chain of 1 ms timers while the Promise that start() returns
// settles, three times; notes how long the work took.
async function lagDuring(env, what, start) {
  const took = [];
  const lags = await repeat(3, async () => {
    let lag = 0;
    let expected = performance.now() + 1;
    let timer;
    const tick = () => {
      const now = performance.now();
      lag = Math.max(lag, now - expected);
      expected = now + 1;
      timer = setTimeout(tick, 1);
    };
    timer = setTimeout(tick, 1);
    const begun = performance.now();
    try {
      await start();
    } finally {
      clearTimeout(timer);
    }
    took.push(performance.now() - begun);
    return lag;
  });
  env.note(`${what} took ${took.map((ms) => `${Math.round(ms)} ms`).join(', ')}`);
  return lags;
}

// The cold compiles' options: the device's architecture given, so that floor.c can be handed
// the very name and option list that cudadrv gives NVRTC for them.
function coldCompileRequest(arch) {
  const options = { cacheDir: false, noExternC: true, arch };
  const { name, options: nvrtcOptions } = require('../lib/compiler/request').request('', options);
  return { options, floorArgs: ['--compile-name', name, ...nvrtcOptions.flatMap((o) => ['--compile-option', o])] };
}

// Cold compiles, each of a source of its own, a step at a time (so that they take turns with
// floor.c's); notes how much of each was cudadrv's own work: all but the addon's call that compiles
// (which starts a thread, and makes the calls floor.c does).
function coldCompiles(env) {
  const binding = require('../lib/internal/binding');
  const { compileSync } = require('../lib/compiler');
  const { nvrtcCompile } = binding;
  let inside = 0;
  const timed = (...args) => {
    const start = performance.now();
    try {
      return nvrtcCompile(...args);
    } finally {
      inside = performance.now() - start;
    }
  };
  let serial = 0;
  const own = [];
  const notes = env.notes;
  const note = notes.push('') - 1; // filled in after each batch
  return {
    step: () => {
      binding.nvrtcCompile = timed;
      const start = performance.now();
      try {
        compileSync(`${env.compileSource}\n// sample ${serial++}\n`, env.coldCompile.options);
      } finally {
        binding.nvrtcCompile = nvrtcCompile;
      }
      own.push(performance.now() - start - inside);
    },
    after: () => {
      const sorted = [...own].sort((x, y) => x - y);
      notes[note] =
        `cudadrv's own work outside the addon's compiling call: ${(sorted[sorted.length >> 1] * 1000).toFixed(0)} µs (median)`;
    },
  };
}

// ---- shared resources, made on first use (a missing API fails only the lines that need it) ----

class Env {
  constructor(cuda, coldCompile) {
    this.cuda = cuda;
    this.coldCompile = coldCompile;
    this.compileSource = fs.readFileSync(COMPILE_FILE, 'utf8');
    this.notes = []; // what to know about the line being measured
    this.made = new Map();
    this.temp = null;
  }

  once(key, make) {
    if (!this.made.has(key)) {
      try {
        this.made.set(key, { value: make() });
      } catch (error) {
        this.made.set(key, { error });
      }
    }
    const { value, error } = this.made.get(key);
    if (error) throw error;
    return value;
  }

  note(text) {
    this.notes.push(text);
  }

  stream() {
    // non-blocking, as in floor.c: nothing on the legacy stream can disturb the graph's capture
    return this.once('stream', () => new this.cuda.Stream(this.cuda.StreamFlags.NON_BLOCKING));
  }

  kernels() {
    return this.once('kernels', () => {
      const { SourceModule } = require('../lib/compiler');
      const module = new SourceModule(fs.readFileSync(KERNELS_FILE, 'utf8'), { noExternC: true });
      return {
        module,
        empty: module.getFunction('empty'),
        args4: module.getFunction('args4'),
        spin: module.getFunction('spin'),
        countDown: module.getFunction('count_down'),
      };
    });
  }

  preparedEmpty() {
    return this.once('preparedEmpty', () => prepared(this.kernels().module.getFunction('empty'), ''));
  }

  argumentBuffers() {
    return this.once('arguments', () => ({ a: this.cuda.memAlloc(1024), b: this.cuda.memAlloc(1024) }));
  }

  bigBuffers() {
    return this.once('big', () => ({
      device: this.cuda.memAlloc(SIZES.big),
      device2: this.cuda.memAlloc(SIZES.big),
      pinned: this.cuda.pagelockedEmpty(SIZES.big, 'uint8').fill(1),
      pageable: new Uint8Array(SIZES.big).fill(1),
    }));
  }

  smallBuffers() {
    return this.once('small', () => ({
      device: this.cuda.memAlloc(SIZES.small),
      host: new Uint8Array(SIZES.small).fill(1),
    }));
  }

  // (stream, ms) => keeps stream busy for ms: the spin kernel, else a host function that sleeps
  // (noted on the line).
  occupier() {
    const { occupy, note } = this.once('occupier', () => {
      try {
        const { spin } = this.kernels();
        const { int32 } = this.cuda;
        if (typeof int32 !== 'function') throw new TypeError('cuda.int32 is not a function');
        return { occupy: (stream, ms) => spin(int32(ms * 1000), { block: BLOCK, grid: GRID, stream }) };
      } catch (error) {
        const binding = require('../lib/internal/binding');
        return {
          occupy: (stream, ms) => binding.streamEnqueueSleep(stream, ms),
          note: `a host function sleeping instead of the spin kernel (${firstLine(error)})`,
        };
      }
    });
    if (note) this.note(note);
    return occupy;
  }

  tempDir(name) {
    if (!this.temp) this.temp = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-bench-'));
    const dir = path.join(this.temp, name);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  cleanup() {
    if (this.temp) fs.rmSync(this.temp, { recursive: true, force: true });
  }
}

// ---- measuring ----

// Nanoseconds per step, one value per timed batch.
function measureSync([warmup, reps, batch], step, after) {
  const samples = [];
  for (let i = 0; i < warmup + reps; i++) {
    const start = process.hrtime.bigint();
    for (let j = 0; j < batch; j++) step();
    const elapsed = Number(process.hrtime.bigint() - start);
    if (after) after();
    if (i >= warmup) samples.push(elapsed / batch);
  }
  return samples;
}

async function measureAsync([warmup, reps, batch], step, after) {
  const samples = [];
  for (let i = 0; i < warmup + reps; i++) {
    const start = process.hrtime.bigint();
    for (let j = 0; j < batch; j++) await step();
    const elapsed = Number(process.hrtime.bigint() - start);
    if (after) after();
    if (i >= warmup) samples.push(elapsed / batch);
  }
  return samples;
}

const NS_PER_UNIT = { us: 1e3, ms: 1e6 };

// Nanoseconds per step → the operation's unit.
function inUnit(op, ns) {
  if (op.unit === 'GB/s') return op.bytes / ns;
  return ns / (op.per || 1) / NS_PER_UNIT[op.unit];
}

// Nanoseconds per step of spec's batches of what op.js made.
function measureMade(spec, made) {
  return made.async ? measureAsync(spec, made.step, made.after) : measureSync(spec, made.step, made.after);
}

// Runs op's cudadrv side: { samples } in its unit, or { error }.
async function measureJs(op, env) {
  env.notes = [];
  try {
    const made = op.js(env);
    if (made.samples) return { samples: await made.samples(), notes: env.notes };
    return { samples: (await measureMade(op.spec, made)).map((ns) => inUnit(op, ns)), notes: env.notes };
  } catch (error) {
    return { error: firstLine(error), notes: env.notes };
  }
}

/**
 * Lines that share a C operation (group), measured taking turns with C: group[0].rounds rounds of
 * a C round (cRound(spec): a Promise of { samples } in ns per step, or { error }) and then a round
 * of each line, each round running the line's spec. Returns { jsRuns: id → { samples, notes } or
 * { error, notes }, cRun: { samples } or { error } }, samples in the lines' unit.
 */
async function alternate(group, env, cRound) {
  const lines = group.map((op) => {
    env.notes = [];
    try {
      return { op, made: op.js(env), samples: [], notes: env.notes };
    } catch (error) {
      return { op, error: firstLine(error), notes: env.notes };
    }
  });
  const c = { samples: [] };
  const cTurn = async () => {
    if (c.error) return;
    const { samples, error } = await cRound(group[0].spec);
    if (error) c.error = error;
    else c.samples.push(...samples.map((ns) => inUnit(group[0], ns)));
  };
  const jsTurn = async () => {
    for (const line of lines) {
      if (line.error) continue;
      try {
        line.samples.push(...(await measureMade(line.op.spec, line.made)).map((ns) => inUnit(line.op, ns)));
      } catch (error) {
        line.error = firstLine(error);
      }
    }
  };
  // Who goes first alternates, so that neither side always starts right after the other's turn
  // (taking the device back from the other process) and any cost of that falls on both alike.
  for (let round = 0; round < group[0].rounds; round++) {
    for (const turn of round % 2 ? [jsTurn, cTurn] : [cTurn, jsTurn]) await turn();
  }
  const jsRuns = Object.fromEntries(
    lines.map(({ op, samples, error, notes }) => [op.id, error ? { error, notes } : { samples, notes }]),
  );
  return { jsRuns, cRun: c.error ? { error: c.error } : c };
}

function firstLine(error) {
  const text = error && error.message ? `${error.name || 'Error'}: ${error.message}` : String(error);
  return text.split('\n')[0];
}

// ---- the C side ----

// The CUDA toolkit, as the addon's build finds it.
function cudaRoot() {
  const script = path.join(ROOT, 'scripts', 'find-cuda.js');
  const found = spawnSync(process.execPath, [script], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(found.stderr.trim().split('\n')[0]);
  return path.dirname(found.stdout);
}

// Builds floor.c; returns the path of the program.
function buildFloor(root) {
  fs.mkdirSync(path.dirname(FLOOR_BINARY), { recursive: true });
  const cc = process.env.CC || 'cc';
  const built = spawnSync(
    cc,
    [
      '-O2',
      '-std=c11',
      '-Wall',
      '-Wextra',
      `-I${path.join(root, 'include')}`,
      FLOOR_SOURCE,
      '-ldl',
      '-lpthread',
      '-o',
      FLOOR_BINARY,
    ],
    { encoding: 'utf8' },
  );
  if (built.error) throw new Error(`could not run ${cc} to build bench/floor.c: ${built.error.message}`);
  if (built.status !== 0 || built.stderr.trim()) {
    throw new Error(`${cc} did not build bench/floor.c cleanly: ${built.stderr.trim().split('\n')[0]}`);
  }
  return FLOOR_BINARY;
}

// floor --list, checked against what this file measures.
function checkFloor(floor, ops) {
  const { operations, sizes } = JSON.parse(execFileSync(floor, ['--list'], { encoding: 'utf8' }));
  const wanted = [...new Set(ops.map((op) => op.c).filter(Boolean))];
  const missing = wanted.filter((name) => !operations.includes(name));
  if (missing.length) throw new Error(`bench/floor.c does not measure ${missing.join(', ')}`);
  const unused = operations.filter((name) => !wanted.includes(name));
  if (unused.length && ops === OPERATIONS) {
    throw new Error(`bench/floor.c measures ${unused.join(', ')}, which no line uses`);
  }
  if (JSON.stringify(sizes) !== JSON.stringify(SIZES)) {
    throw new Error(
      `bench/floor.c uses the sizes ${JSON.stringify(sizes)}, ` + `bench/run.js ${JSON.stringify(SIZES)}`,
    );
  }
}

// Runs floor.c on every C operation of ops: { meta, runs: name → { samples (unit) } or { error } }.
function runFloor(floor, root, ops) {
  const specs = new Map();
  for (const op of ops) if (op.c && !specs.has(op.c)) specs.set(op.c, op.spec);
  if (specs.size === 0) return { meta: {}, runs: {} };
  const args = [
    '--cuda',
    root,
    '--kernels',
    KERNELS_FILE,
    '--compile',
    COMPILE_FILE,
    ...[...specs].map(([name, spec]) => `${name}:${spec.join(':')}`),
  ];
  const run = spawnSync(floor, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, timeout: 300000 });
  const failed = run.error
    ? run.error.message
    : run.status !== 0
      ? run.stderr.trim().split('\n').pop() || `exit status ${run.status}`
      : null;
  if (failed) return { meta: {}, error: `floor.c failed: ${failed}`, runs: {} };
  const { results, ...meta } = JSON.parse(run.stdout);
  const runs = {};
  for (const op of ops) {
    if (!op.c || runs[op.c] || !results[op.c]) continue;
    const { samples, error } = results[op.c];
    runs[op.c] = error ? { error } : { samples: samples.map((ns) => inUnit(op, ns)) };
  }
  return { meta, runs };
}

/**
 * bench/floor.c --serve: a C process, set up as for runFloor, that runs one OP:WARMUP:REPS:BATCH
 * a request, so that C and cudadrv can take turns. request(name, spec) gives { samples } (ns per
 * step) or { error }; close() ends it.
 */
class FloorServer {
  constructor(floor, root, compileArgs = []) {
    this.child = spawn(
      floor,
      ['--serve', '--cuda', root, '--kernels', KERNELS_FILE, '--compile', COMPILE_FILE, ...compileArgs],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.pending = []; // { resolve } per line awaited, in order
    this.buffer = '';
    this.stderr = '';
    this.ended = null; // why no more lines will come
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => {
      this.buffer += chunk;
      let end;
      while ((end = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 1);
        const waiting = this.pending.shift();
        if (waiting) waiting.resolve(parseLine(line));
      }
    });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk) => {
      this.stderr += chunk;
    });
    const end = (why) => {
      this.ended = this.ended || why;
      for (const waiting of this.pending.splice(0)) waiting.resolve({ error: this.ended });
    };
    this.child.on('error', (error) => end(`floor.c --serve failed: ${error.message}`));
    this.child.on('close', (status) =>
      end(`floor.c --serve ended: ${this.stderr.trim().split('\n').pop() || `exit status ${status}`}`),
    );
    this.child.stdin.on('error', () => {}); // a write after it ended: its close says why
  }

  next() {
    if (this.ended) return Promise.resolve({ error: this.ended });
    return new Promise((resolve) => this.pending.push({ resolve }));
  }

  // The first line: { device, driver, sizes } once set up, or { error }.
  started() {
    return this.next();
  }

  request(name, spec) {
    const result = this.next();
    if (!this.ended) this.child.stdin.write(`${name}:${spec.join(':')}\n`);
    return result;
  }

  close() {
    this.child.stdin.end();
  }
}

function parseLine(line) {
  try {
    return JSON.parse(line);
  } catch {
    return { error: `floor.c --serve printed ${JSON.stringify(line.slice(0, 80))}` };
  }
}

// Measures the lines of ops that take turns with C (op.rounds), group by group, through a
// FloorServer given compileArgs (the cold compiles' name and options): { jsRuns, cRuns } as
// measureJs and runFloor give them, and floor.c's meta.
async function measureAlternating(ops, env, floor, root, compileArgs) {
  const jsRuns = {};
  const cRuns = {};
  let meta = {};
  const groups = new Map();
  for (const op of ops) {
    if (!op.rounds) continue;
    if (!groups.has(op.c)) groups.set(op.c, []);
    groups.get(op.c).push(op);
  }
  if (groups.size === 0) return { jsRuns, cRuns, meta };
  const server = new FloorServer(floor, root, compileArgs);
  try {
    const started = await server.started();
    if (!started.error) meta = started;
    for (const [name, group] of groups) {
      progress.current = group.map((op) => op.id).join(', ');
      process.stderr.write(`bench: cudadrv and C in turns: ${progress.current}\n`);
      const cRound = started.error
        ? () => Promise.resolve({ error: started.error })
        : (spec) => server.request(name, spec);
      const { jsRuns: js, cRun } = await alternate(group, env, cRound);
      Object.assign(jsRuns, js);
      cRuns[name] = cRun;
    }
  } finally {
    server.close();
  }
  return { jsRuns, cRuns, meta };
}

// ---- made-up samples for --dry-run: each line just meets its target ----

function dryRun(ops) {
  let seed = 7;
  const jitter = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return 1 + (seed / 2147483648 - 0.5) * 0.02;
  };
  const base = { us: 2, ms: 300, 'GB/s': 25 };
  const jsRuns = {};
  const cRuns = {};
  const medians = {};
  for (const op of ops) {
    const c = base[op.unit];
    const t = op.target;
    let js = c;
    if (t && t.kind === 'ratio') js = (c * (1 + t.max)) / 2;
    if (t && t.kind === 'bandwidth') js = c * (t.min + 0.01);
    if (t && t.kind === 'absolute') js = t.max / 2;
    if (t && t.kind === 'delta') js = c + t.max / 2;
    if (t && t.kind === 'of') js = (medians[t.op] * t.max) / 2;
    medians[op.id] = js;
    jsRuns[op.id] = { samples: Array.from({ length: op.spec[1] }, () => js * jitter()) };
    if (op.c) cRuns[op.c] = { samples: Array.from({ length: op.spec[1] }, () => c * jitter()) };
  }
  return { jsRuns, cRuns };
}

// ---- main ----

// The whole run stops after this long (a GPU machine's command limit is 10 minutes).
const LIMIT_S = 480;
const progress = { current: 'the setup' };

const USAGE = 'node bench/run.js [--out FILE] [--only REGEX] [--dry-run]';

function parseArgs(argv) {
  const options = { out: null, only: null, dryRun: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--dry-run') options.dryRun = true;
    else if ((arg === '--out' || arg === '--only') && i + 1 < argv.length) options[arg.slice(2)] = argv[++i];
    else throw new Error(`unknown argument ${arg}; usage: ${USAGE}`);
  }
  return options;
}

// The operations to run: those --only names, and those their targets refer to.
function select(only) {
  if (!only) return OPERATIONS;
  const pattern = new RegExp(only);
  const chosen = new Set(OPERATIONS.filter((op) => pattern.test(op.id)).map((op) => op.id));
  for (const op of OPERATIONS) if (chosen.has(op.id) && op.target && op.target.op) chosen.add(op.target.op);
  if (chosen.size === 0) throw new Error(`--only ${only} matches no operation`);
  return OPERATIONS.filter((op) => chosen.has(op.id));
}

function noDeviceReason(cuda) {
  try {
    return cuda.Device.count() > 0 ? null : 'the driver reports no CUDA device';
  } catch (error) {
    return error.message;
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const ops = select(options.only);
  const root = cudaRoot();
  const floor = buildFloor(root);
  checkFloor(floor, ops);
  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${os.type()} ${os.arch()}`,
  };
  if (options.dryRun) {
    const { jsRuns, cRuns } = dryRun(ops);
    return report(assemble(ops, jsRuns, cRuns), { ...meta, dryRun: true }, options.out);
  }
  const cuda = require('..');
  const reason = noDeviceReason(cuda);
  if (reason) {
    throw new Error(
      `no CUDA device to measure (${reason}); run it on a machine with an NVIDIA GPU, ` + 'or try --dry-run',
    );
  }
  const device = new cuda.Device(0);
  const coldCompile = coldCompileRequest(`sm_${device.computeCapability().join('')}`);
  const started = Date.now();
  progress.current = 'bench/floor.c';
  process.stderr.write('bench: C (bench/floor.c)...');
  const floorRun = runFloor(
    floor,
    root,
    ops.filter((op) => !op.rounds),
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stderr.write(` ${seconds} s${floorRun.error ? `: ${floorRun.error}` : ''}\n`);
  const context = device.retainPrimaryContext();
  context.push();
  const env = new Env(cuda, coldCompile);
  const turns = await measureAlternating(ops, env, floor, root, coldCompile.floorArgs);
  const jsRuns = { ...turns.jsRuns };
  for (const op of ops) {
    if (op.rounds) continue;
    progress.current = op.id;
    process.stderr.write(`bench: cudadrv ${op.id}\n`);
    jsRuns[op.id] = await measureJs(op, env);
  }
  env.cleanup();
  const cRuns = floorRun.error
    ? Object.fromEntries(ops.filter((op) => op.c && !op.rounds).map((op) => [op.c, { error: floorRun.error }]))
    : floorRun.runs;
  Object.assign(cRuns, turns.cRuns);
  return report(
    assemble(ops, jsRuns, cRuns),
    {
      ...meta,
      device: device.name(),
      driver: cuda.getDriverVersion(),
      floor: { ...turns.meta, ...floorRun.meta },
      seconds: (Date.now() - started) / 1000,
    },
    options.out,
  );
}

if (require.main === module) {
  let ended = false;
  const end = (status, message) => {
    ended = true;
    if (message) process.stderr.write(`bench: ${message}\n`);
    process.exit(status);
  };
  // A Promise that never settles would let the process end quietly with status 0.
  process.on('exit', () => ended || end(1, `stopped before the end, in ${progress.current}: a wait never settled`));
  setTimeout(() => end(1, `still in ${progress.current} after ${LIMIT_S} s; stopping`), LIMIT_S * 1000).unref();
  main().then(
    (status) => end(status),
    (error) => end(1, error.message.split('\n')[0]),
  );
}

module.exports = {
  OPERATIONS,
  SIZES,
  inUnit,
  select,
  alternate,
  FloorServer,
  Env,
  measureJs,
  cudaRoot,
  buildFloor,
  runFloor,
};
