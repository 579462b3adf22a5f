'use strict';
// `cudadrv doctor`: checks the driver, NVRTC, nvJitLink and the compile cache, and says for each problem what
// fixes it. Exit code 1 when something does not work; features a driver is too old for are
// warnings (the rest works).
const fs = require('fs');
const path = require('path');
const cuda = require('..');
const { cudaVersion } = require('./common');
const binding = require('../internal/binding');
const { nvrtcLibrary } = require('../compiler/nvrtc');
const { nvJitLinkLibrary } = require('../compiler/linker');
const { cacheDirFor } = require('../compiler/cache-dir');
const { refusedBySearch } = require('../internal/library-search');

const options = { json: { type: 'boolean' } };
const usage = `usage: cudadrv doctor [--json]

  Checks the driver, NVRTC, nvJitLink and the compile cache; for each problem, says what fixes
  it. Exit code 1 when something does not work (features an old driver lacks are warnings).

  --json                 { problems, checks: [{ level: 'ok' | 'warn' | 'fail', what, fix? }] }
`;

/* [{ level: 'ok' | 'warn' | 'fail', what, fix? }] for the driver; its major, or null. */
function checkDriver(report) {
  try {
    cuda.init();
  } catch (error) {
    const fix =
      error.api === 'dlopen'
        ? 'install the NVIDIA driver (it provides libcuda.so.1); in a container, run it with the GPU ' +
          'passed through (docker run --gpus all)'
        : error.codeName === 'CUDA_ERROR_NO_DEVICE'
          ? 'no GPU is visible: check nvidia-smi, and CUDA_VISIBLE_DEVICES if set'
          : 'check nvidia-smi; update the NVIDIA driver (cudadrv needs CUDA 12.0 or newer)';
    report.push({ level: 'fail', what: `driver: ${error.message}`, fix });
    return null;
  }
  const driver = cuda.getDriverVersion();
  const count = cuda.Device.count();
  report.push({ level: 'ok', what: `driver: CUDA ${cudaVersion(driver)}, ${count} device${count === 1 ? '' : 's'}` });
  for (const [entry, needs] of binding.driverMissingEntries()) {
    report.push({
      level: 'warn',
      what: `driver: CUDA ${cudaVersion(driver)} lacks ${entry} (CUDA ${cudaVersion(needs)}): what uses it is limited or throws a RuntimeError naming it`,
      fix: `update the NVIDIA driver to one for CUDA ${cudaVersion(needs)} or newer`,
    });
  }
  return Math.floor(driver / 1000);
}

// The libraries the search found and refused: another user could have put them there.
function reportRefused(report, label, name) {
  for (const { path: file, source, why } of refusedBySearch(name)) {
    report.push({
      level: 'warn',
      what: `${label}: refused ${file} (found by: ${source}): ${why}`,
      fix: "make it and the directories above it yours (or root's) and writable by no one else, or remove it",
    });
  }
}

function checkNvrtc(report, driverMajor) {
  let library;
  let major;
  let minor;
  try {
    library = nvrtcLibrary();
    [major, minor] = cuda.nvrtcVersion();
  } catch (error) {
    report.push({
      level: 'fail',
      what: `NVRTC: ${error.message}`,
      fix: 'install NVRTC: the CUDA toolkit, pip install nvidia-cuda-nvrtc, or conda install cuda-nvrtc; or set CUDADRV_NVRTC_PATH to a libnvrtc.so',
    });
    reportRefused(report, 'NVRTC', 'nvrtc');
    return;
  }
  report.push({ level: 'ok', what: `NVRTC: ${major}.${minor} from ${library.path} (found by: ${library.source})` });
  reportRefused(report, 'NVRTC', 'nvrtc');
  const headers = cuda.getVersion()[0];
  if (major !== headers) {
    report.push({
      level: 'warn',
      what: `NVRTC: version ${major}, but cudadrv was built against the CUDA ${headers} toolkit`,
      fix: `install NVRTC ${headers} to compile as the toolkit would, or rebuild cudadrv against the CUDA ${major} headers`,
    });
  }
  if (driverMajor !== null && major > driverMajor) {
    report.push({
      level: 'fail',
      what: `NVRTC: version ${major} writes PTX the CUDA ${driverMajor} driver cannot load`,
      fix: `install NVRTC ${driverMajor} (pip install "nvidia-cuda-nvrtc-cu${driverMajor}"), or update the NVIDIA driver`,
    });
  }
}

// nvJitLink is optional: without it, Linker falls back to the driver's linker (no LTO).
function checkNvJitLink(report) {
  try {
    const { version, path: file, source } = nvJitLinkLibrary();
    report.push({ level: 'ok', what: `nvJitLink: ${version.join('.')} from ${file} (found by: ${source})` });
    reportRefused(report, 'nvJitLink', 'nvJitLink');
  } catch (error) {
    report.push({
      level: 'warn',
      what: `nvJitLink: ${error.message}`,
      fix: "Linker falls back to the driver's linker (cuLink), which needs a context and does no LTO; for LTO, install nvJitLink of the NVRTC's version",
    });
    reportRefused(report, 'nvJitLink', 'nvJitLink');
  }
}

function checkCache(report) {
  const dir = cacheDirFor(undefined);
  if (!dir) {
    report.push({ level: 'ok', what: 'compile cache: off (CUDADRV_DISABLE_CACHE)' });
    return;
  }
  const fix = 'set CUDADRV_CACHE_DIR to a directory of your own, or CUDADRV_DISABLE_CACHE=1';
  const problem = binding.cacheDirProblem(dir);
  const failure = problem ?? binding.writeFileAtomic(dir, 'doctor-probe', Buffer.from('probe'));
  if (!failure) fs.rmSync(path.join(dir, 'doctor-probe'), { force: true });
  if (failure) report.push({ level: 'fail', what: `compile cache: ${dir}: ${failure[1]}`, fix });
  else report.push({ level: 'ok', what: `compile cache: ${dir}` });
}

function run(values) {
  const report = [];
  const driverMajor = checkDriver(report);
  checkNvrtc(report, driverMajor);
  checkNvJitLink(report);
  checkCache(report);
  const failed = report.filter((r) => r.level === 'fail').length;
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ problems: failed, checks: report }, null, 2)}\n`);
    return failed ? 1 : 0;
  }
  const lines = [];
  for (const { level, what, fix } of report) {
    lines.push(`${level.padEnd(4)} ${what}`);
    if (fix) lines.push(`     fix: ${fix}`);
  }
  lines.push(failed ? `${failed} problem${failed === 1 ? '' : 's'} found` : 'no problems found');
  process.stdout.write(`${lines.join('\n')}\n`);
  return failed ? 1 : 0;
}

module.exports = { options, run, usage };
