'use strict';
// The 2D and 3D batch of test/memory/placement.test.js (stand-in) and memory-gpu.test.js (GPU):
// boxes between page-locked, pageable, pitched device memory and a CUDA array in one
// memcpy3DBatchAsync, then the array back in another, each checked against the CPU; the checks of
// bad copies after.
const assert = require('assert');
const { random, referenceCopy } = require('./copy-data');

function batch3dScenario(cuda) {
  const stream = new cuda.Stream();
  const box = (copy, fields) => Object.assign(copy, fields);
  // src: 64 x 10 x 3 bytes, page-locked
  const source = cuda.pagelockedEmpty(64 * 10 * 3, 'uint8');
  source.set(random(source.length));
  const d0 = cuda.toDevice(random(64 * 10 * 3));
  const before = cuda.fromDevice(d0, 64 * 10 * 3, 'uint8');
  const d1 = cuda.memAlloc(32 * 8 * 3);
  cuda.memsetD8(d1, 0, 32 * 8 * 3);
  const pageable = new Uint8Array(32 * 8);
  const array = new cuda.CudaArray({ width: 8, height: 4, depth: 2, format: cuda.ArrayFormat.FLOAT, numChannels: 1 });
  const up = new cuda.Memcpy3D();
  up.setSrcHost(source);
  up.setDstDevice(d1);
  box(up, {
    srcXInBytes: 4,
    srcY: 3,
    srcZ: 1,
    srcPitch: 64,
    srcHeight: 10,
    dstXInBytes: 1,
    dstY: 1,
    dstPitch: 32,
    dstHeight: 8,
    widthInBytes: 30,
    height: 6,
    depth: 2,
  });
  const down = new cuda.Memcpy2D();
  down.setSrcDevice(d0);
  down.setDstHost(pageable);
  box(down, { srcXInBytes: 8, srcY: 2, srcPitch: 64, dstPitch: 32, widthInBytes: 20, height: 5 });
  const toArray = new cuda.Memcpy3D();
  toArray.setSrcDevice(d0);
  toArray.setDstArray(array);
  box(toArray, { srcPitch: 64, srcHeight: 10, widthInBytes: 32, height: 4, depth: 2 });
  cuda.memcpy3DBatchAsync([up, down, toArray], stream);
  stream.synchronizeSync();
  const expectD1 = new Uint8Array(32 * 8 * 3);
  referenceCopy(
    source,
    { x: 4, y: 3, z: 1, pitch: 64, h: 10 },
    expectD1,
    { x: 1, y: 1, z: 0, pitch: 32, h: 8 },
    30,
    6,
    2,
  );
  assert.deepStrictEqual(cuda.fromDevice(d1, 32 * 8 * 3, 'uint8'), expectD1);
  const expectPageable = new Uint8Array(32 * 8);
  referenceCopy(
    before,
    { x: 8, y: 2, z: 0, pitch: 64, h: 10 },
    expectPageable,
    { x: 0, y: 0, z: 0, pitch: 32, h: 8 },
    20,
    5,
  );
  assert.deepStrictEqual(pageable, expectPageable);
  // the array back to pageable memory, in a batch of its own
  const back = new Uint8Array(32 * 4 * 2);
  const fromArray = new cuda.Memcpy3D();
  fromArray.setSrcArray(array);
  fromArray.setDstHost(back);
  box(fromArray, { dstPitch: 32, dstHeight: 4, widthInBytes: 32, height: 4, depth: 2 });
  cuda.memcpy3DBatchAsync([fromArray], stream);
  const expectBack = new Uint8Array(32 * 4 * 2);
  referenceCopy(
    before,
    { x: 0, y: 0, z: 0, pitch: 64, h: 10 },
    expectBack,
    { x: 0, y: 0, z: 0, pitch: 32, h: 4 },
    32,
    4,
    2,
  );
  assert.deepStrictEqual(back, expectBack, 'a pageable destination is filled before the call returns');
  box(toArray, { srcXInBytes: 0, dstXInBytes: 2, widthInBytes: 8, height: 1, depth: 1 });
  assert.throws(() => cuda.memcpy3DBatchAsync([toArray], stream), {
    name: 'RangeError',
    message: /offsets and pitches must be whole elements of the array/,
  });
  assert.throws(() => cuda.memcpy3DBatchAsync([new cuda.Memcpy3DPeer()], stream), {
    name: 'TypeError',
    message: 'copies[0] must be a Memcpy2D or Memcpy3D, not a Memcpy3DPeer',
  });
  assert.throws(() => cuda.memcpy3DBatchAsync([up], null), { name: 'TypeError', message: /stream must be a Stream/ });
}

module.exports = { batch3dScenario };
