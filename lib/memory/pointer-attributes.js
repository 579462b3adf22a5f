'use strict';
// What the driver knows of any address (cuPointerGetAttributes): device memory, page-locked,
// registered or managed host memory, pool and virtual memory, or memory CUDA never saw.
const binding = require('../internal/binding');
const { MemoryType } = require('../driver/constants');
const { knownContext } = require('../driver/context');
const { devicePointer } = require('../internal/pointer');
const host = require('./host-memory');

const TYPE_NAMES = new Map(Object.entries(MemoryType).map(([name, value]) => [value, name.toLowerCase()]));
const orNull = (address) => (address === 0n ? null : address);

/**
 * The attributes of pointer (device memory of any kind, a bigint or number address, or a host
 * buffer: its first byte). For memory CUDA does not know (an ordinary TypedArray) `memoryType` is
 * null and the rest are empty.
 */
function pointerAttributes(pointer) {
  const value =
    ArrayBuffer.isView(pointer) || pointer instanceof ArrayBuffer
      ? host.hostView('pointer', pointer)
      : devicePointer(pointer, 'pointer');
  const raw = binding.pointerAttributes(value);
  const memoryType = TYPE_NAMES.get(raw.memoryType) ?? null;
  const known = memoryType !== null;
  return {
    memoryType,
    context: knownContext(raw.context),
    device: known ? raw.device : null,
    devicePointer: orNull(raw.devicePointer),
    hostPointer: orNull(raw.hostPointer),
    isManaged: raw.isManaged,
    mapped: raw.mapped,
    rangeStart: orNull(raw.rangeStart),
    rangeSize: raw.rangeSize,
    bufferId: raw.bufferId,
    memoryBlockId: raw.memoryBlockId,
    syncMemops: raw.syncMemops,
    legacyIpcCapable: raw.legacyIpcCapable,
    gpuDirectRdmaCapable: raw.gpuDirectRdmaCapable,
    allowedHandleTypes: raw.allowedHandleTypes,
    accessFlags: raw.accessFlags,
    fromPool: raw.memoryPool !== 0n,
    mappingBase: orNull(raw.mappingBase),
    mappingSize: raw.mappingSize,
  };
}

module.exports = { pointerAttributes };
