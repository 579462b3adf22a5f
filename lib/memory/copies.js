'use strict';
// Copies between host and device memory and between devices, memsets, and the 2D/3D copy
// descriptors (Memcpy2D, Memcpy3D, Memcpy3DPeer), one at a time or batched. Sizes are checked against what is known of the
// memory first; the addon checks again.
const binding = require('../internal/binding');
const { noteStaged } = require('./staging');
const check = require('../internal/checks');
const layouts = require('../internal/layouts');
const { Context } = require('../driver/context');
const { Stream, streamArg } = require('../driver/stream');
const { MemoryType } = require('../driver/constants');
const { LogicError } = require('../driver/errors');
const { devicePointer, deviceExtent, fits } = require('../internal/pointer');
const { keepForCapture } = require('../internal/capture-keep');
const { ADD_COPY_NODE } = require('../internal/graph-nodes');
const { CudaArray } = require('./array');
const host = require('./host-memory');

/** Copies all of src (any host buffer) to device memory dest. */
function memcpyHtoD(dest, src) {
  const ptr = devicePointer(dest, 'dest');
  const view = host.hostView('src', src);
  fits(view.byteLength, dest, 'memcpyHtoD(dest, src)');
  if (binding.memcpyHtoD(ptr, view)) noteStaged();
}

/** Fills all of dest (any host buffer) from device memory src. */
function memcpyDtoH(dest, src) {
  const view = host.hostView('dest', dest);
  const ptr = devicePointer(src, 'src');
  fits(view.byteLength, src, 'memcpyDtoH(dest, src)');
  if (binding.memcpyDtoH(view, ptr)) noteStaged();
}

/** memcpyHtoD on stream; returns at once. Page-locked, managed and registered src arrays are kept
 * alive until the stream has passed the copy (pageable memory is copied before this returns). */
function memcpyHtoDAsync(dest, src, stream = null) {
  const ptr = devicePointer(dest, 'dest');
  const view = host.hostView('src', src);
  stream = streamArg(stream);
  fits(view.byteLength, dest, 'memcpyHtoDAsync(dest, src)');
  if (binding.memcpyHtoDAsync(ptr, view, stream)) noteStaged();
  keepForCapture(stream, null, [dest, view]);
}

/** memcpyDtoH on stream; returns at once for page-locked dest (pageable dest is filled before
 * this returns, as the driver does). dest is kept alive until the stream has passed the copy. */
function memcpyDtoHAsync(dest, src, stream = null) {
  const view = host.hostView('dest', dest);
  const ptr = devicePointer(src, 'src');
  stream = streamArg(stream);
  fits(view.byteLength, src, 'memcpyDtoHAsync(dest, src)');
  if (binding.memcpyDtoHAsync(view, ptr, stream)) noteStaged();
  keepForCapture(stream, null, [view, src]);
}

// size of a device-to-device copy: given, or all of src where its size is known.
function copySize(size, src, what) {
  if (size !== undefined) return check.size('size', size);
  const extent = deviceExtent(src);
  if (extent === Infinity) throw new TypeError(`${what}: size is required when src has no size`);
  return extent;
}

/** Copies size bytes (all of src by default) between device memory. */
function memcpyDtoD(dest, src, size) {
  const to = devicePointer(dest, 'dest');
  const from = devicePointer(src, 'src');
  size = copySize(size, src, 'memcpyDtoD');
  fits(size, dest, 'memcpyDtoD: dest');
  fits(size, src, 'memcpyDtoD: src');
  binding.memcpyDtoD(to, from, size, undefined);
}

function memcpyDtoDAsync(dest, src, size, stream = null) {
  const to = devicePointer(dest, 'dest');
  const from = devicePointer(src, 'src');
  size = copySize(size, src, 'memcpyDtoDAsync');
  stream = streamArg(stream);
  fits(size, dest, 'memcpyDtoDAsync: dest');
  fits(size, src, 'memcpyDtoDAsync: src');
  binding.memcpyDtoD(to, from, size, stream);
  keepForCapture(stream, null, [dest, src]);
}

