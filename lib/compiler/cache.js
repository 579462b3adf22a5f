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
// Keys are BLAKE2b digests, and entries carry an XXH64 checksum, both computed by the addon
// (src/cache/digest.c): node:crypto alone takes longer to load than a whole cache hit may.
//
// A process remembers the keys it computed (see knownKey), so that a request made again costs no
// hashing and, when its source includes no files, no file system call.
//
// On disk an entry is one file, <key>.entry, written atomically (a temporary file in the same
// directory, then rename), so concurrent processes never see half an entry; a truncated or
// altered file (or one past ENTRY_LIMIT) fails its checksum, is removed and recompiled. The first write to a directory is made at
// once; later ones (a cold compile's entry) on the addon's writer thread, so that the compile's
// caller does not wait for them, and the process waits for them at exit. A directory that cannot
// be made or written turns the disk cache off for it, with one warning.
const fs = require('fs');
const path = require('path');
const { getSystemErrorName } = require('util');
const binding = require('../internal/binding');
const { cacheDirFor } = require('./cache-dir');
const { loadNvrtc, NVRTC_MAJORS } = require('./nvrtc');
const { searchedDirs } = require('../internal/library-search');
const { RuntimeError } = require('../driver/errors');

const FORMAT = 'cudadrv-compile-cache-4';
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
  const stat = fileStamp(file);
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

// ---- keys ----

