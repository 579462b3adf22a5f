'use strict';
// What the linking tests share (compiler/linker.test.js, and linker-gpu.test.js on a device): a
// test file requiring another would register its tests a second time under Mocha's --parallel.

// A device function in one source, called by a kernel in another; random names, so that no cache
// entry of an earlier run serves them.
function sources() {
  const tag = Math.random().toString(36).slice(2, 10);
  const fn = `twice_${tag}`;
  const kernel = `apply_${tag}`;
  return {
    fn,
    kernel,
    library: `extern "C" __device__ float ${fn}(float x) { return 2.0f * x; }`,
    main:
      `extern "C" __device__ float ${fn}(float x);\n` +
      `extern "C" __global__ void ${kernel}(float *p) { p[threadIdx.x] = ${fn}(p[threadIdx.x]); }`,
  };
}

// The names of an ELF file's symbols (.symtab's entries, read through .strtab).
function elfSymbols(image) {
  const shoff = Number(image.readBigUInt64LE(0x28));
  const shentsize = image.readUInt16LE(0x3a);
  const shnum = image.readUInt16LE(0x3c);
  const section = (i) => {
    const at = shoff + i * shentsize;
    return {
      type: image.readUInt32LE(at + 4),
      offset: Number(image.readBigUInt64LE(at + 0x18)),
      size: Number(image.readBigUInt64LE(at + 0x20)),
      link: image.readUInt32LE(at + 0x28),
    };
  };
  const names = [];
  for (let i = 0; i < shnum; i++) {
    const symtab = section(i);
    if (symtab.type !== 2) continue; // SHT_SYMTAB
    const strtab = section(symtab.link);
    for (let at = symtab.offset; at < symtab.offset + symtab.size; at += 24) {
      const start = strtab.offset + image.readUInt32LE(at);
      names.push(image.toString('latin1', start, image.indexOf(0, start)));
    }
  }
  return names;
}

// Dynamic parallelism: a kernel that launches another, which needs the device runtime.
const DYNAMIC_SOURCE = `
extern "C" __global__ void child(float *p) { p[threadIdx.x] *= 2.0f; }
extern "C" __global__ void parent(float *p, int n) { if (threadIdx.x == 0) child<<<1, n>>>(p); }
`;

module.exports = { sources, elfSymbols, DYNAMIC_SOURCE };
