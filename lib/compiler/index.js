'use strict';
/**
 * cudadrv/compiler: CUDA C++ compiled at run time by NVRTC (PyCUDA's pycuda.compiler), into a
 * cubin or PTX, on a thread of its own (compile) or on the calling thread (compileSync), through
 * a content-addressed cache (lib/compiler-cache.js).
 */
const fs = require('fs');
const os = require('os');
const path = require('path');
const { AbortError, CompileError, LinkError, RuntimeError } = require('../driver/errors');
const cache = require('./cache');
const nvrtc = require('./nvrtc');
const isolated = require('./isolated');
const { request, DEFAULT_OPTIONS } = require('./request');
const { onAbort } = require('../internal/abort');

// ---- results ----

function compileArgs(req) {
  return [req.source, req.name, req.options, req.headerNames, req.headerSources, req.nameExpressions, req.kind];
}

// The outcome of an isolated compile (lib/compiler/isolated.js) as the binding gives one: a crash
// is an outcome with `crash` (how the helper ended), and the helper's stderr joins the log.
function isolatedOutcome(req, result) {
  if (result.cancelled) throw aborted(req);
  if (result.error !== undefined) throw isolated.helperError(result, 'compile');
  const outcome = result.outcome ?? {
    code: null,
    codeName: result.signal,
    api: 'nvrtcCompileProgram',
    crash: result.ended,
  };
  outcome.log = [outcome.log, result.stderr].filter(Boolean).join('\n');
  return outcome;
}

function compileNow(req) {
  if (req.isolated) return isolatedOutcome(req, isolated.runSync('compile', req.nvrtcLibrary, compileArgs(req)));
  return nvrtc.loadNvrtc().nvrtcCompile(...compileArgs(req));
}

// compileNow off the main thread: the job's cancel() stops an isolated compile (ends its helper).
function compileLater(req, job) {
  if (!req.isolated) return nvrtc.loadNvrtc().nvrtcCompileAsync(...compileArgs(req));
  const { promise, cancel } = isolated.run('compile', req.nvrtcLibrary, compileArgs(req));
  job.cancel = cancel;
  return promise.then((result) => isolatedOutcome(req, result));
}

// Writes the source, options, log and output to a new temporary directory, and says where.
function keepFiles(req, outcome) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-'));
  const file = path.basename(req.name);
  const stem = file.replace(/\.[^.]*$/, '') || 'kernel';
  fs.writeFileSync(path.join(dir, file), req.source);
  req.headerNames.forEach((header, i) => {
    const target = path.join(dir, header);
    if (path.isAbsolute(header) || !target.startsWith(dir + path.sep)) return; // stays inside dir
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, req.headerSources[i]);
  });
  fs.writeFileSync(path.join(dir, 'options.txt'), `${req.options.join('\n')}\n`);
  fs.writeFileSync(path.join(dir, `${stem}.log`), outcome.log);
  if (outcome.image) fs.writeFileSync(path.join(dir, `${stem}.${req.kind}`), outcome.image);
  process.stderr.write(`cudadrv: compiler output kept in ${dir}\n`);
  return dir;
}

// What a failed compile's log says that cudadrv's own wrapping caused, and what to do.
function hintFor(req, log) {
  if (!req.noExternC && /extern "C" linkage/.test(log)) {
    return (
      '\n(cudadrv compiles the source inside extern "C" { } so that kernels keep their names, and ' +
      'templates and overloads cannot have C linkage there: pass { noExternC: true }, and mark the ' +
      'kernels to get by name extern "C", or give nameExpressions for templates)'
    );
  }
  return '';
}

