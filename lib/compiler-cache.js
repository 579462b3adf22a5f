'use strict';
// The compile cache: content-addressed entries, in memory first, then on disk.
//
// A key covers everything that decides the output: the source after wrapping, its name, the
// options (as a JSON array, so no separator can be forged), the name expressions, every
// in-memory header, the contents of every file the source includes or pre-includes (found
// through the quoted form's own directory and the include directories, recursively), the target
// and the NVRTC identity. Where a header could come from several places, all of them are hashed:
// a change in any of them changes the key, so an entry is never stale, only sometimes duplicated.
// (Headers NVRTC finds on its own, built in or on a system path, are covered by its identity.)
//
// On disk an entry is one file, <key>.entry, written atomically (a temporary file in the same
// directory, then rename), so concurrent processes never see half an entry; a truncated or
// altered file fails its checksum and is recompiled. A directory that cannot be made or written
// turns the disk cache off for it, with one warning.
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const binding = require('./binding');

const FORMAT = 'cudadrv-compile-cache-1';
const MAGIC = Buffer.from('CUDADRV\x01', 'latin1');
const HEADER = 48; // magic (8), metadata length (4), image length (4), sha-256 of the rest (32)
const MEMORY_LIMIT = 64 * 1024 * 1024; // bytes of images kept in memory

/** Counters for tests and benchmarks. */
const stats = { memoryHits: 0, diskHits: 0, corrupt: 0, compiles: 0 };

/** The directory compiles cache in, given the cacheDir option; null when caching is off. */
function cacheDirFor(option) {
  const disabled = process.env.CUDADRV_DISABLE_CACHE;
  if ((disabled && disabled !== '0') || option === false) return null;
  if (typeof option === 'string') return path.resolve(option);
  if (process.env.CUDADRV_CACHE_DIR) return path.resolve(process.env.CUDADRV_CACHE_DIR);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(path.resolve(base), 'cudadrv');
}

// ---- directories ----

const directories = new Map(); // dir → true (made) | false (unusable: warned once)

function unusable(dir) {
  return directories.get(dir) === false;
}

// Turns the disk cache off for dir, warning once.
function giveUp(dir, error) {
  if (unusable(dir)) return;
  directories.set(dir, false);
  process.emitWarning(`cudadrv: the compile cache directory ${dir} cannot be written ` +
    `(${error.message}); compiling without the on-disk cache. Set CUDADRV_CACHE_DIR or the ` +
    'cacheDir option to a writable directory, or CUDADRV_DISABLE_CACHE=1.',
  { code: 'CUDADRV_CACHE_UNWRITABLE' });
}

/** Writes data to dir/name atomically (temporary file, then rename); false (after one warning
 * per directory) where dir cannot be made or written. */
