'use strict';
// require('cudadrv/autoinit'): a new context on the default device, current on require and
// detached at process exit (PyCUDA's pycuda.autoinit).
const { Device } = require('./device');

const device = new Device(process.env.CUDA_DEVICE ? Number(process.env.CUDA_DEVICE) : 0);
const context = device.makeContext();
process.once('exit', () => context.detach());

module.exports = { device, context };
