'use strict';
// Writing arguments into a kernel's parameter buffer: packers compiled for a layout, and the
// classification of the values of a generic call (what a bare value is, and its field).
const { describe } = require('../internal/checks');
const { HANDLE_ARGUMENT, TENSOR_MAP, TENSOR_MAP_FIELD } = require('../internal/kernel-argument');
const { ArgumentHandler } = require('./handlers');
const { parseFormat, layout, blobField } = require('./formats');
const scalars = require('./scalars');
const { TYPES, TypedScalar, managedAddress } = scalars;
const { integerValue, bigintValue, floatValue, boolValue, pointerValue, writePointer, float16Bits } = scalars;

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

// The 128 bytes of argument k, a TensorMap (a prepared call's argument may be anything).
function tensorMapBytes(v, k) {
  if (v === null || typeof v !== 'object' || !(TENSOR_MAP in v)) {
    throw new TypeError(`argument ${k + 1} must be a TensorMap (the format says so), not ${describe(v)}`);
  }
  return v[TENSOR_MAP];
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
  tensorMapBytes,
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
    if (field.tensorMap) return `copyBytes(u8, ${o}, tensorMapBytes(${a}, ${k}));`;
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
      if (TENSOR_MAP in v) return 'M';
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
    `argument ${k + 1} cannot be passed to a kernel: ${describe(v)}; pass typed ` +
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
          : `parameter ${k + 1} (${param.text}) is of a type cudadrv does not parse`;
    throw new TypeError(`argument ${k + 1} is a bare ${typeof v} (${v}) and ${why}; ${BARE_NUMBER_HINT}`);
  }
  if (typeof v === 'number' && TYPES[param.char].kind === 'pointer') {
    throw new TypeError(
      `argument ${k + 1} is a bare number (${v}), but parameter ${k + 1} (${param.text}) is a pointer: ` +
        'pass device memory (or a bigint address)',
    );
  }
  if (
    typeof v === 'bigint' &&
    TYPES[param.char].kind !== 'pointer' &&
    !(TYPES[param.char].kind === 'int' && TYPES[param.char].size === 8)
  ) {
    throw new TypeError(
      `argument ${k + 1} is a bigint, but parameter ${k + 1} (${param.text}) is ` +
        `${TYPES[param.char].name}: pass a number`,
    );
  }
  return param.char;
}

// The field the code of argument k stands for. Only a TypedScalar can give a code of no type.
function fieldOf(code, k) {
  if (code === '*') return TYPES.P;
  if (code === 'M') return TENSOR_MAP_FIELD;
  if (typeof code === 'string' && Object.hasOwn(TYPES, code)) return TYPES[code];
  if (typeof code === 'string' && code[0] === 'x' && code.length > 1) {
    const [size, align] = code.slice(1).split(':').map(Number);
    return { size, align, blob: true };
  }
  throw new TypeError(
    `argument ${k + 1} is a TypedScalar of no C type; make scalars with cuda.int32(n), ` +
      'cuda.float32(x) and the like',
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

module.exports = { viewsOf, packerStatements, compilePacker, packerFor, packBytes, classify, fieldOf, packArguments };