const INCLUDE = /^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\r\n]+)[>"]/gm;

// What a stat says of a file, compared when a known key is used again: [dev, ino, mode, size,
// mtimeMs, ctimeMs], or null when there is nothing there. (The addon's stat and reads cost a
// fraction of fs's first calls, which a cache hit in a new process would pay.)
function fileStamp(file) {
  return binding.stat(file);
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const FILE_TYPES = {
  0o010000: 'a FIFO',
  0o020000: 'a character device',
  0o060000: 'a block device',
  0o140000: 'a socket',
};

// A file's stamp, and its contents when it is a readable file (else null: an absent or unreadable
// file is no error; NVRTC cannot read it either). Where an include may be found, anything but a
// file or a directory is refused: NVRTC would wait on a FIFO forever, or read /dev/zero forever.
function probe(file) {
  const stat = fileStamp(file);
  const type = stat && stat[2] & S_IFMT;
  if (stat && type !== S_IFREG && type !== S_IFDIR) {
    throw new RuntimeError(
      `${file}, where an #include of the source may be found, is ` +
        `${FILE_TYPES[type] ?? 'not a regular file'}; NVRTC would block reading it: remove it or ` +
        'change the include path',
    );
  }
  const contents = type === S_IFREG ? binding.readFile(file, true, binding.readsLimit) : null;
  return { stamp: stat, contents };
}

// Every file the request's sources include, recursively, and every place looked at for one:
// Map(absolute path → { stamp, contents }).
function includedFiles(request) {
  const found = new Map();
  const texts = [
    ...request.preIncludes.map((name) => `#include "${name}"\n`),
    request.source,
    ...request.headerSources,
  ];
  if (!texts.some((text) => text.includes('include'))) return found; // none: nothing to look for
  const searchDirs = request.searchDirs;
  const scan = (text, ownDirs) => {
    for (const [, form, name] of text.matchAll(INCLUDE)) {
      const candidates = path.isAbsolute(name)
        ? [name]
        : (form === '"' ? ownDirs.concat(searchDirs) : searchDirs).map((dir) => path.join(dir, name));
      for (const file of candidates) {
        if (found.has(file)) continue;
        const probed = probe(file);
        found.set(file, probed);
        if (probed.contents) scan(probed.contents.toString('latin1'), [path.dirname(file)]);
      }
    }
  };
  // NVRTC looks for the main source's quoted includes in the working directory.
  const cwd = process.cwd();
  const sourceDirs = [...new Set([cwd, path.dirname(path.resolve(cwd, request.name))])];
  for (const text of texts) scan(text, sourceDirs);
  return found;
}

// ---- keys known in this process ----
//
// A request made again finds its key here, by its exact text, and uses it while every place
// looked at for its included files is as it was (a file there or not, its inode, size and times
// the same): no hashing, and no file system call at all for a source that includes nothing. A
// file changed less than RACY_MS before it was looked at could change again within the same tick
// of the file system's clock unseen (times are kept in steps of up to 2 s), so keys that depend
// on one are not kept: they are computed whole each time until the file has settled.

const RACY_MS = 2000;
const KNOWN_LIMIT = 32 * 2 ** 20; // characters of requests kept
const knownKeys = new Map(); // source → { chars, byRest: Map(restOf(request) → { key, stamps }) }
let knownChars = 0;

// Everything but the source that decides a request's key.
function restOf(request, nvrtcId) {
  return JSON.stringify([
    nvrtcId,
    request.noExternC,
    request.target,
    request.kind,
    request.name,
    request.options,
    request.nameExpressions,
    request.headerNames,
    request.headerSources,
    process.cwd(),
  ]);
}

function rememberKey(request, rest, known) {
  let bySource = knownKeys.get(request.text);
  if (!bySource) {
    bySource = { chars: request.text.length, byRest: new Map() };
    knownKeys.set(request.text, bySource);
    knownChars += bySource.chars;
  }
  if (!bySource.byRest.has(rest)) {
    bySource.chars += rest.length;
    knownChars += rest.length;
  }
  bySource.byRest.set(rest, known);
  for (const [text, old] of knownKeys) {
    // the oldest sources first
    if (knownChars <= KNOWN_LIMIT) break;
    knownKeys.delete(text);
    knownChars -= old.chars;
  }
}

/** The key of a request made before in this process, where every place looked at for its
 * included files is unchanged; else null. */
function knownKey(request, nvrtcId) {
  const known = knownKeys.get(request.text)?.byRest.get(restOf(request, nvrtcId));
  if (!known) return null;
  for (const [file, stamp] of known.stamps) {
    const now = fileStamp(file);
    if (now === null ? stamp !== null : !stamp || now.some((value, i) => value !== stamp[i])) return null;
  }
  request.scanned = new Set(known.stamps.map(([file]) => file));
  return known.key;
}

/** The cache key of a request compiled by the NVRTC whose identity is given (a 256-bit BLAKE2b
 * digest, in hex); remembered for knownKey. */
function cacheKey(request, nvrtcId) {
  const parts = [
    JSON.stringify([
      FORMAT,
      nvrtcId,
      request.target,
      request.kind,
      request.name,
      request.options,
      request.nameExpressions,
      request.headerNames,
      request.headerSources,
      request.source,
    ]),
  ];
  const stamps = [];
  const settled = Date.now() - RACY_MS;
  let racy = false;
  request.scanned = new Set();
  for (const [file, { stamp, contents }] of includedFiles(request)) {
    request.scanned.add(file);
    if (contents) parts.push(`\0${JSON.stringify([file, contents.length])}`, contents);
    stamps.push([file, stamp]);
    racy ||= stamp !== null && stamp[5] > settled; // its ctime
  }
  const key = binding.blake2b(parts, 32);
  if (!racy) rememberKey(request, restOf(request, nvrtcId), { key, stamps });
  return key;
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

// ---- files only NVRTC saw ----
//
// A computed include (#define H "x.h" / #include H) escapes the key's scan of #include lines. NVRTC
// itself reports every file it read (src/compiler/reads.c): an entry records those the scan did
// not see, each with a digest of its contents, and serves only while each is unchanged.

const digestOf = (file) => {
  try {
    const contents = binding.readFile(file, true, binding.readsLimit);
    return contents && binding.blake2b([contents], 16);
  } catch {
    return null; // past the limit: no digest matches
  }
};

/** [[file, digest]] of the files NVRTC read (outcome.files) that the request's key does not
 * cover. */
function unseenFiles(request, files) {
  const cwd = process.cwd();
  return files
    .map((file) => path.resolve(cwd, file))
    .filter((file) => !request.scanned?.has(file))
    .map((file) => [file, digestOf(file) ?? '']);
}

const current = (entry) => entry.unseen.every(([file, digest]) => digestOf(file) === digest);

/** The entry cached under key (in memory, else in dir), or null. */
function lookup(dir, key) {
  const known = memory.get(key);
  if (known && !current(known)) return null;
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
  if (!current(entry)) return null; // a file only NVRTC saw has changed: compiled and stored again
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
  knownKeys.clear();
  knownChars = 0;
}

module.exports = {
  stats,
  cacheDirFor,
  nvrtcIdentity,
  knownKey,
  cacheKey,
  includedFiles,
  lookup,
  store,
  unseenFiles,
  flush,
  clearMemory,
  entryName,
};
