'use strict';
// Memory and driver objects whose JS owners died, released on demand: what an out-of-memory error
// is retried after (as PyCUDA does for allocations).
const binding = require('./binding');
const { MemoryError } = require('../driver/errors');

/**
 * A full garbage collection, then the release of device and host memory whose JS owners it found
 * dead, and of what the addon's release thread had queued (a green context goes with the last
 * memory made in it). Node runs finalizers later (from a setImmediate), so this does not wait for
 * them: every allocation holds a weak reference to its owner, and those the collection cleared
 * are released here. The collection is global.gc() where --expose-gc gave it; otherwise V8 is
 * told of a vast amount of external memory (taken back at once), on which it collects fully.
 * Returns the bytes released.
 */
function collectGarbage() {
  const gc = typeof globalThis.gc === 'function' ? globalThis.gc : null;
  if (gc) gc();
  return binding.memReclaim(!gc);
}

/** Runs make(); on MemoryError, collects garbage once and runs it again. */
function retryOutOfMemory(make) {
  try {
    return make();
  } catch (error) {
    if (!(error instanceof MemoryError)) throw error;
    collectGarbage();
    return make();
  }
}

module.exports = { collectGarbage, retryOutOfMemory };
