'use strict';
// One fuzzing run in a process of its own (test/reliability/fuzz/run.js starts it): calls `from` to `to` of
// run `seed`, or only the calls listed. Before each call it writes "call <i>" to fd 3, so that the
// parent knows which call was running if the process dies, and "threw <i>" after one that threw
// before reaching the driver; at the end, one line of JSON: the
// count of each error class thrown, and the throws that were none of the allowed classes.
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { Worker } = require('worker_threads');
const { collect, record, cuda, compiler, tools } = require('./targets');
const { callGenerator, value, typedArray, Sentinel, setInCall } = require('./values');
const nvJitLinkPath = process.env.CUDADRV_NVJITLINK_PATH;
const { OPERATIONS } = require('../fault/operations');
const { mutationCall } = require('./mutate');

// operations.js names a missing nvJitLink, for the fault test's driver linker; the fuzzer links
// with the real one, as a user does.
if (nvJitLinkPath === undefined) delete process.env.CUDADRV_NVJITLINK_PATH;
else process.env.CUDADRV_NVJITLINK_PATH = nvJitLinkPath;

const job = JSON.parse(process.argv[2]);
const { targets, enums } = collect();
const pool = [];
const POOL_SIZE = 256;
const PROGRESS = 3;
const TRACE = process.env.CUDADRV_FUZZ_TRACE && path.join(process.env.CUDADRV_FUZZ_TRACE, `trace.${process.pid}`);
// A planted death, for the test of run.js's minimizer (fuzz.test.js): the child aborts once it has
// made every call CUDADRV_FUZZ_PLANT lists ("37,211"), as a driver crash that two calls cause, or
// in its set-up ("set-up").
const PLANT = process.env.CUDADRV_FUZZ_PLANT;
const planted = PLANT && PLANT !== 'set-up' ? new Set(PLANT.split(',').map(Number)) : null;
// With CUDADRV_FUZZ_PLANT_ONCE (a folder), it aborts only the first time its list of calls is
// replayed: a death that does not repeat, as one that needs the heap to hold the wrong bytes.
const plantedNow = () => {
  const dir = process.env.CUDADRV_FUZZ_PLANT_ONCE;
  if (!dir) return true;
  const list = crypto.createHash('sha1').update(JSON.stringify(job.only ?? [job.from, job.to]));
  try {
    fs.writeFileSync(path.join(dir, list.digest('hex')), '', { flag: 'wx' });
    return true;
  } catch {
    return false;
  }
};

// The call that made each value a call returned (not set-up's): a drop's label names them, so that
// a death in the finalizers it lets run says what was collected.
const madeBy = new WeakMap();

let kept = 0;
function keep(v) {
  if ((typeof v !== 'object' && typeof v !== 'function') || v === null) return;
  if (pool.length < POOL_SIZE) pool.push(v);
  else pool[Math.imul(++kept, 0x9e3779b1) >>> 24] = v; // the same slots in a replay
}

