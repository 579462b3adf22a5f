'use strict';
// Linking device code into one cubin (cudadrv/compiler's Linker): relocatable cubins and PTX,
// LTO-IR, fatbins and static libraries, with nvJitLink (loaded at run time like NVRTC: the same
// places, CUDADRV_NVJITLINK_PATH, the major of the NVRTC in use) or, where it cannot be loaded,
// with the driver's linker (cuLink), which needs a current context and does no LTO. Links with
// nvJitLink go through the compile cache: the same inputs and options give the cubin at once.
const path = require('path');
const binding = require('../internal/binding');
const { LinkError, LogicError, RuntimeError, makeError } = require('../driver/errors');
const { librarySearch, findToolkitFile } = require('../internal/library-search');
const { describe, list } = require('../internal/checks');
const { checkSignal, abortable, abortError, onAbort } = require('../internal/abort');
const cache = require('./cache');
const nvrtc = require('./nvrtc');
const isolated = require('./isolated');
const { KINDS, BY_EXTENSION, sniff, checkInput, checkDistinct, digestOf, checkCubinArchs } = require('./inputs');
const { bytesOf, checkKind, addOptions, readInput } = require('./inputs');

// The end of the last nvJitLink link queued by linkAsync(): the next one starts after it.
let linkTurns = Promise.resolve();
const noop = () => {};

const OPTIONS = ['arch', 'lto', 'options', 'deviceRuntime', 'cacheDir', 'isolated'];

// ---- nvJitLink ----

let loaded = null; // { path, source, version } once nvJitLink is loaded
let missing = null; // the RuntimeError saying why it could not be, once tried

// The NVRTC major nvJitLink must match, or null where NVRTC cannot be loaded either.
function nvrtcVersionOrNull() {
  try {
    return nvrtc.nvrtcVersion();
  } catch {
    return null;
  }
}

/** { path, source, version } of the nvJitLink in use, loading it on first use; a RuntimeError
 * naming each candidate tried when none loads, or when the one found cannot link what the NVRTC
 * in use compiles (an older version of the same major, or another major). */
function nvJitLinkLibrary() {
  if (loaded) return { ...loaded };
  if (missing) throw missing;
  const nvrtcVersion = nvrtcVersionOrNull();
  const majors = nvrtcVersion ? [nvrtcVersion[0]] : nvrtc.NVRTC_MAJORS;
  const driverMajor = () => Math.floor(binding.driverGetVersion() / 1000);
  const candidates = librarySearch('nvJitLink', { majors, override: 'CUDADRV_NVJITLINK_PATH', driverMajor });
  try {
    const name = binding.nvJitLinkLoad(candidates.map((candidate) => candidate.path));
    const version = binding.nvJitLinkVersion();
    const libraryPath = binding.nvJitLinkLibraryPath();
    if (nvrtcVersion && (version[0] !== nvrtcVersion[0] || version[1] < nvrtcVersion[1])) {
      throw new RuntimeError(
        `nvJitLink ${version.join('.')} (${libraryPath}) cannot link the LTO-IR of NVRTC ` +
          `${nvrtcVersion.join('.')}: it needs nvJitLink ${nvrtcVersion.join('.')} or a later ` +
          `${nvrtcVersion[0]}.x; set CUDADRV_NVJITLINK_PATH to one, or CUDADRV_NVRTC_PATH to an NVRTC of its version`,
      );
    }
    const source = candidates.find((candidate) => candidate.path === name)?.source ?? 'another thread';
    loaded = { path: libraryPath, source, version };
  } catch (error) {
    missing = error;
    throw error;
  }
  return { ...loaded };
}

/** [major, minor] of the nvJitLink cudadrv links with; a RuntimeError where none loads. */
function nvJitLinkVersion() {
  return nvJitLinkLibrary().version;
}

function nvJitLinkAvailable() {
  try {
    nvJitLinkLibrary();
    return true;
  } catch {
    return false;
  }
}

// ---- inputs ----

// libcudadevrt.a (the device runtime, for kernels that launch kernels), read once.
let deviceRuntime = null;
function deviceRuntimeInput() {
  if (!deviceRuntime) {
    const first = loaded ? [path.dirname(loaded.path)] : [];
    const found = findToolkitFile('libcudadevrt.a', { override: 'CUDADRV_CUDADEVRT_PATH', first });
    if (!found.path) {
      throw new RuntimeError(
        'deviceRuntime needs libcudadevrt.a (the CUDA device runtime), found in none of: ' +
          `${found.tried.join(', ')}; install the CUDA toolkit (or pip install nvidia-cuda-runtime), ` +
          'or set CUDADRV_CUDADEVRT_PATH to the file',
      );
    }
    deviceRuntime = { kind: 'library', name: 'libcudadevrt.a', data: readInput(found.path) };
  }
  return deviceRuntime;
}

