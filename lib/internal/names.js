'use strict';
// Names: the driver's UPPER_SNAKE enum members as the camelCase properties lib/ gives them.

/** MAX_THREADS_PER_BLOCK → maxThreadsPerBlock. */
function camelCase(upper) {
  return upper.toLowerCase().replace(/_([a-z0-9])/g, (m, c) => c.toUpperCase());
}

module.exports = { camelCase };
