'use strict';
// Kernel arguments: the C scalar types, typed scalars (cuda.int32(5)...), In/Out/InOut, struct
// format strings, the C layout of a parameter list, and the packers that write values into it.
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
const ARG_NAMES = Array.from({ length: 256 }, (_, k) => `argument ${k}`);

// Messages name an argument by its index, or by the string given.
function nameOf(what) {
  if (typeof what !== 'number') return what;
  return what < ARG_NAMES.length ? ARG_NAMES[what] : `argument ${what}`;
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

// ---- In / Out / InOut ----

/** Base of In, Out and InOut: a host TypedArray or DataView that a launch copies to device
 * memory before, and/or back after. */
function ArgumentHandler(array) {
  this.array = handledArray(array, 'ArgumentHandler');
}

function handledArray(array, name) {
  if (!ArrayBuffer.isView(array)) {
    throw new TypeError(`${name}(array): array must be a TypedArray or DataView, not ${describe(array)}`);
  }
  if (array.byteLength === 0) throw new RangeError(`${name}(array): array must not be empty`);
  return array;
}

// In, Out and InOut work with or without new: cuda.In(a) as in PyCUDA.
function handlerClass(name, copyIn, copyOut) {
  const Class = {
    [name]: function (array) {
      if (!new.target) return new Class(array);
      this.array = handledArray(array, name);
      return this;
    },
  }[name];
  Object.setPrototypeOf(Class.prototype, ArgumentHandler.prototype);
  Object.setPrototypeOf(Class, ArgumentHandler);
  Object.defineProperties(Class.prototype, {
    copyIn: { value: copyIn },
    copyOut: { value: copyOut },
  });
  return Class;
}

/** Copied to the device before the launch. */
const In = handlerClass('In', true, false);
/** Copied back from the device after the launch. */
const Out = handlerClass('Out', false, true);
/** Copied to the device before the launch, and back after. */
const InOut = handlerClass('InOut', true, true);

// ---- formats ----

// A parameter: a scalar type, or bytes copied verbatim ({ size, align, blob: true }).
function blobField(view) {
  const size = view.byteLength;
  const element = view.BYTES_PER_ELEMENT || 1;
  // CUDA's vector types (char2 ... int4, float4, double2) align to their size up to 16 bytes;
  // other structs to their widest element, as far as a TypedArray can tell.
  const power = size <= 16 && (size & (size - 1)) === 0;
  return { size, align: power ? Math.max(size, element) : element, blob: true };
}

/**
 * The types of a prepare() format: a string of struct characters (`'PPi'`, `'2f P'`, repeat
 * counts allowed) or an array of characters, dtype names ('float32') and TypedArray constructors.
 */
function parseFormat(format) {
  const types = [];
  const items = typeof format === 'string' ? [format] : format;
  if (!Array.isArray(items)) {
    throw new TypeError(
      `the format must be a string of struct characters ('PPi') or an array of ` +
        `them and dtype names, not ${describe(format)}`,
    );
  }
  for (const item of items) {
    if (typeof item === 'function' && TYPED_ARRAY_TYPES[item.name]) {
      types.push(TYPES[TYPED_ARRAY_TYPES[item.name]]);
    } else if (typeof item === 'string' && NAMED[item]) {
      types.push(TYPES[NAMED[item]]);
    } else if (typeof item === 'string') {
      parseCharacters(item, types);
    } else {
      throw new TypeError(
        `a format item must be a struct character, a dtype name or a TypedArray ` +
          `constructor, not ${describe(item)}`,
      );
    }
  }
  return types;
}

function parseCharacters(text, types) {
  const token = /\s*(\d*)\s*(\S)/y;
  let match;
  while (token.lastIndex < text.length && (match = token.exec(text))) {
    const type = TYPES[match[2]];
    if (!type) {
      throw new TypeError(
        `unknown format character ${JSON.stringify(match[2])} in ` +
          `${JSON.stringify(text)}: use b B h H i I l L q Q n N e f d ? P, or a dtype name`,
      );
    }
    const count = match[1] === '' ? 1 : Number(match[1]);
    for (let i = 0; i < count; i++) types.push(type);
  }
}

// ---- layout ----

// Offsets of fields laid out as C lays out a parameter list (each at its alignment); where the
// driver reports the kernel's own layout (info: [offset, size, ...]), its offsets, after checking
// the count and every size. `kernel` names the kernel in messages.
function layout(fields, info, kernel) {
  const offsets = [];
  let size = 0;
  if (info) {
    const count = info.length / 2;
    if (count !== fields.length) {
      throw new TypeError(
        `kernel '${kernel}' takes ${count} parameter${count === 1 ? '' : 's'}, ` +
          `but ${fields.length} argument${fields.length === 1 ? ' was' : 's were'} given`,
      );
    }
    fields.forEach((field, k) => {
      const want = info[2 * k + 1];
      if (field.size !== want) {
        throw new TypeError(
          `kernel '${kernel}' parameter ${k} takes ${want} bytes, but argument ` +
            `${k} is ${label(field)} (${field.size} bytes); ${suggest(want)}`,
        );
      }
      offsets.push(info[2 * k]);
      size = Math.max(size, info[2 * k] + want);
    });
    return { offsets, size };
  }
  for (const field of fields) {
    size = Math.ceil(size / field.align) * field.align;
    offsets.push(size);
    size += field.size;
  }
  return { offsets, size };
}

function label(field) {
  return field.blob ? `${field.size} bytes copied verbatim` : field.name === 'pointer' ? 'a pointer' : field.name;
}

function suggest(size) {
  const byName = {
    1: 'cuda.int8, cuda.uint8 or cuda.bool',
    2: 'cuda.int16, cuda.uint16 or cuda.float16',
    4: 'cuda.int32, cuda.uint32 or cuda.float32',
    8: 'cuda.int64, cuda.uint64, cuda.float64 or device memory',
  };
  return byName[size] ? `pass ${byName[size]}` : `pass a TypedArray of ${size} bytes`;
}

// ---- packers ----

// The views a packer writes through: one per element type over size bytes of buffer from
// byteOffset (a multiple of 8: every parameter lies at a multiple of its own size). Typed-array
// stores cost a tenth of DataView's BigInt setters; cudadrv runs on little-endian hosts, as CUDA.
function viewsOf(buffer, byteOffset, size) {
  const count = (bytes) => Math.floor(size / bytes);
  return {
    i8: new Int8Array(buffer, byteOffset, size),
    u8: new Uint8Array(buffer, byteOffset, size),
    i16: new Int16Array(buffer, byteOffset, count(2)),
    u16: new Uint16Array(buffer, byteOffset, count(2)),
    i32: new Int32Array(buffer, byteOffset, count(4)),
    u32: new Uint32Array(buffer, byteOffset, count(4)),
    f32: new Float32Array(buffer, byteOffset, count(4)),
    i64: new BigInt64Array(buffer, byteOffset, count(8)),
    u64: new BigUint64Array(buffer, byteOffset, count(8)),
    f64: new Float64Array(buffer, byteOffset, count(8)),
    dv: new DataView(buffer, byteOffset, size), // for a parameter off its natural alignment
  };
}

function copyBytes(u8, offset, view) {
  if (view.byteLength !== 0) u8.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength), offset); // none: detached
}