// ---- the link ----

function checkArch(arch) {
  if (arch === undefined) {
    const capability = binding.currentComputeCapability();
    if (!capability) {
      throw new RangeError(
        "Linker needs arch ('sm_90', ...) where no context is current: it links for the current context's device",
      );
    }
    return `sm_${capability[0]}${capability[1]}`;
  }
  if (typeof arch !== 'string' || !/^sm_\d{2,3}[af]?$/.test(arch)) {
    throw new RangeError(`arch must name the cubin's architecture, such as 'sm_90' or 'sm_90a', not ${describe(arch)}`);
  }
  return arch;
}

// The driver's linker in place of nvJitLink: its JIT options, or why it cannot serve.
function driverOptions(linker, inputs) {
  const why = missing ? missing.message : 'nvJitLink could not be loaded';
  if (linker.lto || inputs.some((input) => input.kind === 'ltoir')) {
    throw new RuntimeError(`link-time optimization (LTO-IR inputs, lto: true) needs nvJitLink: ${why}`);
  }
  if (linker.options.length) {
    throw new RuntimeError(
      `the link options ${linker.options.join(' ')} need nvJitLink (the driver's linker, cuLink, ` +
        `serves without it, and takes none): ${why}`,
    );
  }
  if (!binding.currentComputeCapability()) {
    throw new LogicError(
      `nvJitLink cannot be loaded (${why}), and the driver's linker (cuLink), which serves instead, ` +
        'links in a context: make one current first, or install nvJitLink',
    );
  }
  // cuLink links for the current context's device; an arch given must be that one
  if (linker.arch !== undefined && linker.arch !== checkArch(undefined)) {
    throw new RangeError(
      `the driver's linker (cuLink, serving because nvJitLink cannot be loaded) links for the current ` +
        `device, ${checkArch(undefined)}, not ${linker.arch}: ${why}`,
    );
  }
  return [[], []];
}

// The names of CUresults, for the driver linker's failures.
let resultNames = null;
function cudaResultName(code) {
  resultNames ??= new Map(Object.entries(require('../driver/constants').CudaResult).map(([n, v]) => [v, `CUDA_${n}`]));
  return resultNames.get(code) ?? `CUresult ${code}`;
}

// A LinkError for a link that failed; a driver's failure without a log (out of memory...) is the
// error its CUresult is everywhere.
function failure(outcome, inputs, driver) {
  if (outcome.error) return outcome.error;
  if (driver && !outcome.errorLog) return makeError(outcome.code, outcome.api, '');
  const input = inputs[outcome.input]?.name ?? null; // -1: none
  if (driver) outcome.codeName = cudaResultName(outcome.code);
  const log = outcome.errorLog.trimEnd();
  return new LinkError(
    `${outcome.api} failed: ${outcome.codeName}` +
      (input ? ` adding ${input}` : '') +
      (driver ? " (the driver's linker: nvJitLink could not be loaded)" : '') +
      (log ? `\n${log}` : ''),
    {
      code: outcome.code,
      codeName: outcome.codeName,
      api: outcome.api,
      log: outcome.errorLog,
      infoLog: outcome.infoLog,
      input,
    },
  );
}

// The outcome of an isolated link (lib/compiler/isolated.js) as the binding gives one; a LinkError
// thrown where the helper ended (a crash in nvJitLink). nvJitLink prints some errors to stderr
// alone, and may give a cubin all the same: an error there fails the link.
function isolatedOutcome(job, result) {
  const names = job.inputs.map((input) => input.name).join(', ');
  const info = { api: 'nvJitLinkComplete', log: result.stderr, input: null };
  if (result.error !== undefined) throw isolated.helperError(result, 'link');
  if (result.ended) {
    throw new LinkError(
      `nvJitLink crashed linking ${names}: its isolated helper process ${result.ended} (the next link starts another)` +
        (result.stderr ? `\n${result.stderr.trimEnd()}` : ''),
      { ...info, codeName: result.signal },
    );
  }
  const outcome = result.outcome;
  if (outcome.code === 0 && /^error\b/m.test(result.stderr)) {
    throw new LinkError(`nvJitLink reported errors linking ${names}\n${result.stderr.trimEnd()}`, {
      ...info,
      infoLog: outcome.infoLog,
    });
  }
  if (result.stderr) outcome[outcome.code === 0 ? 'infoLog' : 'errorLog'] += result.stderr;
  return outcome;
}

