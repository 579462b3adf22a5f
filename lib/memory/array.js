'use strict';
// CUDA arrays (PyCUDA's Array, here CudaArray), the copies into and out of them, texture and
// surface objects over them and over linear memory, and PyCUDA's helpers that turn a host or
// device matrix into an array.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { ArrayFormat, Array3DFlags, AddressMode, FilterMode } = require('../driver/constants');
const { LogicError } = require('../driver/errors');
const { devicePointer, deviceExtent } = require('../internal/pointer');
const { dtypeOf, dtypeOfArray, shapeLength } = require('../internal/dtype');
const host = require('./host-memory').internal;
const { HANDLE_ARGUMENT } = require('../kernel/args');
const {
  Memcpy2D,
  Memcpy3D,
  internal: { streamArg, fits },
} = require('./device-memory');

/** A 1D or 2D array's shape and element type (PyCUDA's ArrayDescriptor). */
class ArrayDescriptor {
  constructor(descriptor) {
    const {
      width = 0,
      height = 0,
      format = ArrayFormat.FLOAT,
      numChannels = 1,
    } = check.options('descriptor', descriptor);
    /** Elements per row. */
    this.width = width;
    /** Rows (0 for a 1D array). */
    this.height = height;
    /** The element type (ArrayFormat). */
    this.format = format;
    /** Components per element: 1, 2 or 4. */
    this.numChannels = numChannels;
  }
}

/** A 1D, 2D, 3D or layered array's shape, element type and flags (PyCUDA's ArrayDescriptor3D). */
class ArrayDescriptor3D extends ArrayDescriptor {
  constructor(descriptor) {
    const {
      width = 0,
      height = 0,
      depth = 0,
      format = ArrayFormat.FLOAT,
      numChannels = 1,
      flags = 0,
    } = check.options('descriptor', descriptor);
    super({ width, height, format, numChannels });
    /** Slices (0 for a 1D or 2D array; layers for a layered one). */
    this.depth = depth;
    /** Array3DFlags combined (SURFACE_LDST for arrays that surfaces write, LAYERED...). */
    this.flags = flags;
  }
}

// The checked [width, height, depth, format, numChannels, flags] of a descriptor.
function descriptorFields(descriptor) {
  if (typeof descriptor !== 'object' || descriptor === null) {
    throw new TypeError(
      'descriptor must be an ArrayDescriptor or ArrayDescriptor3D ' +
        `({ width, height, depth?, format, numChannels, flags? }), not ${check.describe(descriptor)}`,
    );
  }
  const { width, height = 0, depth = 0, format, numChannels = 1, flags = 0 } = descriptor;
  const fields = [
    check.size('descriptor.width', width),
    check.size('descriptor.height', height),
    check.size('descriptor.depth', depth),
    check.member('descriptor.format', format, ArrayFormat, 'ArrayFormat'),
    check.integer('descriptor.numChannels', numChannels, 1, 4),
    check.integer('descriptor.flags', flags, 0, 4294967295),
  ];
  if (fields[4] === 3) throw new RangeError('descriptor.numChannels must be 1, 2 or 4, not 3');
  if (fields[0] === 0) throw new RangeError('descriptor.width must be at least 1');
  return fields;
}

/**
 * A CUDA array (PyCUDA's Array): opaque device memory laid out for textures and surfaces, made
 * from an ArrayDescriptor (1D, 2D) or ArrayDescriptor3D (3D, layered, surfaces) in the current
 * context. Freed by free(), [Symbol.dispose] or garbage collection.
 */
class CudaArray {
  constructor(descriptor) {
    binding.arrayCreate(this, ...descriptorFields(descriptor));
  }

  /** Frees the array now; a second free() does nothing. */
  free() {
    binding.arrayFree(this);
  }

  [Symbol.dispose]() {
    this.free();
  }

  /** The CUarray handle, a bigint (PyCUDA's handle). */
  get handle() {
    return binding.arrayHandle(this);
  }

  /** The ArrayDescriptor of a 1D or 2D array; a LogicError for a 3D one (use getDescriptor3D()). */
  getDescriptor() {
    const [width, height, depth, format, numChannels] = binding.arrayGetDescriptor(this);
    if (depth !== 0) throw new LogicError(`this CudaArray is 3D (depth ${depth}): use getDescriptor3D()`);
    return new ArrayDescriptor({ width, height, format, numChannels });
  }

  /** The ArrayDescriptor3D of any array. */
  getDescriptor3D() {
    const [width, height, depth, format, numChannels, flags] = binding.arrayGetDescriptor(this);
    return new ArrayDescriptor3D({ width, height, depth, format, numChannels, flags });
  }
}

