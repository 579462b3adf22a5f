'use strict';
// Devices: CUdevice ordinals with their names, attributes and contexts.
const binding = require('../internal/binding');
const { DeviceAttribute, P2PAttribute } = require('./constants');
const check = require('../internal/checks');
const { camelCase } = require('../internal/names');

// Contexts are made in context.js, which requires this module and puts its makers here when it
// loads (lib/index.js loads it): { create(device, flags), retainPrimary(device) }.
const contextMakers = {};

const PCI_BUS_ID = /^(?:[0-9a-fA-F]{1,8}:)?[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}(?:\.[0-7])?$/;

/** A CUDA device, by ordinal (`new Device(0)`) or PCI bus id (`new Device('0000:3b:00.0')`). */
class Device {
  constructor(ordinalOrBusId) {
    if (typeof ordinalOrBusId === 'string') {
      if (!PCI_BUS_ID.test(ordinalOrBusId)) {
        throw new TypeError(
          `malformed PCI bus id ${JSON.stringify(ordinalOrBusId)}: expected ` +
            '"domain:bus:device.function" such as "0000:3b:00.0"',
        );
      }
      this.handle = binding.deviceGetByPCIBusId(ordinalOrBusId);
    } else {
      check.integer('device ordinal', ordinalOrBusId, 0, 2147483647);
      const count = binding.deviceGetCount();
      if (ordinalOrBusId >= count) {
        throw new RangeError(
          `device ordinal ${ordinalOrBusId} is out of range: this machine has ` +
            `${count} CUDA device${count === 1 ? '' : 's'}` +
            (count ? ` (0 to ${count - 1})` : ''),
        );
      }
      this.handle = binding.deviceGet(ordinalOrBusId);
    }
    Object.freeze(this);
  }

  /** The CUdevice ordinal. */
  get ordinal() {
    return this.handle;
  }

  /** Number of CUDA devices. */
  static count() {
    return binding.deviceGetCount();
  }

  name() {
    return binding.deviceGetName(this.handle);
  }

  pciBusId() {
    return binding.deviceGetPCIBusId(this.handle);
  }

  /** [major, minor] */
  computeCapability() {
    return [
      this.getAttribute(DeviceAttribute.COMPUTE_CAPABILITY_MAJOR),
      this.getAttribute(DeviceAttribute.COMPUTE_CAPABILITY_MINOR),
    ];
  }

  /** Bytes of device memory. */
  totalMemory() {
    return binding.deviceTotalMem(this.handle);
  }

  /** The 16-byte UUID as a Buffer. */
  uuid() {
    return binding.deviceGetUuid(this.handle);
  }

  getAttribute(attribute) {
    check.member('attribute', attribute, DeviceAttribute, 'DeviceAttribute');
    return binding.deviceGetAttribute(attribute, this.handle);
  }

  /** Every attribute the driver reports for this device, keyed by its DeviceAttribute name. */
  getAttributes() {
    const result = {};
    for (const [name, value] of Object.entries(DeviceAttribute)) {
      if (name === 'MAX') continue;
      try {
        result[name] = binding.deviceGetAttribute(value, this.handle);
      } catch (error) {
        if (error.code !== 1) throw error; // attributes this driver does not know: left out
      }
    }
    return result;
  }

  /** Makes a new context on this device and makes it current (PyCUDA's make_context). */
  makeContext(flags = 0) {
    return contextMakers.create(this, flags);
  }

  /** Retains the device's primary context, the one the runtime API and other libraries share;
   * it is not made current: call push() or setCurrent(). */
  retainPrimaryContext() {
    return contextMakers.retainPrimary(this);
  }

  /** The device's streaming multiprocessors, as a resource green contexts are made of (CUDA
   * 12.4+): split it with resource.split(). */
  smResource() {
    return contextMakers.smResource(this);
  }

  /** A green context on the given SM resources (from smResource().split()): a Context whose work
   * runs on those SMs only. Not made current: call push() or setCurrent(). */
  makeGreenContext(resources) {
    return contextMakers.green(this, resources);
  }

  /** { flags, active } of the device's primary context. */
  primaryContextState() {
    return binding.devicePrimaryCtxGetState(this.handle);
  }

  /** Sets the flags (CtxFlags) the primary context is made with; on a primary context already
   * active, those the driver lets change (the scheduling flags). */
  setPrimaryContextFlags(flags) {
    binding.devicePrimaryCtxSetFlags(this.handle, check.integer('flags', flags, 0, 4294967295));
  }

  /** Destroys every allocation and all state of the primary context (cuDevicePrimaryCtxReset).
   * A LogicError while cudadrv still uses it: detach the Contexts on it first. */
  resetPrimaryContext() {
    binding.devicePrimaryCtxReset(this.handle);
  }

  /** An attribute of the link from this device to peer: a member of cuda.P2PAttribute
   * (PERFORMANCE_RANK, ACCESS_SUPPORTED, NATIVE_ATOMIC_SUPPORTED, CUDA_ARRAY_ACCESS_SUPPORTED). */
  p2pAttribute(peer, attribute) {
    check.instance('peer', peer, Device);
    return binding.deviceGetP2PAttribute(
      this.handle,
      peer.handle,
      check.member('attribute', attribute, P2PAttribute, 'P2PAttribute'),
    );
  }

  canAccessPeer(peer) {
    check.instance('peer', peer, Device);
    return binding.deviceCanAccessPeer(this.handle, peer.handle);
  }

  equals(other) {
    return other instanceof Device && other.handle === this.handle;
  }

  toString() {
    return `Device(${this.handle})`;
  }
}

// One getter per attribute: dev.maxThreadsPerBlock, dev.clockRate, ...
for (const [name, value] of Object.entries(DeviceAttribute)) {
  const property = camelCase(name);
  if (name === 'MAX' || property in Device.prototype) continue;
  Object.defineProperty(Device.prototype, property, {
    get() {
      return binding.deviceGetAttribute(value, this.handle);
    },
    configurable: true,
  });
}

module.exports = { Device, contextMakers };
