'use strict';
// TMA tensor maps (compute capability 9.0+): the 128 bytes that tell a kernel's bulk tensor
// copies (cp.async.bulk.tensor) where a tensor lies and which box of it to move. Made with
// TensorMap.tiled(), im2col() or im2colWide(); a kernel takes one as a `const __grid_constant__
// CUtensorMap` parameter (cudadrv::TensorMap in <cudadrv/tma.cuh>). src/kernel/tensor_map.c checks
// that the tensor lies within the allocation of its address, and encodes.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const layouts = require('../internal/layouts');
const { devicePointer } = require('../internal/pointer');
const { TENSOR_MAP } = require('../internal/kernel-argument');
const constants = require('../driver/constants');

const T = layouts.tensorMap;
const { TensorMapDataType } = constants;

// dtype names for the data types that have one; the others by their TensorMapDataType member
const DATA_TYPES = {
  uint8: TensorMapDataType.UINT8,
  uint16: TensorMapDataType.UINT16,
  uint32: TensorMapDataType.UINT32,
  int32: TensorMapDataType.INT32,
  uint64: TensorMapDataType.UINT64,
  int64: TensorMapDataType.INT64,
  float16: TensorMapDataType.FLOAT16,
  float32: TensorMapDataType.FLOAT32,
  float64: TensorMapDataType.FLOAT64,
  bfloat16: TensorMapDataType.BFLOAT16,
};
// Bytes of one element, for the strides of a packed tensor (the packed sub-byte types have none).
const ELEMENT_BYTES = { 0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4 };

const COMMON_KEYS = ['memory', 'dataType', 'globalDim', 'globalStrides', 'elementStrides'];
const FLAG_KEYS = ['interleave', 'swizzle', 'l2Promotion', 'oobFill'];
const KEYS = {
  tiled: new Set([...COMMON_KEYS, 'boxDim', ...FLAG_KEYS]),
  im2col: new Set([
    ...COMMON_KEYS,
    'pixelBoxLowerCorner',
    'pixelBoxUpperCorner',
    'channelsPerPixel',
    'pixelsPerColumn',
    ...FLAG_KEYS,
  ]),
  im2colWide: new Set([
    ...COMMON_KEYS,
    'pixelBoxLowerCornerWidth',
    'pixelBoxUpperCornerWidth',
    'channelsPerPixel',
    'pixelsPerColumn',
    'mode',
    ...FLAG_KEYS,
  ]),
};

function dataTypeOf(value) {
  if (typeof value === 'string') {
    return check.choice('dataType', value, DATA_TYPES, `a dtype name (${Object.keys(DATA_TYPES).join(', ')})`);
  }
  return check.member('dataType', value, TensorMapDataType, 'TensorMapDataType');
}

// A list of count integers from min to max.
function integers(name, value, count, min, max) {
  const list = check.list(name, value, `an array of ${count} integers`);
  if (list.length !== count)
    throw new RangeError(`${name} must have ${count} entries (one per dimension), not ${list.length}`);
  return list.map((v, i) => check.integer(`${name}[${i}]`, v, min, max));
}

// The words and ints of options (kind: 'tiled', 'im2col', 'im2colWide'), as tensor_map.c reads them.
function describeTensor(kind, options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`TensorMap.${kind}() takes an object of options, not ${check.describe(options)}`);
  }
  for (const key in options) {
    if (!KEYS[kind].has(key)) {
      throw new TypeError(
        `TensorMap.${kind}(): unknown option '${key}' (the options are ${[...KEYS[kind]].join(', ')})`,
      );
    }
  }
  const words = new BigUint64Array(T.words);
  const ints = new Int32Array(T.ints);
  words[T.address] = devicePointer(options.memory, 'memory');
  const dataType = dataTypeOf(options.dataType);
  ints[T.dataType] = dataType;
  const dims = check.list('globalDim', options.globalDim, 'an array of 1 to 5 dimensions, innermost first');
  const rank = dims.length;
  if (rank < 1 || rank > 5) throw new RangeError(`globalDim must have 1 to 5 dimensions, not ${rank}`);
  words[T.rank] = BigInt(rank);
  integers('globalDim', dims, rank, 1, 2 ** 32).forEach((d, i) => (words[T.dims + i] = BigInt(d)));
  stridesOf(options.globalStrides, dims, dataType).forEach((s, i) => (words[T.strides + i] = BigInt(s)));
  const elementStrides = options.elementStrides ?? Array(rank).fill(1);
  integers('elementStrides', elementStrides, rank, 1, 8).forEach((s, i) => (ints[T.elementStrides + i] = s));
  ints[T.interleave] = flag('interleave', options.interleave, 'TensorMapInterleave');
  ints[T.swizzle] = flag('swizzle', options.swizzle, 'TensorMapSwizzle');
  ints[T.l2Promotion] = flag('l2Promotion', options.l2Promotion, 'TensorMapL2Promotion');
  ints[T.oobFill] = flag('oobFill', options.oobFill, 'TensorMapFloatOOBFill');
  if (kind === 'tiled') {
    integers('boxDim', options.boxDim, rank, 1, 256).forEach((b, i) => (ints[T.box + i] = b));
  } else {
    ints[T.channels] = check.integer('channelsPerPixel', options.channelsPerPixel, 1, 256);
    ints[T.pixels] = check.integer('pixelsPerColumn', options.pixelsPerColumn, 1, 1024);
  }
  if (kind === 'im2col') {
    const corners = rank - 2; // the spatial dimensions
    const lower = integers('pixelBoxLowerCorner', options.pixelBoxLowerCorner, corners, -32768, 32767);
    const upper = integers('pixelBoxUpperCorner', options.pixelBoxUpperCorner, corners, -32768, 32767);
    lower.forEach((c, i) => (ints[T.lower + i] = c));
    upper.forEach((c, i) => (ints[T.upper + i] = c));
  } else if (kind === 'im2colWide') {
    ints[T.lower] = check.integer('pixelBoxLowerCornerWidth', options.pixelBoxLowerCornerWidth, -32768, 32767);
    ints[T.upper] = check.integer('pixelBoxUpperCornerWidth', options.pixelBoxUpperCornerWidth, -32768, 32767);
    ints[T.mode] = flag('mode', options.mode, 'TensorMapIm2ColWideMode');
  }
  return { words, ints };
}