// Live objects of every kind, made with valid arguments (each may fail: in the no-driver mode
// most do).
const IMAGE = ['entry add 8 8 4', 'global table 256', 'texref tex', 'surfref surf'].join('\n');
const MAKERS = [
  () => new cuda.Device(0),
  () => new cuda.Device(0).makeContext(),
  () => cuda.memAlloc(4096),
  () => cuda.memAlloc(4096).slice(1024, 2048),
  () => new cuda.Stream(),
  () => new cuda.Event(),
  () => new cuda.Event(cuda.EventFlags.DISABLE_TIMING),
  () => new cuda.Device(0).smResource(),
  () => new cuda.Device(0).makeGreenContext(new cuda.Device(0).smResource().split({ minCount: 8 }).groups),
  () => cuda.TensorMap.tiled({ memory: cuda.memAlloc(4096), dataType: 'float32', globalDim: [32, 32], boxDim: [8, 8] }),
  () => {
    // a kernel whose launcher holds events bound by launch attributes
    const add = new cuda.Module(IMAGE).getFunction('add');
    const event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
    add(cuda.memAlloc(64), cuda.memAlloc(64), cuda.int32(1), { block: 1, priority: 1, completionEvent: event });
    add.prepare('PPi').preparedCall(1, 1, cuda.memAlloc(64), cuda.memAlloc(64), 1, { programmaticEvent: event });
    return add;
  },
  () => new cuda.Module(IMAGE),
  () => new cuda.Module(IMAGE).getFunction('add'),
  () => new cuda.Module(IMAGE).getGlobal('table'),
  () => new cuda.Module(IMAGE).getTexref('tex'),
  () => new cuda.Module(IMAGE).getSurfref('surf'),
  () => new cuda.CudaArray({ width: 16, height: 4, format: cuda.ArrayFormat.FLOAT, numChannels: 1 }),
  () => new cuda.TextureObject(new cuda.CudaArray({ width: 16, format: cuda.ArrayFormat.FLOAT, numChannels: 1 })),
  () => new cuda.SurfaceObject(new cuda.CudaArray({ width: 16, format: cuda.ArrayFormat.FLOAT, numChannels: 1 })),
  () => cuda.pagelockedZeros(256, 'float32'),
  () => cuda.hostAllocationOf(cuda.pagelockedZeros(256, 'uint8')),
  () => cuda.managedZeros(256, 'float32'),
  () => cuda.alignedZeros(256, 'float64'),
  () => cuda.registerHostMemory(cuda.alignedEmpty(8192, 'uint8')),
  () => cuda.MemoryPool.getCurrent(),
  () => new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 }),
  () => new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 }).exportHandle(),
  () => new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 }).allocate(256, new cuda.Stream()),
  () => new cuda.PhysicalMemory(cuda.memGetAllocationGranularity(), { handleType: 'posix-fd' }),
  () => new cuda.VirtualAddressRange(2 * cuda.memGetAllocationGranularity()),
  () => new cuda.GrowableBuffer({ maxBytes: 4 * cuda.memGetAllocationGranularity(), initialBytes: 100 }),
  () => {
    const range = new cuda.VirtualAddressRange(cuda.memGetAllocationGranularity());
    range.map(0, new cuda.PhysicalMemory(cuda.memGetAllocationGranularity()));
    return range;
  },
  () => cuda.memAllocAsync(256),
  () => {
    const s = new cuda.Stream();
    s.beginCapture();
    return s.endCapture();
  },
  () => {
    const s = new cuda.Stream();
    s.beginCapture();
    return s.endCapture().instantiate();
  },
  () => {
    const g = new cuda.Graph();
    g.addMemset(cuda.memAlloc(256), 1, 64, { elementSize: 4 });
    return g;
  },
  () => new cuda.Graph().addEmpty(),
  () => {
    const g = new cuda.Graph();
    g.addHostFunc(() => {});
    return g.instantiate();
  },
  () => {
    const g = new cuda.Graph();
    const { node, memory } = g.addMemAlloc(256);
    g.addMemFree(memory, { after: g.addMemset(memory, 1, 256, { after: node }) });
    return g;
  },
  () => new cuda.Graph().addMemAlloc(256).memory,
  () => {
    const g = new cuda.Graph();
    g.addKernel(new cuda.Module(IMAGE).getFunction('add'), cuda.memAlloc(64), cuda.memAlloc(64), cuda.int32(1), {
      block: 1,
    });
    return g.instantiate();
  },
  () =>
    new cuda.Graph().addKernel(
      new cuda.Module(IMAGE).getFunction('add'),
      cuda.memAlloc(64),
      cuda.memAlloc(64),
      cuda.int32(1),
      {
        block: 1,
      },
    ),
  () => {
    const s = new cuda.Stream();
    s.beginCapture();
    const add = new cuda.Module(IMAGE).getFunction('add');
    add(cuda.memAlloc(64), cuda.memAlloc(64), cuda.int32(1), { block: 1, stream: s });
    cuda.memsetD8Async(cuda.memAlloc(64), 1, 64, s);
    return s.endCapture();
  },
  () => {
    const s = new cuda.Stream(); // left capturing: what random calls enqueue on it is kept
    s.beginCapture();
    return s;
  },
  () => {
    const s = new cuda.Stream(); // left capturing into a graph of its own: endCapture() gives it
    s.beginCapture(undefined, { into: new cuda.Graph() });
    return s;
  },
  () => {
    const g = new cuda.Graph();
    g.addMemcpy(cuda.pagelockedEmpty(64, 'uint8'), cuda.memAlloc(64), 64);
    return g;
  },
  () => {
    const copy = new cuda.Memcpy3D();
    copy.setSrcDevice(cuda.memAlloc(256));
    copy.setDstHost(cuda.pagelockedEmpty(256, 'uint8'));
    Object.assign(copy, {
      srcPitch: 64,
      dstPitch: 64,
      srcHeight: 2,
      dstHeight: 2,
      widthInBytes: 32,
      height: 2,
      depth: 2,
    });
    const g = new cuda.Graph();
    g.addMemcpy(copy);
    return g;
  },
  () => new cuda.Memcpy2D(),
  () => {
    const copy = new cuda.Memcpy2D(); // pageable to an array: staged where the seed stages
    copy.setSrcHost(new Uint8Array(8192));
    copy.setDstArray(
      new cuda.CudaArray({ width: 64, height: 64, format: cuda.ArrayFormat.UNSIGNED_INT8, numChannels: 1 }),
    );
    Object.assign(copy, { srcPitch: 128, widthInBytes: 64, height: 64 });
    return copy;
  },
  () => new cuda.Memcpy3D(),
  () => new cuda.Memcpy3DPeer(),
  () => cuda.memGetIpcHandle(cuda.memAlloc(256)),
  () => new cuda.ArrayDescriptor(),
  () => cuda.int32(5),
  () => cuda.In(new Float32Array(16)),
  () => compiler.compileSync('extern "C" __global__ void k(float *x) { x[threadIdx.x] *= 2; }'),
  () => compiler.compileSync(LINKABLE, { arch: 'sm_90', relocatable: true }),
  () => compiler.compileSync(LINKABLE, { arch: 'sm_90', lto: true }),
  () => new compiler.Linker({ arch: 'sm_90' }),
  () => new tools.DeviceMemoryPool(),
  () => new tools.PageLockedMemoryPool(),
  () => new tools.DeviceData(),
];

