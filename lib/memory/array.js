'use strict';
// CUDA arrays (PyCUDA's Array, here CudaArray), their descriptors, and the copies into and out of
// them by byte offset.
const binding = require('../internal/binding');
const { keepForCapture } = require('../internal/capture-keep');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { ArrayFormat } = require('../driver/constants');
const { LogicError } = require('../driver/errors');
const { streamArg } = require('../driver/stream');
const { devicePointer, fits } = require('../internal/pointer');
const host = require('./host-memory');

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
    const fields = descriptorFields(descriptor);
    retryOutOfMemory(() => binding.arrayCreate(this, ...fields));
  }

  /** Frees the array now; a second free() does nothing. C refuses it while a graph's copy, built or
   * captured, names the array. */
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
  binding.memcpyHtoA(arrayArg('array', array), check.size('index', index), view, streamArg(stream));
  keepForCapture(stream, null, [view, array]);
}

/** memcpyAtoH on stream; page-locked dest is kept alive until the stream has passed the copy. */
function memcpyAtoHAsync(dest, array, index, stream = null) {
  const view = host.hostView('dest', dest);
  binding.memcpyAtoH(view, arrayArg('array', array), check.size('index', index), streamArg(stream));
  keepForCapture(stream, null, [view, array]);
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

module.exports = {
  ArrayDescriptor,
  ArrayDescriptor3D,
  CudaArray,
  arrayArg,
  memcpyHtoA,
  memcpyAtoH,
  memcpyHtoAAsync,
  memcpyAtoHAsync,
  memcpyDtoA,
  memcpyAtoD,
  memcpyAtoA,
};
