'use strict';
/**
 * cudadrv: the CUDA Driver API for Node.js, in the shape of PyCUDA's pycuda.driver.
 * `const cuda = require('cudadrv')`.
 */
const binding = require('./binding');
const errors = require('./errors');
const constants = require('./constants');
const { Device } = require('./device');
const { Context } = require('./context');
const { Stream } = require('./stream');
const { Event } = require('./event');
const versions = require('./version');
const profiler = require('./profiler');
const memory = require('./memory');
const hostMemory = require('./host-memory');
const module_ = require('./module');
const kernel = require('./kernel');
const graph = require('./graph');
const array = require('./array');
const { nvrtcVersion } = require('./compiler-nvrtc');

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
    get: () => require(`./${name}`),
    enumerable: true,
  });
}