const LINKABLE =
  'extern "C" __device__ float twice(float x) { return 2 * x; }\n' +
  'extern "C" __global__ void k(float *p) { p[threadIdx.x] = twice(p[threadIdx.x]); }';

// The compiler's uses beyond operations.js: each kind of compile, links with nvJitLink, a
// DynamicSourceModule (each step may fail: in the no-driver mode some do). run.js isolates them
// all (CUDADRV_ISOLATE=1); the mutation mode (mutate.js) changes their inputs' bytes.
const COMPILER_USES = [
  () => compiler.compileSync(LINKABLE, { arch: 'compute_90', relocatable: true, options: ['-DX=1'] }),
  async () => {
    const cubin = compiler.compileSync(LINKABLE, { arch: 'sm_90', relocatable: true });
    new compiler.Linker({ arch: 'sm_90' }).add(cubin, { name: 'a.cubin' }).link();
  },
  async () => {
    const ltoir = await compiler.compile(LINKABLE, { arch: 'sm_90', lto: true });
    await new compiler.Linker({ arch: 'sm_90', lto: true }).add(ltoir).linkAsync();
  },
  () =>
    new compiler.DynamicSourceModule(
      '__global__ void child(int *p) { *p = 1; }\n__global__ void parent(int *p) { child<<<1, 1>>>(p); }',
    ),
];

let examples = []; // calls of valid use, recorded while test/reliability/fault/operations.js ran

async function setUp() {
  // odd seeds stage every copy of pageable memory, through buffers of a page: random copies of
  // every shape then reach the staging code
  if (job.seed % 2) cuda.pageableStaging({ threshold: 0, bufferBytes: 4096, helpers: 2 });
  for (const make of MAKERS) {
    try {
      keep(make());
    } catch {
      /* not in this mode */
    }
  }
  examples = await record(targets, async () => {
    for (const operation of [...Object.values(OPERATIONS), ...COMPILER_USES]) {
      try {
        await operation(process.cwd());
      } catch {
        /* not in this mode */
      }
    }
  });
}

function describe(v) {
  try {
    return describeValue(v);
  } catch {
    return '<hostile object>';
  }
}

function describeValue(v) {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 20)}…` : v);
  if (typeof v !== 'object' && typeof v !== 'function') return Object.is(v, -0) ? '-0' : String(v);
  if (v === null) return 'null';
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${v.length ?? v.byteLength})`;
  if (Array.isArray(v)) return v.length > 16 ? `Array(${v.length})` : `[${v.map(describe).join(', ')}]`;
  const name = Object.getPrototypeOf(v)?.constructor?.name;
  if (name && name !== 'Object') return `<${name}>`;
  return `{ ${Object.entries(v)
    .map(([k, x]) => `${k}: ${describe(x)}`)
    .join(', ')} }`;
}