// What packer statements may use, by name.
const HELPERS = {
  T: TYPES,
  integerValue,
  bigintValue,
  floatValue,
  boolValue,
  pointerValue,
  writePointer,
  float16Bits,
  copyBytes,
};
const VIEWS = ['i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'f32', 'i64', 'u64', 'f64', 'dv'];

// Statements writing each field's argument (the expression arg(k)) at its offset; values are
// checked on the way, and messages name the argument by its index k.
function packerStatements(fields, offsets, arg) {
  const store = {
    b: 'i8',
    B: 'u8',
    h: 'i16',
    H: 'u16',
    i: 'i32',
    I: 'u32',
    l: 'i64',
    q: 'i64',
    n: 'i64',
    L: 'u64',
    Q: 'u64',
    N: 'u64',
    e: 'u16',
    f: 'f32',
    d: 'f64',
    '?': 'u8',
    P: 'u64',
  };
  const setter = {
    i8: 'setInt8',
    u8: 'setUint8',
    i16: 'setInt16',
    u16: 'setUint16',
    i32: 'setInt32',
    u32: 'setUint32',
    i64: 'setBigInt64',
    u64: 'setBigUint64',
    f32: 'setFloat32',
    f64: 'setFloat64',
  };
  return fields.map((field, k) => {
    const o = offsets[k];
    const a = arg(k);
    if (field.blob) return `copyBytes(u8, ${o}, ${a});`;
    const c = field.char;
    const t = `T[${JSON.stringify(c)}]`;
    let value;
    switch (field.kind) {
      case 'int':
        // an int32 in range skips the call: the common case, checked inline
        value =
          c === 'i'
            ? `(typeof ${a} === 'number' && (${a} | 0) === ${a} ? ${a} : integerValue(${a}, ${t}, ${k}))`
            : `${field.size === 8 ? 'bigintValue' : 'integerValue'}(${a}, ${t}, ${k})`;
        break;
      case 'float':
        value =
          c === 'e'
            ? `float16Bits(floatValue(${a}, ${t}, ${k}))`
            : `(typeof ${a} === 'number' ? ${a} : floatValue(${a}, ${t}, ${k}))`;
        break;
      case 'bool':
        value = `boolValue(${a}, ${t}, ${k}) ? 1 : 0`;
        break;
      default:
        value = `pointerValue(${a}, ${k})`;
    }
    // A kernel may place a parameter off its natural alignment (a packed struct of that size).
    if (o % field.size !== 0) return `dv.${setter[store[c]]}(${o}, ${value}, true);`;
    if (field.kind === 'pointer') return `writePointer(u32, u64, ${o / 4}, ${a}, ${k});`;
    return `${store[c]}[${o / field.size}] = ${value};`;
  });
}

/**
 * A function made of `statements` (and whatever else `body` wraps them in) with the views of
 * `views` and the helpers in scope, plus `extra` bindings ({ name: value }).
 */
function compilePacker(views, source, extra = {}) {
  const names = [...VIEWS, ...Object.keys(HELPERS), ...Object.keys(extra)];
  const values = [...VIEWS.map((v) => views[v]), ...Object.values(HELPERS), ...Object.values(extra)];
  return new Function(...names, `'use strict';\n${source}`)(...values);
}

/** A function (args) packing args[k] into views at offsets[k]: the generic call's packer. */
function packerFor(fields, offsets, views) {
  const statements = packerStatements(fields, offsets, (k) => `a[${k}]`);
  return compilePacker(views, `return function pack(a) {\n${statements.join('\n')}\n};`);
}

/** The bytes of args laid out at offsets (size bytes in all). */
function packBytes(fields, offsets, size, args) {
  const buffer = new ArrayBuffer(size);
  packerFor(fields, offsets, viewsOf(buffer, 0, size))(args);
  return new Uint8Array(buffer);
}

// ---- classifying the arguments of a generic call ----

const BARE_NUMBER_HINT =
  'wrap it in the constructor of its C type: cuda.int32(n), cuda.uint32(n), ' +
  'cuda.float32(x), cuda.float64(x), cuda.int64(n)...';

// A short code for the kind of argument k (same code, same layout): a format character, '*' for
// In/Out/InOut, or 'x<size>:<align>' for bytes copied verbatim. sig: the kernel's parameter
// types where known (a format character or null per parameter).
function classify(v, k, sig) {
  if (v instanceof TypedScalar) return v.format; // checked by fieldOf, off the per-call path
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return bareNumberType(v, k, sig);
    case 'boolean':
      return '?';
    case 'object':
      if (v === null) break;
      if (v instanceof ArgumentHandler) return '*';
      if (HANDLE_ARGUMENT in v) return 'Q';
      if (ArrayBuffer.isView(v)) {
        if (managedAddress(v) !== undefined) return 'P';
        const field = blobField(v);
        return `x${field.size}:${field.align}`;
      }
      if (typeof v.getPointer === 'function' || typeof v.ptr === 'bigint') return 'P';
      break;
    default:
  }
  throw new TypeError(
    `argument ${k} cannot be passed to a kernel: ${describe(v)}; pass typed ` +
      'scalars (cuda.int32(n), cuda.float32(x)...), device memory, In/Out/InOut(array), or a ' +
      'TypedArray copied verbatim (a struct or vector type)',
  );
}

