'use strict';
// Where unified (managed) memory lives: prefetches to a device or the host, advice, the range
// attributes that report them, and CUDA 13's batched prefetches and discards. A range is a managed
// TypedArray (all its bytes, or the first `bytes`) or device memory (a managed allocation's
// pointer and its size, or `bytes`).
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { streamArg } = require('../driver/stream');
const { MemAdvise } = require('../driver/constants');
const { Device } = require('../driver/device');
const { devicePointer, deviceExtent, fits } = require('../internal/pointer');
const { locationOf, rangeLocation } = require('../internal/location');

// [memory, bytes] as C takes a range: a view of the bytes, or an address and a size.
function rangeOf(memory, bytes, what) {
  if (ArrayBuffer.isView(memory)) {
    const view = check.uint8View(`${what}: memory`, memory);
    if (bytes === undefined) return [view, undefined];
    bytes = check.size(`${what}: bytes`, bytes);
    if (bytes > view.length) throw new RangeError(`${what}: bytes ${bytes} is past the ${view.length} bytes of memory`);
    return [view.subarray(0, bytes), undefined];
  }
  const ptr = devicePointer(memory, `${what}: memory`);
  if (bytes === undefined) {
    bytes = deviceExtent(memory);
    if (bytes === Infinity) throw new TypeError(`${what}: bytes is required for a raw address`);
  }
  bytes = check.size(`${what}: bytes`, bytes);
  fits(bytes, memory, what);
  return [ptr, bytes];
}

function bytesOption(opts, what) {
  check.keys(opts, ['bytes'], what);
  return opts?.bytes;
}

/**
 * Moves the pages of memory (a managed TypedArray or managed device memory) to location ('host', a
 * Device or an ordinal, or { type, id }) in stream order: kernels there then find them local.
 */
function memPrefetchAsync(memory, location, stream = null, opts = undefined) {
  const [range, bytes] = rangeOf(memory, bytesOption(opts, 'memPrefetchAsync()'), 'memPrefetchAsync()');
  const [type, id] = locationOf('location', location);
  binding.memPrefetchAsync(range, bytes, type, id, streamArg(stream));
}

// The advice that take a location, and those that ignore it.
const WITH_LOCATION = new Set([
  MemAdvise.SET_PREFERRED_LOCATION,
  MemAdvise.SET_ACCESSED_BY,
  MemAdvise.UNSET_ACCESSED_BY,
]);

/**
 * Advises the driver on memory's use (cuda.MemAdvise): read mostly, a preferred location, accessed
 * by a device. The preferred location and the accessed-by advice take a location.
 */
function memAdvise(memory, advice, location = undefined, opts = undefined) {
  const [range, bytes] = rangeOf(memory, bytesOption(opts, 'memAdvise()'), 'memAdvise()');
  check.member('advice', advice, MemAdvise, 'MemAdvise');
  // the driver ignores the location of the other advice, yet refuses an invalid one: the host
  let [type, id] = locationOf('location', 'host');
  if (WITH_LOCATION.has(advice)) {
    if (location === undefined) throw new TypeError('memAdvise(): this advice needs a location');
    [type, id] = locationOf('location', location);
  } else if (location !== undefined) {
    throw new TypeError('memAdvise(): read-mostly advice and UNSET_PREFERRED_LOCATION take no location');
  }
  binding.memAdvise(range, bytes, advice, type, id);
}

/**
 * What was advised for memory and where it was last prefetched: `{ readMostly, preferredLocation,
 * lastPrefetchLocation, accessedBy }` (locations are `{ type, id }` or null; accessedBy lists the
 * devices' locations).
 */
function memRangeAttributes(memory, opts = undefined) {
  const [range, bytes] = rangeOf(memory, bytesOption(opts, 'memRangeAttributes()'), 'memRangeAttributes()');
  const raw = binding.memRangeAttributes(range, bytes, Math.max(1, Device.count()));
  return {
    readMostly: raw.readMostly !== 0,
    preferredLocation: rangeLocation(raw.preferredLocation),
    lastPrefetchLocation: rangeLocation(raw.lastPrefetchLocation),
    accessedBy: raw.accessedBy.map(rangeLocation),
  };
}

const BATCH = { prefetch: 0, discard: 1, discardAndPrefetch: 2 };

// One batched call of op over items ({ memory, bytes?, location? }).
function batch(op, items, stream, what) {
  check.list('items', items, `an array of { memory, bytes${op === BATCH.discard ? '' : ', location'} }`);
  if (items.length === 0) throw new RangeError(`${what}: items is empty`);
  const ranges = [];
  const locations = new Int32Array(op === BATCH.discard ? 0 : 2 * items.length);
  items.forEach((item, i) => {
    const name = `${what}: items[${i}]`;
    if (item === null || typeof item !== 'object')
      throw new TypeError(`${name} must be an object, not ${check.describe(item)}`);
    check.keys(item, op === BATCH.discard ? ['memory', 'bytes'] : ['memory', 'bytes', 'location'], name);
    ranges.push(...rangeOf(item.memory, item.bytes, name));
    if (op !== BATCH.discard) locations.set(locationOf(`items[${i}].location`, item.location), 2 * i);
  });
  binding.memBatchAsync(op, ranges, locations, streamArg(stream));
}

/** Prefetches each item ({ memory, bytes?, location }) in one call (cuMemPrefetchBatchAsync, 13.0). */
function memPrefetchBatchAsync(items, stream = null) {
  batch(BATCH.prefetch, items, stream, 'memPrefetchBatchAsync()');
}

/** Discards the contents of each item ({ memory, bytes? }): its pages are dropped rather than
 * migrated, and read as undefined values until written (cuMemDiscardBatchAsync, 13.0). */
function memDiscardBatchAsync(items, stream = null) {
  batch(BATCH.discard, items, stream, 'memDiscardBatchAsync()');
}

/** Discards each item's contents and prefetches its pages to its location (13.0). */
function memDiscardAndPrefetchBatchAsync(items, stream = null) {
  batch(BATCH.discardAndPrefetch, items, stream, 'memDiscardAndPrefetchBatchAsync()');
}

module.exports = {
  memPrefetchAsync,
  memAdvise,
  memRangeAttributes,
  memPrefetchBatchAsync,
  memDiscardBatchAsync,
  memDiscardAndPrefetchBatchAsync,
};
