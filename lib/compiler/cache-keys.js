'use strict';
// The compile cache's keys (lib/compiler/cache.js holds the entries).
//
// A key covers everything that decides the output: the source after wrapping, its name, the
// options (as a JSON array, so no separator can be forged), the name expressions, every
// in-memory header, the contents of every file the source includes or pre-includes (found
// through the quoted form's own directory and the include directories, recursively), the target
// and the NVRTC identity. Where a header could come from several places, all of them are hashed:
// a change in any of them changes the key, so an entry is never stale, only sometimes duplicated.
// (Headers NVRTC finds on its own, built in or on a system path, are covered by its identity; a
// file only NVRTC saw, through a computed include, by the entry's record of it: unseenFiles.)
// Keys are BLAKE2b digests computed by the addon (src/cache/digest.c): node:crypto alone takes
// longer to load than a whole cache hit may.
//
// A process remembers the keys it computed (see knownKey), so that a request made again costs no
// hashing and, when its source includes no files, no file system call.
const path = require('path');
const binding = require('../internal/binding');
const { RuntimeError } = require('../driver/errors');

const FORMAT = 'cudadrv-compile-cache-4';

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

// What of a request, beside its source and the files it includes, decides its output.
function deciding(request) {
  const { target, kind, name, options, nameExpressions, headerNames, headerSources } = request;
  return [target, kind, name, options, nameExpressions, headerNames, headerSources];
}

// Everything but the source that decides a request's key.
function restOf(request, nvrtcId) {
  return JSON.stringify([nvrtcId, request.noExternC, ...deciding(request), process.cwd()]);
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
  const parts = [JSON.stringify([FORMAT, nvrtcId, ...deciding(request), request.source])];
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

/** Forgets the keys known (for tests and benchmarks). */
function forgetKeys() {
  knownKeys.clear();
  knownChars = 0;
}

module.exports = { knownKey, cacheKey, includedFiles, unseenFiles, current, forgetKeys };