// The format character of a bare number or bigint: the type of its parameter, where known.
function bareNumberType(v, k, sig) {
  const param = sig !== null && k < sig.length ? sig[k] : null;
  if (param === null || param.char === null) {
    const why =
      sig === null
        ? "the kernel's parameter types are not known"
        : k >= sig.length
          ? `the kernel declares only ${sig.length} parameters`
          : `parameter ${k} (${param.text}) is of a type cudadrv does not parse`;
    throw new TypeError(`argument ${k} is a bare ${typeof v} (${v}) and ${why}; ${BARE_NUMBER_HINT}`);
  }
  if (
    typeof v === 'bigint' &&
    TYPES[param.char].kind !== 'pointer' &&
    !(TYPES[param.char].kind === 'int' && TYPES[param.char].size === 8)
  ) {
    throw new TypeError(
      `argument ${k} is a bigint, but parameter ${k} (${param.text}) is ` + `${TYPES[param.char].name}: pass a number`,
    );
  }
  return param.char;
}

// The field the code of argument k stands for. Only a TypedScalar can give a code of no type.
function fieldOf(code, k) {
  if (code === '*') return TYPES.P;
  if (typeof code === 'string' && Object.hasOwn(TYPES, code)) return TYPES[code];
  if (typeof code === 'string' && code[0] === 'x' && code.length > 1) {
    const [size, align] = code.slice(1).split(':').map(Number);
    return { size, align, blob: true };
  }
  throw new TypeError(
    `argument ${k} is a TypedScalar of no C type; make scalars with cuda.int32(n), ` + 'cuda.float32(x) and the like',
  );
}

