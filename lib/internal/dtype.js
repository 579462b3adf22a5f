'use strict';
// Shapes and dtypes: the one place that turns numpy's (shape, dtype) into a TypedArray
// constructor and a length. A dtype is a TypedArray constructor or its dtype name ('float32');
// a shape is a number or an array of numbers.
const { describe } = require('./checks');

const CONSTRUCTORS = [
  ['int8', Int8Array],
  ['uint8', Uint8Array],
  ['uint8clamped', Uint8ClampedArray],
  ['int16', Int16Array],
  ['uint16', Uint16Array],
  ['int32', Int32Array],
  ['uint32', Uint32Array],
  ['float32', Float32Array],
  ['float64', Float64Array],
  ['int64', BigInt64Array],
  ['uint64', BigUint64Array],
  // Float16Array where the runtime has it (Node 24 with --js-float16array, and later)
  ...(typeof globalThis.Float16Array === 'function' ? [['float16', globalThis.Float16Array]] : []),
];

const BY_NAME = new Map();
const BY_CTOR = new Map();
for (const [name, ctor] of CONSTRUCTORS) {
  const dtype = Object.freeze({ name, ctor, size: ctor.BYTES_PER_ELEMENT });
  BY_NAME.set(name, dtype);
  BY_CTOR.set(ctor, dtype);
}

/**
 * The dtype named by a TypedArray constructor (Float32Array) or a name ('float32', 'int8',
 * 'uint64', 'float64', 'float16' where the runtime has Float16Array...): `{ name, ctor, size }`.
 * Throws a TypeError for anything else.
 */
function dtypeOf(nameOrCtor, argument = 'dtype') {
  const dtype = BY_NAME.get(nameOrCtor) || BY_CTOR.get(nameOrCtor);
  if (dtype) return dtype;
  throw new TypeError(
    `${argument} must be a TypedArray constructor (Float32Array) or one of ` +
      `${[...BY_NAME.keys()].map((n) => `'${n}'`).join(', ')}, not ${describe(nameOrCtor)}`,
  );
}

/** The dtype of a TypedArray (a Buffer is 'uint8'); undefined for a DataView or anything else. */
function dtypeOfArray(array) {
  if (!ArrayBuffer.isView(array)) return undefined;
  for (let proto = Object.getPrototypeOf(array); proto; proto = Object.getPrototypeOf(proto)) {
    const dtype = BY_CTOR.get(proto.constructor);
    if (dtype) return dtype;
  }
  return undefined;
}

/**
 * The number of elements of shape: a non-negative safe integer, or an array of them (their
 * product; [] is a scalar, 1). Throws a TypeError for other types and a RangeError for negative,
 * fractional, NaN or too large dimensions.
 */
function shapeLength(shape, argument = 'shape') {
  const dims = typeof shape === 'number' ? [shape] : shape;
  if (!Array.isArray(dims)) {
    throw new TypeError(`${argument} must be a number or an array of numbers, not ${describe(shape)}`);
  }
  let length = 1;
  for (const dim of dims) {
    if (typeof dim !== 'number') {
      throw new TypeError(`${argument} must hold numbers only, not ${describe(dim)}`);
    }
    if (!Number.isSafeInteger(dim) || dim < 0) {
      throw new RangeError(`${argument} must hold non-negative integers, not ${dim}`);
    }
    length *= dim;
    if (length > Number.MAX_SAFE_INTEGER) {
      throw new RangeError(`${argument} ${JSON.stringify(dims)} holds more than 2**53-1 elements`);
    }
  }
  return length;
}

/**
 * A TypedArray of dtype holding shapeLength(shape) elements over buffer: an ArrayBuffer (from its
 * start) or a view (from its byteOffset). Throws a RangeError when they do not fit.
 */
function typedArrayFor(buffer, shape, dtype) {
  const { ctor, size, name } = dtypeOf(dtype);
  const length = shapeLength(shape);
  const view = ArrayBuffer.isView(buffer);
  const base = view ? buffer.buffer : buffer;
  if (
    !(base instanceof ArrayBuffer) &&
    !(typeof SharedArrayBuffer === 'function' && base instanceof SharedArrayBuffer)
  ) {
    throw new TypeError(`buffer must be an ArrayBuffer or a view of one, not ${describe(buffer)}`);
  }
  const offset = view ? buffer.byteOffset : 0;
  const available = view ? buffer.byteLength : base.byteLength;
  if (offset % size) {
    throw new RangeError(`a ${name} array must start at a multiple of ${size} bytes, not at byte ${offset}`);
  }
  if (length * size > available) {
    throw new RangeError(`${length} ${name} elements need ${length * size} bytes; the buffer has ${available}`);
  }
  return new ctor(base, offset, length);
}

module.exports = { dtypeOf, dtypeOfArray, shapeLength, typedArrayFor };
