'use strict';
// The compile cache: content-addressed entries, in memory first, then on disk.
//
// Keys are computed in cache-keys.js. Entries carry an XXH64 checksum computed by the addon
// (src/cache/digest.c).
//
// On disk an entry is one file, <key>.entry, written atomically (a temporary file in the same
// directory, then rename), so concurrent processes never see half an entry; a truncated or
// altered file (or one past ENTRY_LIMIT) fails its checksum, is removed and recompiled. The first
// write to a directory is made at once; later ones (a cold compile's entry) on the addon's writer
// thread, so that the compile's caller does not wait for them, and the process waits for them at
// exit. A directory that cannot be made or written turns the disk cache off for it, with one
// warning.
const fs = require('fs');
const path = require('path');
const { getSystemErrorName } = require('util');
const binding = require('../internal/binding');
const { cacheDirFor } = require('./cache-dir');
const { loadNvrtc, NVRTC_MAJORS } = require('./nvrtc');
const { searchedDirs } = require('../internal/library-search');
const keys = require('./cache-keys');

const KINDS = ['cubin', 'ptx', 'ltoir']; // what an entry may hold
const MAGIC = Buffer.from('CUDADRV\x02', 'latin1');
const MAGIC_WORDS = [MAGIC.readUInt32LE(0), MAGIC.readUInt32LE(4)]; // compared as read
const HEADER = 24; // magic (8), metadata length (4), image length (4), XXH64 of the rest (8)
const MEMORY_LIMIT = 64 * 1024 * 1024; // bytes of images kept in memory
// The most bytes read of each kind of file: an entry (a larger image is not cached) and the NVRTC
// record. (A file the source includes: binding.readsLimit, which NVRTC is held to too.)
const ENTRY_LIMIT = 512 * 1024 * 1024;
const RECORD_LIMIT = 1024 * 1024;

/** Counters for tests and benchmarks. */
const stats = { memoryHits: 0, diskHits: 0, corrupt: 0, compiles: 0, links: 0 };

// ---- directories ----

const directories = new Map(); // dir → true (written once) | false (unusable: warned once)

const checked = new Set(); // directories whose owner and mode were checked

// Whether dir cannot hold the cache: it could not be written, or it is not this user's own or
// others can write it (an entry planted there would be loaded as the kernel). Checked once.
function unusable(dir) {
  if (!checked.has(dir)) {
    checked.add(dir);
    const problem = binding.cacheDirProblem(dir);
    if (problem) {
      directories.set(dir, false);
      process.emitWarning(
        `cudadrv: the compile cache directory ${dir} is not safe to use ` +
          `(${problem[1]}); compiling without the on-disk cache. Set CUDADRV_CACHE_DIR or the ` +
          'cacheDir option to a directory of your own, or CUDADRV_DISABLE_CACHE=1.',
        { code: 'CUDADRV_CACHE_UNSAFE' },
      );
    }
  }
  return directories.get(dir) === false;
}

// Turns the disk cache off for dir, warning once; failure is the addon's [errno, message].
function giveUp(dir, [errno, message]) {
  if (unusable(dir)) return;
  directories.set(dir, false);
  process.emitWarning(
    `cudadrv: the compile cache directory ${dir} cannot be written ` +
      `(${getSystemErrorName(-errno)}: ${message}); compiling without the on-disk cache. Set ` +
      'CUDADRV_CACHE_DIR or the cacheDir option to a writable directory, or CUDADRV_DISABLE_CACHE=1.',
    { code: 'CUDADRV_CACHE_UNWRITABLE' },
  );
}

/** Waits until every entry written in the background is on disk. */
function flush() {
  binding.flushWrites();
}

/** Writes data to dir/name atomically (temporary file, then rename), making dir (mode 0700)
 * where it is missing: at once the first time, which tells whether dir can be written, later in
 * the background. Nothing (after one warning per directory) where dir cannot be written. */
function writeAtomic(dir, name, data) {
  for (const [failedDir, failure] of binding.writeFailures()) giveUp(failedDir, failure);
  if (unusable(dir)) return;
  if (directories.has(dir)) {
    binding.writeFileAtomicLater(dir, name, data);
    return;
  }
  const failure = binding.writeFileAtomic(dir, name, data);
  if (failure) giveUp(dir, failure);
  else directories.set(dir, true);
}