/**
 * The bytes of a kernel's parameter list as cudadrv lays them out (C alignment): from typed
 * arguments (`packArguments([cuda.int8(1), new Float32Array(4)])`), or from a prepare() format and
 * plain values (`packArguments('bP', [1, alloc])`).
 */
// Kernel parameters take at most 32,764 bytes (CUDA 12.1 and later), each argument one at least.
const MAX_ARGUMENTS = 32764;

function packArguments(formatOrArgs, values) {
  let fields;
  let args;
  if (values === undefined) {
    if (!Array.isArray(formatOrArgs)) {
      throw new TypeError(`packArguments(args) takes an array of kernel arguments, not ${describe(formatOrArgs)}`);
    }
    args = formatOrArgs;
    if (args.length > MAX_ARGUMENTS) {
      throw new RangeError(
        `packArguments(args): a kernel takes at most ${MAX_ARGUMENTS} arguments (32,764 bytes of ` +
          `parameters), not ${args.length}`,
      );
    }
    fields = args.map((v, k) => fieldOf(classify(v, k, null), k));
    if (args.some((v) => v instanceof ArgumentHandler)) {
      throw new TypeError('packArguments(): In/Out/InOut have no device address before a launch');
    }
  } else {
    if (!Array.isArray(values)) throw new TypeError(`values must be an array, not ${describe(values)}`);
    fields = parseFormat(formatOrArgs);
    args = values;
    if (args.length !== fields.length) {
      throw new TypeError(`the format has ${fields.length} fields but ${args.length} values were given`);
    }
  }
  const { offsets, size } = layout(fields, null, '');
  const bytes = packBytes(fields, offsets, size, args);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

// ---- kernel signatures parsed from CUDA C++ source ----

const C_TYPES = {
  char: 'b',
  'signed char': 'b',
  'unsigned char': 'B',
  short: 'h',
  'short int': 'h',
  'signed short': 'h',
  'unsigned short': 'H',
  'unsigned short int': 'H',
  int: 'i',
  signed: 'i',
  'signed int': 'i',
  unsigned: 'I',
  'unsigned int': 'I',
  long: 'l',
  'long int': 'l',
  'signed long': 'l',
  'unsigned long': 'L',
  'unsigned long int': 'L',
  'long long': 'q',
  'long long int': 'q',
  'signed long long': 'q',
  'unsigned long long': 'Q',
  'unsigned long long int': 'Q',
  float: 'f',
  double: 'd',
  bool: '?',
  __half: 'e',
  half: 'e',
  size_t: 'N',
  ptrdiff_t: 'n',
  ssize_t: 'n',
  intptr_t: 'n',
  uintptr_t: 'N',
  int8_t: 'b',
  uint8_t: 'B',
  int16_t: 'h',
  uint16_t: 'H',
  int32_t: 'i',
  uint32_t: 'I',
  int64_t: 'q',
  uint64_t: 'Q',
  cudaTextureObject_t: 'Q',
  cudaSurfaceObject_t: 'Q',
  CUtexObject: 'Q',
  CUsurfObject: 'Q',
};
const TYPE_WORDS = new Set(['char', 'short', 'int', 'long', 'signed', 'unsigned', 'float', 'double', 'bool']);
const QUALIFIERS = new Set(['const', 'volatile', '__restrict__', '__restrict', 'restrict', 'register']);
const ATTRIBUTES = new Set([
  '__launch_bounds__',
  '__cluster_dims__',
  '__maxnreg__',
  '__attribute__',
  '__declspec',
  'alignas',
]);

// Comments, string and character literals and preprocessor lines, blanked (lengths kept).
function blankNonCode(source) {
  return source
    .replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/^[ \t]*#(?:[^\n]*\\\n)*[^\n]*/gm, (m) => m.replace(/[^\n]/g, ' '));
}

// The index just past the bracket that closes the one at `open`.
function closing(text, open) {
  const pairs = { '(': ')', '[': ']', '{': '}' };
  const stack = [pairs[text[open]]];
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i];
    if (c === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return i + 1;
    } else if (c in pairs) {
      stack.push(pairs[c]);
    }
  }
  return -1;
}

