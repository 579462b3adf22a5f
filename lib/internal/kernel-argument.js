'use strict';
// The key under which an object offers kernels its 8-byte handle (texture and surface objects):
// lib/kernel/packing.js passes v[HANDLE_ARGUMENT] for such an argument.
const HANDLE_ARGUMENT = Symbol('cudadrv: passed to kernels as an 8-byte handle');

// The key under which a TensorMap offers kernels its 128 bytes (a `const __grid_constant__
// CUtensorMap` parameter), and the field such an argument is: 128-byte aligned, as cuda.h declares
// CUtensorMap (the hardware needs 64). The class carries the key too, for prepare() formats.
const TENSOR_MAP = Symbol('cudadrv: passed to kernels as a 128-byte tensor map');
const TENSOR_MAP_FIELD = Object.freeze({
  char: 'M',
  name: 'a TensorMap',
  size: 128,
  align: 128,
  blob: true,
  tensorMap: true,
});

module.exports = { HANDLE_ARGUMENT, TENSOR_MAP, TENSOR_MAP_FIELD };
