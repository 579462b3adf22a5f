'use strict';
// The fuzzer's hostile values. Each is made by a seeded generator together with a label that
// says what it was, so that a failing call can be printed.
const fs = require('fs');
const path = require('path');

// mulberry32: small, fast, and the same on every platform.
function generator(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (list) => list[int(list.length)], chance: (p) => next() < p };
}

// The generator of call `index` of run `seed`: a call is the same whichever calls ran before it.
function callGenerator(seed, index) {
  return generator(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35));
}

/** Thrown by the hostile getters, Proxies and functions: a caller's own throw passing through. */
class Sentinel extends Error {}
const sentinel = () => {
  throw new Sentinel('hostile value');
};

// true while a fuzzed call runs: hostile functions throw only then (a callback that throws later
// is an uncaught exception of the user's own, not a cudadrv failure).
let inCall = false;
const setInCall = (value) => {
  inCall = value;
};

const NUMBERS = [
  0,
  -0,
  1,
  -1,
  2,
  3,
  4,
  7,
  8,
  16,
  64,
  256,
  4096,
  65536,
  0.5,
  -0.5,
  1e-300,
  NaN,
  Infinity,
  -Infinity,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  2 ** 32 - 1,
  2 ** 32,
  2 ** 32 + 1,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  Number.MAX_SAFE_INTEGER,
];
const BIGINTS = [
  0n,
  1n,
  -1n,
  4096n,
  2n ** 32n + 1n,
  2n ** 63n,
  2n ** 64n - 1n,
  2n ** 64n,
  2n ** 64n + 1n,
  -(2n ** 64n),
  2n ** 200n,
];
// Relative names only: the child runs in a directory of its own, and nothing may be written
// over the system's files.
const STRINGS = [
  '',
  'a',
  'add',
  'table',
  'tex',
  'surf',
  'k',
  'uint8',
  'float32',
  'float16',
  'int64',
  'a\0b',
  '\0',
  'x'.repeat(5000),
  '__proto__',
  'constructor',
  '0',
  '-1',
  '1e3',
  '\ud800',
  'C',
  'F',
  'sm_90',
  'compute_52',
  '--gpu-architecture=sm_90',
  '-I.',
  'missing.h',
  'fifo',
  'spread',
  'load-balancing',
  'remote',
  'default',
  '..',
  '.',
  'extern "C" __global__ void k(float *x) { x[threadIdx.x] *= 2; }',
  '__global__ void k() {',
  '#include "fifo"\n__global__ void k() {}',
];
const DTYPE_NAMES = [
  'int8',
  'uint8',
  'int16',
  'uint16',
  'int32',
  'uint32',
  'int64',
  'uint64',
  'float16',
  'float32',
  'float64',
  'bool',
  'complex64',
];
const TYPED = [
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

// Option names: every property the typings declare.
const OPTION_NAMES = (() => {
  const dir = path.join(__dirname, '..', '..', '..', 'typings');
  const names = new Set(['signal', 'timeout', 'block', 'grid', 'stream', 'shared']);
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.d.ts'))) {
    for (const m of fs.readFileSync(path.join(dir, file), 'utf8').matchAll(/^\s+(?:readonly\s+)?(\w+)\??:/gm)) {
      if (!/^[A-Z0-9_]+$/.test(m[1])) names.add(m[1]); // not the constants' names
    }
  }
  return [...names];
})();

function detached(bytes) {
  const buffer = new ArrayBuffer(bytes);
  structuredClone(buffer, { transfer: [buffer] });
  return buffer;
}

function typedArray(rng) {
  const Type = rng.pick(TYPED);
  const length = rng.pick([0, 1, 3, 16, 64, 1024, 4096]);
  const shape = rng.int(6);
  if (shape === 0) return [new Type(length), `new ${Type.name}(${length})`];
  if (shape === 1) {
    const whole = new Type(length + 8);
    return [whole.subarray(3, 3 + length), `${Type.name}(${length + 8}).subarray(3, ${3 + length})`];
  }
  if (shape === 2) {
    const view = new Type(length);
    structuredClone(view.buffer, { transfer: [view.buffer] });
    return [view, `${Type.name} on a detached buffer`];
  }
  if (shape === 3) {
    return [
      new Type(new SharedArrayBuffer(length * Type.BYTES_PER_ELEMENT)),
      `${Type.name}(${length}) on a SharedArrayBuffer`,
    ];
  }
  if (shape === 4) {
    // Length-tracking, on a buffer the fuzzer shrinks later.
    const buffer = new ArrayBuffer(length * Type.BYTES_PER_ELEMENT, { maxByteLength: 65536 });
    return [new Type(buffer), `${Type.name} tracking a resizable buffer of ${length}`];
  }
  return [Buffer.alloc(length), `Buffer(${length})`];
}