function splitParameters(list) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === '(' || c === '<' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === '>' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  return parts.map((p) => p.trim()).filter((p, i, all) => p !== '' || all.length > 1);
}

// { char, text } of one parameter declaration: char is its format character, or null for a
// type cudadrv does not know (structs, vector types, templates).
function parameterType(text) {
  const declaration = text.replace(/\s*=[^]*$/, '').replace(/\bstd::/g, '');
  if (/[*]/.test(declaration)) return { char: 'P', text };
  if (/[&<>[\]:]/.test(declaration)) return { char: null, text };
  const words = declaration.split(/\s+/).filter((w) => w !== '' && !QUALIFIERS.has(w));
  if (words.length > 1 && !TYPE_WORDS.has(words[words.length - 1])) words.pop(); // the name
  return { char: C_TYPES[words.join(' ')] ?? null, text };
}

/**
 * The parameter types of the `__global__` functions of CUDA C++ source, by name: Map(name →
 * [{ char, text }]). Templates, and names declared twice with different parameters, are left out
 * (their types are not known for sure).
 */
function parseKernelSignatures(source) {
  const text = blankNonCode(source);
  const found = new Map();
  const ambiguous = new Set();
  const global = /\b__global__\b/g;
  let match;
  while ((match = global.exec(text))) {
    const start = Math.max(
      text.lastIndexOf(';', match.index),
      text.lastIndexOf('}', match.index),
      text.lastIndexOf('{', match.index),
    );
    if (/\btemplate\b/.test(text.slice(start + 1, match.index))) continue;
    const word = /[A-Za-z_]\w*|\(/g;
    word.lastIndex = global.lastIndex;
    let name = null;
    let token;
    while ((token = word.exec(text))) {
      if (token[0] !== '(') {
        name = token[0];
        continue;
      }
      const end = closing(text, token.index);
      if (end < 0) break;
      if (ATTRIBUTES.has(name)) {
        word.lastIndex = end;
        name = null;
        continue;
      }
      if (name !== null) {
        const params = splitParameters(text.slice(token.index + 1, end - 1));
        const types = params.length === 1 && params[0] === 'void' ? [] : params.map(parameterType);
        const key = types.map((t) => t.char).join(',');
        if (found.has(name) && found.get(name).key !== key) ambiguous.add(name);
        found.set(name, { key, types });
      }
      break;
    }
  }
  const signatures = new Map();
  for (const [name, { types }] of found) if (!ambiguous.has(name)) signatures.set(name, types);
  return signatures;
}

module.exports = {
  TYPES,
  TypedScalar,
  scalars,
  ArgumentHandler,
  In,
  Out,
  InOut,
  parseFormat,
  layout,
  blobField,
  viewsOf,
  packerStatements,
  compilePacker,
  packerFor,
  packBytes,
  classify,
  fieldOf,
  packArguments,
  parseKernelSignatures,
  integerValue,
  float16Bits,
};
