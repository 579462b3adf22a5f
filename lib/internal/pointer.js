'use strict';
// Device pointers: everything that stands for device memory becomes a bigint address here.
const { describe } = require('./checks');

const MAX_ADDRESS = (1n << 64n) - 1n;

/**
 * The device address of value: a DeviceAllocation (or anything with a bigint `ptr`), an object
 * with getPointer() (PointerHolderBase, pooled allocations, IPC handles...), a bigint, or a safe
 * integer number. Throws a TypeError naming the argument otherwise.
 */
function devicePointer(value, name = 'pointer') {
  if (typeof value === 'bigint') {
    if (value < 0n || value > MAX_ADDRESS) throw new RangeError(`${name} must be a 64-bit address, not ${value}`);
    return value;
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`${name} must be a non-negative safe integer address, not ${value}`);
    }
    return BigInt(value);
  }
  if (value !== null && typeof value === 'object') {
    if (typeof value.getPointer === 'function') return devicePointer(value.getPointer(), name);
    if (typeof value.ptr === 'bigint') return value.ptr;
  }
  throw new TypeError(
    `${name} must be device memory (a DeviceAllocation, an object with ` +
      `getPointer(), a bigint or a safe integer address), not ${describe(value)}`,
  );
}

/** The number of bytes known to be valid at value's address, or Infinity where unknown (raw addresses). */
function deviceExtent(value) {
  if (value !== null && typeof value === 'object' && typeof value.size === 'number') return value.size;
  return Infinity;
}

// Throws a RangeError when bytes do not fit in the device memory `memory` stands for.
function fits(bytes, memory, what) {
  const extent = deviceExtent(memory);
  if (bytes > extent) {
    throw new RangeError(`${what}: ${bytes} bytes do not fit in ${extent} bytes of device memory`);
  }
}

module.exports = { devicePointer, deviceExtent, fits };
