'use strict';
// Kernel arguments' C scalar types (by struct format character), the typed scalars made from
// them (cuda.int32(5)...), and the checks that turn a JS value into one type's value.
const { describe } = require('../internal/checks');
const { devicePointer } = require('../internal/pointer');
const hostMemory = require('../memory/host-memory');
const { launchAddress } = require('../memory/device-memory');
const { HANDLE_ARGUMENT } = require('../internal/kernel-argument');

// ---- the C scalar types, by struct format character ----

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

// kind: 'int' (signed or unsigned), 'float', 'bool' or 'pointer'.
function scalarType(char, name, size, kind, min, max) {
  return Object.freeze({ char, name, size, align: size, kind, min, max });
}

const TYPES = {
  b: scalarType('b', 'int8', 1, 'int', -128, 127),
  B: scalarType('B', 'uint8', 1, 'int', 0, 255),
  h: scalarType('h', 'int16', 2, 'int', -32768, 32767),
  H: scalarType('H', 'uint16', 2, 'int', 0, 65535),
  i: scalarType('i', 'int32', 4, 'int', -2147483648, 2147483647),
  I: scalarType('I', 'uint32', 4, 'int', 0, 4294967295),
  l: scalarType('l', 'int64', 8, 'int', INT64_MIN, INT64_MAX), // C long: 64 bits on Linux
  L: scalarType('L', 'uint64', 8, 'int', 0n, UINT64_MAX),
  q: scalarType('q', 'int64', 8, 'int', INT64_MIN, INT64_MAX),
  Q: scalarType('Q', 'uint64', 8, 'int', 0n, UINT64_MAX),
  n: scalarType('n', 'int64', 8, 'int', INT64_MIN, INT64_MAX), // ssize_t
  N: scalarType('N', 'uint64', 8, 'int', 0n, UINT64_MAX), // size_t
  e: scalarType('e', 'float16', 2, 'float'),
  f: scalarType('f', 'float32', 4, 'float'),
  d: scalarType('d', 'float64', 8, 'float'),
  '?': scalarType('?', 'bool', 1, 'bool'),
  P: scalarType('P', 'pointer', 8, 'pointer'),
};

// dtype names (and a few C names) → format character.
const NAMED = {
  int8: 'b',
  uint8: 'B',
  int16: 'h',
  uint16: 'H',
  int32: 'i',
  uint32: 'I',
  int64: 'q',
  uint64: 'Q',
  float16: 'e',
  float32: 'f',
  float64: 'd',
  bool: '?',
  pointer: 'P',
  intp: 'P',
  uintp: 'P',
  char: 'b',
  short: 'h',
  int: 'i',
  long: 'l',
  float: 'f',
  double: 'd',
  half: 'e',
};
const TYPED_ARRAY_TYPES = {
  Int8Array: 'b',
  Uint8Array: 'B',
  Uint8ClampedArray: 'B',
  Int16Array: 'h',
  Uint16Array: 'H',
  Int32Array: 'i',
  Uint32Array: 'I',
  BigInt64Array: 'q',
  BigUint64Array: 'Q',
  Float32Array: 'f',
  Float64Array: 'd',
};

// ---- typed scalars ----

/**
 * A kernel argument with its C type: made by cuda.int32(5), cuda.float32(x), ... One subclass
 * per type holds `type` (the dtype name: 'int32', 'pointer'...) and `format` (the struct
 * character: 'i', 'P'...) on its prototype, where they cannot be changed.
 */
class TypedScalar {
  constructor(value, memory) {
    /** The value: a number, a bigint (64-bit integers and pointers) or a boolean. */
    this.value = value;
    if (memory !== undefined) Object.defineProperty(this, 'memory', { value: memory }); // kept alive
  }

  valueOf() {
    return this.value;
  }

  toString() {
    const v = this.value;
    return `cuda.${this.type}(${(typeof v === 'object' && v !== null) || typeof v === 'function' ? describe(v) : String(v)})`;
  }
}

// Argument names, made once: a launch builds no string.
const ARG_NAMES = Array.from({ length: 256 }, (_, k) => `argument ${k + 1}`); // as the signature counts

// Messages name an argument by its index, or by the string given.
function nameOf(what) {
  if (typeof what !== 'number') return what;
  return what < ARG_NAMES.length ? ARG_NAMES[what] : `argument ${what + 1}`;
}

function range(type) {
  return `an integer from ${type.min} to ${type.max}`;
}

// The value a type's writer takes from v (a number, bigint, boolean or TypedScalar), checked;
// `what` names the argument in messages.
function integerValue(v, type, what) {
  if (typeof v === 'number' && Number.isInteger(v) && v >= type.min && v <= type.max) return v;
  if (v instanceof TypedScalar) return sameType(v, type, what);
  if (typeof v !== 'number')
    throw new TypeError(`${nameOf(what)} must be ${type.name} (${range(type)}), not ${describe(v)}`);
  throw new RangeError(`${nameOf(what)} must be ${range(type)} (${type.name}), not ${v}`);
}

/** Objects that pass to kernels as an 8-byte handle (texture and surface objects) answer this key. */

