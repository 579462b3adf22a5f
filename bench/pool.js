#!/usr/bin/env node
'use strict';
// Pooled allocate+free of 1 MiB from a DeviceMemoryPool (the target: at most 1.5 µs; CuPy's pool
// takes 2.0 µs on the same machine), beside a plain memAlloc+free of 1 MiB for scale. Without a GPU
// the pool runs over a pretend allocator, which measures the pool's own JavaScript.
// Usage: node bench/pool.js [iterations]
const cuda = require('..');
const { DeviceMemoryPool, makeDefaultContext } = require('../lib/tools');

const MIB = 1 << 20;
const iterations = Number(process.argv[2]) || 1e6;
const onGpu = cuda.isAvailable() && cuda.Device.count() > 0;

// Median over rounds of the time per call of body, in microseconds.
function time(rounds, n, body) {
  const results = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    body(n);
    results.push(Number(process.hrtime.bigint() - start) / 1e3 / n);
  }
  results.sort((a, b) => a - b);
  return results[Math.floor(rounds / 2)];
}

let next = 0x7f0000000000n;
const pretend = (bytes) => {
  next += BigInt(bytes);
  return { ptr: next, size: bytes, free() {} };
};

const context = onGpu ? makeDefaultContext() : null;
const pool = new DeviceMemoryPool(onGpu ? cuda.memAlloc : pretend);
const pooled = (n) => {
  for (let i = 0; i < n; i++) pool.allocate(MIB).free();
};
pooled(1e5); // warm up: the block, the JIT
const us = time(7, iterations, pooled);
const where = onGpu ? `${context.device.name()}, memAlloc` : 'no GPU: a pretend allocator';
console.log(`pooled allocate+free 1 MiB: ${us.toFixed(3)} µs (median of 7 × ${iterations}; ${where})`);
if (onGpu) {
  const direct = (n) => {
    for (let i = 0; i < n; i++) cuda.memAlloc(MIB).free();
  };
  direct(1000);
  console.log(`memAlloc+free 1 MiB:         ${time(7, 10000, direct).toFixed(3)} µs (median of 7 × 10000)`);
  pool.freeHeld();
  context.detach();
}
