'use strict';
// The default device and context (PyCUDA's make_default_context and get_default_device): the
// device named by CUDA_DEVICE, else by ~/.cuda-device (or its older name ~/.cuda_device), else the
// first device where a context can be made.
const binding = require('../internal/binding');
const os = require('os');
const path = require('path');
const { Device } = require('../driver/device');
const { CudaError, RuntimeError } = require('../driver/errors');
const check = require('../internal/checks');

const ORDINAL = /^\d+$/;
const DEVICE_FILES = ['.cuda-device', '.cuda_device'];

/** Makes a new context on dev, current on this thread (makeDefaultContext's default ctxMaker). */
function makeNewContext(dev) {
  return dev.makeContext();
}

/** Retains dev's primary context and makes it current (the ctxMaker of cudadrv/autoprimaryctx). */
function retainPrimaryContext(dev) {
  const ctx = dev.retainPrimaryContext();
  ctx.push();
  return ctx;
}

// The real machine; tests pass their own.
const machine = {
  env: process.env,
  homedir: () => os.homedir(),
  // A FIFO or device there is no file either (reading it could block, or never end).
  readFile: (file) => {
    const data = binding.readFile(file, true, 4096);
    if (data === null) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'ENOENT' });
    return data.toString();
  },
  deviceCount: () => Device.count(),
  device: (id) => new Device(id),
};

// The device the user asked for, as { id, source }, or null when nobody asked.
function requestedDevice(m) {
  const fromEnv = m.env.CUDA_DEVICE;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return parseDevice(fromEnv, 'CUDA_DEVICE');
  let home;
  try {
    home = m.homedir();
  } catch {
    return null; // no home directory: no file to read
  }
  for (const name of DEVICE_FILES) {
    const file = path.join(home, name);
    let text;
    try {
      text = m.readFile(file);
    } catch (error) {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') continue;
      throw error;
    }
    if (text.trim() !== '') return parseDevice(text, file);
  }
  return null;
}

function parseDevice(text, source) {
  const value = text.trim();
  if (ORDINAL.test(value)) return { id: Number(value), source };
  if (value.includes(':')) return { id: value, source }; // a PCI bus id; Device checks its form
  throw new TypeError(
    `${source} must hold a device ordinal such as 0, or a PCI bus id such as ` +
      `0000:3b:00.0, not ${JSON.stringify(value)}`,
  );
}

// Runs make(), adding to the message of what it throws which setting chose the device.
function chosen(source, id, make) {
  try {
    return make();
  } catch (error) {
    if (error instanceof Error) error.message = `device ${id} (chosen by ${source}): ${error.message}`;
    throw error;
  }
}

function defaultContext(ctxMaker, m) {
  check.func('ctxMaker', ctxMaker);
  const request = requestedDevice(m);
  if (request) return chosen(request.source, request.id, () => ctxMaker(m.device(request.id)));
  const count = m.deviceCount();
  if (count === 0) {
    throw new RuntimeError(
      'makeDefaultContext(): the CUDA driver reports no device; check that the ' +
        'GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES)',
    );
  }
  const failures = [];
  for (let ordinal = 0; ordinal < count; ordinal++) {
    try {
      return ctxMaker(m.device(ordinal));
    } catch (error) {
      if (!(error instanceof CudaError)) throw error;
      failures.push({ ordinal, error });
    }
  }
  const lines = failures.map(({ ordinal, error }) => `\n  device ${ordinal}: ${error.message}`).join('');
  const error = new RuntimeError(
    `makeDefaultContext(): no context could be made on any of the ${count} ` +
      `device${count === 1 ? '' : 's'}:${lines}`,
  );
  /** Each device's own failure, in device order. */
  error.errors = failures.map((f) => f.error);
  throw error;
}

/**
 * A context on the default device, made by ctxMaker(device) (default: a new context, current on
 * this thread). The device is CUDA_DEVICE's (an ordinal or a PCI bus id), else the one in
 * ~/.cuda-device or ~/.cuda_device, else the first device where ctxMaker succeeds; when it fails on
 * every device, the RuntimeError lists each device's failure (and carries them as `errors`).
 */
function makeDefaultContext(ctxMaker = makeNewContext) {
  return defaultContext(ctxMaker, machine);
}

let warned = false;

function defaultDevice(fallback, m) {
  if (!warned) {
    warned = true;
    process.emitWarning('getDefaultDevice() is deprecated; use makeDefaultContext() instead', 'DeprecationWarning');
  }
  const request = requestedDevice(m);
  if (request) return chosen(request.source, request.id, () => m.device(request.id));
  return m.device(fallback);
}

/**
 * Deprecated (warns once): the Device named by CUDA_DEVICE or ~/.cuda-device, else `fallback`.
 * Use makeDefaultContext(), which also tries every device in turn.
 */
function getDefaultDevice(fallback = 0) {
  return defaultDevice(fallback, machine);
}

module.exports = {
  makeDefaultContext,
  getDefaultDevice,
  makeNewContext,
  retainPrimaryContext,
  // for tests: the same with a stubbed machine
  defaultContext,
  defaultDevice,
};
