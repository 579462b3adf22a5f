'use strict';
// V8's code cache for cudadrv's own modules. V8 compiles a function the first time it runs, and
// in a new process that compiling is most of what a first compile() costs on a cache hit (on an
// H100 host such a first compile takes 1.4 to 3.7 ms without this cache, 0.55 ms with it). So
// lib/'s modules load through here rather than through Node's require: compiled with the code
// that an earlier process left in <cache dir>/js, and a process that found none (or one V8
// refused) leaves its own at exit, with every function it ran by then. A file is named by the
// module's path, a digest of the Node and V8 versions and the process's flags, and the XXH64 of
// the module's source, so it is never stale; it carries an XXH64 of its bytes, checked before V8
// sees them (V8 checks their length and versions, not every byte). CUDADRV_DISABLE_CACHE turns it
// off, as it does the compile cache.
//
// The entry modules, which Node loads (index.js, compiler.js, tools.js, autoinit.js,
// autoprimaryctx.js), take their lib/ modules through requireFrom(module); each module loaded
// here gets a require that does the same. A module lands in require.cache under its file name, as
// Node would put it there, so that a require() of it from anywhere finds the same one.
const Module = require('module');
const path = require('path');
const vm = require('vm');
const binding = require('./binding');
const { cacheDirFor } = require('./cache-dir');

const LIB = __dirname + path.sep;
const CHECKSUM = 8; // bytes of XXH64 before V8's data

/** Counters for tests: modules loaded with cached code, without, and cache files written. */
const stats = { hits: 0, misses: 0, written: 0 };

// The directory as the environment says when cudadrv is first loaded; null when caching is off.
const cacheRoot = cacheDirFor(undefined);
const directory = cacheRoot && path.join(cacheRoot, 'js');
const unwritten = []; // [file name, vm.Script] to cache at exit

// The process's flags (V8 refuses code cached under other flags), less the code of -e and -p.
function flags() {
  const code = ['-e', '--eval', '-p', '--print', '-pe'];
  const kept = process.execArgv.filter((arg, i, all) => !code.includes(arg) && !code.includes(all[i - 1]) &&
    !arg.startsWith('--eval=') && !arg.startsWith('--print='));
  return [...kept, process.env.NODE_OPTIONS || ''];
}

// What decides V8's code besides the source: the Node and V8 versions, the processor and flags.
const VERSIONS = binding.blake2b([JSON.stringify([process.version, process.versions.v8, process.arch,
  flags()])], 8);

/** The cache file name for the module in filename, given its source (a Buffer): its path in lib/,
 * the versions and flags, and the source's XXH64 (fast enough to cost little beside the read). */
function cacheName(filename, source) {
  const module = path.relative(__dirname, filename).replace(/\.js$/, '').replace(/[\\/]/g, '-');
  return `${module}-${VERSIONS}-${binding.xxh64(source).toString(16)}.v8`;
}

// The code cached under name, where its checksum holds; else undefined.
function readCache(name) {
  const file = binding.readFile(path.join(directory, name));
  if (!file || file.length <= CHECKSUM) return undefined;
  const data = file.subarray(CHECKSUM);
  return binding.xxh64(data) === file.readBigUInt64LE(0) ? data : undefined;
}

// At exit: the code of each module that had none cached, with every function compiled by now.
function writeCaches() {
  for (const [name, script] of unwritten) {
    const data = script.createCachedData();
    const file = Buffer.allocUnsafe(CHECKSUM + data.length);
    file.writeBigUInt64LE(binding.xxh64(data));
    data.copy(file, CHECKSUM);
    if (binding.writeFileAtomic(directory, name, file)) return; // cannot be written: a cache is optional
    stats.written++;
  }
}

// Compiles and runs the module in filename (a lib/ file, whose bytes are source) as Node would,
// with its cached code.
function load(filename, source, parent) {
  const module = new Module(filename, parent);
  module.filename = filename;
  module.paths = Module._nodeModulePaths(path.dirname(filename));
  const name = directory && cacheName(filename, source);
  const cachedData = name ? readCache(name) : undefined;
  const script = new vm.Script(Module.wrap(source.toString()), { filename, cachedData });
  if (cachedData && !script.cachedDataRejected) {
    stats.hits++;
  } else {
    stats.misses++;
    if (name && !unwritten.length) process.once('exit', writeCaches);
    if (name) unwritten.push([name, script]);
  }
  require.cache[filename] = module;
  try {
    script.runInThisContext().call(module.exports, module.exports, requireFrom(module), module, filename,
      path.dirname(filename));
  } catch (error) {
    delete require.cache[filename];
    throw error;
  }
  module.loaded = true;
  return module.exports;
}

// Whether this module runs in Node's main realm, where vm.Script.runInThisContext runs code. A test
// runner that gives each test file a realm of its own (Jest) loads modules into it: there, lib/
// loads through that runner's require, without the code cache, so that its classes and errors are
// the realm's own.
const MAIN_REALM = Object.getPrototypeOf(Module.prototype) === Object.prototype;

/** A require for module: lib/'s JavaScript modules through the code cache, anything else as
 * module.require does. */
function requireFrom(module) {
  if (!MAIN_REALM) return (id) => module.require(id);
  const dir = path.dirname(module.filename);
  return (id) => {
    if (id.startsWith('.') && !path.extname(id)) {
      const filename = `${path.resolve(dir, id)}.js`;
      const known = require.cache[filename];
      if (known) return known.exports;
      const source = filename.startsWith(LIB) ? binding.readFile(filename) : null;
      if (source) return load(filename, source, module);
    }
    return module.require(id);
  };
}

module.exports = { requireFrom, cacheName, stats };