// A value of the example, changed now and then: a hostile value, another live object of its
// class, a nearby or extreme number, an option changed, other host memory.
function mutate(rng, v, depth = 0) {
  if (rng.chance(0.1)) return value(rng, pool, enums);
  try {
    return change(rng, v, depth);
  } catch {
    return [v, '<hostile object>']; // a Proxy of the pool
  }
}

function change(rng, v, depth) {
  if (typeof v === 'number' && rng.chance(0.15)) {
    const n = rng.pick([v + 1, v - 1, v * 2, -v, v + 0.5, 2 ** 32 + v, 2 ** 53, NaN]);
    return [n, describe(n)];
  }
  if (v && typeof v === 'object') {
    if (ArrayBuffer.isView(v) && rng.chance(0.2)) return typedArray(rng);
    const proto = Object.getPrototypeOf(v);
    if (proto && proto !== Object.prototype && proto !== Array.prototype && rng.chance(0.6)) {
      const same = pool.filter((x) => x !== null && typeof x === 'object' && Object.getPrototypeOf(x) === proto);
      if (same.length) {
        const i = rng.int(same.length);
        return [same[i], `<${proto.constructor.name}>`];
      }
    }
    if (depth < 2 && (proto === Object.prototype || (Array.isArray(v) && v.length <= 16)) && rng.chance(0.5)) {
      const copy = Array.isArray(v) ? [...v] : { ...v };
      const keys = Object.keys(copy);
      if (keys.length) {
        const key = rng.pick(keys);
        copy[key] = mutate(rng, copy[key], depth + 1)[0];
      }
      return [copy, describe(copy)];
    }
  }
  return [v, describe(v)];
}

function mutated(rng, example) {
  const args = [];
  const labels = [];
  for (const a of example.args) {
    const [v, label] = mutate(rng, a);
    args.push(v);
    labels.push(label);
  }
  if (args.length && rng.chance(0.05)) {
    args.pop();
    labels.pop();
  }
  if (rng.chance(0.05)) {
    const [v, label] = value(rng, pool, enums);
    args.push(v);
    labels.push(label);
  }
  const { target } = example;
  if (target.kind === 'new')
    return [() => new target.fn(...args), `${target.label}(${labels.join(', ')})`, proper(target, undefined, args)];
  const [self, slabel] =
    target.kind === 'method'
      ? mutate(rng, example.self)
      : [example.self, target.owner ? target.owner.name : 'undefined'];
  if (target.kind === 'method') alias(rng, self, args, labels);
  return [
    () => target.fn.apply(self, args),
    `${target.label}.call(${slabel}, ${labels.join(', ')})`,
    proper(target, self, args),
    self,
  ];
}

// Objects of the hostile subclasses (a method replaced by anything): what they break is theirs.
const tampered = new WeakSet();

// Whether values, or the arrays and options objects among them, hold a tampered object.
function involvesTampered(values, depth = 0) {
  for (const v of values) {
    if ((typeof v !== 'object' && typeof v !== 'function') || v === null) continue;
    if (tampered.has(v)) return true;
    let inner = null;
    try {
      if (depth < 2 && (Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype)) inner = Object.values(v);
    } catch {
      /* a Proxy whose traps throw */
    }
    if (inner && involvesTampered(inner, depth + 1)) return true;
  }
  return false;
}

// A launch of a live kernel of the pool, from a valid call changed as the examples are.
function launch(rng, kernel) {
  const allocations = pool.filter((v) => isA(v, cuda.DeviceAllocation));
  const n = 1 + rng.int(64);
  const example = [
    allocations.length ? rng.pick(allocations) : cuda.pointer(0n),
    rng.chance(0.5) ? cuda.In(new Float32Array(n)) : cuda.Out(new Float32Array(n)),
    cuda.int32(n),
    { block: [n, 1, 1], grid: 1, stream: pool.find((v) => isA(v, cuda.Stream)) || null, shared: 0 },
  ];
  if (rng.chance(0.3)) {
    // launch attributes, an event's among them, for the mutations to work on
    const event = pool.find((v) => isA(v, cuda.Event)) || null;
    Object.assign(example[3], {
      priority: 1,
      clusterSchedulingPolicy: 'spread',
      memSyncDomain: 'remote',
      sharedMemoryCarveout: 50,
      programmaticStreamSerialization: true,
      programmaticEvent: { event, triggerAtBlockStart: true },
      completionEvent: event,
    });
  }
  const args = [];
  const labels = [];
  for (const a of example) {
    const [v, label] = mutate(rng, a);
    args.push(v);
    labels.push(label);
  }
  return [() => kernel(...args), `<Kernel>(${labels.join(', ')})`, !involvesTampered([kernel, ...args])];
}

