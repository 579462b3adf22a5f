'use strict';
// What the commands share.

/** A wrong command line: exit code 2, with the usage. */
class UsageError extends Error {}

/** '13.0' for the CUDA version number 13000. */
function cudaVersion(v) {
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}

/**
 * On a terminal (stream.isTTY), a line saying what is under way and for how long, once it has taken
 * `after` ms, redrawn every `every` ms; returns stop(), which clears it. Elsewhere (a pipe, a log)
 * nothing is written.
 */
function elapsedLine(stream, what, { after = 2000, every = 1000 } = {}) {
  if (!stream.isTTY) return () => {};
  const start = Date.now();
  let shown = false;
  let timer = null;
  const draw = () => {
    shown = true;
    stream.write(`\rcudadrv: ${what}... ${Math.round((Date.now() - start) / 1000)} s`);
    timer = setTimeout(draw, every);
  };
  timer = setTimeout(draw, after);
  return () => {
    clearTimeout(timer);
    if (shown) stream.write('\r\x1b[K'); // the line cleared for what follows
  };
}

module.exports = { UsageError, cudaVersion, elapsedLine };
