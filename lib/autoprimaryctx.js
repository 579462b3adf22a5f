'use strict';
// require('cudadrv/autoprimaryctx'): the default device's primary context, made current on
// require, released at process exit. The primary context is the one every other CUDA library
// in the process shares.
const { Device } = require('./device');

const device = new Device(process.env.CUDA_DEVICE ? Number(process.env.CUDA_DEVICE) : 0);
const context = device.retainPrimaryContext();
context.push();
process.once('exit', () => context.detach());

module.exports = { device, context };
