'use strict';
// Reading a file whole, bounded: never blocking on a FIFO, never reading a device for ever.
const fs = require('fs');
const binding = require('./binding');
const { RuntimeError } = require('../driver/errors');

/** The bytes of the regular file at path; a RangeError where it has more than limit bytes, a
 * RuntimeError `${what}: why` where it cannot be read whole (absent, not a regular file...). */
function readBounded(file, limit, what) {
  const data = binding.readFile(file, true, limit);
  if (data !== null) return data;
  let why = 'it could not be read whole';
  try {
    if (!fs.statSync(file).isFile()) why = 'it is not a regular file';
  } catch (error) {
    why = error.code === 'ENOENT' ? 'there is no such file (ENOENT)' : error.message;
  }
  throw new RuntimeError(`${what}: ${why}`);
}

module.exports = { readBounded };