// ---- NVRTC's identity ----
//
// Loading NVRTC (dlopen) costs about 5 ms, more than a whole cached compile may take in a new
// process. So its identity (version, architectures, library file) is recorded in the cache
// directory, together with the state of everything that decides which library would be picked
// (the variables the search reads, every directory it looks in, LD_LIBRARY_PATH's directories,
// /etc/ld.so.cache, the library file
// and its directory); a new process that finds all of it unchanged uses the record and leaves
// NVRTC unloaded until it has something to compile.

// The state of a file or directory, as compared by the record: [size, mtime, inode] or null.
function stamp(file) {
  const stat = binding.stat(file);
  return stat ? [stat[3], stat[4], stat[1]] : null;
}

// The variables the search for NVRTC reads (lib/internal/library-search.js), and dlopen's.
const SEARCH_VARIABLES = [
  'CUDADRV_NVRTC_PATH',
  'LD_LIBRARY_PATH',
  'CUDA_PATH',
  'CUDA_HOME',
  'CONDA_PREFIX',
  'VIRTUAL_ENV',
  'PYTHONPATH',
  'HOME',
];

function environment() {
  return SEARCH_VARIABLES.map((name) => process.env[name] || '');
}

// What decides which library is picked (the directories searched, and dlopen's), and the library.
function watched(library, env) {
  const dirs = env[1].split(':').filter(Boolean);
  const searchEnv = Object.fromEntries(SEARCH_VARIABLES.map((name, i) => [name, env[i]]));
  const searched = searchedDirs('nvrtc', { majors: NVRTC_MAJORS, env: searchEnv });
  return [library, path.dirname(library), '/etc/ld.so.cache', ...dirs, ...searched];
}

function recordName(env) {
  return `nvrtc-${binding.blake2b([JSON.stringify(env)], 8)}.json`;
}

function identityOf(version, archs, library) {
  return { version, archs, library, id: JSON.stringify([version, library, stamp(library)]) };
}

function readRecord(dir) {
  const env = environment();
  let record;
  try {
    // too large, or not JSON: no record (NVRTC is loaded, and a new record written)
    record = JSON.parse(binding.readFile(path.join(dir, recordName(env)), false, RECORD_LIMIT)?.toString());
  } catch {
    return null;
  }
  const valid =
    record &&
    JSON.stringify(record.env) === JSON.stringify(env) &&
    typeof record.library === 'string' &&
    Array.isArray(record.version) &&
    Array.isArray(record.archs) &&
    record.archs.every(Number.isInteger) &&
    record.format === RECORD_FORMAT &&
    Array.isArray(record.watched) &&
    record.watched[0] === record.library &&
    record.watched.every((file) => typeof file === 'string') &&
    Array.isArray(record.stamps) &&
    JSON.stringify(record.stamps) === JSON.stringify(record.watched.map(stamp));
  return valid ? identityOf(record.version, record.archs, record.library) : null;
}

// The record keeps the list of what it watches, so that a new process only stats them: the list
// itself comes from listing directories that are on it (a new Python changes their stamps).
const RECORD_FORMAT = 2;

function writeRecord(dir, identity) {
  const env = environment();
  const { version, archs, library } = identity;
  const files = watched(library, env);
  const stamps = files.map(stamp);
  const record = { format: RECORD_FORMAT, env, version, archs, library, watched: files, stamps };
  writeAtomic(dir, recordName(env), Buffer.from(JSON.stringify(record)));
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
    const nvrtc = loadNvrtc();
    identity = identityOf(nvrtc.nvrtcVersion(), nvrtc.nvrtcGetSupportedArchs(), nvrtc.nvrtcLibraryPath());
  }
  if (dir && !recorded.has(dir)) {
    recorded.add(dir);
    writeRecord(dir, identity);
  }
  return identity;
}

// ---- entries: { image: Buffer, log, loweredNames: string[], target, kind } ----

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

function forget(key) {
  const old = memory.get(key);
  if (!old) return;
  memory.delete(key);
  memoryBytes -= old.image.length;
}

function entryName(key) {
  return `${key}.entry`;
}