// The strides of dimensions 1 and up, in bytes: as given, or those of a packed tensor.
function stridesOf(given, dims, dataType) {
  const rank = dims.length;
  if (given !== undefined) return integers('globalStrides', given, rank - 1, 16, 2 ** 40 - 16);
  const bytes = ELEMENT_BYTES[dataType];
  if (bytes === undefined) {
    throw new TypeError('globalStrides: a packed sub-byte data type needs its strides given, in bytes');
  }
  const strides = [];
  let stride = bytes;
  for (let i = 0; i < rank - 1; i++) strides.push((stride *= dims[i]));
  return strides;
}

// A member of the constant group groupName, 0 (its NONE or first member) when left out.
function flag(name, value, groupName) {
  return value === undefined ? 0 : check.member(name, value, constants[groupName], groupName);
}

/**
 * A TMA tensor map: `TensorMap.tiled({ memory, dataType, globalDim, boxDim, ... })`, `im2col()`,
 * `im2colWide()`. Passed to a kernel whose parameter is a `const __grid_constant__ CUtensorMap`;
 * `replaceAddress(memory)` points it at another tensor of the same shape.
 */
class TensorMap {
  constructor() {
    throw new TypeError('make a TensorMap with TensorMap.tiled(), TensorMap.im2col() or TensorMap.im2colWide()');
  }

  /** A map of boxes of `boxDim` elements of the tensor at `memory` (cuTensorMapEncodeTiled). */
  static tiled(options) {
    return make('tiled', options);
  }

  /** A map for im2col loads of a convolution's input (cuTensorMapEncodeIm2col; rank 3 to 5). */
  static im2col(options) {
    return make('im2col', options);
  }

  /** im2col with the bounding box along the width only (cuTensorMapEncodeIm2colWide, CUDA 12.8+). */
  static im2colWide(options) {
    return make('im2colWide', options);
  }

  /** Points the map at `memory`, a tensor of the same shape, data type and strides. */
  replaceAddress(memory) {
    const { kind, words, ints } = this._described;
    const moved = words.slice();
    moved[T.address] = devicePointer(memory, 'memory');
    binding.tensorMapEncode(this[TENSOR_MAP], T[kind], moved, ints); // anew: C reads no old bytes
    this._described = { kind, words: moved, ints };
    Object.defineProperty(this, 'memory', { value: memory, configurable: true }); // kept alive
    return this;
  }

  /** A copy of the map's 128 bytes. */
  get bytes() {
    return this[TENSOR_MAP].slice();
  }
}
TensorMap[TENSOR_MAP] = true; // prepare([..., cuda.TensorMap]) takes one

function make(kind, options) {
  const { words, ints } = describeTensor(kind, options);
  const map = Object.create(TensorMap.prototype);
  const bytes = new Uint8Array(T.bytes);
  binding.tensorMapEncode(bytes, T[kind], words, ints);
  Object.defineProperties(map, {
    [TENSOR_MAP]: { value: bytes },
    _described: { value: { kind, words, ints }, writable: true },
    memory: { value: options.memory, configurable: true }, // kept alive while the map is
  });
  return map;
}

module.exports = { TensorMap };
