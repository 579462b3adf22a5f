'use strict';
// The fuzzer's mutation mode (`npm run fuzz -- --mode mutate`): each call changes a few bytes of
// a real input, a binary for nvJitLink (a relocatable cubin, LTO-IR, PTX, a fatbin) or a source
// for NVRTC, and links or compiles it isolated (in a helper process), with a time limit. Whatever
// NVIDIA's libraries do with it, this process must get a RangeError or TypeError (refused before
// the library saw it), a LinkError or CompileError (a crash or hang of a helper included: those are
// counted apart), an AbortError (the time limit) or a result. No GPU needed.
const fs = require('fs');
const path = require('path');
const { callGenerator } = require('./values');
const { compiler } = require('./targets');

const ARCH = 'sm_90';
const LIMIT_MS = 10000;
const SOURCES = [
  'extern "C" __device__ __noinline__ float twice(float x) { return 2 * x; }\n' +
    'extern "C" __global__ void k(float *p) { p[threadIdx.x] = twice(p[threadIdx.x]); }\n',
  '__constant__ float c[16]; __device__ int g[64];\n' +
    'template <int N> __global__ void t(int *p) { __shared__ int s[N]; s[threadIdx.x % N] = g[threadIdx.x] + (int)c[0]; __syncthreads(); p[threadIdx.x] = s[0]; }\n' +
    'template __global__ void t<32>(int *);\n',
];

// The inputs every call starts from: [kind, bytes].
function bases() {
  const compileTo = (opts) => compiler.compileSync(SOURCES[0], { arch: ARCH, cacheDir: false, ...opts });
  const fatbin = path.join(__dirname, '..', '..', 'support', 'fixtures', 'scale.fatbin');
  return [
    ['cubin', compileTo({ relocatable: true })],
    ['ltoir', compileTo({ lto: true })],
    ['ptx', compileTo({ relocatable: true, arch: 'compute_90' })],
    ['fatbin', fs.readFileSync(fatbin)],
  ];
}

// bytes changed 1 to 4 ways: a byte set, a bit flipped, a word set to 0 or all ones, a slice
// repeated, the end cut off.
function changed(rng, bytes) {
  let out = Buffer.from(bytes);
  for (let n = 1 + rng.int(4); n > 0; n--) {
    const at = rng.int(out.length);
    switch (rng.int(6)) {
      case 0:
        out[at] = rng.int(256);
        break;
      case 1:
        out[at] ^= 1 << rng.int(8);
        break;
      case 2:
        if (at + 4 <= out.length) out.writeUInt32LE(rng.chance(0.5) ? 0 : 0xffffffff, at);
        break;
      case 3: {
        const end = Math.min(out.length, at + 1 + rng.int(64));
        out = Buffer.concat([out.subarray(0, end), out.subarray(at, end), out.subarray(end)]);
        break;
      }
      case 4:
        out = out.subarray(0, Math.max(1, at));
        break;
      default:
        out[at] = rng.pick([0, 0xff, 0x7f, 0x80]);
    }
  }
  return out;
}

// A source changed: characters replaced, text cut or repeated, deep nesting, or an include of the
// working directory's FIFO (directly or through a macro).
function changedSource(rng) {
  let text = rng.pick(SOURCES);
  for (let n = 1 + rng.int(3); n > 0; n--) {
    const at = rng.int(text.length);
    switch (rng.int(6)) {
      case 0:
        text = text.slice(0, at) + rng.pick('(){}[]<>;#"\'\\*/&|!~0x@$') + text.slice(at + 1);
        break;
      case 1:
        text = text.slice(0, at) + text.slice(at + rng.int(32));
        break;
      case 2:
        text = text.slice(0, at) + text.slice(at, at + rng.int(64)).repeat(1 + rng.int(8)) + text.slice(at);
        break;
      case 3: {
        const depth = rng.pick([100, 5000, 50000]);
        text += `\n__device__ int deep() { return ${'('.repeat(depth)}1${')'.repeat(depth)}; }\n`;
        break;
      }
      case 4:
        text = (rng.chance(0.5) ? '#include "fifo"\n' : '#define H "fifo"\n#include H\n') + text;
        break;
      default:
        text = text.slice(0, at) + String.fromCharCode(rng.int(0x3000) + 1) + text.slice(at);
    }
  }
  return text;
}

// What a call's outcome counts as; null: an error no call may throw.
function outcomeOf(error) {
  if (!error) return 'returned';
  if (error.name === 'RangeError' || error.name === 'TypeError') return `refused (${error.name})`;
  if (error.name === 'AbortError') return 'hang contained (AbortError)';
  if (error.name === 'LinkError' || error.name === 'CompileError') {
    return /^SIG/.test(error.codeName ?? '') ? `crash contained (${error.codeName})` : error.name;
  }
  // the FIFO, seen by the cache's scan of #include lines or refused to NVRTC (a computed include)
  if (
    error.name === 'RuntimeError' &&
    /, where an #include of the source may be found, is |, was refused: /.test(error.message)
  ) {
    return 'include refused (RuntimeError)';
  }
  return null;
}

let inputs = null;

/** Call `index` of run `seed`: { label, promise } (the promise settles with the outcome's name
 * or rejects with an error no call may throw). */
function mutationCall(seed, index) {
  inputs ??= bases();
  const rng = callGenerator(seed, index);
  const signal = AbortSignal.timeout(LIMIT_MS);
  let label;
  let run;
  if (rng.chance(0.8)) {
    const [kind, base] = rng.pick(inputs);
    const bytes = changed(rng, base);
    const declared = rng.chance(0.8) ? kind : undefined; // else sniffed
    label = `link of a changed ${kind} (${bytes.length} bytes, given as ${declared ?? 'its first bytes say'})`;
    run = async () => {
      const linker = new compiler.Linker({ arch: ARCH, lto: kind === 'ltoir', cacheDir: false, isolated: true });
      linker.add(bytes, { kind: declared });
      await linker.linkAsync({ signal });
    };
  } else {
    const source = changedSource(rng);
    label = `compile of a changed source (${source.length} characters)`;
    run = () => compiler.compile(source, { arch: ARCH, cacheDir: false, isolated: true, signal });
  }
  const promise = (async () => {
    let failure = null;
    try {
      await run();
    } catch (error) {
      failure = error;
    }
    const outcome = outcomeOf(failure);
    if (outcome === null) throw failure;
    return outcome;
  })();
  return { label, promise };
}

module.exports = { mutationCall };
