'use strict';
// Pools collected with their allocations, as a program that drops everything at once does: each
// round makes an IPC-capable pool (some of them small, some current, some in a context of their
// own), allocates from it on streams, writes the allocations with memsets and checks one, then
// drops the lot; collections come every few rounds, so that the pool's destroy (a finalizer, on
// the main thread) meets its allocations' frees (the reaper thread). Fuzzer seed 6464 crashes
// driver 580 in such a destroy; this is the shape of that run, without the fuzzer.
// Usage: node --expose-gc pool-collect-child.js ROUNDS; prints the rounds checked as JSON.
const assert = require('assert');
const cuda = require('../..');

const rounds = Number(process.argv[2] || 60);
const settle = () => new Promise((resolve) => setImmediate(resolve));

async function main() {
  cuda.init();
  const device = new cuda.Device(0);
  const home = device.makeContext();
  let checked = 0;
  for (let round = 0; round < rounds; round++) {
    (() => {
      const own = round % 3 === 1 ? device.makeContext() : null; // current over home until popped
      const pool = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: round % 2 ? 1 << 16 : 0 });
      if (round % 4 === 2) pool.setCurrent();
      const streams = [new cuda.Stream(), new cuda.Stream()];
      const allocations = [];
      for (let i = 0; i < 6; i++) {
        const stream = streams[i % 2];
        try {
          allocations.push(i % 3 === 2 ? cuda.memAllocAsync(4096, stream) : pool.allocate(4096, stream));
        } catch (error) {
          if (error.name !== 'MemoryError') throw error; // a pool of 64 KiB may hold none
        }
      }
      allocations.forEach((memory, i) => cuda.memsetD32Async(memory, round * 64 + i, 1024, streams[i % 2]));
      if (allocations.length) {
        streams[0].synchronize();
        const words = cuda.fromDevice(allocations[0], 1024, 'uint32');
        assert.ok(
          words.every((word) => word === round * 64),
          `round ${round}: the memset's words arrived`,
        );
        checked++;
      }
      if (round % 5 === 4) pool.exportHandle(); // a descriptor left to the collector too
      if (own) cuda.Context.pop(); // then left to the collector, which detaches it
    })();
    if (round % 3 === 2) {
      globalThis.gc();
      await settle();
    }
  }
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await settle();
  }
  home.detach();
  process.stdout.write(JSON.stringify({ rounds, checked }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
