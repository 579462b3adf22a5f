'use strict';
/**
 * cudadrv: the CUDA Driver API for Node.js, in the shape of PyCUDA's pycuda.driver.
 * `const cuda = require('cudadrv')`.
 */
// lib/'s modules load through V8's code cache (lib/code-cache.js)
const load = require('./code-cache').requireFrom(module);
const binding = load('./binding');
const errors = load('./errors');
const constants = load('./constants');
const { Device } = load('./device');
const { Context } = load('./context');
const { Stream } = load('./stream');
const { Event } = load('./event');
const versions = load('./version');
const profiler = load('./profiler');
const memory = load('./memory');
const hostMemory = load('./host-memory');
const module_ = load('./module');
const kernel = load('./kernel');
const graph = load('./graph');
const array = load('./array');
const { nvrtcVersion } = load('./compiler-nvrtc');

/** true when the CUDA driver loads and initialises here; never throws. */
function isAvailable() {
  return binding.isAvailable();
}

/** cuInit(flags). Optional: the first call that needs the driver initialises it. */
function init(flags = 0) {
  binding.init(flags);
}

/** Counters of cleanups that finalizers could not do: { cleanupsFailed, cleanupsSkipped }. */
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
    get: () => load(`./${name}`),
    enumerable: true,
  });
}
