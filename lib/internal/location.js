'use strict';
// Memory locations (the driver's CUmemLocation), as cudadrv takes and gives them: 'host', a
// Device or a device ordinal, or { type, id } with type 'device', 'host', 'host-numa' or
// 'host-numa-current'.
const check = require('./checks');
const { Device } = require('../driver/device');
const { MemLocationType } = require('../driver/constants');

const TYPES = {
  device: MemLocationType.DEVICE,
  host: MemLocationType.HOST,
  'host-numa': MemLocationType.HOST_NUMA,
  'host-numa-current': MemLocationType.HOST_NUMA_CURRENT,
};
const NAMES = new Map(Object.entries(TYPES).map(([name, type]) => [type, name]));
const EXPECTED = "'host', a Device, a device ordinal or { type: 'device' | 'host' | 'host-numa', id }";

/** [type, id] of a location argument; a TypeError or RangeError naming it otherwise. */
function locationOf(name, value) {
  if (value === 'host') return [TYPES.host, 0];
  if (value instanceof Device) return [TYPES.device, value.ordinal];
  if (typeof value === 'number') return [TYPES.device, check.integer(name, value, 0, 2 ** 31 - 1)];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    check.keys(value, ['type', 'id'], name);
    const { type, id = 0 } = value;
    const kind = check.choice(`${name}.type`, type, TYPES, Object.keys(TYPES).join(', '));
    return [kind, check.integer(`${name}.id`, id, 0, 2 ** 31 - 1)];
  }
  throw new TypeError(`${name} must be ${EXPECTED}, not ${check.describe(value)}`);
}

/** A location the driver gave as (type, id), for the user: { type, id }. */
function describeLocation(type, id) {
  return { type: NAMES.get(type) ?? `unknown (${type})`, id };
}

/** A range attribute's location (a device ordinal, -1 the host, -2 none) for the user. */
function rangeLocation(code) {
  if (code === -2) return null;
  return code === -1 ? describeLocation(TYPES.host, 0) : describeLocation(TYPES.device, code);
}

module.exports = { locationOf, rangeLocation };
