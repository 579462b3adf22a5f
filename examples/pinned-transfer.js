#!/usr/bin/env node
'use strict';
// Pageable versus page-locked (pinned) host memory: how fast each copies to the GPU and back.
// Prints one line per size: GB/s host→device and device→host, for a plain Float32Array and for
// an array from pagelockedEmpty(); then checks that every byte made the round trip.
const cuda = require('cudadrv');

if (!cuda.isAvailable()) {
  console.error('No CUDA driver or device here: this example needs a GPU.');
  process.exit(1);
}

const context = new cuda.Device(0).makeContext();
const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);

// GB/s of `reps` copies made by copy(), ended by a stream synchronize (Async copies return at once).
function bandwidth(bytes, reps, copy) {
  copy(); // warm-up
  stream.synchronizeSync();
  const start = process.hrtime.bigint();
  for (let i = 0; i < reps; i++) copy();
  stream.synchronizeSync();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return (bytes * reps) / seconds / 1e9;
}

const rows = [];
for (const mib of [1, 8, 64]) {
  const length = (mib << 20) / 4;
  const pageable = new Float32Array(length).map((_, i) => Math.sin(i));
  const pinned = cuda.pagelockedEmpty(length, 'float32'); // a Float32Array over page-locked memory
  pinned.set(pageable);
  const device = cuda.memAlloc(pinned.byteLength);
  const reps = Math.max(4, 512 / mib);
  rows.push({
    size: `${mib} MiB`,
    'H→D pageable': bandwidth(pinned.byteLength, reps, () => cuda.memcpyHtoDAsync(device, pageable, stream)),
    'H→D pinned': bandwidth(pinned.byteLength, reps, () => cuda.memcpyHtoDAsync(device, pinned, stream)),
    'D→H pageable': bandwidth(pinned.byteLength, reps, () => cuda.memcpyDtoHAsync(pageable, device, stream)),
    'D→H pinned': bandwidth(pinned.byteLength, reps, () => cuda.memcpyDtoHAsync(pinned, device, stream)),
  });
  // the round trip kept every value
  const back = cuda.fromDeviceLike(device, pinned);
  for (let i = 0; i < length; i++) {
    if (back[i] !== Math.fround(Math.sin(i))) throw new Error(`value ${i} did not survive the round trip`);
  }
  cuda.hostAllocationOf(pinned).free(); // or let garbage collection release it
  device.free();
}

console.log(`${new cuda.Device(0).name()}: copy bandwidth in GB/s`);
console.table(
  rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [key, typeof value === 'number' ? Number(value.toFixed(2)) : value]),
    ),
  ),
);
stream.destroy();
context.detach();