function contextArg(name, context) {
  if (context === undefined || context === null) {
    const current = Context.getCurrent();
    if (!current) throw new LogicError(`${name}: no context is current; pass one or make one current`);
    return current;
  }
  return check.instance(name, context, Context);
}

function peer(dest, src, size, destContext, srcContext, stream) {
  const to = devicePointer(dest, 'dest');
  const from = devicePointer(src, 'src');
  size = copySize(size, src, 'memcpyPeer');
  fits(size, dest, 'memcpyPeer: dest');
  fits(size, src, 'memcpyPeer: src');
  binding.memcpyPeer(
    to,
    contextArg('destContext', destContext),
    from,
    contextArg('srcContext', srcContext),
    size,
    stream,
  );
  keepForCapture(stream, null, [dest, src]);
}

/** Copies size bytes from src in srcContext to dest in destContext (both the current context by
 * default): between devices, or between two contexts of one device. */
function memcpyPeer(dest, src, size, destContext, srcContext) {
  peer(dest, src, size, destContext, srcContext, undefined);
}

function memcpyPeerAsync(dest, src, size, destContext, srcContext, stream = null) {
  peer(dest, src, size, destContext, srcContext, streamArg(stream));
}

// ---- memsets ----

// value as the unsigned bits of a width-byte element: -2**(8w-1) to 2**(8w)-1 accepted.
function memsetValue(value, width) {
  const bits = width * 8;
  check.integer('value', value, -(2 ** (bits - 1)), 2 ** bits - 1);
  return width === 4 ? value >>> 0 : value & ((1 << bits) - 1);
}

// The addon's memset of each element width, 1D and 2D.
const MEMSET = { 1: binding.memsetD8, 2: binding.memsetD16, 4: binding.memsetD32 };
const MEMSET_2D = { 1: binding.memsetD2D8, 2: binding.memsetD2D16, 4: binding.memsetD2D32 };

function memset(width, dest, value, count, stream) {
  const ptr = devicePointer(dest, 'dest');
  value = memsetValue(value, width);
  count = check.size('count', count);
  fits(count * width, dest, `memsetD${width * 8}(dest, value, ${count})`);
  MEMSET[width](ptr, value, count, stream);
  keepForCapture(stream, null, [dest]);
}

function memset2D(width, dest, pitch, value, columns, rows, stream) {
  const ptr = devicePointer(dest, 'dest');
  pitch = check.size('pitch', pitch);
  value = memsetValue(value, width);
  columns = check.size('width', columns);
  rows = check.size('height', rows);
  if (rows > 1 && pitch < columns * width) {
    throw new RangeError(`pitch ${pitch} is less than a row of ${columns} elements (${columns * width} bytes)`);
  }
  if (rows && columns) fits(pitch * (rows - 1) + columns * width, dest, `memsetD2D${width * 8}`);
  MEMSET_2D[width](ptr, pitch, value, columns, rows, stream);
  keepForCapture(stream, null, [dest]);
}

/** Sets count bytes at dest to value. */
const memsetD8 = (dest, value, count) => memset(1, dest, value, count, undefined);
/** Sets count 16-bit words at dest to value. */
const memsetD16 = (dest, value, count) => memset(2, dest, value, count, undefined);
/** Sets count 32-bit words at dest to value (a float's bits: new Uint32Array(new Float32Array([x]).buffer)[0]). */
const memsetD32 = (dest, value, count) => memset(4, dest, value, count, undefined);
const memsetD8Async = (dest, value, count, stream = null) => memset(1, dest, value, count, streamArg(stream));
const memsetD16Async = (dest, value, count, stream = null) => memset(2, dest, value, count, streamArg(stream));
const memsetD32Async = (dest, value, count, stream = null) => memset(4, dest, value, count, streamArg(stream));
/** Sets height rows of width bytes, pitch bytes apart, to value. */
const memsetD2D8 = (dest, pitch, value, width, height) => memset2D(1, dest, pitch, value, width, height, undefined);
const memsetD2D16 = (dest, pitch, value, width, height) => memset2D(2, dest, pitch, value, width, height, undefined);
const memsetD2D32 = (dest, pitch, value, width, height) => memset2D(4, dest, pitch, value, width, height, undefined);
const memsetD2D8Async = (dest, pitch, value, width, height, stream = null) =>
  memset2D(1, dest, pitch, value, width, height, streamArg(stream));
