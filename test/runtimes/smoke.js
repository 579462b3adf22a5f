'use strict';
// The smoke subset that Bun and Deno run (test/package/runtimes.test.js), in a process whose
// libcuda.so.1 is the stand-in driver: require, errors, a compile with NVRTC, memory, a launch
// and the Promise of a wait. It checks what JS sees with assert, and prints as JSON what the
// parent checks the driver's log against.
const assert = require('assert');
const cuda = require('../..');
const { compile, compileSync, CompileError } = require('../../lib/compiler');

async function main() {
  const esm = await import('../../lib/index.mjs');
  assert.strictEqual(esm.memAlloc, cuda.memAlloc, 'the ES module exports what require gives');
  assert.strictEqual(cuda.isAvailable(), true);
  cuda.init();

  // Errors: bad input from JS, and a failure the driver reports.
  assert.throws(() => new cuda.Device(7), { name: 'RangeError' });
  assert.throws(() => cuda.memAlloc(-1), { name: 'RangeError' });
  assert.throws(() => cuda.memAlloc(64), cuda.LogicError, 'no context is current');

  // NVRTC, on this thread (through the cache the environment names) and off it: the PTX names
  // the kernel.
  const source = 'extern "C" __global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }';
  const ptx = compileSync(source, { code: 'compute_80' }).toString();
  assert.match(ptx, /\.entry twice/);
  const again = await compile(source, { code: 'compute_80', cacheDir: false });
  assert.strictEqual(again.toString(), ptx);
  assert.throws(() => compileSync('this is not C++', { cacheDir: false }), CompileError);

  // Memory: random bytes there and back.
  const ctx = new cuda.Device(0).makeContext();
  const host = new Float32Array(1024).map(() => Math.random());
  const dest = cuda.memAlloc(host.byteLength);
  cuda.memcpyHtoD(dest, host);
  const back = new Float32Array(host.length);
  cuda.memcpyDtoH(back, dest);
  assert.deepStrictEqual(back, host);
  assert.throws(() => cuda.memcpyDtoH(new Float32Array(2048), dest), { name: 'RangeError' });

  // A launch on a stream, and a wait that returns a Promise (its thread calls back into JS).
  const module = new cuda.Module('entry add 8 8 4');
  const stream = new cuda.Stream();
  const n = Math.floor(Math.random() * 2 ** 31);
  module.getFunction('add')(dest, dest, cuda.int32(n), { block: 32, grid: 4, stream });
  await stream.synchronize();
  assert.strictEqual(await stream.launchHostFunc(() => n + 1), n + 1);
  const event = new cuda.Event().record(stream);
  await event.synchronize();

  const pointer = String(dest.ptr);
  dest.free();
  cuda.Context.pop();
  ctx.detach();
  console.log(JSON.stringify({ dest: pointer, n }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