function hostileObject(rng) {
  const kind = rng.int(14);
  switch (kind) {
    case 0:
      return [{}, '{}'];
    case 1:
      return [Object.create(null), 'Object.create(null)'];
    case 2:
      return [{ valueOf: sentinel, toString: sentinel }, '{ valueOf/toString throw }'];
    case 3:
      return [{ [Symbol.toPrimitive]: sentinel }, '{ [Symbol.toPrimitive] throws }'];
    case 4:
      return [
        new Proxy(
          {},
          {
            get: sentinel,
            has: sentinel,
            ownKeys: sentinel,
            getPrototypeOf: sentinel,
            getOwnPropertyDescriptor: sentinel,
          },
        ),
        'Proxy whose traps throw',
      ];
    case 5:
      return [new ArrayBuffer(rng.pick([0, 8, 4096])), 'ArrayBuffer'];
    case 6:
      return [detached(64), 'detached ArrayBuffer'];
    case 7:
      return [new SharedArrayBuffer(64), 'SharedArrayBuffer(64)'];
    case 8:
      return [new DataView(new ArrayBuffer(64), 8, 32), 'DataView(64, 8, 32)'];
    case 9:
      return [[1, 2, 3], '[1, 2, 3]'];
    case 11:
      return [rng.chance(0.5) ? AbortSignal.abort() : AbortSignal.timeout(rng.pick([0, 1, 50])), 'AbortSignal'];
    case 12:
      return [new AbortController().signal, 'an AbortSignal never aborted'];
    case 10: {
      const array = [];
      array.length = 2 ** 32 - 1;
      return [array, 'sparse array of 2**32-1'];
    }
    default: {
      const getterThrows = {};
      for (const name of [rng.pick(OPTION_NAMES), rng.pick(OPTION_NAMES), 'length', 'byteLength', 'buffer']) {
        Object.defineProperty(getterThrows, name, { get: sentinel, enumerable: true });
      }
      return [getterThrows, 'object whose getters throw'];
    }
  }
}

function hostileFunction(rng) {
  const results = [undefined, 0, -1, 2n ** 64n, 'x', null, {}];
  const result = rng.pick(results);
  if (rng.chance(0.5)) {
    return [
      function hostile() {
        if (inCall) sentinel();
        return result;
      },
      'function that throws',
    ];
  }
  return [() => result, `() => ${typeof result === 'bigint' ? `${result}n` : String(result)}`];
}

// A random value: primitives, host memory views, hostile objects, live objects of the pool, the
// constants' values and option objects made of the same.
function value(rng, pool, enums, depth = 0) {
  const kind = rng.int(pool.length ? 20 : 14);
  if (kind < 3) {
    const n = rng.pick(NUMBERS);
    return [n, Object.is(n, -0) ? '-0' : String(n)];
  }
  if (kind === 3) {
    const b = rng.pick(BIGINTS);
    return [b, `${b}n`];
  }
  if (kind === 4) {
    const s = rng.chance(0.3) ? rng.pick(DTYPE_NAMES) : rng.pick(STRINGS);
    return [s, JSON.stringify(s.length > 40 ? `${s.slice(0, 20)}…(${s.length})` : s)];
  }
  if (kind === 5)
    return rng.pick([
      [undefined, 'undefined'],
      [null, 'null'],
      [true, 'true'],
      [false, 'false'],
      [Symbol('s'), 'Symbol()'],
    ]);
  if (kind === 6) return typedArray(rng);
  if (kind === 7) return hostileObject(rng);
  if (kind === 8) return hostileFunction(rng);
  if (kind === 9 && enums.length) {
    const [name, table] = rng.pick(enums);
    const keys = Object.keys(table);
    const key = rng.pick(keys);
    return [table[key], `${name}.${key}`];
  }
  if (kind < 12 && depth < 2) return options(rng, pool, enums, depth + 1);
  if (kind === 12 && depth < 2) {
    const items = [];
    const labels = [];
    for (let i = rng.int(4); i > 0; i--) {
      const [v, label] = value(rng, pool, enums, depth + 1);
      items.push(v);
      labels.push(label);
    }
    return [items, `[${labels.join(', ')}]`];
  }
  if (!pool.length) return [undefined, 'undefined'];
  const i = rng.int(pool.length);
  return [pool[i], `pool[${i}]`];
}

function options(rng, pool, enums, depth) {
  const object = {};
  const labels = [];
  for (let i = 1 + rng.int(3); i > 0; i--) {
    const name = rng.pick(OPTION_NAMES);
    const [v, label] = value(rng, pool, enums, depth);
    object[name] = v;
    labels.push(`${name}: ${label}`);
  }
  return [object, `{ ${labels.join(', ')} }`];
}

module.exports = { callGenerator, value, Sentinel, setInCall, typedArray };
