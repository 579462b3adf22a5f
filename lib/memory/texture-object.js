'use strict';
// Texture and surface objects (beyond PyCUDA): what kernels take as cudaTextureObject_t and
// cudaSurfaceObject_t arguments, over CudaArrays, linear or pitched device memory.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const layouts = require('../internal/layouts');
const { HANDLE_ARGUMENT } = require('../internal/kernel-argument');
const { ArrayFormat, AddressMode, FilterMode } = require('../driver/constants');
const { LogicError } = require('../driver/errors');
const { devicePointer, deviceExtent, fits } = require('../internal/pointer');
const { CudaArray, arrayArg } = require('./array');

// What texObjectCreate reads (layouts.texture, src/memory/texobj.c).
const T = layouts.texture;

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
  const fields = new BigUint64Array(T.count);
  let array = null;
  if (resource instanceof CudaArray) {
    array = resource;
    fields[T.kind] = BigInt(T.kindArray);
  } else if (typeof resource === 'object' && resource !== null && ('linear' in resource || 'pitch2D' in resource)) {
    const linear = 'linear' in resource;
    const memory = linear ? resource.linear : resource.pitch2D;
    const ptr = devicePointer(memory, linear ? 'resource.linear' : 'resource.pitch2D');
    const format = check.member('resource.format', resource.format, ArrayFormat, 'ArrayFormat');
    const channels = check.integer('resource.numChannels', resource.numChannels ?? 1, 1, 4);
    fields[T.kind] = BigInt(linear ? T.kindLinear : T.kindPitch2D);
    fields[T.address] = ptr;
    fields[T.format] = BigInt(format);
    fields[T.channels] = BigInt(channels);
    if (linear) {
      if (resource.bytes === undefined && deviceExtent(memory) === Infinity) {
        throw new TypeError('resource.bytes must be given: the size of memory at a bare address is not known');
      }
      const bytes = positive('resource.bytes', resource.bytes ?? deviceExtent(memory));
      fits(bytes, memory, 'TextureObject');
      fields[T.bytes] = BigInt(bytes);
    } else {
      const width = positive('resource.width', resource.width);
      const height = positive('resource.height', resource.height);
      const pitch = positive('resource.pitch', resource.pitch);
      // the addon's size of a texel; 0 for a format pitched memory does not take, which it refuses
      const texel = binding.texelBytes(format, channels);
      if (texel) fits(pitch * (height - 1) + width * texel, memory, 'TextureObject');
      fields[T.width] = BigInt(width);
      fields[T.height] = BigInt(height);
      fields[T.pitch] = BigInt(pitch);
    }
  } else {
    throw new TypeError(
      'resource must be a CudaArray, { linear: memory, format, numChannels, bytes? } or ' +
        `{ pitch2D: memory, format, numChannels, width, height, pitch }, not ${check.describe(resource)}`,
    );
  }
  const { addressMode = AddressMode.CLAMP, filterMode = FilterMode.POINT, flags = 0, maxAnisotropy = 0 } = opts;
  fields.set(addressModes(addressMode).map(BigInt), T.addressMode);
  fields[T.filterMode] = BigInt(check.member('filterMode', filterMode, FilterMode, 'FilterMode'));
  fields[T.flags] = BigInt(check.integer('flags', flags, 0, 4294967295));
  fields[T.maxAnisotropy] = BigInt(check.integer('maxAnisotropy', maxAnisotropy, 0, 16));
  return { fields, array };
}

function positive(name, value) {
  if (check.size(name, value) === 0) throw new RangeError(`${name} must be at least 1`);
  return value;
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

module.exports = { TextureObject, SurfaceObject };