// The entry for a finished compile, or the CompileError for a failed one (thrown).
function settle(req, outcome) {
  cache.stats.compiles++;
  if (outcome.refused) {
    const [file, why] = outcome.refused.split(/: (?=[^:]*$)/);
    throw new RuntimeError(
      `${file}, which NVRTC opened for an #include of ${req.name}, was refused: ${why} (a FIFO or device would ` +
        'block NVRTC or never end); remove it or change the include path',
    );
  }
  const keptIn = req.keep ? keepFiles(req, outcome) : undefined;
  if (outcome.code !== 0) {
    const log = outcome.log.trimEnd();
    const what = outcome.crash
      ? `NVRTC crashed compiling ${req.name}: its isolated helper process ${outcome.crash} (the next compile starts another)`
      : `${outcome.api} failed: ${outcome.codeName} compiling ${req.name}`;
    throw new CompileError(what + (log ? `\n${log}` : '') + hintFor(req, log), {
      code: outcome.code,
      codeName: outcome.codeName ?? outcome.crash,
      api: outcome.api,
      log: outcome.log,
      options: req.options.slice(),
      source: req.name,
    });
  }
  const { image, log, loweredNames } = outcome;
  // unclaimed: the first caller to deliver takes the image; callers sharing the compile copy it
  const entry = { image, log, loweredNames, target: req.target, kind: req.kind, unclaimed: true };
  if (req.key) cache.store(req.cacheDir, req.key, { ...entry, unseen: cache.unseenFiles(req, outcome.files) });
  return keptIn ? { ...entry, keptIn } : entry;
}

// The Buffer a compile gives, with the log, the lowered names by name expression, and the
// target: the image alone in its memory (never in Buffer's shared pool): a fresh compile's own
// image to its first caller, else a copy (the cache's entries and shared compiles stay intact).
function deliver(req, entry) {
  if (entry.log && req.messageHandler) req.messageHandler(entry.log);
  let image = entry.image;
  if (entry.unclaimed) {
    entry.unclaimed = false;
  } else {
    image = Buffer.allocUnsafeSlow(entry.image.length);
    image.set(entry.image);
  }
  image.log = entry.log;
  // own properties only, even for an expression named __proto__
  image.loweredNames = Object.fromEntries(
    req.nameExpressions.map((expression, i) => [expression, entry.loweredNames[i]]),
  );
  image.target = entry.target;
  image.kind = entry.kind;
  if (entry.keptIn) image.keptIn = entry.keptIn;
  return image;
}

function cached(req) {
  return req.key && !req.keep ? cache.lookup(req.cacheDir, req.key) : null;
}

/**
 * Compiles CUDA C++ on the calling thread: a Buffer holding a cubin (target sm_XY) or PTX text
 * (compute_XY), with `log` (NVRTC's warnings), `loweredNames` ({ nameExpression: loweredName })
 * and `target`. A CompileError carries NVRTC's log when it refuses the source. The calling thread
 * cannot be interrupted: a `signal` already aborted throws an AbortError, and `timeout` is
 * compile()'s alone.
 */
function compileSync(source, opts) {
  const req = request(source, opts);
  if (req.timeout !== undefined) {
    throw new TypeError('compileSync cannot be interrupted, so it takes no timeout; use compile()');
  }
  if (req.signal?.aborted) throw aborted(req);
  return deliver(req, cached(req) ?? settle(req, compileNow(req)));
}

// Compiles in flight by key (a second compile of the same source waits for the first), and at
// most one per processor at once: each NVRTC compile takes a thread and much memory.
const inFlight = new Map();
const SLOTS = (os.availableParallelism ? os.availableParallelism() : os.cpus().length) || 1;
let running = 0;
const queue = [];

async function inSlot(work) {
  if (running >= SLOTS) await new Promise((resolve) => queue.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    queue.shift()?.();
  }
}

