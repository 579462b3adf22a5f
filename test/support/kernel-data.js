'use strict';
// Random data for the tests of modules and kernels, and a binary16 decoder that does not share
// code with the one under test.

function randomInt(lo, hi) {
  return lo + Math.floor(Math.random() * (hi - lo + 1));
}

// A random integer of `bits` bits, signed or not, as a bigint.
function randomBigInt(bits, signed) {
  let v = 0n;
  for (let i = 0; i < bits; i += 16) v = (v << 16n) | BigInt(randomInt(0, 65535));
  v &= (1n << BigInt(bits)) - 1n;
  return signed ? BigInt.asIntN(bits, v) : v;
}

// n standard normal floats.
function normals(n) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  }
  return out;
}

// binary16 bits → number.
function halfValue(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

module.exports = { randomInt, randomBigInt, normals, halfValue };
