'use strict';
// NVRTC as the compiler sees it: where it is loaded from, its version, the architectures it
// compiles for, and the default target. (Its identity for cache keys is in cache.js.)
const binding = require('../internal/binding');
const { librarySearch } = require('../internal/library-search');

const NVRTC_MAJORS = [13, 12]; // the majors cudadrv works with, newest first
let library = null; // { path, source } of the NVRTC loaded, once loaded

const driverMajor = () => Math.floor(binding.driverGetVersion() / 1000);

/** The binding, with NVRTC loaded (on first use) from the first candidate that loads, in the
 * order of lib/internal/library-search.js; a RuntimeError names each candidate tried and why it
 * failed. */
function loadNvrtc() {
  if (!library) {
    const candidates = librarySearch('nvrtc', { majors: NVRTC_MAJORS, override: 'CUDADRV_NVRTC_PATH', driverMajor });
    const name = binding.nvrtcLoad(candidates.map((candidate) => candidate.path));
    // Another thread may have loaded it from a list of its own: its source is then unknown here.
    const source = candidates.find((candidate) => candidate.path === name)?.source ?? 'another thread';
    library = { path: binding.nvrtcLibraryPath(), source };
  }
  return binding;
}

/** { path, source } of the NVRTC in use, loading it: source says where it was found
 * (CUDADRV_NVRTC_PATH, CUDA_PATH, CUDA_HOME, conda, pip, system or /usr/local/cuda). */
function nvrtcLibrary() {
  loadNvrtc();
  return { ...library };
}

/** [major, minor] of the NVRTC cudadrv uses; a RuntimeError names the libraries tried when none
 * loads. */
function nvrtcVersion() {
  return loadNvrtc().nvrtcVersion();
}

// ---- architectures ----

const ARCH = /^(sm|compute)_(\d{2,3})([af]?)$/;

/** { virtual, number, suffix } of an architecture name such as sm_90, compute_120, sm_100a;
 * a RangeError naming what where it is malformed. */
function parseArch(what, value) {
  const match = ARCH.exec(value);
  if (!match) {
    throw new RangeError(
      `${what} must name an architecture such as sm_90 (cubin) or compute_90 ` +
        `(PTX), sm_100, sm_120, sm_90a, not ${JSON.stringify(value)}`,
    );
  }
  return { virtual: match[1] === 'compute', number: Number(match[2]), suffix: match[3] };
}

function archList(archs) {
  return archs.map((n) => `sm_${n}`).join(', ');
}

/** Throws a RangeError when NVRTC does not compile for the architecture value names. */
function checkSupported(what, value, identity) {
  const { number } = parseArch(what, value);
  if (!identity.archs.includes(number)) {
    throw new RangeError(
      `${what} ${value}: NVRTC ${identity.version.join('.')} does not compile ` +
        `for it; it supports ${archList(identity.archs)} (and their compute_ forms)`,
    );
  }
}

/**
 * The default target: the current context's device as sm_XY (a cubin) where NVRTC supports it;
 * for a device NVRTC does not list, a cubin of the newest architecture of the same major below it
 * (cubins run on later minors), else PTX of the newest architecture below it (the driver compiles
 * PTX for newer devices). Without a context: PTX for the oldest architecture from compute_75 up
 * that NVRTC supports (compute_75 with NVRTC 12 and 13), which every device NVRTC 13 supports can
 * load.
 */
function pickTarget(archs, capability, version) {
  const sorted = [...archs].sort((a, b) => a - b);
  if (!capability) return `compute_${sorted.find((n) => n >= 75) ?? sorted[sorted.length - 1]}`;
  const [major, minor] = capability;
  const device = major * 10 + minor;
  if (sorted.includes(device)) return `sm_${device}`;
  const below = sorted.filter((n) => n < device);
  const sameMajor = below.filter((n) => Math.floor(n / 10) === major);
  if (sameMajor.length) return `sm_${sameMajor[sameMajor.length - 1]}`;
  if (below.length) return `compute_${below[below.length - 1]}`;
  throw new RangeError(
    `the current device (sm_${device}) is older than every architecture NVRTC ` +
      `${version.join('.')} compiles for (${archList(sorted)}); load an older NVRTC with ` +
      'CUDADRV_NVRTC_PATH, or give arch explicitly',
  );
}

module.exports = {
  NVRTC_MAJORS,
  loadNvrtc,
  nvrtcLibrary,
  nvrtcVersion,
  parseArch,
  checkSupported,
  pickTarget,
};
