'use strict';
// A Linker's inputs: their kinds, read from names and first bytes, and their structure checked
// before nvJitLink sees them. nvJitLink 13.0 trusts what it is given: an offset or a symbol index
// out of range in a cubin, or the same relocatable cubin twice after an LTO link, crashes the
// process. What can be checked cheaply is checked here (a RangeError naming the input and the
// fault); what cannot (a fatbin's compressed payload, LTO-IR's contents) is the isolated mode's.
const binding = require('../internal/binding');
const { readBounded } = require('../internal/files');
const { describe, imageBytes } = require('../internal/checks');
const { elfFault, globalDefinitions, ELF_MAGIC } = require('./elf-check');

/** The kinds of input a Linker takes. */
const KINDS = ['cubin', 'ptx', 'ltoir', 'fatbin', 'object', 'library'];
const BY_EXTENSION = {
  '.cubin': 'cubin',
  '.ptx': 'ptx',
  '.ltoir': 'ltoir',
  '.fatbin': 'fatbin',
  '.o': 'object',
  '.obj': 'object',
  '.a': 'library',
  '.lib': 'library',
};
/** The largest input a Linker reads from a file (addFile). */
const FILE_LIMIT = 2 ** 31 - 1;

const FATBIN_MAGIC = 0xba55ed50;
const LTOIR_MAGIC = 0x7f4e43ed;
const AR_MAGIC = '!<arch>\n';

// The kind of an image that does not say: by its first bytes.
function sniff(bytes) {
  const word = bytes.length >= 4 ? bytes.readUInt32LE(0) : 0;
  if (word === ELF_MAGIC) return 'cubin';
  if (word === FATBIN_MAGIC) return 'fatbin';
  if (word === LTOIR_MAGIC) return 'ltoir';
  if (bytes.subarray(0, 8).toString('latin1') === AR_MAGIC) return 'library';
  return 'ptx';
}