const memsetD2D16Async = (dest, pitch, value, width, height, stream = null) =>
  memset2D(2, dest, pitch, value, width, height, streamArg(stream));
const memsetD2D32Async = (dest, pitch, value, width, height, stream = null) =>
  memset2D(4, dest, pitch, value, width, height, streamArg(stream));

// ---- 2D and 3D copies ----

// The copy's fields, a BigUint64Array as the addon lays it out (layouts.copy, src/memory/copies.c):
// per side x, y, z, lod, memoryType, device address, pitch, height (rows per slice); then width in
// bytes, rows, depth. Fields 2D copies lack read as 0.
const COPY = layouts.copy;
const FIELDS_2D = ['XInBytes', 'Y', 'Pitch'];
const FIELDS_3D = ['Z', 'LOD', 'Height'];

/**
 * A 2D copy (cuMemcpy2D): set the source with setSrcHost/setSrcDevice/setSrcArray/setSrcUnified and the
 * fields srcXInBytes, srcY, srcPitch; the destination likewise; then widthInBytes and height;
 * run() copies, run(stream) enqueues.
 */
class Memcpy2D {
  constructor() {
    for (const side of ['src', 'dst']) {
      for (const field of FIELDS_2D) this[side + field] = 0;
      this[`${side}MemoryType`] = 0;
      this[`${side}Host`] = null;
      this[`${side}Device`] = 0n;
      this[`${side}Array`] = null;
      this[`_${side}Memory`] = null; // what setSrcDevice/setDstDevice got, for its size
    }
    this.widthInBytes = 0;
    this.height = 0;
  }

  _setHost(side, buffer) {
    this[`${side}Host`] = host.hostView(`${side}Host`, buffer);
    this[`${side}Array`] = null;
    this[`${side}MemoryType`] = MemoryType.HOST;
    this[`_${side}Memory`] = null;
  }

  _setDevice(side, pointer, type = MemoryType.DEVICE) {
    this[`${side}Device`] = devicePointer(pointer, `${side}Device`);
    this[`${side}Host`] = null;
    this[`${side}Array`] = null;
    this[`${side}MemoryType`] = type;
    this[`_${side}Memory`] = pointer;
  }

  _setArray(side, array) {
    this[`${side}Array`] = check.instance(`${side}Array`, array, CudaArray);
    this[`${side}Host`] = null;
    this[`${side}MemoryType`] = MemoryType.ARRAY;
    this[`_${side}Memory`] = null;
  }

  _setUnified(side, memory) {
    if (ArrayBuffer.isView(memory) || memory instanceof ArrayBuffer) {
      this._setHost(side, memory);
      this[`${side}MemoryType`] = MemoryType.UNIFIED;
    } else {
      this._setDevice(side, memory, MemoryType.UNIFIED);
    }
  }

  /** The source is host memory (any host buffer). */
  setSrcHost(buffer) {
    this._setHost('src', buffer);
  }

  /** The source is device memory (anything that stands for it). */
  setSrcDevice(pointer) {
    this._setDevice('src', pointer);
  }

  /** The source is unified memory: a managed array, or a device pointer. */
  setSrcUnified(memory) {
    this._setUnified('src', memory);
  }

  /** The source is a CudaArray (srcXInBytes and srcY, srcZ in 3D, address within it). */
  setSrcArray(array) {
    this._setArray('src', array);
  }

  setDstHost(buffer) {
    this._setHost('dst', buffer);
  }

  setDstDevice(pointer) {
    this._setDevice('dst', pointer);
  }

  setDstUnified(memory) {
    this._setUnified('dst', memory);
  }