function arrayArg(name, value) {
  return check.instance(name, value, CudaArray);
}

// ---- copies with a 1D array: the array side is (array, byte offset) ----

/** Copies all of src (a host buffer) into array from byte offset index. */
function memcpyHtoA(array, index, src) {
  binding.memcpyHtoA(arrayArg('array', array), check.size('index', index), host.hostView('src', src));
}

/** Copies array's bytes from byte offset index into all of dest (a host buffer). */
function memcpyAtoH(dest, array, index) {
  binding.memcpyAtoH(host.hostView('dest', dest), arrayArg('array', array), check.size('index', index));
}

/** memcpyHtoA on stream; page-locked src is kept alive until the stream has passed the copy. */
function memcpyHtoAAsync(array, index, src, stream = null) {
  const view = host.hostView('src', src);
  binding.memcpyHtoA(
    arrayArg('array', array),
    check.size('index', index),
    view,
    streamArg(stream),
    host.needsKeeping(view) ? [view, array] : array,
  );
}

/** memcpyAtoH on stream; page-locked dest is kept alive until the stream has passed the copy. */
function memcpyAtoHAsync(dest, array, index, stream = null) {
  const view = host.hostView('dest', dest);
  binding.memcpyAtoH(
    view,
    arrayArg('array', array),
    check.size('index', index),
    streamArg(stream),
    host.needsKeeping(view) ? [view, array] : array,
  );
}

/** Copies bytes of device memory src into array from byte offset index. */
function memcpyDtoA(array, index, src, bytes) {
  arrayArg('array', array);
  const ptr = devicePointer(src, 'src');
  fits(check.size('bytes', bytes), src, 'memcpyDtoA(array, index, src, bytes)');
  binding.memcpyDtoA(array, check.size('index', index), ptr, bytes);
}

/** Copies bytes of array from byte offset index into device memory dest. */
function memcpyAtoD(dest, array, index, bytes) {
  const ptr = devicePointer(dest, 'dest');
  arrayArg('array', array);
  fits(check.size('bytes', bytes), dest, 'memcpyAtoD(dest, array, index, bytes)');
  binding.memcpyAtoD(ptr, array, check.size('index', index), bytes);
}

/** Copies bytes from array src (from byte srcIndex) to array dest (from byte destIndex). */
function memcpyAtoA(dest, destIndex, src, srcIndex, bytes) {
  binding.memcpyAtoA(
    arrayArg('dest', dest),
    check.size('destIndex', destIndex),
    arrayArg('src', src),
    check.size('srcIndex', srcIndex),
    check.size('bytes', bytes),
  );
}

// ---- texture and surface objects ----

// What src/memory/texobj.c's texObjectCreate reads, in order.
const KIND = { array: 0n, linear: 1n, pitch2D: 2n };

function addressModes(mode) {
  const modes = Array.isArray(mode) ? mode : [mode, mode, mode];
  if (modes.length < 1 || modes.length > 3) {
    throw new RangeError(`addressMode must be an AddressMode or an array of 1 to 3, not ${modes.length}`);
  }
  return [0, 1, 2].map((dim) =>
    check.member(`addressMode[${dim}]`, modes[dim] ?? modes[0], AddressMode, 'AddressMode'),
  );
}

// The fields and the array of a texture object over resource.
function textureFields(resource, opts) {
  const fields = new BigUint64Array(14);
  let array = null;
  if (resource instanceof CudaArray) {
    array = resource;
    fields[0] = KIND.array;
  } else if (typeof resource === 'object' && resource !== null && ('linear' in resource || 'pitch2D' in resource)) {
    const linear = 'linear' in resource;
    const memory = linear ? resource.linear : resource.pitch2D;
    const ptr = devicePointer(memory, linear ? 'resource.linear' : 'resource.pitch2D');
    const format = check.member('resource.format', resource.format, ArrayFormat, 'ArrayFormat');
    const channels = check.integer('resource.numChannels', resource.numChannels ?? 1, 1, 4);
    fields.set([linear ? KIND.linear : KIND.pitch2D, ptr, BigInt(format), BigInt(channels)], 0);
    if (linear) {
      if (resource.bytes === undefined && deviceExtent(memory) === Infinity) {
        throw new TypeError('resource.bytes must be given: the size of memory at a bare address is not known');
      }
      const bytes = positive('resource.bytes', resource.bytes ?? deviceExtent(memory));
      fits(bytes, memory, 'TextureObject');
      fields[4] = BigInt(bytes);
    } else {
      const width = positive('resource.width', resource.width);
      const height = positive('resource.height', resource.height);
      const pitch = positive('resource.pitch', resource.pitch);
      fits(pitch * (height - 1) + width * channels * formatBytes(format), memory, 'TextureObject');
      fields.set([BigInt(width), BigInt(height), BigInt(pitch)], 5);
    }
  } else {
    throw new TypeError(
      'resource must be a CudaArray, { linear: memory, format, numChannels, bytes? } or ' +
        `{ pitch2D: memory, format, numChannels, width, height, pitch }, not ${check.describe(resource)}`,
    );
  }
  const { addressMode = AddressMode.CLAMP, filterMode = FilterMode.POINT, flags = 0, maxAnisotropy = 0 } = opts;
  fields.set(addressModes(addressMode).map(BigInt), 8);
  fields[11] = BigInt(check.member('filterMode', filterMode, FilterMode, 'FilterMode'));
  fields[12] = BigInt(check.integer('flags', flags, 0, 4294967295));
  fields[13] = BigInt(check.integer('maxAnisotropy', maxAnisotropy, 0, 16));
  return { fields, array };
}

