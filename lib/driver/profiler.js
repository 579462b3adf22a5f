'use strict';
const binding = require('../internal/binding');
const { ProfilerOutputMode } = require('./constants');
const check = require('../internal/checks');

/** cuProfilerInitialize (absent from CUDA 12+ headers; called where the driver still has it). */
function initializeProfiler(configFile, outputFile, outputMode = ProfilerOutputMode.KEY_VALUE_PAIR) {
  if (typeof configFile !== 'string') throw new TypeError('configFile must be a path string');
  if (typeof outputFile !== 'string') throw new TypeError('outputFile must be a path string');
  check.member('outputMode', outputMode, ProfilerOutputMode, 'ProfilerOutputMode');
  binding.profilerInitialize(configFile, outputFile, outputMode);
}

/** Starts collecting profile data (cuProfilerStart). */
function startProfiler() {
  binding.profilerStart();
}

function stopProfiler() {
  binding.profilerStop();
}

module.exports = { initializeProfiler, startProfiler, stopProfiler };
