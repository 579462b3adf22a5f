'use strict';
// Data and CPU references for copy tests (test/memory/device-memory.test.js, and the two-device
// copies of test/driver/two-gpus.test.js).
const crypto = require('crypto');
const cuda = require('../..');

// Random bytes, never all zeros.
function random(bytes) {
  const data = crypto.randomBytes(bytes);
  data[0] |= 1;
  return data;
}

// CPU reference of a 2D/3D copy: width bytes by height rows by depth slices, each side at
// (x, y, z) with its pitch and rows per slice (h).
function referenceCopy(src, s, dst, d, width, height, depth = 1) {
  for (let z = 0; z < depth; z++) {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        dst[d.x + ((d.z + z) * d.h + d.y + y) * d.pitch + x] = src[s.x + ((s.z + z) * s.h + s.y + y) * s.pitch + x];
      }
    }
  }
}

// A Memcpy3DPeer of a box (30 × 6 × 2 bytes from (4, 3, 1) of a 64 × 10 × z source to (1, 1, 0) of
// a 32 × 8 × z destination), and what it does to dst's bytes given src's.
function peerBoxCopy(src, srcContext, dst, dstContext) {
  const peer = new cuda.Memcpy3DPeer();
  peer.setSrcDevice(src);
  peer.setSrcContext(srcContext);
  peer.setDstDevice(dst);
  peer.setDstContext(dstContext);
  const [srcPitch, srcHeight, dstPitch, dstHeight] = [64, 10, 32, 8];
  const box = { srcXInBytes: 4, srcY: 3, srcZ: 1, dstXInBytes: 1, dstY: 1, dstZ: 0 };
  return Object.assign(peer, box, { srcPitch, srcHeight, dstPitch, dstHeight, widthInBytes: 30, height: 6, depth: 2 });
}
function peerBoxReference(srcBytes, dstBytes) {
  referenceCopy(
    srcBytes,
    { x: 4, y: 3, z: 1, pitch: 64, h: 10 },
    dstBytes,
    { x: 1, y: 1, z: 0, pitch: 32, h: 8 },
    30,
    6,
    2,
  );
  return dstBytes;
}

module.exports = { random, referenceCopy, peerBoxCopy, peerBoxReference };