// A compile: { promise, callers }. One still waiting for a slot when all its callers have given
// up (signal, timeout) never starts.
function produce(req) {
  const shared = req.key && !req.keep;
  let job = shared ? inFlight.get(req.key) : undefined;
  if (job) {
    job.callers++;
  } else {
    const started = { callers: 1 }; // this caller, counted before inSlot may start the work
    started.promise = inSlot(() => {
      if (started.callers === 0) {
        if (inFlight.get(req.key) === started) inFlight.delete(req.key); // a later caller starts afresh
        throw aborted(req);
      }
      return compileLater(req, started);
    }).then((outcome) => settle(req, outcome));
    // The last caller gone: an isolated compile stops (cancel() ends its helper); one in this
    // process cannot be interrupted, so it goes on, and fills the cache.
    started.giveUp = () => {
      if (!started.cancel) return;
      if (inFlight.get(req.key) === started) inFlight.delete(req.key);
      started.cancel();
    };
    if (shared) {
      inFlight.set(req.key, started);
      const forget = () => inFlight.delete(req.key);
      started.promise.then(forget, forget);
    }
    job = started;
  }
  return job;
}

function aborted(req) {
  const reason = req.signal?.reason;
  return new AbortError(
    `the compile of ${req.name} was aborted` + (reason instanceof Error ? `: ${reason.message}` : ''),
    { cause: reason },
  );
}

// The job's promise, or an AbortError as soon as the request's signal aborts or its timeout passes.
function awaitJob(req, job) {
  const { signal, timeout } = req;
  if (!signal && timeout === undefined) return job.promise;
  return new Promise((resolve, reject) => {
    let timer = null;
    let stopListening = null;
    const finish = (settleWith, value) => {
      clearTimeout(timer);
      stopListening?.();
      settleWith(value);
    };
    const giveUp = (error) => {
      if (--job.callers === 0) job.giveUp();
      finish(reject, error);
    };
    if (signal) stopListening = onAbort(signal, () => giveUp(aborted(req)));
    if (timeout !== undefined) {
      timer = setTimeout(
        () => giveUp(new AbortError(`the compile of ${req.name} took longer than its timeout of ${timeout} ms`)),
        timeout,
      );
    }
    job.promise.then(
      (value) => finish(resolve, value),
      (error) => finish(reject, error),
    );
  });
}

/** Compiles CUDA C++ on a thread of its own: a Promise of what compileSync returns. The event
 * loop stays free meanwhile. It rejects with an AbortError when `signal` aborts or `timeout`
 * passes first. */
async function compile(source, opts) {
  const req = request(source, opts);
  if (req.signal?.aborted) throw aborted(req);
  return deliver(req, cached(req) ?? (await awaitJob(req, produce(req))));
}

// ---- SourceModule ----

const precompiled = Symbol('precompiled');

// The class, made on first use: compiling needs neither Module nor what it loads (the kernels'
// argument packing, memory...), which would take longer to load than a cached compile.
let sourceModule = null;

function sourceModuleClass() {
  const { Module } = require('../kernel/module');
  /**
   * A Module compiled from CUDA C++ source (PyCUDA's SourceModule): `new SourceModule(source, opts)`
   * compiles on the calling thread and loads the result into the current context;
   * `await SourceModule.compile(source, opts)` compiles on a thread of its own first. opts are
   * compile()'s. `loweredNames` maps name expressions to symbols, and getFunction/getGlobal accept
   * either.
   */
  return class SourceModule extends Module {
    constructor(source, opts) {
      const [text, image] = source === precompiled ? [opts.source, opts.image] : [source, compileSync(source, opts)];
      // The source lets Module read the kernels' __global__ signatures, so bare numbers work.
      super(image, { source: text });
      /** NVRTC's warnings. */
      this.log = image.log;
      /** { nameExpression: loweredName } */
      this.loweredNames = image.loweredNames;
    }

    /** A Promise of a SourceModule, compiled off the main thread, then loaded. */
    static async compile(source, opts) {
      return new this(precompiled, { source, image: await compile(source, opts) });
    }

    getFunction(name) {
      return super.getFunction(this.lowered(name));
    }

    getGlobal(name) {
      return super.getGlobal(this.lowered(name));
    }

    /** The symbol for name: its lowered name when it is one of the name expressions. */
    lowered(name) {
      const names = this.loweredNames; // unset while Module's constructor runs
      return typeof name === 'string' && names && Object.hasOwn(names, name) ? names[name] : name;
    }
  };
}

