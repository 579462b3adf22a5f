'use strict';
// PyCUDA's helpers that turn a host or device matrix into a CudaArray (matrix_to_array,
// np_to_array, gpuarray_to_array, make_multichannel_2d_array).
const check = require('../internal/checks');
const { ArrayFormat, Array3DFlags } = require('../driver/constants');
const { devicePointer, fits } = require('../internal/pointer');
const { dtypeOf, dtypeOfArray, shapeLength } = require('../internal/dtype');
const { ArrayDescriptor3D, CudaArray } = require('./array');
const { Memcpy2D, Memcpy3D } = require('./copies');

const FORMATS = new Map([
  ['uint8', ArrayFormat.UNSIGNED_INT8],
  ['uint8clamped', ArrayFormat.UNSIGNED_INT8],
  ['int8', ArrayFormat.SIGNED_INT8],
  ['uint16', ArrayFormat.UNSIGNED_INT16],
  ['int16', ArrayFormat.SIGNED_INT16],
  ['uint32', ArrayFormat.UNSIGNED_INT32],
  ['int32', ArrayFormat.SIGNED_INT32],
  ['float16', ArrayFormat.HALF],
  ['float32', ArrayFormat.FLOAT],
]);

// The array format and channels per value of dtype: float64 as two int32 (read with
// include/cudadrv/texture.cuh's helpers), complex values as pairs.
function elementFormat(dtype, complex) {
  if (dtype.name === 'float64') return [ArrayFormat.SIGNED_INT32, complex ? 4 : 2];
  const format = FORMATS.get(dtype.name);
  if (format === undefined) {
    throw new TypeError(
      `arrays hold int8 to int32, uint8 to uint32, float16, float32 and float64 values, not ${dtype.name}`,
    );
  }
  if (complex && dtype.name !== 'float32') throw new TypeError('complex values are float32 or float64 pairs');
  return [format, complex ? 2 : 1];
}

function orderArg(order) {
  if (order !== 'C' && order !== 'F') throw new RangeError(`order must be 'C' or 'F', not ${check.describe(order)}`);
  return order;
}

// [width, height, depth] of a C-order (last dimension fastest) or F-order shape of 2 or 3 dims.
function extentOf(shape, order) {
  if (!Array.isArray(shape) || (shape.length !== 2 && shape.length !== 3)) {
    throw new RangeError(`shape must have 2 or 3 dimensions (arrays are 2D or 3D), not ${check.describe(shape)}`);
  }
  shapeLength(shape);
  const dims = order === 'C' ? [...shape].reverse() : shape;
  return [dims[0], dims[1], dims[2] ?? 0];
}

// A new array of extent's shape filled from a host view or device memory (source), values of
// `bytes` bytes in `channels` channels of format.
function arrayFrom(source, onDevice, [width, height, depth], [format, channels], bytes, surface) {
  const flags = surface ? Array3DFlags.SURFACE_LDST | (depth === 0 ? Array3DFlags.LAYERED : 0) : 0;
  // a surface over a 2D matrix is a layered array of one layer, as PyCUDA makes it
  const layers = surface && depth === 0 ? 1 : depth;
  const array = new CudaArray(
    new ArrayDescriptor3D({ width, height, depth: layers, format, numChannels: channels, flags }),
  );
  const copy = layers ? new Memcpy3D() : new Memcpy2D();
  if (onDevice) copy.setSrcDevice(source);
  else copy.setSrcHost(source);
  copy.setDstArray(array);
  copy.widthInBytes = copy.srcPitch = width * bytes;
  copy.height = height;
  if (layers) {
    copy.srcHeight = height;
    copy.depth = layers;
    copy.run();
  } else {
    copy.run({ aligned: true });
  }
  return array;
}

// The dtype of typedArray, which must hold shape's values of perValue numbers each.
function hostMatrix(typedArray, shape, perValue = 1) {
  const dtype = dtypeOfArray(typedArray);
  if (!dtype) throw new TypeError(`expected a TypedArray, not ${check.describe(typedArray)}`);
  const numbers = shapeLength(shape) * perValue;
  if (numbers !== typedArray.length) {
    throw new RangeError(
      `shape ${JSON.stringify(shape)} holds ${numbers} ${perValue === 1 ? 'values' : 'numbers'}, ` +
        `the array ${typedArray.length}`,
    );
  }
  return dtype;
}

/**
 * A 2D CudaArray holding a host matrix (PyCUDA's matrix_to_array): typedArray of shape [rows,
 * columns] in 'C' order (rows contiguous) or [columns, rows] in 'F' order. float64 values are
 * stored as two int32 channels.
 */
function matrixToArray(typedArray, shape, order = 'C') {
  const dtype = hostMatrix(typedArray, shape);
  if (!Array.isArray(shape) || shape.length !== 2) throw new RangeError('shape must have 2 dimensions');
  const format = elementFormat(dtype, false);
  return arrayFrom(typedArray, false, extentOf(shape, orderArg(order)), format, dtype.size, false);
}

/**
 * A 2D or 3D CudaArray holding a host array (PyCUDA's np_to_array): shape of 2 or 3 dimensions
 * in `order` 'C' or 'F'; `allowSurfaceBind` makes it writable through surfaces (a 2D matrix then
 * becomes a layered array of one layer); `complex: true` reads the values as (re, im) pairs, the
 * shape counting pairs.
 */
function toArray(typedArray, shape, opts) {
  const { order = 'C', allowSurfaceBind = false, complex = false } = check.options('options', opts);
  const perValue = complex ? 2 : 1;
  const dtype = hostMatrix(typedArray, shape, perValue);
  return arrayFrom(
    typedArray,
    false,
    extentOf(shape, orderArg(order)),
    elementFormat(dtype, complex),
    dtype.size * perValue,
    Boolean(allowSurfaceBind),
  );
}

/** toArray for an array already in device memory (PyCUDA's gpuarray_to_array): ptr holds the
 * values of shape and dtype. */
function deviceToArray(ptr, shape, dtype, opts) {
  const { order = 'C', allowSurfaceBind = false, complex = false } = check.options('options', opts);
  const type = dtypeOf(dtype);
  const perValue = complex ? 2 : 1;
  devicePointer(ptr, 'ptr');
  fits(shapeLength(shape) * perValue * type.size, ptr, 'deviceToArray');
  return arrayFrom(
    ptr,
    true,
    extentOf(shape, orderArg(order)),
    elementFormat(type, complex),
    type.size * perValue,
    Boolean(allowSurfaceBind),
  );
}

/**
 * A 2D CudaArray of 1, 2 or 4 channels (PyCUDA's make_multichannel_2d_array): shape [rows,
 * columns, channels] in 'C' order, or [channels, columns, rows] in 'F' order.
 */
function makeMultichannel2DArray(typedArray, shape, order = 'C') {
  const dtype = hostMatrix(typedArray, shape);
  if (!Array.isArray(shape) || shape.length !== 3) throw new RangeError('shape must have 3 dimensions');
  const [channels, width, height] = orderArg(order) === 'C' ? [...shape].reverse() : shape;
  if (![1, 2, 4].includes(channels)) throw new RangeError(`the channel count must be 1, 2 or 4, not ${channels}`);
  if (dtype.name === 'float64') throw new TypeError('multichannel arrays hold 1 to 4-byte values, not float64');
  const [format] = elementFormat(dtype, false);
  return arrayFrom(typedArray, false, [width, height, 0], [format, channels], dtype.size * channels, false);
}

module.exports = { matrixToArray, toArray, deviceToArray, makeMultichannel2DArray };
