'use strict';
// Where cudadrv caches the kernels it compiles (lib/compiler/cache.js).
const os = require('os');
const path = require('path');
const { explainDenoPermission } = require('../internal/deno');

/** The directory compiles cache in, given the cacheDir option; null when caching is off. */
function cacheDirFor(option) {
  const disabled = process.env.CUDADRV_DISABLE_CACHE;
  if ((disabled && disabled !== '0') || option === false) return null;
  if (typeof option === 'string') return path.resolve(option);
  if (process.env.CUDADRV_CACHE_DIR) return path.resolve(process.env.CUDADRV_CACHE_DIR);
  const base = process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  return path.join(path.resolve(base), 'cudadrv');
}

function homedir() {
  try {
    return os.homedir();
  } catch (error) {
    throw explainDenoPermission(error);
  }
}

module.exports = { cacheDirFor };
