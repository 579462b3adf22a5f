'use strict';
// Many 1D copies in one driver call (cuMemcpyBatchAsync, CUDA 13): between device memory and host
// buffers, with location hints for managed memory (the 2D and 3D batch is copies.js's).
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { Stream } = require('../driver/stream');
const { devicePointer, deviceExtent, fits } = require('../internal/pointer');
const { locationOf } = require('../internal/location');
const host = require('./host-memory');

const KEYS = ['dest', 'src', 'bytes', 'srcLocation', 'dstLocation', 'preferOverlapWithCompute'];
const HINTS = 5; // srcLocation (type, id), dstLocation (type, id), flags: as C reads them

const isHost = (value) =>
  ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof SharedArrayBuffer;

// One side of a copy for C: a Uint8Array over a host buffer, or an address.
function side(name, value) {
  if (!isHost(value)) return devicePointer(value, name);
  return check.uint8View(name, host.hostView(name, value));
}

// The bytes of copy: given, else a host side's length, else src's size.
function copyBytes(copy, dest, src, name) {
  if (copy.bytes !== undefined) return check.size(`${name}.bytes`, copy.bytes);
  if (src instanceof Uint8Array) return src.length;
  if (dest instanceof Uint8Array) return dest.length;
  const extent = deviceExtent(copy.src);
  if (extent === Infinity) throw new TypeError(`${name}.bytes is required: neither side has a size`);
  return extent;
}

/**
 * Makes every copy of `copies` in one call on stream (a Stream of yours: the driver refuses the
 * default stream). Each is `{ dest, src, bytes?, srcLocation?, dstLocation?,
 * preferOverlapWithCompute? }`: dest and src device memory or host buffers, bytes by default the
 * host side's length (else src's size), the locations hints for managed memory. Copies within a
 * batch run in no set order. Pageable (ordinary) host sources are read before this returns and
 * pageable destinations filled before it returns, as memcpyHtoDAsync/memcpyDtoHAsync do; page-locked
 * and managed buffers are kept alive until the stream has passed the copies. A capture refuses
 * batches (driver 13.0).
 */
function memcpyBatchAsync(copies, stream) {
  check.list('copies', copies, 'an array of { dest, src, bytes? }');
  if (copies.length === 0) throw new RangeError('memcpyBatchAsync(): copies is empty');
  check.instance('stream', stream, Stream, ' (the driver refuses the default stream for batches)');
  const ops = [];
  const hints = new Int32Array(HINTS * copies.length);
  copies.forEach((copy, i) => {
    const name = `copies[${i}]`;
    if (copy === null || typeof copy !== 'object')
      throw new TypeError(`${name} must be an object, not ${check.describe(copy)}`);
    check.keys(copy, KEYS, name);
    const dest = side(`${name}.dest`, copy.dest);
    const src = side(`${name}.src`, copy.src);
    const bytes = copyBytes(copy, dest, src, name);
    if (!(dest instanceof Uint8Array)) fits(bytes, copy.dest, `${name}: dest`);
    if (!(src instanceof Uint8Array)) fits(bytes, copy.src, `${name}: src`);
    if (copy.srcLocation !== undefined) hints.set(locationOf(`${name}.srcLocation`, copy.srcLocation), HINTS * i);
    if (copy.dstLocation !== undefined) hints.set(locationOf(`${name}.dstLocation`, copy.dstLocation), HINTS * i + 2);
    const overlap = copy.preferOverlapWithCompute ?? false;
    if (typeof overlap !== 'boolean') throw new TypeError(`${name}.preferOverlapWithCompute must be a boolean`);
    hints[HINTS * i + 4] = overlap ? 1 : 0;
    ops.push(dest, src, bytes);
  });
  binding.memcpyBatchAsync(ops, hints, stream);
}

module.exports = { memcpyBatchAsync };