function positive(name, value) {
  if (check.size(name, value) === 0) throw new RangeError(`${name} must be at least 1`);
  return value;
}

const FORMAT_BYTES = new Map([
  [ArrayFormat.UNSIGNED_INT8, 1],
  [ArrayFormat.SIGNED_INT8, 1],
  [ArrayFormat.UNSIGNED_INT16, 2],
  [ArrayFormat.SIGNED_INT16, 2],
  [ArrayFormat.HALF, 2],
  [ArrayFormat.UNSIGNED_INT32, 4],
  [ArrayFormat.SIGNED_INT32, 4],
  [ArrayFormat.FLOAT, 4],
]);

function formatBytes(format) {
  return FORMAT_BYTES.get(format) ?? 1;
}

function borderColor(color = [0, 0, 0, 0]) {
  if (!Array.isArray(color) && !ArrayBuffer.isView(color)) {
    throw new TypeError(`borderColor must be an array of 4 numbers, not ${check.describe(color)}`);
  }
  if (color.length !== 4 || !Array.from(color).every((c) => typeof c === 'number')) {
    throw new RangeError('borderColor must hold 4 numbers');
  }
  return Float32Array.from(color);
}

class Handle {
  /** The CUtexObject / CUsurfObject, a bigint; a LogicError once destroyed. */
  get handle() {
    if (this._handle === null)
      throw new LogicError(`this ${this.constructor.name} has been destroyed; create a new one`);
    return this._handle;
  }

  get [HANDLE_ARGUMENT]() {
    return this.handle;
  }

  /** Destroys the object now (kernels running with it must have finished); a second call does nothing. */
  destroy() {
    binding.texObjectDestroy(this);
    this._handle = null;
    this.resource = null;
  }

  [Symbol.dispose]() {
    this.destroy();
  }
}

/**
 * A texture object (beyond PyCUDA), passed to kernels as a `cudaTextureObject_t` argument. It
 * reads `resource`: a CudaArray, `{ linear: memory, format, numChannels, bytes? }` or
 * `{ pitch2D: memory, format, numChannels, width, height, pitch }`, which it keeps alive. The
 * options are what TextureReference's setters set: `{ addressMode, filterMode, flags, borderColor,
 * maxAnisotropy }` (addressMode: one AddressMode or one per dimension; flags: TRSF_*); the driver
 * fixes them at creation.
 */
class TextureObject extends Handle {
  constructor(resource, options) {
    super();
    const opts = check.options('options', options);
    const { fields, array } = textureFields(resource, opts);
    this._handle = binding.texObjectCreate(this, array, fields, borderColor(opts.borderColor));
    /** What the texture reads (kept alive by it). */
    this.resource = resource;
  }
}

/** A surface object (beyond PyCUDA) over a CudaArray made with Array3DFlags.SURFACE_LDST, passed to
 * kernels as a `cudaSurfaceObject_t` argument; it keeps the array alive. */
class SurfaceObject extends Handle {
  constructor(array) {
    super();
    this._handle = binding.surfObjectCreate(this, arrayArg('array', array));
    /** The array (kept alive by the surface). */
    this.resource = array;
  }
}

// ---- host and device matrices into arrays (PyCUDA's matrix_to_array and friends) ----

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

module.exports = {
  ArrayDescriptor,
  ArrayDescriptor3D,
  CudaArray,
  TextureObject,
  SurfaceObject,
  memcpyHtoA,
  memcpyAtoH,
  memcpyHtoAAsync,
  memcpyAtoHAsync,
  memcpyDtoA,
  memcpyAtoD,
  memcpyAtoA,
  matrixToArray,
  toArray,
  deviceToArray,
  makeMultichannel2DArray,
};