// A call of the API as documented: a public function, or a method on an object of its class.
// Only such calls must never end in an error worded by the engine ("x is not a function").
function proper(target, self, args) {
  if (target.internal || involvesTampered([self, ...args])) return false;
  if (target.kind === 'static') return self === target.owner;
  if (target.kind === 'method') return isA(self, target.owner);
  return true;
}

const counts = {};
const unexpected = [];
const pending = new Map(); // index → Promise not yet settled

// Messages the JavaScript engine or Node writes, which name no argument of cudadrv's: a call
// that ends in one reached a value cudadrv never checked.
const ENGINE_WORDING = new RegExp(
  [
    'Cannot convert',
    'Cannot read propert',
    'Cannot set propert',
    'Cannot create property',
    'Cannot destructure',
    'Cannot mix BigInt',
    'is not a function',
    'is not iterable',
    'is not a constructor',
    'Invalid array length',
    'Invalid typed array length',
    'Invalid DataView',
    'Maximum call stack',
    'called on incompatible receiver',
    'Cannot perform',
    'out of bounds',
    'Start offset',
    'must be of type',
    'The "\\w+" argument',
    'Do not know how to',
    'Converting circular',
    "cannot be invoked without 'new'",
    'is not a valid',
    'Invalid time value',
    'Cannot access',
    'Private field',
    'has no property',
    "Cannot use 'in' operator",
  ].join('|'),
);

function classify(error, index, label, properCall) {
  let name;
  if (error instanceof Sentinel) name = 'hostile value threw';
  else if (error instanceof cuda.CudaError) name = error.constructor.name;
  else if ((error instanceof TypeError || error instanceof RangeError) && ENGINE_WORDING.test(error.message)) {
    if (properCall) {
      name = `UNEXPECTED ${error.constructor.name} worded by the engine`;
      if (unexpected.length < 20)
        unexpected.push({ index, call: label, error: error.stack.split('\n').slice(0, 4).join('\n') });
    } else {
      name = `${error.constructor.name} worded by the engine (wrong this, internal member)`;
    }
  } else if (error instanceof TypeError || error instanceof RangeError) name = error.constructor.name;
  else if (error && error.name === 'AbortError') name = 'AbortError';
  else {
    name = `UNEXPECTED ${error && error.constructor ? error.constructor.name : typeof error}`;
    if (unexpected.length < 20) {
      unexpected.push({
        index,
        call: label,
        error: String(error && error.stack ? error.stack.split('\n').slice(0, 4).join('\n') : error),
      });
    }
  }
  counts[name] = (counts[name] || 0) + 1;
}

// Now and then the receiver is one of the arguments too: driver 580 crashed on a graph made its
// own child, a call no test had made.
function alias(rng, self, args, labels) {
  if (!args.length || !rng.chance(0.05)) return;
  const at = rng.int(args.length);
  args[at] = self;
  labels[at] = 'this';
}

function pickThis(rng, owner) {
  if (rng.chance(0.85)) {
    const mine = pool.filter((v) => isA(v, owner));
    if (mine.length) {
      const i = rng.int(mine.length);
      return [mine[i], `<${owner.name}>`];
    }
  }
  return value(rng, pool, enums);
}

