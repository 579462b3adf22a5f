'use strict';
// The key under which an object offers kernels its 8-byte handle (texture and surface objects):
// lib/kernel/packing.js passes v[HANDLE_ARGUMENT] for such an argument.
const HANDLE_ARGUMENT = Symbol('cudadrv: passed to kernels as an 8-byte handle');

module.exports = { HANDLE_ARGUMENT };
