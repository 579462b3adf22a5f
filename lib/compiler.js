'use strict';
/**
 * cudadrv/compiler: CUDA C++ compiled at run time by NVRTC (PyCUDA's pycuda.compiler), into a
 * cubin or PTX, on a thread of its own (compile) or on the calling thread (compileSync), through
 * a content-addressed cache (lib/compiler-cache.js).
 */
const fs = require('fs');
const os = require('os');
const path = require('path');
const binding = require('./binding');
const { CompileError, RuntimeError } = require('./errors');
const { describe } = require('./checks');
const cache = require('./compiler-cache');
const nvrtc = require('./compiler-nvrtc');

/** The package's header directory, always on NVRTC's include path (last). */
const INCLUDE_DIR = path.join(__dirname, '..', 'include');

/** Splits text into words as a POSIX shell would (quotes, backslashes), without expansions. */
function splitShellWords(text, what) {
  const words = [];
  let word = null;
  for (let i = 0; i < text.length;) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== null) words.push(word);
      word = null;
      i++;
      continue;
    }
    if (c === '\\' && text[i + 1] === '\n') { // a line continuation
      i += 2;
      continue;
    }
    word ??= '';
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new RangeError(`${what} has an unterminated ' quote: ${text}`);
      word += text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      for (i++; text[i] !== '"';) {
        if (i >= text.length) throw new RangeError(`${what} has an unterminated " quote: ${text}`);
        if (text[i] === '\\' && i + 1 < text.length && '"\\$`\n'.includes(text[i + 1])) {
          if (text[i + 1] !== '\n') word += text[i + 1]; // backslash-newline joins lines
          i += 2;
        } else {
          word += text[i++];
        }
      }
      i++;
    } else if (c === '\\') {
      word += text[i + 1] ?? '';
      i += 2;
    } else {
      word += c;
      i++;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** The options used when a compile gives none (PyCUDA's DEFAULT_NVCC_FLAGS): initially env
 * CUDADRV_DEFAULT_OPTIONS split as a shell would. An array: change it in place to change the
 * default. */
const DEFAULT_OPTIONS = splitShellWords(process.env.CUDADRV_DEFAULT_OPTIONS || '', 'CUDADRV_DEFAULT_OPTIONS');

const KNOWN = ['options', 'noExternC', 'arch', 'code', 'includeDirs', 'headers', 'nameExpressions',
  'keep', 'cacheDir', 'name', 'messageHandler'];

// ---- checking a request ----

function text(what, value, { empty = true } = {}) {
  if (typeof value !== 'string') throw new TypeError(`${what} must be a string, not ${describe(value)}`);
  if (value.includes('\0')) {
    throw new RangeError(`${what} must not contain NUL characters (NVRTC would stop reading there)`);
  }
  if (!empty && !value) throw new RangeError(`${what} must not be empty`);
  return value;
}

function strings(what, value, options) {
  if (!Array.isArray(value)) throw new TypeError(`${what} must be an array of strings, not ${describe(value)}`);
  return value.map((item, i) => text(`${what}[${i}]`, item, options));
}

function optional(what, value, type) {
  if (value !== undefined && typeof value !== type) {
    throw new TypeError(`${what} must be a ${type}, not ${describe(value)}`);
  }
  return value;
}

// An option that takes a value, given as '-X=v', '-Xv' (short forms) or '-X', 'v': its values.
function optionValues(options, names) {
  const values = [];
  options.forEach((option, i) => {
    for (const name of names) {
      if (option === name && i + 1 < options.length) values.push(options[i + 1]);
      else if (option.startsWith(`${name}=`)) values.push(option.slice(name.length + 1));
      else if (name === '-I' && option.startsWith('-I') && option.length > 2) values.push(option.slice(2));
    }
  });
  return values;
}

function readableDir(what, dir) {
  try {
    if (!fs.statSync(dir).isDirectory()) throw new Error('not a directory');
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.X_OK);
  } catch (error) {
    throw new RuntimeError(`${what}: ${JSON.stringify(dir)} is not a readable directory ` +
      `(${error.message}); give directories that exist and can be read`);
  }
  return dir;
}

function wrap(source, noExternC) {
  // #line keeps NVRTC's line numbers those of the source as given
  return noExternC ? source : `extern "C" {\n#line 1\n${source}\n}\n`;
}

// Checks source and opts, and settles everything a compile needs: the request.
function request(source, opts) {
  if (opts === undefined || opts === null) opts = {};
  if (typeof opts !== 'object' || Array.isArray(opts)) {
    throw new TypeError(`compile options must be an object, not ${describe(opts)}`);
  }
  for (const key of Object.keys(opts)) {
    if (!KNOWN.includes(key)) {
      throw new TypeError(`unknown compile option ${JSON.stringify(key)}; the options are ${KNOWN.join(', ')}`);
    }
  }
  text('source', source);
  const name = opts.name === undefined ? 'kernel.cu' : text('name', opts.name, { empty: false });
  const userOptions = opts.options === undefined
    ? strings('DEFAULT_OPTIONS', DEFAULT_OPTIONS)
    : strings('options', opts.options);
  const nameExpressions = opts.nameExpressions === undefined
    ? [] : strings('nameExpressions', opts.nameExpressions, { empty: false });
  const noExternC = optional('noExternC', opts.noExternC, 'boolean') ?? nameExpressions.length > 0;
  const keep = optional('keep', opts.keep, 'boolean') ?? false;
  const messageHandler = optional('messageHandler', opts.messageHandler, 'function');
  const includeDirs = opts.includeDirs === undefined
    ? [] : strings('includeDirs', opts.includeDirs, { empty: false });
  let headers = opts.headers ?? {};
  if (typeof headers !== 'object' || Array.isArray(headers)) {
    throw new TypeError('headers must be an object mapping include names to sources, not ' +
      `${Array.isArray(headers) ? 'an array' : describe(headers)}`);
  }
  headers = Object.entries(headers);
  headers.forEach(([header, contents]) => {
    text('a header name', header, { empty: false });
    text(`headers[${JSON.stringify(header)}]`, contents);
  });
  if (opts.cacheDir !== undefined && opts.cacheDir !== null && opts.cacheDir !== false) {
    text('cacheDir', opts.cacheDir, { empty: false });
  }
  const arch = opts.arch === undefined ? undefined : text('arch', opts.arch);
  const code = opts.code === undefined ? undefined : text('code', opts.code);

  const cacheDir = cache.cacheDirFor(opts.cacheDir);
  const identity = cache.nvrtcIdentity(cacheDir);
  const archOptions = optionValues(userOptions, ['-arch', '--gpu-architecture']);
  if (archOptions.length && (arch || code)) {
    throw new RangeError(`the architecture is given twice, in options (${archOptions.join(', ')}) and as ` +
      'arch/code; give it once');
  }
  if (archOptions.length > 1) {
    throw new RangeError(`options give more than one architecture: ${archOptions.join(', ')}`);
  }
  if (arch && code && nvrtc.parseArch('arch', arch).number !== nvrtc.parseArch('code', code).number) {
    throw new RangeError(`arch ${arch} and code ${code} name different architectures, and NVRTC ` +
      'compiles for one: give code alone (compute_XY for PTX, sm_XY for a cubin)');
  }
  const given = archOptions[0] ?? code ?? arch;
  let target;
  if (given !== undefined) {
    nvrtc.checkSupported(archOptions.length ? 'the -arch option' : code ? 'code' : 'arch', given, identity);
    target = given;
  } else {
    target = nvrtc.pickTarget(identity.archs, binding.currentComputeCapability(), identity.version);
  }
  const options = [...userOptions, ...includeDirs.map((dir) => `-I${dir}`), `-I${INCLUDE_DIR}`];
  if (!archOptions.length) options.push(`-arch=${target}`);
  const searchDirs = [...includeDirs, ...optionValues(userOptions, ['-I', '--include-path']), INCLUDE_DIR]
    .map((dir) => path.resolve(dir));
  const req = {
    text: source,
    noExternC,
    source: wrap(source, noExternC),
    name,
    options,
    headerNames: headers.map(([header]) => header),
    headerSources: headers.map(([, contents]) => contents),
    nameExpressions,
    target,
    cubin: target.startsWith('sm_'),
    searchDirs,
    preIncludes: optionValues(userOptions, ['-include', '--pre-include']),
    cacheDir,
    key: null,
    keep,
    messageHandler,
  };
  // A request made before skips what looks at the file system beyond its included files.
  if (cacheDir) req.key = cache.knownKey(req, identity.id);
  if (!req.key) {
    includeDirs.forEach((dir, i) => readableDir(`includeDirs[${i}]`, dir));
    if (cacheDir) req.key = cache.cacheKey(req, identity.id);
  }
  return req;
}

// ---- results ----

function compileArgs(req) {
  return [req.source, req.name, req.options, req.headerNames, req.headerSources, req.nameExpressions,
    req.cubin];
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
  if (outcome.image) fs.writeFileSync(path.join(dir, `${stem}.${req.cubin ? 'cubin' : 'ptx'}`), outcome.image);
  process.stderr.write(`cudadrv: compiler output kept in ${dir}\n`);
  return dir;
}

// The entry for a finished compile, or the CompileError for a failed one (thrown).
function settle(req, outcome) {
  cache.stats.compiles++;
  const keptIn = req.keep ? keepFiles(req, outcome) : undefined;
  if (outcome.code !== 0) {
    const log = outcome.log.trimEnd();
    throw new CompileError(`${outcome.api} failed: ${outcome.codeName} compiling ${req.name}` +
      (log ? `\n${log}` : ''), {
      code: outcome.code, codeName: outcome.codeName, api: outcome.api, log: outcome.log,
      options: req.options.slice(), source: req.name,
    });
  }
  const { image, log, loweredNames } = outcome;
  // unclaimed: the first caller to deliver takes the image; callers sharing the compile copy it
  const entry = { image, log, loweredNames, target: req.target, unclaimed: true };
  if (req.key) cache.store(req.cacheDir, req.key, entry);
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
    entry.image.copy(image);
  }
  image.log = entry.log;
  // own properties only, even for an expression named __proto__
  image.loweredNames = Object.fromEntries(
    req.nameExpressions.map((expression, i) => [expression, entry.loweredNames[i]]));
  image.target = entry.target;
  if (entry.keptIn) image.keptIn = entry.keptIn;
  return image;
}

