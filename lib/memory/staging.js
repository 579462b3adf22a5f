'use strict';
// Staged copies of pageable host memory: copies between device memory and an ordinary TypedArray
// of `threshold` bytes or more go through two page-locked buffers of cudadrv's own, filled or
// drained by helper threads while the copy engine moves the other one (src/memory/staging.c).
// The buffers are freed once no staged copy has run for a while.
const binding = require('../internal/binding');
const check = require('../internal/checks');

let idleMs = 10000; // the buffers go this long after the last staged copy
let timer = null;

function release() {
  timer = null;
  if (!binding.stagingRelease()) noteStaged(); // another thread's copy held them: later
}

/** Called after each staged copy: the buffers are kept until idleMs pass without one. */
function noteStaged() {
  if (timer !== null) timer.refresh();
  else (timer = setTimeout(release, idleMs)).unref();
}

function settingsOf([enabled, threshold, bufferBytes, helpers]) {
  return { enabled, threshold, bufferBytes, helpers, idleMs };
}

/**
 * How copies of pageable host memory are staged (memcpyHtoD, memcpyDtoH and their Async forms,
 * toDevice, fromDevice, In/Out/InOut arguments, Memcpy2D and Memcpy3D): with no argument, the
 * settings; with some of `{ enabled, threshold, bufferBytes, helpers, idleMs }`, those changed, and
 * the settings after. Process-wide (workers share them) but for idleMs, each thread's own.
 */
function pageableStaging(options) {
  if (options === undefined) return settingsOf(binding.stagingSettings());
  check.keys(options, ['enabled', 'threshold', 'bufferBytes', 'helpers', 'idleMs'], 'pageableStaging()');
  const [enabled, threshold, bufferBytes, helpers, mostHelpers] = binding.stagingSettings();
  const next = { enabled, threshold, bufferBytes, helpers, ...options };
  check.boolean('enabled', next.enabled);
  next.threshold = check.size('threshold', next.threshold);
  check.integer('bufferBytes', next.bufferBytes, 4096, 2 ** 28);
  check.integer('helpers', next.helpers, 0, mostHelpers);
  if (options.idleMs !== undefined) idleMs = check.integer('idleMs', options.idleMs, 0, 2 ** 31 - 1);
  return settingsOf(binding.stagingSettings(next.enabled, next.threshold, next.bufferBytes, next.helpers));
}

module.exports = { pageableStaging, noteStaged };