  setDstArray(array) {
    this._setArray('dst', array);
  }

  _depth() {
    return 1;
  }

  // The fields for the addon, after checking every side against what is known of its size.
  _fields() {
    const width = check.size('widthInBytes', this.widthInBytes);
    const height = check.size('height', this.height);
    const depth = check.size('depth', this._depth());
    const fields = new BigUint64Array(COPY.count);
    const is3D = this instanceof Memcpy3D;
    ['src', 'dst'].forEach((side, i) => {
      const name = (field) => side + field;
      const read = (field) => (is3D || FIELDS_2D.includes(field) ? check.size(name(field), this[name(field)]) : 0);
      const type = this[name('MemoryType')];
      if (![MemoryType.HOST, MemoryType.DEVICE, MemoryType.UNIFIED, MemoryType.ARRAY].includes(type)) {
        throw new LogicError(
          `${side}: call set${side === 'src' ? 'Src' : 'Dst'}Host(), ` +
            `...Device(), ...Array() or ...Unified() before run()`,
        );
      }
      const [x, y, z, lod, pitch, rows] = ['XInBytes', 'Y', 'Z', 'LOD', 'Pitch', 'Height'].map(read);
      const address =
        type === MemoryType.HOST || type === MemoryType.ARRAY
          ? 0n
          : devicePointer(this[name('Device')], name('Device'));
      const at = i * COPY.side;
      fields[at + COPY.x] = BigInt(x);
      fields[at + COPY.y] = BigInt(y);
      fields[at + COPY.z] = BigInt(z);
      fields[at + COPY.lod] = BigInt(lod);
      fields[at + COPY.type] = BigInt(type);
      fields[at + COPY.device] = address;
      fields[at + COPY.pitch] = BigInt(pitch);
      fields[at + COPY.height] = BigInt(rows);
      if (type !== MemoryType.ARRAY && width && height && depth) {
        // the driver checks arrays
        const end = x + ((z + depth - 1) * rows + y + height - 1) * pitch + width;
        const memory = this[name('Host')] || this[`_${side}Memory`];
        const extent =
          memory === null ? Infinity : ArrayBuffer.isView(memory) ? memory.byteLength : deviceExtent(memory);
        if (end > extent) {
          throw new RangeError(
            `${this.constructor.name}: the copy reaches byte ${end} of ${side}, ` + `which holds ${extent}`,
          );
        }
      }
    });
    fields[COPY.width] = BigInt(width);
    fields[COPY.rows] = BigInt(height);
    fields[COPY.depth] = BigInt(depth);
    return fields;
  }

  // What the addon takes for a side besides its fields: its host buffer, or its CudaArray.
  _host(side) {
    return this[`${side}Host`] || this[`${side}Array`] || undefined;
  }

  /** run() or run({ aligned }) copies now (2D: cuMemcpy2D when aligned, else
   * cuMemcpy2DUnaligned); run(stream) enqueues on stream (null: the default stream); the addon
   * keeps page-locked arrays and CudaArrays alive until the stream has passed the copy. */
  run(streamOrOptions = undefined) {
    const fields = this._fields();
    if (streamOrOptions === null || streamOrOptions instanceof Stream) {
      if (this._copy(fields, false, streamOrOptions)) noteStaged();
      keepForCapture(streamOrOptions, null, [this, this._host('src'), this._host('dst')]);
      return;
    }
    if (streamOrOptions !== undefined && typeof streamOrOptions !== 'object') {
      throw new TypeError(`run() takes a Stream, null or { aligned }, not ${check.describe(streamOrOptions)}`);
    }
    const { aligned = false } = streamOrOptions ?? {};
    if (this._copy(fields, Boolean(aligned), undefined)) noteStaged();
  }

  // stream undefined: a synchronous copy. True where it went through the staging buffers.
  _copy(fields, aligned, stream) {
    if (stream === undefined && !aligned)
      return binding.memcpy2DUnaligned(fields, this._host('src'), this._host('dst'));
    return binding.memcpy2D(fields, this._host('src'), this._host('dst'), stream);
  }

