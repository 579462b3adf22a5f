'use strict';
// A compile's request: compile()'s source and options checked, and everything the compile and its
// cache key need settled (the options NVRTC gets, the target, the include directories, the key).
const fs = require('fs');
const path = require('path');
const binding = require('../internal/binding');
const { RuntimeError } = require('../driver/errors');
const { describe, list } = require('../internal/checks');
const { checkSignal } = require('../internal/abort');
const cache = require('./cache');
const nvrtc = require('./nvrtc');
const { isolatedByDefault } = require('./isolated');

/** The package's header directory, always on NVRTC's include path (last). */
const INCLUDE_DIR = path.join(__dirname, '..', '..', 'include');

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
    if (c === '\\' && text[i + 1] === '\n') {
      // a line continuation
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

const KNOWN = [
  'options',
  'noExternC',
  'arch',
  'code',
  'includeDirs',
  'headers',
  'nameExpressions',
  'keep',
  'cacheDir',
  'name',
  'messageHandler',
  'signal',
  'timeout',
  'relocatable',
  'lto',
  'isolated',
];

const TIMEOUT_LIMIT = 2 ** 31 - 1; // setTimeout's longest delay, in ms

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
  return list(what, value, 'an array of strings').map((item, i) => text(`${what}[${i}]`, item, options));
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
    throw new RuntimeError(
      `${what}: ${JSON.stringify(dir)} is not a readable directory ` +
        `(${error.message}); give directories that exist and can be read`,
    );
  }
  return dir;
}

const toolkitIncludes = new Map(); // NVRTC's library path → the toolkit's include directory or null

/** The include directory of the toolkit NVRTC was loaded from (where cuda_fp16.h and the like
 * are), on NVRTC's include path by default; null where there is none. */
function toolkitInclude(libraryPath) {
  if (typeof libraryPath !== 'string') return null;
  if (!toolkitIncludes.has(libraryPath)) {
    const root = path.dirname(path.dirname(libraryPath)); // .../lib64/libnvrtc.so → ...
    const candidates = [path.join(root, 'include'), path.join(path.dirname(root), 'cuda_runtime', 'include')];
    const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'cuda_fp16.h'))) ?? null;
    toolkitIncludes.set(libraryPath, found);
  }
  return toolkitIncludes.get(libraryPath);
}