// Lets the collector have a few of the pool's objects, while what was made of them may still run.
function dropToCollector(rng) {
  const count = 1 + rng.int(8);
  const at = rng.int(Math.max(pool.length, 1));
  const makers = pool
    .slice(at, at + count)
    .map((v) => madeBy.get(v))
    .filter((index) => index !== undefined);
  return [
    () => {
      pool.splice(at, count);
      global.gc();
    },
    `drop pool[${at}..+${count}]${makers.length ? ` (made by #${makers.join(', #')})` : ''}, gc()`,
  ];
}

// A worker that loads cudadrv and starts a compile, a wait or an allocation, terminated while it
// may still be at it.
const WORKER_CODE = `
  const { workerData } = require('worker_threads');
  const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..', '..'))});
  const compiler = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'lib', 'compiler'))});
  try {
    if (workerData === 'compile') compiler.compile('__global__ void k(int *x) { x[0] = ' + Math.random() + '; }').catch(() => {});
    const context = workerData === 'compile' ? null : new cuda.Device(0).makeContext();
    if (workerData === 'wait') cuda.Context.synchronize().catch(() => {});
    if (workerData === 'alloc') globalThis.kept = [cuda.memAlloc(4096), new cuda.Stream(), cuda.pagelockedEmpty(64, 'uint8')];
  } catch {} // no driver here: the load and the teardown are what is tried`;

function workerMidCall(rng) {
  const what = rng.pick(['compile', 'wait', 'alloc', 'idle']);
  const ms = rng.int(30);
  return [
    () => {
      const worker = new Worker(WORKER_CODE, { eval: true, workerData: what });
      return new Promise((resolve) => setTimeout(resolve, ms)).then(() => worker.terminate()).then(() => undefined);
    },
    `a worker that starts ${what}, terminated after ${ms} ms`,
  ];
}

// Builds call index's function, receiver and arguments; returns [thunk, label].
function plan(index) {
  const rng = callGenerator(job.seed, index);
  const roll = rng.next();
  if (roll < 0.005) return [() => global.gc(), 'gc()'];
  if (roll < 0.008) return dropToCollector(rng);
  if (roll < 0.009) return workerMidCall(rng);
  if (roll < 0.5 && examples.length) return mutated(rng, examples[rng.int(examples.length)]);
  if (roll < 0.01)
    return [
      () => {
        for (const v of pool) if (v && v.buffer && v.buffer.resizable) v.buffer.resize(rng.int(2) * 64);
      },
      'shrink resizable buffers',
    ];
  const args = [];
  const labels = [];
  for (let n = rng.int(6); n > 0; n--) {
    const [v, label] = value(rng, pool, enums);
    args.push(v);
    labels.push(label);
  }
  const list = labels.join(', ');
  const kernels = pool.filter((v) => isA(v, cuda.Kernel));
  if (roll < 0.56 && kernels.length) return launch(rng, kernels[rng.int(kernels.length)]);
  const target = rng.pick(targets);
  if (target.kind === 'fn')
    return [() => target.fn(...args), `${target.label}(${list})`, proper(target, undefined, args)];
  if (target.kind === 'new') {
    if (rng.chance(0.2)) {
      // A subclass that overrides one of its methods with a hostile function.
      const names = Object.getOwnPropertyNames(target.fn.prototype).filter((m) => m !== 'constructor');
      const [override, olabel] = value(rng, pool, enums);
      const m = names.length ? rng.pick(names) : 'x';
      const Sub = class extends target.fn {};
      Object.defineProperty(Sub.prototype, m, { value: override, writable: true, configurable: true });
      return [
        () => {
          const o = new Sub(...args);
          tampered.add(o);
          keep(o);
          for (const n of names)
            if (n !== m && typeof Sub.prototype[n] === 'function')
              try {
                const r = o[n](...args);
                // an async method rejects rather than throws: the same errors, classified alike
                if (isA(r, Promise)) r.catch((e) => classify(e, index, `subclass ${n}`));
              } catch (e) {
                classify(e, index, `subclass ${n}`);
              }
          return o;
        },
        `subclass of ${target.label.slice(4)} with ${m} = ${olabel}, (${list})`,
        false,
      ];
    }
    return [() => new target.fn(...args), `${target.label}(${list})`, proper(target, undefined, args)];
  }
  if (target.kind === 'static') {
    const [self, slabel] = rng.chance(0.9) ? [target.owner, target.owner.name] : value(rng, pool, enums);
    return [
      () => target.fn.apply(self, args),
      `${target.label}.call(${slabel}, ${list})`,
      proper(target, self, args),
      self,
    ];
  }
  const [self, slabel] = pickThis(rng, target.owner);
  alias(rng, self, args, labels);
  return [
    () => target.fn.apply(self, args),
    `${target.label}.call(${slabel}, ${labels.join(', ')})`,
    proper(target, self, args),
    self,
  ];
}

// A call's label, printed where asked, and written between the driver calls driver-trace.c logs
// (run.js --trace-driver) as the call that made them.
function say(index, label) {
  if (job.print) process.stderr.write(`#${index}: ${label}\n`);
  if (TRACE) fs.appendFileSync(TRACE, `#${index}: ${label.slice(0, 300)}\n`);
}

function call(index) {
  fs.writeSync(PROGRESS, `call ${index}\n`);
  if (planted?.delete(index) && planted.size === 0 && plantedNow()) process.abort();
  const [thunk, label, properCall, self] = plan(index);
  say(index, label);
  // A call outside the documented API (an internal member, a wrong this) may leave its receiver
  // and what it makes in a state the API never makes: they count as tampered from then on.
  const made = (v) => {
    if (!properCall) taint(v);
    if ((typeof v === 'object' && v !== null) || typeof v === 'function') madeBy.set(v, index);
    keep(v);
  };
  if (!properCall) taint(self);
  let result;
  setInCall(true);
  try {
    result = thunk();
  } catch (error) {
    // a throw before the driver (any but a CudaError, or cudadrv's own LogicError, which names no
    // driver call), which left the pool as it was: the minimizer tries without it
    if (!(error instanceof cuda.CudaError) || (error instanceof cuda.LogicError && error.api === null))
      fs.writeSync(PROGRESS, `threw ${index}\n`);
    classify(error, index, label, properCall);
    return;
  } finally {
    setInCall(false);
  }
  counts.returned = (counts.returned || 0) + 1;
  if (isA(result, Promise)) {
    pending.set(index, label);
    result.then(made, (error) => classify(error, index, label, properCall)).finally(() => pending.delete(index));
  } else {
    made(result);
  }
}

function taint(v) {
  if ((typeof v === 'object' && v !== null) || typeof v === 'function') tampered.add(v);
}

// instanceof, false for the pool's Proxies whose traps throw.
function isA(v, Class) {
  try {
    return v instanceof Class;
  } catch {
    return false;
  }
}

// Every Promise made must settle: one still pending after `limit` ms is a hang.
async function settle(limit) {
  const deadline = Date.now() + limit;
  while (pending.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  return [...pending].map(([index, label]) => ({ index, call: label }));
}

// The mutation mode: each call awaited in turn (test/reliability/fuzz/mutate.js).
async function mutationRun(indices) {
  for (const index of indices) {
    fs.writeSync(PROGRESS, `call ${index}\n`);
    const { label, promise } = mutationCall(job.seed, index);
    say(index, label);
    try {
      const outcome = await promise;
      counts[outcome] = (counts[outcome] || 0) + 1;
    } catch (error) {
      unexpected.push({ index, call: label, error: `${error?.name}: ${error?.message}` });
    }
  }
  fs.writeSync(PROGRESS, `${JSON.stringify({ done: true, calls: indices.length, counts, unexpected, hung: [] })}\n`);
  process.exit(0);
}

async function main() {
  if (job.mode === 'mutate') {
    return mutationRun(job.only || Array.from({ length: job.to - job.from }, (_, i) => job.from + i));
  }
  const started = Date.now();
  await setUp();
  if (PLANT === 'set-up') process.abort();
  fs.writeSync(PROGRESS, `ready ${Date.now() - started}\n`);
  const indices = job.only || Array.from({ length: job.to - job.from }, (_, i) => job.from + i);
  let block = null;
  for (const index of indices) {
    // completions and finalizers run between blocks of 256 indices: where a run did, its replay of
    // some of them (--only, the minimizer) does
    if (block !== null && index >> 8 !== block) await new Promise(setImmediate);
    block = index >> 8;
    call(index);
  }
  const hung = await settle(job.settleMs || 10000);
  global.gc();
  await new Promise(setImmediate);
  fs.writeSync(PROGRESS, `${JSON.stringify({ done: true, calls: indices.length, counts, unexpected, hung })}\n`);
  // exit mid-operation: a compile just started (the run fails if the process dies on the way out)
  compiler.compile(`__global__ void last(int *x) { x[0] = ${job.seed}; }`, { cacheDir: false }).catch(() => {});
  process.exit(0); // what the fuzzing left (contexts pushed, handles alive) is not waited for
}

main();
