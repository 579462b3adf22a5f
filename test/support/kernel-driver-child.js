'use strict';
// One scenario of test/kernel/kernel-driver.test.js, run in a process whose libcuda.so.1 is the stand-in
// driver (test/support/fake-driver/). It checks what JS sees with assert, and prints as JSON what
// the parent needs to check the driver's log against.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const cuda = require('../..');

// Kernels of the stand-in's module text: entry <name> <parameter sizes>.
const IMAGE = [
  'entry add 8 8 4', // (float *dest, float *src, int n)
  'entry vec 1 16', // (char c, float4 v)
  'entry all 1 1 2 2 4 4 8 8 2 4 8 1 8', // every scalar type, then a pointer
  'entry empty',
  'entry wide 8 32@16', // (double d, struct of 32 bytes aligned to 16)
  'entry packed 1 8@1', // (char c, a packed struct of 8 bytes)
  'global table 256',
  'texref tex',
  'surfref surf',
].join('\n');

const SOURCE = `
  extern "C" __global__ void add(float *dest, const float *src, int n) {}
  extern "C" __global__ void vec(char c, float4 v) {}
  extern "C" __global__ void all(signed char a, unsigned char b, short c, unsigned short d, int e,
      unsigned int f, long long g, unsigned long long h, __half i, float j, double k, bool l,
      void *m) {}`;

function randomInt(lo, hi) {
  return lo + Math.floor(Math.random() * (hi - lo + 1));
}

