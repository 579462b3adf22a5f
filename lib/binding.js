'use strict';
// Loads the compiled addon (build/Release/cudadrv.node), registered once with the error factory.
const path = require('path');

function load() {
  const file = path.join(__dirname, '..', 'build', 'Release', 'cudadrv.node');
  try {
    return require(file);
  } catch (error) {
    error.message = `cudadrv: the native addon could not be loaded from ${file} (${error.message}); ` +
      'run "npm rebuild cudadrv" with the CUDA toolkit headers installed';
    throw error;
  }
}

module.exports = load();
