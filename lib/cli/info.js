'use strict';
// `cudadrv info [--json]`: the driver, every device with its key attributes and free memory, and
// NVRTC and nvJitLink (version, file, where each was found). Without a usable driver: one line, exit code 1.
const cuda = require('..');
const { cudaVersion } = require('./common');
const { nvrtcLibrary } = require('../compiler/nvrtc');
const { nvJitLinkLibrary } = require('../compiler/linker');
const { noGpuReason } = require('../tools/mark-cuda-test');

const options = { json: { type: 'boolean' } };
const usage = `usage: cudadrv info [--json]

  The driver, every device (compute capability, multiprocessors, total and free memory, PCI bus),
  and NVRTC and nvJitLink: version, file and how each was found. Without a usable driver, the
  versions of what is there and one line saying why (exit code 1).

  --json                 the same as one JSON object
`;

const GiB = 2 ** 30;

/* Free memory of a device, through its primary context (shared, so nothing is created twice). */
function freeMemory(device) {
  const context = device.retainPrimaryContext();
  context.push();
  try {
    return cuda.memGetInfo().free;
  } finally {
    cuda.Context.pop();
    context.detach();
  }
}

function describeDevice(device, ordinal) {
  const [major, minor] = device.computeCapability();
  return {
    ordinal,
    name: device.name(),
    computeCapability: `${major}.${minor}`,
    arch: `sm_${major}${minor}`,
    multiprocessors: device.multiprocessorCount,
    totalMemory: device.totalMemory(),
    freeMemory: freeMemory(device),
    pciBusId: device.pciBusId(),
  };
}

/* NVRTC: { version, path, source } or { error }. */
function describeNvrtc() {
  try {
    const [major, minor] = cuda.nvrtcVersion();
    return { version: `${major}.${minor}`, ...nvrtcLibrary() };
  } catch (error) {
    return { error: error.message };
  }
}

/* nvJitLink: { version, path, source } or { error }. */
function describeNvJitLink() {
  try {
    const { version, ...library } = nvJitLinkLibrary();
    return { version: version.join('.'), ...library };
  } catch (error) {
    return { error: error.message };
  }
}

/* The lines of cudadrv, NVRTC and nvJitLink, which need no driver. */
function partLines({ cudadrv, headers, nvrtc: n, nvJitLink: j }) {
  return [
    `cudadrv ${cudadrv} (built against the CUDA ${headers} headers)`,
    n.error ? `NVRTC: not loaded: ${n.error}` : `NVRTC: ${n.version} from ${n.path} (found by: ${n.source})`,
    j.error
      ? `nvJitLink: not loaded (linking falls back to the driver's cuLink, without LTO): ${j.error}`
      : `nvJitLink: ${j.version} from ${j.path} (found by: ${j.source})`,
  ];
}

function run(values) {
  const parts = {
    cudadrv: cuda.VERSION_TEXT,
    headers: cuda.getVersion().slice(0, 2).join('.'),
    nvrtc: describeNvrtc(),
    nvJitLink: describeNvJitLink(),
  };
  const reason = noGpuReason();
  if (reason !== null) {
    const line = `no usable CUDA driver: ${reason}; run "cudadrv doctor" for the fix`;
    if (values.json) process.stdout.write(`${JSON.stringify({ error: line, ...parts }, null, 2)}\n`);
    else process.stdout.write(`${[...partLines(parts), `cudadrv: ${line}`].join('\n')}\n`);
    return 1;
  }
  const count = cuda.Device.count();
  const info = {
    ...parts,
    driver: cudaVersion(cuda.getDriverVersion()),
    devices: Array.from({ length: count }, (_, i) => describeDevice(new cuda.Device(i), i)),
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
    return 0;
  }
  const lines = [`driver: CUDA ${info.driver}, ${count} device${count === 1 ? '' : 's'}`];
  for (const d of info.devices) {
    lines.push(
      `device ${d.ordinal}: ${d.name}, compute capability ${d.computeCapability} (${d.arch}), ` +
        `${d.multiprocessors} multiprocessors, ${(d.totalMemory / GiB).toFixed(1)} GiB ` +
        `(${(d.freeMemory / GiB).toFixed(1)} GiB free), PCI ${d.pciBusId}`,
    );
  }
  lines.unshift(partLines(info)[0]);
  lines.push(...partLines(info).slice(1));
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

module.exports = { options, run, usage };
