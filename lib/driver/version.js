'use strict';
const binding = require('../internal/binding');
const { version } = require('../../package.json');

const [text, status = ''] = version.split('-');

/** cudadrv's own version: [major, minor, patch]. */
const VERSION = text.split('.').map(Number);

/** [major, minor, revision] of the CUDA headers cudadrv was built against. */
function getVersion() {
  const v = binding.headerVersion();
  return [Math.floor(v / 1000), Math.floor((v % 1000) / 10), v % 10];
}

/** The installed driver's CUDA version as a number (13000 for 13.0). */
function getDriverVersion() {
  return binding.driverGetVersion();
}

module.exports = { VERSION, VERSION_STATUS: status, VERSION_TEXT: version, getVersion, getDriverVersion };