const scenarios = {
  // Typed arguments through the generic call; the parent checks the bytes the driver received.
  async generic() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const add = module.getFunction('add');
    assert.ok(add instanceof cuda.Kernel);
    assert.ok(add instanceof Function);
    assert.strictEqual(typeof add, 'function');
    assert.strictEqual(add.name, 'add');
    assert.strictEqual(add.module, module);
    assert.strictEqual(module.getFunction('add'), add, 'one Kernel per name');
    assert.strictEqual(String(add), 'Kernel(add)');
    assert.deepStrictEqual(add.paramInfo(), [
      { offset: 0, size: 8 },
      { offset: 8, size: 8 },
      { offset: 16, size: 4 },
    ]);
    const dest = { ptr: BigInt(randomInt(1, 2 ** 40)) * 256n, size: 4096 };
    const src = { getPointer: () => 0x7f00_0000_1000n };
    const n = randomInt(-(2 ** 31), 2 ** 31 - 1);
    const stream = new cuda.Stream();
    assert.strictEqual(add(dest, src, cuda.int32(n), { block: [32, 4], grid: 7, shared: 96 }), undefined);
    add(cuda.pointer(dest), cuda.pointer(src), cuda.int32(n), { block: 1, grid: [2, 3, 4], stream });
    add.call(null, dest, src, cuda.int32(5), { block: [1, 1, 1] });
    const c = randomInt(-128, 127);
    const v = new Float32Array([Math.random(), -Math.random(), 1e30, -1.5]);
    module.getFunction('vec')(cuda.int8(c), v, { block: 2 });
    const values = {
      int8: randomInt(-128, 127),
      uint8: randomInt(0, 255),
      int16: randomInt(-32768, 32767),
      uint16: randomInt(0, 65535),
      int32: randomInt(-(2 ** 31), 2 ** 31 - 1),
      uint32: randomInt(0, 2 ** 32 - 1),
      int64: -(BigInt(randomInt(0, 2 ** 40)) << 20n),
      uint64: BigInt(randomInt(0, 2 ** 40)) << 24n,
      float16: 0.333,
      float32: Math.fround(Math.random()),
      float64: Math.random() * 1e300,
      bool: true,
    };
    const all = module.getFunction('all');
    all(...Object.entries(values).map(([type, value]) => cuda[type](value)), dest, { block: 1 });
    module.getFunction('empty')({ block: [1024] });
    const wide = new Float64Array([Math.random(), 2, 3, 4]);
    module.getFunction('wide')(cuda.float64(0.5), wide, { block: 1 });
    const timed = await add(dest, src, cuda.int32(1), { block: 1, timeKernel: true });
    assert.strictEqual(timed, 0.0015, 'seconds from the events (1.5 ms in the stand-in)');
    const global = module.getGlobal('table');
    assert.strictEqual(typeof global.ptr, 'bigint');
    assert.strictEqual(global.size, 256);
    assert.strictEqual(global.module, module);
    add(global, global, cuda.int32(0), { block: 1 });
    module.getFunction('packed')(cuda.int8(5), cuda.uint64(0x0102030405060708n), { block: 1 });
    assert.throws(() => module.getGlobal('missing'), { name: 'RuntimeError', api: 'cuModuleGetGlobal' });
    assert.throws(() => module.getFunction('missing'), {
      name: 'RuntimeError',
      message: "cuModuleGetFunction failed: named symbol not found (kernel 'missing')",
    });
    return { dest: dest.ptr, n, c, v: [...v], values, wide: [...wide], table: global.ptr };
  },

  async prepared() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const add = module.getFunction('add');
    assert.throws(() => add.preparedCall(1, 1, 0n, 0n, 0), {
      name: 'LogicError',
      message: 'kernel.preparedCall(): call kernel.prepare(format) first',
    });
    assert.strictEqual(add.prepare('PPi'), add);
    const a = BigInt(randomInt(0, 2 ** 40));
    const n = randomInt(-(2 ** 31), 2 ** 31 - 1);
    add.preparedCall([3, 2], [64, 2, 2], a, { ptr: 0x1000n }, n);
    add.preparedCall(5, 8, a, 0x2000, n, { shared: 512 });
    const stream = new cuda.Stream();
    add.preparedAsyncCall([1], [1], stream, a, a, -1);
    add.preparedAsyncCall([1], [1], null, a, a, -2, { shared: 4 });
    const seconds = add.preparedTimedCall(1, 1, a, a, 7);
    assert.strictEqual(typeof seconds, 'function');
    assert.strictEqual(await seconds(), 0.0015);
    assert.throws(() => add.preparedCall(1, 1, a, a), {
      name: 'TypeError',
      message:
        "kernel 'add'.preparedCall() takes grid, block, 3 arguments (format 'PPi') and optionally { shared, launch attributes }; got 4 arguments",
    });
    assert.throws(() => add.preparedCall(1, 1, a, a, 1, 2, 3), { name: 'TypeError', message: /got 7 arguments/ });
    assert.throws(() => add.preparedCall(1, 1, a, a, 1, { ptr: 1n }), {
      name: 'TypeError',
      message: /got 6 arguments/,
    });
    assert.throws(() => add.preparedCall(1, 1, a, a, 1, { stream }), {
      name: 'TypeError',
      message:
        "preparedCall(): unknown option 'stream' (the options are shared and the launch attributes: cluster, cooperative, priority, preferredCluster, clusterSchedulingPolicy, memSyncDomain, sharedMemoryCarveout, programmaticStreamSerialization, programmaticEvent, completionEvent)",
    });
    assert.throws(() => add.preparedCall(1, 1, a, a, 1.5), {
      name: 'RangeError',
      message: /argument 3 must be an integer/,
    });
    assert.throws(() => add.preparedCall(1, 1, a, a, 2 ** 31), {
      name: 'RangeError',
      message: /argument 3 must be an integer/,
    });
    assert.throws(() => add.preparedCall(1, 1, a, a, 5n), {
      name: 'TypeError',
      message: 'argument 3 must be int32 (an integer from -2147483648 to 2147483647), not bigint 5',
    });
    assert.throws(() => add.preparedCall(1, 1, a, a, cuda.uint32(5)), {
      name: 'TypeError',
      message: /argument 3 must be int32, not/,
    });
    assert.throws(() => add.preparedCall(1, 1, 'a', a, 1), {
      name: 'TypeError',
      message: /argument 1 must be device memory/,
    });
    assert.throws(() => add.preparedCall(1, 0, a, a, 1), {
      name: 'RangeError',
      message: /block must be an integer from 1/,
    });
    assert.throws(() => add.preparedAsyncCall(1, 1, {}, a, a, 1), { name: 'TypeError', message: 'expected a Stream' });
    assert.throws(() => add.prepare('PP'), {
      name: 'TypeError',
      message: "kernel 'add' takes 3 parameters, but 2 arguments were given",
    });
    assert.throws(() => add.prepare('PPd'), {
      name: 'TypeError',
      message:
        "kernel 'add' parameter 3 takes 4 bytes, but argument 3 is float64 (8 bytes); pass cuda.int32, cuda.uint32 or cuda.float32",
    });
    const empty = module.getFunction('empty').prepare('');
    empty.preparedCall(1, 1);
    const all = module
      .getFunction('all')
      .prepare(['int8', 'uint8', 'h', 'H', Int32Array, 'uint32', 'q', 'Q', 'float16', 'f', 'd', '?', 'P']);
    all.preparedCall(1, 1, -1, 2, -3, 4, -5, 6, -7n, 8n, 1.5, 0.25, -0.5, true, 0x300n);
    // Device memory passes its address, slices theirs; freed memory and released slices are refused,
    // also when the same objects were passed the call before.
    const d = cuda.memAlloc(1 << 20); // mapped by malloc far above 4 GiB: both halves of the address count
    const dPtr = d.ptr;
    const s = d.slice(256).slice(8);
    add.preparedCall(1, 1, d, s, 3);
    add(s, d, cuda.int32(4), { block: 1 });
    add(s, d, cuda.int32(4), { block: 1 });
    s.free();
    assert.throws(() => add.preparedCall(1, 1, d, s, 3), {
      name: 'LogicError',
      message: 'this slice has been released (free())',
    });
    assert.throws(() => add(s, d, cuda.int32(4), { block: 1 }), {
      name: 'LogicError',
      message: 'this slice has been released (free())',
    });
    const rest = d.slice(16);
    d.free();
    const freed = { name: 'LogicError', message: 'this DeviceAllocation has been freed; allocate new memory' };
    assert.throws(() => add.preparedCall(1, 1, a, d, 3), freed);
    assert.throws(() => add.preparedCall(1, 1, rest, a, 3), freed);
    return { a, n, d: dPtr };
  },

  async source() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE, { source: SOURCE });
    const add = module.getFunction('add');
    add({ ptr: 0x100n }, 0x200n, 42, { block: 1 });
    const all = module.getFunction('all');
    all(-1, 2, -3, 4, -5, 6, -7n, 8, 1.5, 0.25, -0.5, true, 0x300n, { block: 1 });
    assert.throws(() => add({ ptr: 0x100n }, 0x200n, 1.5, { block: 1 }), {
      name: 'RangeError',
      message: /argument 3 must be an integer/,
    });
    assert.throws(() => add({ ptr: 0x100n }, 0x200n, 5n, { block: 1 }), {
      name: 'TypeError',
      message: 'argument 3 is a bigint, but parameter 3 (int n) is int32: pass a number',
    });
    assert.throws(() => add({ ptr: 0x100n }, 0x200n, cuda.float32(1), { block: 1 }), {
      name: 'TypeError',
      message:
        "kernel 'add' parameter 3 (int n) is int32, but argument 3 is cuda.float32; pass cuda.int32(...) or a number",
    });
    assert.throws(() => add(cuda.int64(1n), 0x200n, 1, { block: 1 }), {
      name: 'TypeError',
      message: "kernel 'add' parameter 1 (float *dest) is a pointer, but argument 1 is cuda.int64; pass device memory",
    });
    // a bare number where the signature has a pointer is a mistake (a bigint is an address)
    assert.throws(() => add({ ptr: 0x100n }, 0x200, 1, { block: 1 }), {
      name: 'TypeError',
      message:
        'argument 2 is a bare number (512), but parameter 2 (const float *src) is a pointer: pass device memory (or a bigint address)',
    });
    module.getFunction('vec')(-2, new Float32Array([1, 2, 3, 4]), { block: 1 });
    assert.throws(() => module.getFunction('vec')(cuda.int8(1), 2, { block: 1 }), {
      name: 'TypeError',
      message: /^argument 2 is a bare number \(2\) and parameter 2 \(float4 v\) is of a type cudadrv does not parse/,
    });
    add(cuda.pointer(1n), cuda.pointer(2n), cuda.uint32(3), { block: 1 });
    return {};
  },

  async badInput() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const add = module.getFunction('add');
    const p = { ptr: 0x100n };
    const args = [p, p, cuda.int32(1)];
    assert.throws(() => add(...args), {
      name: 'TypeError',
      message:
        "kernel 'add': the last argument must be the launch options { block: [x, y, z], grid, stream, shared, timeKernel }; block is required",
    });
    assert.throws(() => add(), { name: 'TypeError', message: /last argument must be the launch options/ });
    assert.throws(() => add(...args, {}), {
      name: 'TypeError',
      message: 'block is required: pass the launch options { block: [x, y, z], grid, ... } as the last argument',
    });
    assert.throws(() => add(...args, { block: [1, 1, 1, 1] }), {
      name: 'RangeError',
      message: 'block must have 1 to 3 dimensions, not 4',
    });
    assert.throws(() => add(...args, { block: [] }), {
      name: 'RangeError',
      message: 'block must have 1 to 3 dimensions, not 0',
    });
    assert.throws(() => add(...args, { block: 1, grid: [1, 2, 3, 4] }), {
      name: 'RangeError',
      message: 'grid must have 1 to 3 dimensions, not 4',
    });
    assert.throws(() => add(...args, { block: [32, 0] }), {
      name: 'RangeError',
      message: 'block dimensions must be integers from 1 to 4294967295, not 0',
    });
    assert.throws(() => add(...args, { block: [1.5] }), { name: 'RangeError', message: /not 1\.5/ });
    assert.throws(() => add(...args, { block: 0 }), {
      name: 'RangeError',
      message: 'block must be an integer from 1 to 4294967295, not 0',
    });
    assert.throws(() => add(...args, { block: -4 }), { name: 'RangeError' });
    assert.throws(() => add(...args, { block: [2 ** 32] }), { name: 'RangeError' });
    assert.throws(() => add(...args, { block: ['32'] }), {
      name: 'TypeError',
      message: 'block dimensions must be numbers, not the string "32"',
    });
    assert.throws(() => add(...args, { block: '32' }), {
      name: 'TypeError',
      message: 'block must be a number or an array of 1 to 3 numbers, not the string "32"',
    });
    assert.throws(() => add(...args, { block: 1, grid: [1, NaN] }), {
      name: 'RangeError',
      message: /grid dimensions must be integers from 1 to 4294967295, not NaN/,
    });
    assert.throws(() => add(...args, { block: 1, shared: -1 }), {
      name: 'RangeError',
      message: /shared must be an integer from 0/,
    });
    assert.throws(() => add(...args, { block: 1, blocks: 4 }), {
      name: 'TypeError',
      message:
        "unknown launch option 'blocks': the options are block, grid, stream, shared, timeKernel, texrefs, signal and the launch attributes (cluster, cooperative, priority, preferredCluster, clusterSchedulingPolicy, memSyncDomain, sharedMemoryCarveout, programmaticStreamSerialization, programmaticEvent, completionEvent)",
    });
    assert.throws(() => add(...args, { block: 1, stream: 5 }), {
      name: 'TypeError',
      message: /stream must be a Stream/,
    });
    assert.throws(() => add(...args, { block: 1, texrefs: [5] }), {
      name: 'TypeError',
      message: /texrefs must be an array of TextureReference/,
    });
    // every() on it would walk four billion holes
    assert.throws(() => add(...args, { block: 1, texrefs: Array(2 ** 32 - 1) }), {
      name: 'RangeError',
      message: 'texrefs holds 4294967295 items; at most 65536',
    });
    // the driver refuses a grid past the device's limits (65535 in y here): its error, surfaced
    assert.throws(() => add(...args, { block: 1, grid: [1, 70000] }), {
      name: 'LogicError',
      api: 'cuLaunchKernel',
      message:
        'cuLaunchKernel failed: invalid argument (grid 1x70000x1, block 1x1x1, 0 bytes of dynamic shared memory: ' +
        "see the device's maxThreadsPerBlock, maxBlockDimX..Z and maxGridDimX..Z)",
    });
    assert.throws(() => add(...args, { block: [1024, 2] }), { name: 'LogicError', api: 'cuLaunchKernel' });
    // argument counts and kinds, checked against cuFuncGetParamInfo
    assert.throws(() => add(p, p, { block: 1 }), {
      name: 'TypeError',
      message: "kernel 'add' takes 3 parameters, but 2 arguments were given",
    });
    assert.throws(() => add(p, p, cuda.int32(1), cuda.int32(1), { block: 1 }), {
      name: 'TypeError',
      message: "kernel 'add' takes 3 parameters, but 4 arguments were given",
    });
    assert.throws(() => add(p, cuda.int32(1), cuda.int32(1), { block: 1 }), {
      name: 'TypeError',
      message:
        "kernel 'add' parameter 2 takes 8 bytes, but argument 2 is int32 (4 bytes); pass cuda.int64, cuda.uint64, cuda.float64 or device memory",
    });
    assert.throws(() => add(p, p, cuda.float64(1), { block: 1 }), {
      name: 'TypeError',
      message: /parameter 3 takes 4 bytes, but argument 3 is float64 \(8 bytes\)/,
    });
    assert.throws(() => add(p, p, new Uint8Array(3), { block: 1 }), {
      name: 'TypeError',
      message: /argument 3 is 3 bytes copied verbatim \(3 bytes\)/,
    });
    assert.throws(() => add(p, p, 3, { block: 1 }), {
      name: 'TypeError',
      message: /argument 3 is a bare number \(3\) and the kernel's parameter types are not known/,
    });
    assert.throws(() => add(p, 'p', cuda.int32(3), { block: 1 }), {
      name: 'TypeError',
      message: /argument 2 cannot be passed to a kernel/,
    });
    assert.throws(() => add(p, undefined, cuda.int32(3), { block: 1 }), {
      name: 'TypeError',
      message: /argument 2 cannot be passed to a kernel: undefined/,
    });
    assert.throws(() => module.getFunction(7), { name: 'TypeError', message: 'name must be a string, not number 7' });
    assert.throws(() => add.getAttribute(99), { name: 'RangeError', message: /member of cuda\.FunctionAttribute/ });
    add(...args, { block: 1 }); // still fine afterwards
    return {};
  },

  // Clusters and cooperative launches: through cuLaunchKernelEx with exactly the attributes asked
  // for; launches without them through cuLaunchKernel. The parent checks the configurations.
  async launchAttributes() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const add = module.getFunction('add');
    const p = { ptr: BigInt(randomInt(1, 2 ** 40)) * 256n };
    const q = { ptr: BigInt(randomInt(1, 2 ** 40)) * 256n };
    const n = randomInt(-(2 ** 31), 2 ** 31 - 1);
    const stream = new cuda.Stream();
    add(p, q, cuda.int32(n), { block: [32, 2], grid: [8, 4], cluster: [2, 2], stream, shared: 64 });
    add(p, q, cuda.int32(n), { block: 64, grid: 16, cooperative: true });
    add(p, q, cuda.int32(n), { block: 64, grid: [4, 2, 2], cluster: [4, 1, 2], cooperative: true });
    add(p, q, cuda.int32(n), { block: 64, grid: 16, cluster: 4, cooperative: false });
    add(p, q, cuda.int32(n), { block: 64, grid: 16 });
    add.prepare('PPi');
    add.preparedCall(8, 32, p, q, n, { cluster: [2] });
    add.preparedAsyncCall(6, 32, stream, p, q, n, { cooperative: true, shared: 128 });
    add.preparedCall(8, 32, p, q, n);
    assert.strictEqual(await add(p, q, cuda.int32(n), { block: 1, grid: 2, cluster: 2, timeKernel: true }), 0.0015);
    // the driver's refusals, surfaced
    assert.throws(() => add(p, q, cuda.int32(n), { block: 1, grid: 6, cluster: 4 }), {
      name: 'LogicError',
      code: 912,
      api: 'cuLaunchKernelEx',
      message: 'cuLaunchKernelEx failed: cluster misconfiguration',
    });
    assert.throws(() => add.preparedCall([4, 3], 1, p, q, n, { cluster: [2, 2] }), {
      name: 'LogicError',
      code: 912,
      api: 'cuLaunchKernelEx',
    });
    assert.throws(() => add(p, q, cuda.int32(n), { block: 1024, grid: 1000, cooperative: true }), {
      name: 'LaunchError',
      code: 720,
      api: 'cuLaunchKernelEx',
      message: 'cuLaunchKernelEx failed: too many blocks in cooperative launch',
    });
    // wrong types and shapes, refused before the driver
    const args = [p, q, cuda.int32(n)];
    assert.throws(() => add(...args, { block: 1, cluster: '2' }), {
      name: 'TypeError',
      message: 'cluster must be a number or an array of 1 to 3 numbers, not the string "2"',
    });
    assert.throws(() => add(...args, { block: 1, cluster: null }), {
      name: 'TypeError',
      message: 'cluster must be a number or an array of 1 to 3 numbers, not null',
    });
    assert.throws(() => add(...args, { block: 1, cluster: [2, 0] }), {
      name: 'RangeError',
      message: 'cluster dimensions must be integers from 1 to 4294967295, not 0',
    });
    assert.throws(() => add(...args, { block: 1, cluster: [1, 1, 1, 1] }), {
      name: 'RangeError',
      message: 'cluster must have 1 to 3 dimensions, not 4',
    });
    assert.throws(() => add(...args, { block: 1, cluster: 0 }), {
      name: 'RangeError',
      message: 'cluster must be an integer from 1 to 4294967295, not 0',
    });
    assert.throws(() => add(...args, { block: 1, cooperative: 1 }), {
      name: 'TypeError',
      message: 'cooperative must be true or false, not number 1',
    });
    assert.throws(() => add(...args, { block: 1, cooperative: 'yes' }), {
      name: 'TypeError',
      message: 'cooperative must be true or false, not the string "yes"',
    });
    assert.throws(() => add.preparedCall(1, 1, p, q, n, { cluster: [2.5] }), {
      name: 'RangeError',
      message: 'cluster dimensions must be integers from 1 to 4294967295, not 2.5',
    });
    assert.throws(() => add.preparedAsyncCall(1, 1, stream, p, q, n, { cooperative: null }), {
      name: 'TypeError',
      message: 'cooperative must be true or false, not null',
    });
    assert.throws(() => add.preparedCall(1, 1, p, q, n, { clusters: 2 }), {
      name: 'TypeError',
      message:
        "preparedCall(): unknown option 'clusters' (the options are shared and the launch attributes: cluster, cooperative, priority, preferredCluster, clusterSchedulingPolicy, memSyncDomain, sharedMemoryCarveout, programmaticStreamSerialization, programmaticEvent, completionEvent)",
    });
    add.preparedCall(2, 2, p, q, n, undefined); // a plain launch afterwards; undefined options are none
    return { p: p.ptr, q: q.ptr, n };
  },

  // Without cuLaunchKernelEx (drivers before CUDA 11.8), launches with attributes say so; others work.
  async noLaunchEx() {
    new cuda.Device(0).makeContext();
    const empty = new cuda.Module(IMAGE).getFunction('empty');
    assert.throws(() => empty({ block: 1, grid: 2, cluster: 2 }), {
      name: 'RuntimeError',
      api: 'cuLaunchKernelEx',
      message: /^cuLaunchKernelEx is not provided by the installed CUDA driver/,
    });
    assert.throws(() => empty.prepare('').preparedCall(1, 1, { cooperative: true }), {
      name: 'RuntimeError',
      api: 'cuLaunchKernelEx',
    });
    empty({ block: 1 });
    empty.preparedCall(1, 1);
    return {};
  },

  // A launcher's stream is bound in C and changes only when the call's stream differs: launches
  // go where each call says, and a destroyed stream is refused.
  async streams() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const empty = module.getFunction('empty');
    const prepared = new cuda.Module(IMAGE).getFunction('empty').prepare('');
    const [s1, s2] = [new cuda.Stream(), new cuda.Stream()];
    for (const stream of [s1, s1, s2, null, undefined, s1]) {
      prepared.preparedAsyncCall(1, 1, stream);
      empty({ block: 1, stream });
    }
    prepared.preparedCall(1, 1);
    prepared.preparedAsyncCall(1, 1, s2);
    prepared.preparedTimedCall(1, 1); // the default stream again
    s2.destroy();
    const destroyed = { name: 'LogicError', message: 'this Stream has been destroyed; create a new Stream' };
    assert.throws(() => prepared.preparedAsyncCall(1, 1, s2), destroyed);
    assert.throws(() => empty({ block: 1, stream: s2 }), destroyed);
    assert.throws(() => prepared.preparedAsyncCall(1, 1, 'stream'), {
      name: 'TypeError',
      message: 'expected a Stream',
    });
    assert.throws(() => empty({ block: 1, stream: {} }), { name: 'TypeError', message: /stream must be a Stream/ });
    prepared.preparedAsyncCall(1, 1, s1);
    empty({ block: 1, stream: s1 });
    return {};
  },

  // { signal } on the calls that give Promises: aborted before, nothing is launched; aborted while
  // waiting, the Promise rejects, the Out data is not copied back and the host function not called.
  async abort() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const add = module.getFunction('add');
    const dest = cuda.memAlloc(64);
    const stream = new cuda.Stream();
    const before = new AbortController();
    before.abort(new Error('changed my mind'));
    const aborted = { name: 'AbortError', message: "kernel 'add' was aborted: changed my mind" };
    assert.throws(() => add(dest, dest, cuda.int32(1), { block: 1, signal: before.signal }), aborted);
    assert.throws(
      () => add(cuda.Out(new Float32Array(4)), dest, cuda.int32(1), { block: 1, signal: before.signal }),
      aborted,
    );
    assert.throws(() => add(dest, dest, cuda.int32(1), { block: 1, signal: 'soon' }), {
      name: 'TypeError',
      message: /^signal must be an AbortSignal/,
    });
    await assert.rejects(
      stream.launchHostFunc(() => {}, { signal: before.signal }),
      {
        name: 'AbortError',
        message: 'stream.launchHostFunc() was aborted: changed my mind',
      },
    );

    const n = randomInt(1, 2 ** 30);
    const out = new Float32Array(16).fill(-1);
    let called = false;
    const controller = new AbortController();
    const pending = [
      add(cuda.Out(out), dest, cuda.int32(n), { block: 1, stream, signal: controller.signal }),
      add(dest, dest, cuda.int32(n), { block: 1, timeKernel: true, signal: controller.signal }),
      stream.launchHostFunc(() => (called = true), { signal: controller.signal }),
    ];
    controller.abort();
    for (const promise of pending) await assert.rejects(promise, { name: 'AbortError' });
    // a complete stream or event: a Promise of it all the same, with a signal or without
    assert.strictEqual(await stream.synchronize(), stream);
    assert.strictEqual(await stream.synchronize({ signal: new AbortController().signal }), stream);
    const event = new cuda.Event().record(stream);
    const settled = event.synchronize();
    assert.ok(settled instanceof Promise);
    assert.strictEqual(await settled, event);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepStrictEqual([...out], new Array(16).fill(-1), 'no Out data after the abort');
    assert.strictEqual(called, false, 'no host function after the abort');
    // Not aborted: the same calls resolve as ever.
    const kept = new AbortController();
    out.fill(-1);
    await add(cuda.Out(out), dest, cuda.int32(n), { block: 1, stream, signal: kept.signal });
    assert.notDeepStrictEqual([...out], new Array(16).fill(-1), 'the Out data came back');
    assert.strictEqual(await stream.launchHostFunc(() => n, { signal: kept.signal }), n);
    const timed = add.prepare('PPi').preparedTimedCall(1, 1, dest, dest, cuda.int32(n));
    await assert.rejects(timed({ signal: before.signal }), { name: 'AbortError' });
    assert.strictEqual(await timed({ signal: kept.signal }), 0.0015);
    return { n };
  },

  async noParamInfo() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const vec = module.getFunction('vec');
    assert.strictEqual(vec.paramInfo(), null);
    vec(cuda.int8(3), new Float32Array([1, 2, 3, 4]), { block: 1 });
    // too few arguments: no check before launch; the driver refuses the size
    assert.throws(() => vec(cuda.int8(3), { block: 1 }), { name: 'LogicError', api: 'cuLaunchKernel' });
    return {};
  },

  async loading() {
    new cuda.Device(0).makeContext();
    const calls = [];
    const handler = (...args) => calls.push(args);
    const module = new cuda.Module(Buffer.from(IMAGE), {
      options: { maxRegisters: 32, OPTIMIZATION_LEVEL: 3, generateLineInfo: true },
      messageHandler: handler,
    });
    assert.deepStrictEqual(calls, [[true, 'fake JIT: info', '']]);
    assert.ok(module.context instanceof cuda.Context);
    cuda.moduleFromBuffer(new TextEncoder().encode(IMAGE), {
      options: [
        [cuda.JitOption.MAX_REGISTERS, 64],
        [cuda.JitOption.FAST_COMPILE, false],
      ],
    });
    new cuda.Module(new DataView(new TextEncoder().encode(IMAGE).buffer));
    let error = null;
    try {
      new cuda.Module('fail', { messageHandler: handler });
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof cuda.CudaError);
    assert.strictEqual(error.api, 'cuModuleLoadDataEx');
    assert.strictEqual(
      error.message,
      'cuModuleLoadDataEx failed: a PTX JIT compilation failed\nfake JIT: syntax error at line 1',
    );
    assert.strictEqual(error.errorLog, 'fake JIT: syntax error at line 1');
    assert.deepStrictEqual(calls[1], [false, 'fake JIT: info', 'fake JIT: syntax error at line 1']);
    assert.throws(() => new cuda.Module(IMAGE, { options: [[cuda.JitOption.INFO_LOG_BUFFER, 0]] }), {
      name: 'RangeError',
      message: /JIT option 3 is not accepted: cudadrv collects the JIT logs itself/,
    });
    assert.throws(() => new cuda.Module(IMAGE, { options: { GLOBAL_SYMBOL_ADDRESSES: 1 } }), {
      name: 'RangeError',
      message: /JIT option 18 is not accepted/,
    });
    assert.throws(() => new cuda.Module(''), { name: 'RangeError', message: 'image must not be empty' });
    // truncated cubin and fatbin images are refused before the driver reads past them
    const elf = Buffer.alloc(64);
    elf.write('\x7fELF', 0, 'latin1');
    elf[4] = 2;
    elf.writeBigUInt64LE(4096n, 0x28);
    elf.writeUInt16LE(64, 0x3a);
    elf.writeUInt16LE(3, 0x3c);
    assert.throws(() => new cuda.Module(elf), {
      name: 'RangeError',
      message: 'image is truncated: its headers reach past its end',
    });
    elf[4] = 1;
    assert.throws(() => new cuda.Module(elf), { name: 'RangeError', message: /not a 64-bit cubin/ });
    const fatbin = Buffer.alloc(16);
    fatbin.writeUInt32LE(0xba55ed50, 0);
    fatbin.writeUInt16LE(16, 6);
    fatbin.writeBigUInt64LE(100n, 8);
    assert.throws(() => new cuda.Module(fatbin), { name: 'RangeError', message: /truncated/ });
    const wrapper = Buffer.alloc(24);
    wrapper.writeUInt32LE(0x466243b1, 0);
    assert.throws(() => new cuda.Module(wrapper), { name: 'RangeError', message: /fatbin wrapper/ });
    const fromFile = cuda.moduleFromFile(process.env.FAKE_MODULE_FILE);
    assert.ok(fromFile instanceof cuda.Module);
    fromFile.getFunction('add')({ ptr: 1n }, { ptr: 2n }, cuda.int32(3), { block: 1 });
    assert.throws(() => cuda.moduleFromFile('/nonexistent/kernels.cubin'), {
      name: 'RuntimeError',
      api: 'cuModuleLoad',
      message: 'cuModuleLoad failed: file not found (/nonexistent/kernels.cubin)',
    });
    return {};
  },

  // The fatbin that nvcc made (test/support/fixtures/scale.fatbin): its headers are checked, entry by
  // entry, before the driver reads it by the sizes they give.
  async fatbin() {
    new cuda.Device(0).makeContext();
    const image = fs.readFileSync(path.join(__dirname, 'fixtures', 'scale.fatbin'));
    assert.ok(new cuda.Module(image) instanceof cuda.Module);
    assert.ok(
      cuda.moduleFromBuffer(new Uint8Array(image.buffer, image.byteOffset, image.length)) instanceof cuda.Module,
    );
    const truncated = { name: 'RangeError', message: 'image is truncated: its headers reach past its end' };
    for (const length of [image.length - 1, 1000, 449, 100, 16, 15, 4]) {
      assert.throws(() => new cuda.Module(image.subarray(0, length)), truncated, `${length} bytes`);
    }
    // the entries, walked here independently: [offset, header size, payload size]
    const entries = [];
    for (let at = image.readUInt16LE(6); at < image.length;) {
      entries.push([at, image.readUInt32LE(at + 4), Number(image.readBigUInt64LE(at + 8))]);
      at += entries[entries.length - 1][1] + entries[entries.length - 1][2];
    }
    assert.deepStrictEqual(
      entries.map(([, , payload]) => payload > 0),
      [true, true],
      'PTX and cubin',
    );
    const [last] = entries.slice(-1);
    // 8 more bytes, counted by the fatbin's header: the last entry may take them, not more
    const grown = (extra) => {
      const bytes = Buffer.concat([image, Buffer.alloc(8)]);
      bytes.writeBigUInt64LE(bytes.readBigUInt64LE(8) + 8n, 8);
      bytes.writeBigUInt64LE(BigInt(last[2] + extra), last[0] + 8);
      return bytes;
    };
    assert.ok(new cuda.Module(grown(8)) instanceof cuda.Module);
    assert.throws(() => new cuda.Module(grown(16)), truncated);
    const shortHeader = Buffer.from(image);
    shortHeader.writeUInt32LE(8, entries[0][0] + 4);
    assert.throws(() => new cuda.Module(shortHeader), truncated);
    // bytes after the fatbin are not read
    assert.ok(new cuda.Module(Buffer.concat([image, Buffer.alloc(7, 0xff)])) instanceof cuda.Module);
    return { size: image.length };
  },

  async lifetimes() {
    const ctx = new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const add = module.getFunction('add').prepare('PPi');
    const tex = module.getTexref('tex');
    const add2 = module.getFunction('add');
    module.free();
    module.free();
    const freed = {
      name: 'LogicError',
      message: "this kernel's Module has been freed; load the module again and get the kernel from it",
    };
    assert.throws(() => add2({ ptr: 1n }, { ptr: 1n }, cuda.int32(1), { block: 1 }), freed);
    assert.throws(() => add.preparedCall(1, 1, 1n, 1n, 1), freed);
    assert.throws(() => add.numRegs, freed);
    assert.throws(() => module.getFunction('empty'), {
      name: 'LogicError',
      message: 'this Module has been freed; load it again',
    });
    assert.throws(() => module.getGlobal('table'), { name: 'LogicError' });
    assert.throws(() => tex.getFlags(), {
      name: 'LogicError',
      message: 'the Module of this TextureReference has been freed; load the module again',
    });
    const disposed = new cuda.Module(IMAGE);
    disposed[Symbol.dispose]();
    assert.throws(() => disposed.getFunction('empty'), { name: 'LogicError' });
    // unreachable modules are unloaded by the garbage collector; a kernel keeps its module
    let kept = null;
    (() => {
      for (let i = 0; i < 5; i++) new cuda.Module(IMAGE).getFunction('add').prepare('PPi');
      kept = new cuda.Module(IMAGE).getFunction('empty');
    })();
    for (let i = 0; i < 8; i++) {
      global.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    kept({ block: 1 });
    ctx.detach();
    return {};
  },

  async references() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const tex = module.getTexref('tex');
    assert.ok(tex instanceof cuda.TextureReference);
    assert.strictEqual(tex.module, module);
    tex.setFormat(cuda.ArrayFormat.FLOAT, 4);
    assert.deepStrictEqual(tex.getFormat(), [cuda.ArrayFormat.FLOAT, 4]);
    tex.setAddressMode(1, cuda.AddressMode.MIRROR);
    assert.strictEqual(tex.getAddressMode(1), cuda.AddressMode.MIRROR);
    assert.strictEqual(tex.getAddressMode(0), cuda.AddressMode.WRAP);
    tex.setFilterMode(cuda.FilterMode.LINEAR);
    assert.strictEqual(tex.getFilterMode(), cuda.FilterMode.LINEAR);
    tex.setFlags(cuda.TRSF_READ_AS_INTEGER | cuda.TRSF_NORMALIZED_COORDINATES);
    assert.strictEqual(tex.getFlags(), 3);
    // device memory at an address aligned to 256 (the stand-in's texture alignment)
    const block = cuda.memAlloc(8192);
    const aligned = (block.ptr + 255n) & ~255n;
    const memory = { ptr: aligned, size: 4096 };
    assert.strictEqual(tex.setAddress(memory, 4096), 0);
    assert.strictEqual(tex.getAddress(), aligned);
    assert.throws(() => tex.setAddress(aligned + 16n, 64), { name: 'LogicError', message: /byte offset of 16/ });
    assert.strictEqual(tex.setAddress(aligned + 16n, 64, true), 16);
    tex.setAddress2D(memory, { width: 7, height: 5, format: cuda.ArrayFormat.SIGNED_INT32, numChannels: 2 }, 64);
    assert.throws(() => tex.setFormat(999, 1), { name: 'RangeError', message: /member of cuda\.ArrayFormat/ });
    assert.throws(() => tex.setFormat(cuda.ArrayFormat.FLOAT, 5), { name: 'RangeError', message: /numComponents/ });
    assert.throws(() => tex.setAddressMode(3, cuda.AddressMode.CLAMP), { name: 'RangeError', message: /dim/ });
    // the addon checks what the driver would index by, whatever lib/ passed
    const binding = require('../../lib/internal/binding');
    for (const dim of [3, 7, 2 ** 31, 2 ** 32 - 1]) {
      const range = { name: 'RangeError', message: 'dim must be 0, 1 or 2' };
      assert.throws(() => binding.texrefSetAddressMode(tex, dim, cuda.AddressMode.CLAMP), range);
      assert.throws(() => binding.texrefGetAddressMode(tex, dim), range);
    }
    for (const channels of [0, 3, 5, 2 ** 32 - 1]) {
      assert.throws(() => binding.texrefSetFormat(tex, cuda.ArrayFormat.FLOAT, channels), {
        name: 'RangeError',
        message: 'channels must be 1, 2 or 4',
      });
    }
    assert.throws(() => tex.setAddress({}, 4), { name: 'TypeError', message: /devptr must be device memory/ });
    assert.throws(() => tex.setAddress2D(memory, null, 64), { name: 'TypeError', message: /descriptor must be/ });
    assert.throws(() => tex.setAddress2D(memory, { width: 1, height: 1, format: 1, numChannels: 3.5 }, 64), {
      name: 'RangeError',
    });
    assert.throws(() => module.getTexref('nope'), { name: 'RuntimeError', api: 'cuModuleGetTexRef' });
    const surf = module.getSurfref('surf');
    assert.ok(surf instanceof cuda.SurfaceReference);
    assert.strictEqual(surf.module, module);
    assert.throws(() => module.getSurfref(5), { name: 'TypeError' });
    const add = module.getFunction('add');
    add({ ptr: 1n }, { ptr: 2n }, cuda.int32(3), { block: 1, texrefs: [tex] });
    add.prepare('PPi', { texrefs: [tex] }).preparedCall(1, 1, 1n, 2n, 3);
    assert.throws(() => add.prepare('PPi', { texrefs: tex }), { name: 'TypeError', message: /texrefs/ });
    return { aligned };
  },

  async attributes() {
    new cuda.Device(0).makeContext();
    const module = new cuda.Module(IMAGE);
    const add = module.getFunction('add');
    // the stand-in reports 100 + the attribute's number
    assert.strictEqual(add.maxThreadsPerBlock, 100);
    assert.strictEqual(add.sharedSizeBytes, 101);
    assert.strictEqual(add.localSizeBytes, 103);
    assert.strictEqual(add.numRegs, 104);
    assert.strictEqual(add.maxDynamicSharedSizeBytes, 108);
    assert.strictEqual(add.getAttribute(cuda.FunctionAttribute.PTX_VERSION), 105);
    add.setAttribute(cuda.FunctionAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536);
    assert.strictEqual(add.maxDynamicSharedSizeBytes, 65536);
    assert.throws(() => add.setAttribute(cuda.FunctionAttribute.NUM_REGS, 1.5), { name: 'RangeError' });
    add.setCacheConfig(cuda.FuncCache.PREFER_SHARED);
    add.setSharedConfig(cuda.SharedConfig.EIGHT_BYTE_BANK_SIZE);
    assert.throws(() => add.setCacheConfig(17), { name: 'RangeError', message: /member of cuda\.FuncCache/ });
    assert.strictEqual(add.maxActiveBlocksPerMultiprocessor(256), 8);
    assert.strictEqual(add.maxActiveBlocksPerMultiprocessor(256, 32768), 2);
    assert.throws(() => add.maxActiveBlocksPerMultiprocessor(0), { name: 'RangeError', message: /blockSize/ });
    const asked = [];
    const smem = (b) => {
      asked.push(b);
      return b >= 256 ? 0 : 65536;
    };
    assert.deepStrictEqual(add.maxPotentialBlockSize(smem), { minGridSize: 1056, blockSize: 256 });
    assert.strictEqual(asked.length, 33, 'the driver asked for each block size it tried, and for the answer');
    assert.deepStrictEqual(add.maxPotentialBlockSize(smem, 128), { minGridSize: 132, blockSize: 128 });
    assert.deepStrictEqual(add.maxPotentialBlockSize(16384), { minGridSize: 528, blockSize: 512 });
    assert.throws(
      () =>
        add.maxPotentialBlockSize(() => {
          throw new Error('from the callback');
        }),
      { message: 'from the callback' },
    );
    assert.throws(() => add.maxPotentialBlockSize(() => -1), {
      name: 'TypeError',
      message: /must return a non-negative integer/,
    });
    assert.throws(() => add.maxPotentialBlockSize('lots'), { name: 'TypeError' });
    assert.deepStrictEqual(
      add.maxPotentialBlockSize(() => add.maxPotentialBlockSize().blockSize * 0),
      { minGridSize: 8448, blockSize: 32 },
      'nested calls',
    );
    return {};
  },

  async deprecated() {
    new cuda.Device(0).makeContext();
    const warnings = [];
    process.on('warning', (w) => warnings.push([w.name, w.message]));
    const module = new cuda.Module(IMAGE);
    const add = module.getFunction('add');
    assert.throws(() => add.launch(), { name: 'LogicError', message: /call setBlockShape/ });
    add.setBlockShape(4, 2);
    add.setSharedSize(64);
    add.paramSetSize(20);
    add.paramSeti(0, -5);
    add.paramSeti(4, 0xfffffff0);
    add.paramSetf(16, 0.5);
    add.paramSetTexref(module.getTexref('tex'));
    add.launchGrid(3, 2);
    add.launchGrid(3);
    add.paramSet(cuda.pointer(0x1234n), { ptr: 0x5678n }, cuda.int32(-9));
    add.launch();
    add.launchGridAsync(2, 2, new cuda.Stream());
    assert.throws(() => add.paramSeti(20, 1), { name: 'RangeError', message: /past the parameter size 20/ });
    assert.throws(() => add.paramSetf(0, 'x'), { name: 'TypeError' });
    assert.throws(() => add.setBlockShape(0), { name: 'RangeError' });
    add.paramSetSize(8);
    assert.throws(() => add.launch(), {
      name: 'TypeError',
      message: "kernel 'add' takes 20 bytes of parameters, but 8 are set (paramSetSize / paramSet)",
    });
    assert.throws(() => add.launchGridAsync(1, 1, 'stream'), { name: 'TypeError' });
    await new Promise((resolve) => setImmediate(resolve));
    const deprecations = warnings.filter(([name]) => name === 'DeprecationWarning').map(([, m]) => m);
    assert.deepStrictEqual(
      deprecations.map((m) => m.split('(')[0]),
      [
        'kernel.launch',
        'kernel.setBlockShape',
        'kernel.setSharedSize',
        'kernel.paramSetSize',
        'kernel.paramSeti',
        'kernel.paramSetf',
        'kernel.paramSetTexref',
        'kernel.launchGrid',
        'kernel.paramSet',
        'kernel.launchGridAsync',
      ],
    );
    assert.strictEqual(deprecations[1], 'kernel.setBlockShape() is deprecated: pass { block: [x, y, z] } to the call');
    return {};
  },

  async profiler() {
    const result = {};
    try {
      cuda.initializeProfiler('/tmp/profiler.cfg', '/tmp/profiler.out', cuda.ProfilerOutputMode.CSV);
      result.initialized = true;
    } catch (e) {
      result.error = { name: e.name, message: e.message, api: e.api, code: e.code };
    }
    cuda.startProfiler();
    cuda.stopProfiler();
    return result;
  },
};

scenarios[process.argv[2]]().then(
  (out) => process.stdout.write(JSON.stringify(out, (k, v) => (typeof v === 'bigint' ? `${v}` : v))),
  (error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  },
);
