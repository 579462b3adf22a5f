'use strict';
// Loads the compiled addon (build/Release/cudadrv.node), registered once with the error factory.
const path = require('path');

function load() {
  const file = path.join(__dirname, '..', '..', 'build', 'Release', 'cudadrv.node');
  try {
    return require(file);
  } catch (error) {
    error.message =
      `cudadrv: the native addon could not be loaded from ${file} (${error.message}); ` +
      'run "npm rebuild cudadrv" with the CUDA toolkit headers installed';
    throw error;
  }
}

const addon = load();
// No thread of the addon may still run in NVRTC or the driver when exit() runs their destructors:
// the process waits here for compiles in flight and the background queues (src/core/threads.c).
process.once('exit', addon.drainThreads);

module.exports = addon;