// The entry stored in data, or null when it is truncated, altered or not ours.
function decode(data, key) {
  if (data.length < HEADER || data.readUInt32LE(0) !== MAGIC_WORDS[0] || data.readUInt32LE(4) !== MAGIC_WORDS[1]) {
    return null;
  }
  const metaLength = data.readUInt32LE(8);
  const imageLength = data.readUInt32LE(12);
  if (HEADER + metaLength + imageLength !== data.length) return null;
  if (binding.xxh64(data.subarray(HEADER)) !== data.readBigUInt64LE(16)) return null;
  let meta;
  try {
    meta = JSON.parse(data.toString('utf8', HEADER, HEADER + metaLength));
  } catch {
    return null;
  }
  if (
    !meta ||
    meta.key !== key ||
    typeof meta.log !== 'string' ||
    typeof meta.target !== 'string' ||
    !KINDS.includes(meta.kind) ||
    !Array.isArray(meta.loweredNames) ||
    !meta.loweredNames.every((n) => typeof n === 'string') ||
    !Array.isArray(meta.unseen) ||
    !meta.unseen.every((u) => Array.isArray(u) && u.length === 2 && u.every((part) => typeof part === 'string'))
  ) {
    return null;
  }
  const { log, loweredNames, target, kind, unseen } = meta;
  return { image: data.subarray(HEADER + metaLength), log, loweredNames, target, kind, unseen };
}

function encode(key, entry) {
  const meta = Buffer.from(
    JSON.stringify({
      key,
      log: entry.log,
      loweredNames: entry.loweredNames,
      target: entry.target,
      kind: entry.kind,
      unseen: entry.unseen,
    }),
  );
  const data = Buffer.allocUnsafe(HEADER + meta.length + entry.image.length);
  MAGIC.copy(data);
  data.writeUInt32LE(meta.length, 8);
  data.writeUInt32LE(entry.image.length, 12);
  meta.copy(data, HEADER);
  entry.image.copy(data, HEADER + meta.length);
  data.writeBigUInt64LE(binding.xxh64(data.subarray(HEADER)), 16);
  return data;
}

/** The entry cached under key (in memory, else in dir), or null. */
function lookup(dir, key) {
  const known = memory.get(key);
  if (known && !keys.current(known)) return null;
  if (known) {
    memory.delete(key); // most recently used last
    memory.set(key, known);
    stats.memoryHits++;
    return known;
  }
  if (unusable(dir)) return null;
  const file = path.join(dir, entryName(key));
  let entry = null;
  try {
    const data = binding.readFile(file, false, ENTRY_LIMIT);
    if (data === null) return null;
    entry = decode(data, key);
  } catch {
    // larger than any entry written: as corrupt
  }
  if (!entry) {
    stats.corrupt++;
    fs.rmSync(file, { force: true }); // a miss now, and written afresh by the compile
    return null;
  }
  if (!keys.current(entry)) return null; // a file only NVRTC saw has changed: compiled and stored again
  stats.diskHits++;
  remember(key, entry);
  return entry;
}

/** Caches entry under key, in dir and in memory: there as a view of the bytes written (a copy of
 * entry's image, which stays the caller's). */
function store(dir, key, entry) {
  const { image, log, loweredNames, target, kind, unseen = [] } = entry;
  const data = encode(key, { ...entry, unseen });
  if (data.length > ENTRY_LIMIT) return; // lookup() would not read it
  forget(key); // an entry whose unseen files changed
  remember(key, { image: data.subarray(data.length - image.length), log, loweredNames, target, kind, unseen });
  writeAtomic(dir, entryName(key), data);
}

/** Empties the in-memory cache and forgets the keys known, once every entry is on disk (for tests
 * and benchmarks). */
function clearMemory() {
  flush();
  memory.clear();
  memoryBytes = 0;
  keys.forgetKeys();
}

module.exports = {
  stats,
  cacheDirFor,
  nvrtcIdentity,
  knownKey: keys.knownKey,
  cacheKey: keys.cacheKey,
  includedFiles: keys.includedFiles,
  lookup,
  store,
  unseenFiles: keys.unseenFiles,
  flush,
  clearMemory,
  entryName,
};