function bigintValue(v, type, what) {
  if (typeof v === 'bigint') {
    if (v >= type.min && v <= type.max) return v;
    throw new RangeError(`${nameOf(what)} must be ${range(type)} (${type.name}), not ${v}`);
  }
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return bigintValue(BigInt(v), type, what);
    throw new RangeError(`${nameOf(what)} must be a bigint or a safe integer (${type.name}), not ${v}`);
  }
  if (v instanceof TypedScalar) return sameType(v, type, what);
  if (typeof v === 'object' && v !== null && HANDLE_ARGUMENT in v) return v[HANDLE_ARGUMENT];
  throw new TypeError(`${nameOf(what)} must be ${type.name} (a bigint), not ${describe(v)}`);
}

function floatValue(v, type, what) {
  if (typeof v === 'number') return v;
  if (v instanceof TypedScalar) return sameType(v, type, what);
  throw new TypeError(`${nameOf(what)} must be ${type.name} (a number), not ${describe(v)}`);
}

function boolValue(v, type, what) {
  if (typeof v === 'boolean') return v;
  if (v === 0 || v === 1) return v === 1;
  if (v instanceof TypedScalar) return sameType(v, type, what);
  throw new TypeError(`${nameOf(what)} must be a boolean, not ${describe(v)}`);
}

function sameType(scalar, type, what) {
  if (scalar.type !== type.name) {
    throw new TypeError(`${nameOf(what)} must be ${type.name}, not ${scalar} (${scalar.type})`);
  }
  return scalar.value;
}

// The device address a pointer argument stands for: device memory of any kind, or a managed
// TypedArray (its pointer).
function pointerValue(v, what) {
  if (ArrayBuffer.isView(v)) {
    const address = managedAddress(v);
    if (address === undefined) {
      throw new TypeError(
        `${nameOf(what)} must be device memory; this TypedArray is host memory (only ` +
          'managed memory, from cuda.managedEmpty(), passes as a pointer)',
      );
    }
    return address;
  }
  if (v instanceof TypedScalar) return v.format === 'P' ? v.value : sameType(v, TYPES.P, what);
  return devicePointer(v, nameOf(what));
}

// The device address of a managed TypedArray, or undefined for other host memory.
function managedAddress(view) {
  const allocation = hostMemory.hostAllocationOf(view);
  if (allocation === undefined || !(allocation instanceof hostMemory.ManagedAllocation)) return undefined;
  // The allocation's ArrayBuffer starts where its memory does.
  return devicePointer(allocation.getDevicePointer(), 'managed memory') + BigInt(view.byteOffset);
}

// Writes pointer argument v at u32[i] and u32[i + 1] (i even): a live DeviceAllocation from the
// number address it keeps, two 32-bit stores costing a fraction of a BigInt's conversion and
// store; anything else through pointerValue.
function writePointer(u32, u64, i, v, what) {
  if (typeof v === 'object' && v !== null) {
    const address = launchAddress(v);
    if (address >= 0) {
      u32[i] = address >>> 0;
      u32[i + 1] = (address / 4294967296) >>> 0;
      return;
    }
  }
  u64[i >> 1] = pointerValue(v, what);
}

// IEEE 754 binary16 bits of v, rounded to nearest even (one rounding, from the float64).
function float16Bits(v) {
  if (Number.isNaN(v)) return 0x7e00;
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a < 2 ** -14) return sign | roundEven(a * 2 ** 24); // subnormal (1024 carries into normal)
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  let m = roundEven((a / 2 ** e - 1) * 1024);
  if (m === 1024) {
    m = 0;
    e++;
  }
  if (e > 15) return sign | 0x7c00;
  return sign | ((e + 15) << 10) | m;
}

function roundEven(x) {
  const f = Math.floor(x);
  const d = x - f;
  return d > 0.5 || (d === 0.5 && f % 2 === 1) ? f + 1 : f;
}

// One constructor per C scalar type: cuda.int32(5), cuda.uint64(1n), cuda.float32(0.5)...
function scalarConstructor(char) {
  const type = TYPES[char];
  const Scalar = class extends TypedScalar {};
  Object.defineProperties(Scalar.prototype, { type: { value: type.name }, format: { value: char } });
  let check;
  if (type.kind === 'int') check = type.size === 8 ? bigintValue : integerValue;
  else if (type.kind === 'float') check = floatValue;
  else if (type.kind === 'bool') check = boolValue;
  const label = `cuda.${type.name}(value)`;
  const make =
    type.kind === 'pointer'
      ? (value) => new Scalar(pointerValue(value, label), value)
      : (value) => new Scalar(check(value, type, label));
  Object.defineProperty(make, 'name', { value: type.name });
  return make;
}

const scalars = {};
for (const char of ['b', 'B', 'h', 'H', 'i', 'I', 'q', 'Q', 'e', 'f', 'd', '?', 'P']) {
  scalars[TYPES[char].name] = scalarConstructor(char);
}

module.exports = {
  TYPES,
  NAMED,
  TYPED_ARRAY_TYPES,
  TypedScalar,
  scalars,
  integerValue,
  bigintValue,
  floatValue,
  boolValue,
  pointerValue,
  managedAddress,
  writePointer,
  float16Bits,
};