// The architecture number a cubin was built for (90 for sm_90), from its ELF header's flags.
function cubinArch(bytes) {
  if (bytes.length < 0x34) return null;
  const flags = bytes.readUInt32LE(0x30);
  return bytes[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff; // the ABI version says where
}

// ---- structure ----

// Why a static library (an ar archive) is unsound, or null: each member's header and place, and
// each ELF member as an object.
function libraryFault(bytes) {
  if (bytes.subarray(0, 8).toString('latin1') !== AR_MAGIC) return 'it is not an ar archive';
  for (let at = 8; at < bytes.length; at += at % 2) {
    if (at + 60 > bytes.length || bytes.toString('latin1', at + 58, at + 60) !== '`\n') {
      return 'a member header is malformed';
    }
    const size = Number(bytes.toString('latin1', at + 48, at + 58).trim());
    if (!Number.isSafeInteger(size) || at + 60 + size > bytes.length) return 'a member overruns it';
    const member = bytes.subarray(at + 60, at + 60 + size);
    const fault = member.length >= 4 && member.readUInt32LE(0) === ELF_MAGIC ? elfFault(member, false) : null;
    if (fault) return `its member ${bytes.toString('latin1', at, at + 16).trim()}: ${fault}`;
    at += 60 + size;
  }
  return null;
}

const FAULTS = {
  cubin: (bytes) => elfFault(bytes, true),
  object: (bytes) => elfFault(bytes, false),
  fatbin: () => null, // its header and entries' bounds are the addon's to check (image_problem)
  library: libraryFault,
  ltoir: (bytes) => (bytes.length < 16 || bytes.readUInt32LE(0) !== LTOIR_MAGIC ? 'it is not LTO-IR' : null),
  // text; a NUL would end it early for nvJitLink, which reads it as a C string
  ptx: (bytes) => (bytes.subarray(0, bytes.length - 1).includes(0) ? 'it holds a NUL byte: PTX is text' : null),
};

/** Throws a RangeError where input ({ kind, name, data }) is not sound enough for nvJitLink to
 * read. */
function checkInput(input) {
  const fault = FAULTS[input.kind](input.data);
  if (fault) {
    throw new RangeError(
      `${input.name} cannot be linked as ${input.kind === 'ltoir' ? 'LTO-IR' : `a ${input.kind}`}: ${fault} ` +
        '(give its kind if it is another, or rebuild it)',
    );
  }
}

/** The input's BLAKE2b digest (32 bytes, hex), computed once: for checkDistinct and the link's
 * cache key, which would otherwise each hash every input. */
function digestOf(input) {
  input.digest ??= binding.blake2b([input.data], 32);
  return input.digest;
}

/** Throws a RangeError where two inputs hold the same bytes, or two cubins define the same
 * function or variable: nvJitLink 13.0 prints that to stderr alone and gives a cubin all the same
 * (after an LTO link, the same cubin twice crashed it). */
function checkDistinct(inputs) {
  const seen = new Map(); // digest → name
  const defined = new Map(); // symbol → the cubin defining it
  for (const input of inputs) {
    const digest = digestOf(input);
    const first = seen.get(digest);
    if (first !== undefined) {
      throw new RangeError(
        `${input.name} holds the same bytes as ${first}: add each input once (linked twice, each of its symbols would be defined twice)`,
      );
    }
    seen.set(digest, input.name);
    for (const symbol of input.kind === 'cubin' ? globalDefinitions(input.data) : []) {
      const other = defined.get(symbol);
      if (other !== undefined) {
        throw new RangeError(`${input.name} defines ${symbol}, which ${other} defines too: a symbol is defined once`);
      }
      defined.set(symbol, input.name);
    }
  }
}

// A cubin runs on its own major, from its own minor up: one of another links into nothing.
function checkCubinArchs(inputs, target) {
  const wanted = Number(/\d+/.exec(target)[0]);
  for (const input of inputs) {
    const arch = input.kind === 'cubin' ? cubinArch(input.data) : null;
    if (arch && (Math.floor(arch / 10) !== Math.floor(wanted / 10) || arch % 10 > wanted % 10)) {
      throw new RangeError(
        `${input.name} is a cubin for sm_${arch}, which cannot link into a cubin for ${target}: compile it for ` +
          `${target}, or as PTX or LTO-IR (which link for any architecture), or link for sm_${arch}`,
      );
    }
  }
}

// ---- reading them ----

// The image's bytes, as a Buffer over them (its readers sniff the kind).
function bytesOf(image) {
  const view = imageBytes(image, 'a cubin, PTX, LTO-IR, fatbin or library');
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

function checkKind(kind) {
  if (!KINDS.includes(kind)) {
    throw new RangeError(`kind must be one of ${KINDS.map((k) => `'${k}'`).join(', ')}, not ${describe(kind)}`);
  }
  return kind;
}

function addOptions(opts) {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== 'object') throw new TypeError(`add() options must be an object, not ${describe(opts)}`);
  for (const key of Object.keys(opts)) {
    if (key !== 'kind' && key !== 'name') {
      throw new TypeError(`unknown add() option ${JSON.stringify(key)}; the options are kind, name`);
    }
  }
  if (opts.name !== undefined && (typeof opts.name !== 'string' || !opts.name || opts.name.includes('\0'))) {
    throw new TypeError(`name must be a non-empty string without NUL characters, not ${describe(opts.name)}`);
  }
  return opts;
}

// A file's bytes, read whole now; a RuntimeError saying why not.
function readInput(file) {
  return readBounded(file, FILE_LIMIT, `cannot add ${file} to the link`);
}

module.exports = {
  KINDS,
  BY_EXTENSION,
  FILE_LIMIT,
  sniff,
  checkInput,
  checkDistinct,
  digestOf,
  checkCubinArchs,
  bytesOf,
  checkKind,
  addOptions,
  readInput,
};
