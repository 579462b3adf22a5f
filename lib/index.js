'use strict';
/**
 * cudadrv: the CUDA Driver API for Node.js, in the shape of PyCUDA's pycuda.driver.
 * `const cuda = require('cudadrv')`.
 */
const binding = require('./internal/binding');
const errors = require('./driver/errors');
const constants = require('./driver/constants');
const { Device } = require('./driver/device');
const { Context } = require('./driver/context');
const { Stream } = require('./driver/stream');
const { Event } = require('./driver/event');
const versions = require('./driver/version');
const profiler = require('./driver/profiler');
const memory = require('./memory/device-memory');
const hostMemory = require('./memory/host-memory');
const module_ = require('./kernel/module');
const kernel = require('./kernel/kernel');
const graph = require('./driver/graph');
const array = require('./memory/array');
const { nvrtcVersion } = require('./compiler/nvrtc');

/** true when the CUDA driver loads and initialises here; never throws. */
function isAvailable() {
  return binding.isAvailable();
}

/** cuInit(flags). Optional: the first call that needs the driver initialises it. */
function init(flags = 0) {
  binding.init(flags);
}

/** Counters of what finalizers could not do: { cleanupsFailed, cleanupsSkipped }, and of
 * Node-API calls that failed where nothing could be thrown (nodeApiFailures; 0 unless Node is
 * shutting down). */
function stats() {
  return binding.stats();
}

module.exports = {
  ...versions,
  ...errors,
  ...constants,
  ...profiler,
  ...memory,
  ...hostMemory,
  ...module_,
  ...kernel,
  ...graph,
  ...array,
  isAvailable,
  init,
  stats,
  nvrtcVersion,
  Device,
  Context,
  Stream,
  Event,
};

// Subpaths reachable from the namespace too, loaded on first use.
for (const name of ['compiler', 'tools']) {
  Object.defineProperty(module.exports, name, {
    get: () => require(`./${name}/index.js`),
    enumerable: true,
  });
}
