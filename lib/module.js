'use strict';
// Modules: loaded code (PTX, cubin, fatbin) and the kernels in it. Filled in by the "Modules and
// kernels" issue; the contract others rely on: new Module(image, { options, messageHandler }).
const { RuntimeError } = require('./errors');

class Module {
  constructor() {
    throw new RuntimeError('loading modules arrives with the "Modules and kernels" issue');
  }
}

module.exports = { Module };