function writeAtomic(dir, name, data) {
  if (unusable(dir)) return false;
  const temporary = path.join(dir, `.${name}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  try {
    if (!directories.has(dir)) {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      directories.set(dir, true);
    }
    fs.writeFileSync(temporary, data, { mode: 0o600, flag: 'wx' });
    fs.renameSync(temporary, path.join(dir, name));
    return true;
  } catch (error) {
    try {
      fs.unlinkSync(temporary);
    } catch {
      // never written
    }
    giveUp(dir, error);
    return false;
  }
}

// ---- NVRTC's identity ----
//
// Loading NVRTC (dlopen) costs about 5 ms, more than a whole cached compile may take in a new
// process. So its identity (version, architectures, library file) is recorded in the cache
// directory, together with the state of everything that decides which library dlopen would pick
// (CUDADRV_NVRTC_PATH, LD_LIBRARY_PATH and its directories, /etc/ld.so.cache, the library file
// and its directory); a new process that finds all of it unchanged uses the record and leaves
// NVRTC unloaded until it has something to compile.

// The state of a file or directory, as compared by the record: [size, mtime, inode] or null.
function stamp(file) {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  return stat ? [stat.size, stat.mtimeMs, stat.ino] : null;
}

function environment() {
  return [process.env.CUDADRV_NVRTC_PATH || '', process.env.LD_LIBRARY_PATH || ''];
}

// What decides which library dlopen picks, and the library itself.
function watched(library, env) {
  const dirs = env[1].split(':').filter(Boolean);
  return [library, path.dirname(library), '/etc/ld.so.cache', ...dirs];
}

function recordName(env) {
  return `nvrtc-${crypto.createHash('sha256').update(JSON.stringify(env)).digest('hex').slice(0, 16)}.json`;
}

function identityOf(version, archs, library) {
  return { version, archs, library, id: JSON.stringify([version, library, stamp(library)]) };
}

function readRecord(dir) {
  const env = environment();
  let record;
  try {
    record = JSON.parse(fs.readFileSync(path.join(dir, recordName(env)), 'utf8'));
  } catch {
    return null;
  }
  const valid = record && JSON.stringify(record.env) === JSON.stringify(env) &&
    typeof record.library === 'string' && Array.isArray(record.version) &&
    Array.isArray(record.archs) && record.archs.every(Number.isInteger) && Array.isArray(record.stamps) &&
    JSON.stringify(record.stamps) === JSON.stringify(watched(record.library, env).map(stamp));
  return valid ? identityOf(record.version, record.archs, record.library) : null;
}

function writeRecord(dir, identity) {
  const env = environment();
  const { version, archs, library } = identity;
  const stamps = watched(library, env).map(stamp);
  writeAtomic(dir, recordName(env), JSON.stringify({ env, version, archs, library, stamps }));
}

let identity = null; // { version, archs, library, id }
const recorded = new Set(); // cache directories whose record is known to be current

/** NVRTC's { version, archs, library, id }, settled once per process: from a current record in
 * dir where there is one, else from the library (loading it); recorded in dir (when given) for
 * new processes. */
function nvrtcIdentity(dir) {
  if (!identity && dir && !unusable(dir)) {
    identity = readRecord(dir);
    if (identity) recorded.add(dir);
  }
  if (!identity) {
    identity = identityOf(binding.nvrtcVersion(), binding.nvrtcGetSupportedArchs(), binding.nvrtcLibraryPath());
  }
  if (dir && !recorded.has(dir)) {
    recorded.add(dir);
    writeRecord(dir, identity);
  }
  return identity;
}

// ---- keys ----

const INCLUDE = /^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\r\n]+)[>"]/gm;

// The contents of path when it is a readable file, else null (without throwing for absent files).
function readIfFile(file) {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat || !stat.isFile()) return null;
  try {
    return fs.readFileSync(file);
  } catch {
    return null; // unreadable: NVRTC cannot read it either
  }
}

// Every file the request's sources include, recursively: Map(absolute path → contents).
function includedFiles(request) {
  const found = new Map();
  const searchDirs = request.searchDirs;
  const scan = (text, ownDirs) => {
    for (const [, form, name] of text.matchAll(INCLUDE)) {
      const candidates = path.isAbsolute(name)
        ? [name]
        : (form === '"' ? ownDirs.concat(searchDirs) : searchDirs).map((dir) => path.join(dir, name));
      for (const file of candidates) {
        if (found.has(file)) continue;
        const contents = readIfFile(file);
        found.set(file, contents);
        if (contents) scan(contents.toString('latin1'), [path.dirname(file)]);
      }
    }
  };
  // NVRTC looks for the main source's quoted includes in the working directory.
  const cwd = process.cwd();
  const sourceDirs = [...new Set([cwd, path.dirname(path.resolve(cwd, request.name))])];
  scan(request.preIncludes.map((name) => `#include "${name}"\n`).join(''), sourceDirs);
  scan(request.source, sourceDirs);
  for (const text of request.headerSources) scan(text, sourceDirs);
  return found;
}

/** The cache key of a request compiled by the NVRTC whose identity is given. */
function cacheKey(request, nvrtcId) {
  const hash = crypto.createHash('sha256');
  hash.update(JSON.stringify([FORMAT, nvrtcId, request.target, request.name, request.options,
    request.nameExpressions, request.headerNames, request.headerSources, request.source]));
  for (const [file, contents] of includedFiles(request)) {
    if (contents) hash.update(`\0${JSON.stringify([file, contents.length])}`).update(contents);
  }
  return hash.digest('hex');
}

// ---- entries: { image: Buffer, log, loweredNames: string[], target } ----

const memory = new Map(); // key → entry, least recently used first
let memoryBytes = 0;

function remember(key, entry) {
  if (memory.has(key)) return;
  memory.set(key, entry);
  memoryBytes += entry.image.length;
  for (const [oldest, old] of memory) {
    if (memoryBytes <= MEMORY_LIMIT) break;
    memory.delete(oldest);
    memoryBytes -= old.image.length;
  }
}

function entryName(key) {
  return `${key}.entry`;
}

// The entry stored in data, or null when it is truncated, altered or not ours.
function decode(data, key) {
  if (data.length < HEADER || !data.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  const metaLength = data.readUInt32LE(8);
  const imageLength = data.readUInt32LE(12);
  if (HEADER + metaLength + imageLength !== data.length) return null;
  const digest = crypto.createHash('sha256').update(data.subarray(HEADER)).digest();
  if (!digest.equals(data.subarray(16, HEADER))) return null;
  let meta;
  try {
    meta = JSON.parse(data.toString('utf8', HEADER, HEADER + metaLength));
  } catch {
    return null;
  }
  if (!meta || meta.key !== key || typeof meta.log !== 'string' || typeof meta.target !== 'string' ||
      !Array.isArray(meta.loweredNames) || !meta.loweredNames.every((n) => typeof n === 'string')) {
    return null;
  }
  const { log, loweredNames, target } = meta;
  return { image: data.subarray(HEADER + metaLength), log, loweredNames, target };
}

function encode(key, entry) {
  const meta = Buffer.from(JSON.stringify({
    key, log: entry.log, loweredNames: entry.loweredNames, target: entry.target,
  }));
  const header = Buffer.alloc(HEADER);
  MAGIC.copy(header);
  header.writeUInt32LE(meta.length, 8);
  header.writeUInt32LE(entry.image.length, 12);
  crypto.createHash('sha256').update(meta).update(entry.image).digest().copy(header, 16);
  return Buffer.concat([header, meta, entry.image]);
}

/** The entry cached under key (in memory, else in dir), or null. */
function lookup(dir, key) {
  const known = memory.get(key);
  if (known) {
    memory.delete(key); // most recently used last
    memory.set(key, known);
    stats.memoryHits++;
    return known;
  }
  if (unusable(dir)) return null;
  let data;
  try {
    data = fs.readFileSync(path.join(dir, entryName(key)));
  } catch {
    return null;
  }
  const entry = decode(data, key);
  if (!entry) {
    stats.corrupt++;
    return null;
  }
  stats.diskHits++;
  remember(key, entry);
  return entry;
}

/** Caches entry under key, in memory and in dir. */
function store(dir, key, entry) {
  remember(key, entry);
  writeAtomic(dir, entryName(key), encode(key, entry));
}

/** Empties the in-memory cache (for tests and benchmarks). */
function clearMemory() {
  memory.clear();
  memoryBytes = 0;
}

module.exports = {
  stats, cacheDirFor, nvrtcIdentity, cacheKey, lookup, store, clearMemory, entryName,
};