/**
 * Links device code into one cubin: `new Linker({ arch, lto, options, deviceRuntime, cacheDir })`,
 * then `add(image, { kind, name })` or `addFile(path)` for each input, then `link()` (on a thread
 * of its own, waited for) or `await linkAsync()`. The result is a Buffer holding the cubin, for
 * `moduleFromBuffer` or `libraryFromBuffer`.
 */
class Linker {
  constructor(opts) {
    if (opts === undefined || opts === null) opts = {};
    if (typeof opts !== 'object') throw new TypeError(`Linker options must be an object, not ${describe(opts)}`);
    for (const key of Object.keys(opts)) {
      if (!OPTIONS.includes(key)) {
        throw new TypeError(`unknown Linker option ${JSON.stringify(key)}; the options are ${OPTIONS.join(', ')}`);
      }
    }
    const {
      arch,
      lto = false,
      options = [],
      deviceRuntime: runtime = false,
      cacheDir,
      isolated: isolate = isolated.isolatedByDefault(),
    } = opts;
    if (arch !== undefined) checkArch(arch);
    for (const [name, value] of [
      ['lto', lto],
      ['deviceRuntime', runtime],
      ['isolated', isolate],
    ]) {
      if (typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean, not ${describe(value)}`);
    }
    if (Array.isArray(options)) list('options', options, 'an array');
    if (!Array.isArray(options) || !options.every((o) => typeof o === 'string' && o && !o.includes('\0'))) {
      throw new TypeError(
        `options must be an array of nvJitLink option strings ('-O3', ...), not ${describe(options)}`,
      );
    }
    for (const option of options) {
      if (option.startsWith('-arch') || option === '-lto' || option === '-ptx') {
        throw new RangeError(
          `give ${option} as the arch or lto option of the Linker (it links into a cubin), not in options`,
        );
      }
    }
    if (
      cacheDir !== undefined &&
      cacheDir !== null &&
      cacheDir !== false &&
      (typeof cacheDir !== 'string' || !cacheDir)
    ) {
      throw new TypeError(`cacheDir must be a directory's path, null or false, not ${describe(cacheDir)}`);
    }
    /** The architecture linked for (sm_XY); undefined: the current context's device. */
    this.arch = arch;
    /** Whether the link optimizes across LTO-IR inputs. */
    this.lto = lto;
    /** nvJitLink's options, beside arch and lto. */
    this.options = [...options];
    /** Whether libcudadevrt (kernels launching kernels) is linked in. */
    this.deviceRuntime = runtime;
    /** Whether nvJitLink links in a helper process (see compile()'s isolated option); the
     * driver's linker, which links in this process's context, never does. */
    this.isolated = isolate;
    /** nvJitLink's information log from the last link ('' before). */
    this.log = '';
    Object.defineProperties(this, {
      _inputs: { value: [] },
      _cacheDir: { value: cache.cacheDirFor(cacheDir) },
    });
  }

  /** Adds an image: a Buffer or other bytes (copied now), or a PTX string. `kind` defaults to
   * what the image says (a compile result's `kind`, else its first bytes); `name` appears in the
   * linker's messages. Returns the linker. */
  add(image, opts) {
    const { kind, name } = addOptions(opts);
    const bytes = bytesOf(image);
    if (bytes.length === 0) throw new RangeError('an input must not be empty');
    const inputKind = checkKind(kind ?? (KINDS.includes(image?.kind) ? image.kind : sniff(bytes)));
    const input = {
      kind: inputKind,
      name: name ?? `input${this._inputs.length}.${inputKind}`,
      data: Buffer.from(bytes), // a copy: the caller may change its bytes before link()
    };
    checkInput(input);
    this._inputs.push(input);
    return this;
  }

  /** Adds the file at path, read now; its kind from its extension (.cubin .ptx .ltoir .fatbin .o
   * .a), else from its first bytes, unless given. Returns the linker. */
  addFile(file, opts) {
    if (typeof file !== 'string' || !file)
      throw new TypeError(`path must be a non-empty string, not ${describe(file)}`);
    const { kind } = addOptions(opts);
    const data = readInput(file);
    return this.add(data, { kind: kind ?? BY_EXTENSION[path.extname(file).toLowerCase()], name: path.basename(file) });
  }

  /** Which linker a link uses now: 'nvJitLink', or 'cuLink' (the driver's) where nvJitLink
   * cannot be loaded. */
  get backend() {
    return nvJitLinkAvailable() ? 'nvJitLink' : 'cuLink';
  }

  /** Links on a thread of its own and waits: a Buffer holding the cubin, with `log`, `kind`
   * ('cubin') and `target` (the arch). A LinkError carries the linker's whole log. */
  link() {
    const job = this._job();
    if (job.cached) return job.cached;
    if (job.isolated) return this._settle(job, isolatedOutcome(job, isolated.runSync('link', loaded.path, job.args)));
    return this._settle(job, binding.link(...job.args));
  }

  /** Links on a thread of its own: a Promise of what link() returns; the event loop stays free.
   * `signal` gives up waiting (an AbortError); the link itself runs to its end, except an
   * isolated one, whose helper is ended. */
  async linkAsync(opts) {
    const signal = checkSignal(opts?.signal ?? undefined);
    if (signal?.aborted) throw abortError('the link', signal);
    const job = this._job();
    if (job.cached) return job.cached;
    if (job.isolated) {
      const { promise, cancel } = isolated.run('link', loaded.path, job.args);
      const stop = signal ? onAbort(signal, cancel) : noop;
      return abortable(signal, 'the link', () =>
        promise.then((result) => {
          stop();
          return result.cancelled ? null : this._settle(job, isolatedOutcome(job, result));
        }),
      );
    }
    if (job.driver)
      return abortable(signal, 'the link', () => binding.linkAsync(...job.args).then((o) => this._settle(job, o)));
    // nvJitLink links run one at a time on the linking thread: each waits here for its turn, and
    // one whose caller has given up by then is dropped with its inputs instead of linked.
    const caller = { gone: false };
    const turn = linkTurns.then(() => (caller.gone ? null : binding.linkAsync(...job.args)));
    linkTurns = turn.then(noop, noop);
    const linked = abortable(signal, 'the link', () => turn.then((o) => o && this._settle(job, o)));
    return linked.catch((error) => {
      caller.gone = signal?.aborted ?? false; // an AbortError: its link need not run
      throw error;
    });
  }

  // What a link needs: the inputs, the backend's arguments, the cache key, or the cached cubin.
  _job() {
    const inputs = [...this._inputs];
    if (this.deviceRuntime) inputs.push(deviceRuntimeInput());
    if (!inputs.length) throw new LogicError('nothing to link: add() inputs first');
    checkDistinct(inputs);
    const driver = !nvJitLinkAvailable();
    let options = [];
    let jit = [[], []];
    let target;
    if (driver) {
      jit = driverOptions(this, inputs);
      target = checkArch(undefined);
    } else {
      const lateLto = !this.lto && inputs.find((input) => input.kind === 'ltoir');
      if (lateLto) {
        throw new RangeError(
          `${lateLto.name} is LTO-IR, which links only with link-time optimization: make the Linker with { lto: true }`,
        );
      }
      target = checkArch(this.arch);
      checkCubinArchs(inputs, target);
      options = [`-arch=${target}`, ...(this.lto ? ['-lto'] : []), ...this.options];
    }
    const args = [
      driver,
      options,
      jit[0],
      jit[1],
      inputs.map((i) => i.kind),
      inputs.map((i) => i.name),
      inputs.map((i) => i.data),
    ];
    const job = { args, inputs, driver, isolated: !driver && this.isolated, target, key: null, cached: null };
    if (!driver && this._cacheDir) {
      job.key = linkKey(options, inputs);
      const entry = cache.lookup(this._cacheDir, job.key);
      if (entry) job.cached = this._deliver(entry, true);
    }
    return job;
  }

  _settle(job, outcome) {
    cache.stats.links++;
    if (outcome.code !== 0) {
      this.log = outcome.infoLog;
      throw failure(outcome, job.inputs, job.driver);
    }
    const entry = { image: outcome.image, log: outcome.infoLog, loweredNames: [], target: job.target, kind: 'cubin' };
    if (job.key) cache.store(this._cacheDir, job.key, entry);
    return this._deliver(entry, false);
  }

  // The cubin as a Buffer of its own (a cached entry's bytes stay the cache's).
  _deliver(entry, copy) {
    let image = entry.image;
    if (copy) {
      image = Buffer.allocUnsafeSlow(entry.image.length);
      image.set(entry.image);
    }
    this.log = entry.log;
    image.log = entry.log;
    image.kind = 'cubin';
    image.target = entry.target;
    return image;
  }
}

// The cache key of a link: nvJitLink's identity, the options, and every input's digest.
function linkKey(options, inputs) {
  const stamp = binding.stat(loaded.path);
  const head = JSON.stringify([
    'cudadrv-link-2',
    loaded.version,
    loaded.path,
    stamp,
    options,
    inputs.map((i) => [i.kind, i.name, i.data.length]),
  ]);
  return binding.blake2b([head, ...inputs.map(digestOf)], 32);
}

module.exports = { Linker, KINDS, nvJitLinkLibrary, nvJitLinkVersion };