// The source inside extern "C" { }, so that kernels keep their names, but for its system headers
// (#include <...>): C++ that C linkage breaks (cuda_fp16.h's overloads), included outside it. #line
// keeps NVRTC's line numbers those of the source as given.
function wrap(source, noExternC) {
  if (noExternC) return source;
  const out = ['extern "C" {', '#line 1'];
  source.split('\n').forEach((line, i) => {
    if (/^\s*#\s*include\s*</.test(line)) out.push('}', `#line ${i + 1}`, line, 'extern "C" {', `#line ${i + 2}`);
    else out.push(line);
  });
  out.push('}', '');
  return out.join('\n');
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
  const userOptions =
    opts.options === undefined ? strings('DEFAULT_OPTIONS', DEFAULT_OPTIONS) : strings('options', opts.options);
  const nameExpressions =
    opts.nameExpressions === undefined ? [] : strings('nameExpressions', opts.nameExpressions, { empty: false });
  const noExternC = optional('noExternC', opts.noExternC, 'boolean') ?? nameExpressions.length > 0;
  const keep = optional('keep', opts.keep, 'boolean') ?? false;
  const messageHandler = optional('messageHandler', opts.messageHandler, 'function');
  const includeDirs = opts.includeDirs === undefined ? [] : strings('includeDirs', opts.includeDirs, { empty: false });
  let headers = opts.headers ?? {};
  if (typeof headers !== 'object' || Array.isArray(headers)) {
    throw new TypeError(
      'headers must be an object mapping include names to sources, not ' +
        `${Array.isArray(headers) ? 'an array' : describe(headers)}`,
    );
  }
  headers = Object.entries(headers);
  headers.forEach(([header, contents]) => {
    text('a header name', header, { empty: false });
    text(`headers[${JSON.stringify(header)}]`, contents);
  });
  if (opts.cacheDir !== undefined && opts.cacheDir !== null && opts.cacheDir !== false) {
    text('cacheDir', opts.cacheDir, { empty: false });
  }
  const signal = checkSignal(opts.signal ?? undefined);
  const timeout = optional('timeout', opts.timeout, 'number');
  if (timeout !== undefined && !(timeout >= 0 && timeout <= TIMEOUT_LIMIT)) {
    throw new RangeError(`timeout must be a number of milliseconds from 0 to ${TIMEOUT_LIMIT}, not ${timeout}`);
  }
  const relocatable = optional('relocatable', opts.relocatable, 'boolean') ?? false;
  const lto = optional('lto', opts.lto, 'boolean') ?? false;
  const isolated = optional('isolated', opts.isolated, 'boolean') ?? isolatedByDefault();
  const arch = opts.arch === undefined ? undefined : text('arch', opts.arch);
  const code = opts.code === undefined ? undefined : text('code', opts.code);

  const cacheDir = cache.cacheDirFor(opts.cacheDir);
  const identity = cache.nvrtcIdentity(cacheDir);
  const archOptions = optionValues(userOptions, ['-arch', '--gpu-architecture']);
  if (archOptions.length && (arch || code)) {
    throw new RangeError(
      `the architecture is given twice, in options (${archOptions.join(', ')}) and as ` + 'arch/code; give it once',
    );
  }
  if (archOptions.length > 1) {
    throw new RangeError(`options give more than one architecture: ${archOptions.join(', ')}`);
  }
  if (arch && code && nvrtc.parseArch('arch', arch).number !== nvrtc.parseArch('code', code).number) {
    throw new RangeError(
      `arch ${arch} and code ${code} name different architectures, and NVRTC ` +
        'compiles for one: give code alone (compute_XY for PTX, sm_XY for a cubin)',
    );
  }
  const given = archOptions[0] ?? code ?? arch;
  let target;
  if (given !== undefined) {
    nvrtc.checkSupported(archOptions.length ? 'the -arch option' : code ? 'code' : 'arch', given, identity);
    target = given;
  } else {
    target = nvrtc.pickTarget(identity.archs, binding.currentComputeCapability(), identity.version);
  }
  const toolkit = toolkitInclude(identity.library);
  const defaultDirs = toolkit ? [toolkit, INCLUDE_DIR] : [INCLUDE_DIR];
  const options = [...userOptions, ...includeDirs.map((dir) => `-I${dir}`), ...defaultDirs.map((dir) => `-I${dir}`)];
  if (!archOptions.length) options.push(`-arch=${target}`);
  // -dlto implies -rdc=true (NVRTC's documentation); the output is then LTO-IR whatever the target
  if (lto) options.push('-dlto');
  else if (relocatable) options.push('-rdc=true');
  const searchDirs = [...includeDirs, ...optionValues(userOptions, ['-I', '--include-path']), ...defaultDirs].map(
    (dir) => path.resolve(dir),
  );
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
    kind: lto ? 'ltoir' : target.startsWith('sm_') ? 'cubin' : 'ptx',
    searchDirs,
    preIncludes: optionValues(userOptions, ['-include', '--pre-include']),
    cacheDir,
    key: null,
    keep,
    messageHandler,
    signal,
    timeout,
    isolated,
    nvrtcLibrary: identity.library,
  };
  // A request made before skips what looks at the file system beyond its included files.
  if (cacheDir) req.key = cache.knownKey(req, identity.id);
  if (!req.key) {
    includeDirs.forEach((dir, i) => readableDir(`includeDirs[${i}]`, dir));
    // both look at every included file, and refuse one NVRTC would block on or read forever
    if (cacheDir) req.key = cache.cacheKey(req, identity.id);
    else cache.includedFiles(req);
  }
  return req;
}

module.exports = { request, splitShellWords, toolkitInclude, DEFAULT_OPTIONS, INCLUDE_DIR };
