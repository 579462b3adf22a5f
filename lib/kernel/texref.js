'use strict';
// Texture and surface references that a module's PTX or cubin declares (`.global .texref tex;`).
// CUDA C++ can no longer declare them, but the driver still binds them; they belong to their
// module, which they keep alive, and refuse use once it is freed.
const binding = require('../internal/binding');
const { ArrayFormat, AddressMode, FilterMode } = require('../driver/constants');
const { LogicError } = require('../driver/errors');
const { devicePointer } = require('../internal/pointer');
const check = require('../internal/checks');
const { CudaArray } = require('../memory/array');

const token = Symbol('reference');

/** A texture reference, from `module.getTexref(name)`. */
class TextureReference {
  constructor(secret, module) {
    if (secret !== token) throw new TypeError('texture references come from module.getTexref(name)');
    /** The Module that declares the reference (kept alive by it). */
    this.module = module;
  }

  #memory = null; // what is bound, kept alive while it is

  /**
   * Binds bytes of linear device memory at devptr. Returns the byte offset that fetches must
   * add where devptr is not aligned enough; unless allowOffset, a non-zero offset is a LogicError.
   */
  setAddress(devptr, bytes, allowOffset = false) {
    const ptr = devicePointer(devptr, 'devptr');
    const offset = binding.texrefSetAddress(this, ptr, check.size('bytes', bytes));
    this.#memory = devptr;
    if (offset !== 0 && !allowOffset) {
      throw new LogicError(
        `setAddress(): the texture has a byte offset of ${offset} (the address is ` +
          'not aligned enough); align it, or pass allowOffset = true and add the offset to fetches',
      );
    }
    return offset;
  }

  /**
   * Binds pitched 2D memory: descriptor { width, height, format, numChannels } (an
   * ArrayDescriptor), pitch in bytes.
   */
  setAddress2D(devptr, descriptor, pitch) {
    const ptr = devicePointer(devptr, 'devptr');
    if (typeof descriptor !== 'object' || descriptor === null) {
      throw new TypeError(
        'descriptor must be { width, height, format, numChannels } (an ArrayDescriptor), ' +
          `not ${check.describe(descriptor)}`,
      );
    }
    const { width, height, format, numChannels } = descriptor;
    binding.texrefSetAddress2D(
      this,
      ptr,
      check.size('pitch', pitch),
      check.size('descriptor.width', width),
      check.size('descriptor.height', height),
      check.member('descriptor.format', format, ArrayFormat, 'ArrayFormat'),
      check.integer('descriptor.numChannels', numChannels, 1, 4),
    );
    this.#memory = devptr;
  }

  /**
   * Binds a CudaArray, kept alive while bound (PyCUDA's set_array); flags: TRSA_OVERRIDE_FORMAT
   * to fetch with this reference's format instead of the array's.
   */
  setArray(array, flags = 0) {
    check.integer('flags', flags, 0, 1);
    binding.texrefSetArray(this, check.instance('array', array, CudaArray), flags);
    this.#memory = array;
  }

  /** The bound CudaArray, or null. */
  getArray() {
    return this.#memory instanceof CudaArray ? this.#memory : null;
  }

  /** The element format (ArrayFormat) and components per element (1, 2 or 4). */
  setFormat(format, numComponents) {
    check.member('format', format, ArrayFormat, 'ArrayFormat');
    binding.texrefSetFormat(this, format, check.integer('numComponents', numComponents, 1, 4));
  }

  /** The AddressMode of dimension dim (0, 1 or 2). */
  setAddressMode(dim, mode) {
    check.integer('dim', dim, 0, 2);
    binding.texrefSetAddressMode(this, dim, check.member('mode', mode, AddressMode, 'AddressMode'));
  }

  setFilterMode(mode) {
    binding.texrefSetFilterMode(this, check.member('mode', mode, FilterMode, 'FilterMode'));
  }

  /** TRSF_READ_AS_INTEGER, TRSF_NORMALIZED_COORDINATES, ... combined. */
  setFlags(flags) {
    binding.texrefSetFlags(this, check.integer('flags', flags, 0, 4294967295));
  }

  /** The bound device address (a bigint). */
  getAddress() {
    return binding.texrefGetAddress(this);
  }

  getAddressMode(dim) {
    return binding.texrefGetAddressMode(this, check.integer('dim', dim, 0, 2));
  }

  getFilterMode() {
    return binding.texrefGetFilterMode(this);
  }

  /** [format (ArrayFormat), numComponents]. */
  getFormat() {
    return binding.texrefGetFormat(this);
  }

  getFlags() {
    return binding.texrefGetFlags(this);
  }
}

/** A surface reference, from `module.getSurfref(name)`. */
class SurfaceReference {
  constructor(secret, module) {
    if (secret !== token) throw new TypeError('surface references come from module.getSurfref(name)');
    /** The Module that declares the reference (kept alive by it). */
    this.module = module;
  }

  #array = null; // kept alive while bound

  /** Binds a CudaArray made with Array3DFlags.SURFACE_LDST, kept alive while bound (flags: 0). */
  setArray(array, flags = 0) {
    check.integer('flags', flags, 0, 0);
    binding.surfrefSetArray(this, check.instance('array', array, CudaArray), flags);
    this.#array = array;
  }

  /** The bound CudaArray, or null. */
  getArray() {
    return this.#array;
  }
}

// The reference `name` of module (getTexref / getSurfref).
function referenceOf(Class, module, name) {
  if (typeof name !== 'string') throw new TypeError(`name must be a string, not ${check.describe(name)}`);
  const ref = new Class(token, module);
  if (Class === TextureReference) binding.moduleGetTexRef(module, name, ref);
  else binding.moduleGetSurfRef(module, name, ref);
  return ref;
}

module.exports = { TextureReference, SurfaceReference };
Object.defineProperty(module.exports, 'referenceOf', { value: referenceOf });
