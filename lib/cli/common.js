'use strict';
// What the commands share.

/** A wrong command line: exit code 2, with the usage. */
class UsageError extends Error {}

/** '13.0' for the CUDA version number 13000. */
function cudaVersion(v) {
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}

module.exports = { UsageError, cudaVersion };