  // graph.addMemcpy(copy, { after }): a copy node of graph after deps (node indices), as run()
  // would copy now; [its index, what it uses].
  [ADD_COPY_NODE](graph, deps) {
    if (this instanceof Memcpy3DPeer) {
      throw new TypeError('graph.addMemcpy(): a Memcpy3DPeer cannot be a node; use a Memcpy3D within one context');
    }
    const planar = !(this instanceof Memcpy3D);
    const index = binding.graphAddCopy(graph, deps, this._fields(), this._host('src'), this._host('dst'), planar);
    const uses = [this.srcHost, this.dstHost, this.srcArray, this.dstArray, this._srcMemory, this._dstMemory];
    return [index, uses.filter((use) => use !== null)];
  }
}

/** A 3D copy (cuMemcpy3D): Memcpy2D's fields plus srcZ, srcLOD, srcHeight (rows per slice),
 * dstZ, dstLOD, dstHeight and depth. */
class Memcpy3D extends Memcpy2D {
  constructor() {
    super();
    for (const side of ['src', 'dst']) for (const field of FIELDS_3D) this[side + field] = 0;
    this.depth = 0;
  }

  _depth() {
    return this.depth;
  }

  _copy(fields, aligned, stream) {
    return binding.memcpy3D(fields, this._host('src'), this._host('dst'), stream);
  }
}

/** A 3D copy between contexts (cuMemcpy3DPeer): Memcpy3D plus setSrcContext/setDstContext (the
 * current context by default). */
class Memcpy3DPeer extends Memcpy3D {
  constructor() {
    super();
    this.srcContext = null;
    this.dstContext = null;
  }

  setSrcContext(context) {
    this.srcContext = check.instance('context', context, Context);
  }

  setDstContext(context) {
    this.dstContext = check.instance('context', context, Context);
  }

  _copy(fields, aligned, stream) {
    binding.memcpy3DPeer(
      fields,
      this._host('src'),
      this._host('dst'),
      contextArg('srcContext', this.srcContext),
      contextArg('dstContext', this.dstContext),
      stream,
    );
  }
}

/**
 * Makes every 2D and 3D copy of `copies` (Memcpy2D and Memcpy3D objects, as their run(stream)
 * makes them) in one call on stream (cuMemcpy3DBatchAsync, driver 13); copies within a batch run in
 * no set order. Host sides are treated as memcpyBatchAsync treats them.
 */
function memcpy3DBatchAsync(copies, stream) {
  check.list('copies', copies, 'an array of Memcpy2D and Memcpy3D objects');
  if (copies.length === 0) throw new RangeError('memcpy3DBatchAsync(): copies is empty');
  check.instance('stream', stream, Stream, ' (the driver refuses the default stream for batches)');
  const ops = [];
  copies.forEach((copy, i) => {
    if (!(copy instanceof Memcpy2D) || copy instanceof Memcpy3DPeer) {
      throw new TypeError(`copies[${i}] must be a Memcpy2D or Memcpy3D, not ${check.describe(copy)}`);
    }
    ops.push(copy._fields(), copy._host('src'), copy._host('dst'), !(copy instanceof Memcpy3D));
  });
  binding.memcpy3DBatchAsync(ops, stream);
}

module.exports = {
  memcpy3DBatchAsync,
  memcpyHtoD,
  memcpyDtoH,
  memcpyHtoDAsync,
  memcpyDtoHAsync,
  memcpyDtoD,
  memcpyDtoDAsync,
  memcpyPeer,
  memcpyPeerAsync,
  memsetD8,
  memsetD16,
  memsetD32,
  memsetD8Async,
  memsetD16Async,
  memsetD32Async,
  memsetD2D8,
  memsetD2D16,
  memsetD2D32,
  memsetD2D8Async,
  memsetD2D16Async,
  memsetD2D32Async,
  Memcpy2D,
  Memcpy3D,
  Memcpy3DPeer,
};
