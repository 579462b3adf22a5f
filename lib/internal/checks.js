'use strict';
// Argument checks shared by lib/: each throws a TypeError or RangeError naming the argument.

// word with its indefinite article: 'an Event', 'a memset'.
function withArticle(word) {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}

function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') {
    const name = value.constructor?.name;
    if (typeof name !== 'string' || !name) return 'an object';
    return withArticle(name);
  }
  if (typeof value === 'function') return `the function ${value.name || '(anonymous)'}`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${String(value)}`;
}

// true or false, returned.
function boolean(name, value) {
  if (typeof value !== 'boolean') throw new TypeError(`${name} must be true or false, not ${describe(value)}`);
  return value;
}

// An integer number in [min, max].
function integer(name, value, min = 0, max = Number.MAX_SAFE_INTEGER) {
  if (typeof value !== 'number') throw new TypeError(`${name} must be an integer number, not ${describe(value)}`);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, not ${value}`);
  }
  return value;
}

// A size in bytes: a non-negative safe integer number or bigint; returned as a number.
function size(name, value) {
  if (typeof value === 'bigint') {
    if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new RangeError(`${name} must be from 0 to 2**53-1, not ${value}`);
    }
    return Number(value);
  }
  return integer(name, value);
}

// A member value of a constant group (cuda.Limit.STACK_SIZE...).
function member(name, value, group, groupName) {
  integer(name, value, -2147483648, 4294967295);
  if (!Object.values(group).includes(value)) {
    throw new RangeError(`${name} must be a member of cuda.${groupName}, not ${value}`);
  }
  return value;
}

// The most bytes one ArrayBuffer view holds in this runtime (2**32 on Node 20, 2**53-1 from 22).
const { MAX_LENGTH } = require('buffer').constants;

// Bytes of host memory that JS will see as one TypedArray.
function viewBytes(what, bytes) {
  if (bytes > MAX_LENGTH) {
    throw new RangeError(
      `${what} of ${bytes} bytes cannot be made: this JavaScript runtime's ` +
        `arrays hold at most ${MAX_LENGTH} bytes; use several smaller ones`,
    );
  }
  return bytes;
}

function func(name, value) {
  if (typeof value !== 'function') throw new TypeError(`${name} must be a function, not ${describe(value)}`);
  return value;
}

function instance(name, value, Class, hint = '') {
  if (!(value instanceof Class)) {
    throw new TypeError(`${name} must be ${withArticle(Class.name)}${hint}, not ${describe(value)}`);
  }
  return value;
}

// An options argument: undefined or null give {}; anything else must be an object.
function options(name, value) {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object') throw new TypeError(`${name} must be an object, not ${describe(value)}`);
  return value;
}

/** options, undefined or a plain object of none but the given keys; a TypeError naming what
 * takes them otherwise. */
function keys(options, names, what) {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${what}: the options must be an object, not ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!names.includes(key))
      throw new TypeError(`${what}: unknown option '${key}'; the options are ${names.join(', ')}`);
  }
}

/** table[value] where value is a string naming one of table's own keys (nothing else is turned
 * into a key: a detached TypedArray would throw the engine's error); a TypeError saying `name must
 * be ${expected}` otherwise. */
function choice(name, value, table, expected) {
  if (typeof value !== 'string' || !Object.hasOwn(table, value)) {
    throw new TypeError(`${name} must be ${expected}, not ${describe(value)}`);
  }
  return table[value];
}

// Longer than any list a caller means to pass; walking a longer one (Array(2 ** 32 - 1), say)
// would take minutes, and copying it would run out of memory.
const MAX_LIST = 65536;

/** value as an array of at most 65,536 items: a TypeError saying it must be `expected` where it
 * is not an array, a RangeError where it is longer. */
function list(name, value, expected) {
  if (!Array.isArray(value)) throw new TypeError(`${name} must be ${expected}, not ${describe(value)}`);
  if (value.length > MAX_LIST) throw new RangeError(`${name} holds ${value.length} items; at most ${MAX_LIST}`);
  return value;
}

/** A Uint8Array over the bytes of an ArrayBuffer, SharedArrayBuffer or view; a TypeError naming
 * the argument where its buffer was detached (transferred away), which no view can be made on. */
function uint8View(name, value) {
  try {
    return ArrayBuffer.isView(value)
      ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
      : new Uint8Array(value);
  } catch {
    throw new TypeError(`${name} is over a detached ArrayBuffer (transferred away); pass memory still in use`);
  }
}

/** The bytes of a code image (a Uint8Array over the caller's memory; PTX text encoded), where
 * `holds` names what the image may be ('PTX, cubin or fatbin'); a TypeError for anything else. */
function imageBytes(image, holds) {
  if (typeof image === 'string') return Buffer.from(image, 'utf8');
  if (image instanceof ArrayBuffer || image instanceof SharedArrayBuffer || ArrayBuffer.isView(image)) {
    return uint8View('image', image);
  }
  throw new TypeError(
    `image must be ${holds}: a Buffer, TypedArray, DataView, ArrayBuffer or a PTX string, not ${describe(image)}`,
  );
}

module.exports = {
  withArticle,
  describe,
  boolean,
  integer,
  size,
  member,
  list,
  choice,
  viewBytes,
  func,
  instance,
  options,
  keys,
  uint8View,
  imageBytes,
};