function cached(req) {
  return req.key && !req.keep ? cache.lookup(req.cacheDir, req.key) : null;
}

/**
 * Compiles CUDA C++ on the calling thread: a Buffer holding a cubin (target sm_XY) or PTX text
 * (compute_XY), with `log` (NVRTC's warnings), `loweredNames` ({ nameExpression: loweredName })
 * and `target`. A CompileError carries NVRTC's log when it refuses the source.
 */
function compileSync(source, opts) {
  const req = request(source, opts);
  return deliver(req, cached(req) ?? settle(req, binding.nvrtcCompile(...compileArgs(req))));
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

function produce(req) {
  const start = () => inSlot(() => binding.nvrtcCompileAsync(...compileArgs(req))).then((o) => settle(req, o));
  if (!req.key || req.keep) return start();
  let pending = inFlight.get(req.key);
  if (!pending) {
    pending = start();
    inFlight.set(req.key, pending);
    const forget = () => inFlight.delete(req.key);
    pending.then(forget, forget);
  }
  return pending;
}

/** Compiles CUDA C++ on a thread of its own: a Promise of what compileSync returns. The event
 * loop stays free meanwhile. */
async function compile(source, opts) {
  const req = request(source, opts);
  return deliver(req, cached(req) ?? await produce(req));
}

// ---- SourceModule ----

const precompiled = Symbol('precompiled');

// The class, made on first use: compiling needs neither Module nor what it loads (the kernels'
// argument packing, memory...), which would take longer to load than a cached compile.
let sourceModule = null;

function sourceModuleClass() {
  const { Module } = require('./module');
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

const lazy = {
  get SourceModule() {
    sourceModule ??= sourceModuleClass();
    return sourceModule;
  },
};

module.exports = { DEFAULT_OPTIONS, compile, compileSync, nvrtcVersion: nvrtc.nvrtcVersion };
// A getter of this form, so that ESM's named imports find it too.
Object.defineProperty(module.exports, 'SourceModule', {
  enumerable: true,
  get() {
    return lazy.SourceModule;
  },
});
// Internal (not enumerable): for tests and benchmarks.
Object.defineProperty(module.exports, 'internal', {
  value: { cache, request, splitShellWords, pickTarget: nvrtc.pickTarget, INCLUDE_DIR },
});
