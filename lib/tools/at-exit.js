'use strict';
// The exit of autoinit and autoprimaryctx: the context is detached when the process exits, and
// nothing is printed nor the exit code changed whatever state the program left it in.
const { clearContextCaches } = require('./memoize');

function atExit(context) {
  process.once('exit', () => {
    try {
      clearContextCaches();
      context.detach();
    } catch {
      // At exit nothing can be done about a context that would not detach; the driver reclaims it.
    }
  });
}

module.exports = { atExit };