// DynamicSourceModule's compile options, and the Linker it makes for them.
function dynamicParts(opts) {
  const { linkOptions, ...compileOptions } = opts ?? {};
  if (compileOptions.lto !== undefined) {
    throw new TypeError('DynamicSourceModule compiles relocatable code and links it without LTO: give no lto option');
  }
  const { Linker } = require('./linker');
  const linkerFor = (image) =>
    new Linker({
      arch: image.target.startsWith('sm_') ? image.target : undefined,
      options: linkOptions,
      deviceRuntime: true,
    }).add(image, {
      name: compileOptions.name ?? 'kernel.cu',
    });
  return { compileOptions: { ...compileOptions, relocatable: true }, linkerFor };
}

// The linked cubin, carrying what SourceModule reads of a compile's result.
function linkedImage(image, linked) {
  linked.log = [image.log, linked.log].filter(Boolean).join('\n');
  linked.loweredNames = image.loweredNames;
  return linked;
}

function dynamicSourceModuleClass() {
  const SourceModule = lazy.SourceModule;
  /**
   * A SourceModule whose code may launch kernels itself (dynamic parallelism) and call device
   * functions of other translation units (PyCUDA's DynamicSourceModule): `new
   * DynamicSourceModule(source, opts)` compiles relocatable code (-rdc), links it with the device
   * runtime (libcudadevrt) and loads it into the current context. opts are compile()'s, and
   * `linkOptions` (the Linker's `options`); `await DynamicSourceModule.compile(source, opts)`
   * compiles and links off the main thread.
   */
  return class DynamicSourceModule extends SourceModule {
    constructor(source, opts) {
      if (source === precompiled) {
        super(precompiled, opts);
        return;
      }
      const { compileOptions, linkerFor } = dynamicParts(opts);
      const image = compileSync(source, compileOptions);
      super(precompiled, { source, image: linkedImage(image, linkerFor(image).link()) });
    }

    /** A Promise of a DynamicSourceModule, compiled and linked off the main thread, then loaded. */
    static async compile(source, opts) {
      const { compileOptions, linkerFor } = dynamicParts(opts);
      const image = await compile(source, compileOptions);
      const linked = await linkerFor(image).linkAsync({ signal: compileOptions.signal });
      return new this(precompiled, { source, image: linkedImage(image, linked) });
    }
  };
}

let dynamicSourceModule = null;

const lazy = {
  get SourceModule() {
    sourceModule ??= sourceModuleClass();
    return sourceModule;
  },
  get DynamicSourceModule() {
    dynamicSourceModule ??= dynamicSourceModuleClass();
    return dynamicSourceModule;
  },
  get Linker() {
    return require('./linker').Linker;
  },
};

/** [major, minor] of the nvJitLink cudadrv links with; a RuntimeError names the libraries tried
 * when none loads. */
function nvJitLinkVersion() {
  return require('./linker').nvJitLinkVersion();
}

// (cjs-module-lexer, which finds the names ESM imports, stops at the first `key: value`.)
module.exports = {
  DEFAULT_OPTIONS,
  compile,
  compileSync,
  nvJitLinkVersion,
  CompileError,
  LinkError,
  nvrtcVersion: nvrtc.nvrtcVersion,
};
// Getters of this form, so that ESM's named imports find them too (cjs-module-lexer reads them):
// each class is made on first use.
Object.defineProperty(module.exports, 'SourceModule', {
  enumerable: true,
  get() {
    return lazy.SourceModule;
  },
});
Object.defineProperty(module.exports, 'DynamicSourceModule', {
  enumerable: true,
  get() {
    return lazy.DynamicSourceModule;
  },
});
Object.defineProperty(module.exports, 'Linker', {
  enumerable: true,
  get() {
    return lazy.Linker;
  },
});
