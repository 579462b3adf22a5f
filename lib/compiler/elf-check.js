'use strict';
// The soundness of a 64-bit ELF file given to nvJitLink: a cubin, or a host object holding device
// code. nvJitLink 13.0 reads offsets, sizes, alignments and symbol indices as given: one changed
// byte in a section header, the symbol table, a relocation or a CUDA attribute section crashed
// or hung it in 718 of 21,000 single-byte mutations of a small cubin (`isolated` contains the
// rest). Checked here: every section's place, links, name and alignment; every symbol's name and
// section; every relocation's symbol and place; and the symbol indices and record bounds of the
// CUDA sections (.nv.info*, .nv.callgraph, .nv.prototype) and notes.

const ELF_MAGIC = 0x464c457f; // \x7fELF
const EM_CUDA = 190;
const SHT = { SYMTAB: 2, STRTAB: 3, RELA: 4, NOTE: 7, NOBITS: 8, REL: 9 };
const SHT_CUDA_INFO = 0x70000000;
const SHT_CUDA_CALLGRAPH = 0x70000001;
const SHT_CUDA_PROTOTYPE = 0x70000002;
const SHF_EXECINSTR = 0x4;
const SHF_INFO_LINK = 0x40;
const SHT_CUDA_NOBITS = 0x70000007; // a relocatable cubin's .nv.global: no bytes in the file
const SHN_LORESERVE = 0xff00;
const MAX_ALIGN = 1 << 16;
const CALLGRAPH_MARKS = 0xfffffffc; // call graph entries from here up are markers, not symbols
// .nv.info attributes (EIFMT_SVAL records) whose value begins with a symbol index: PARAM_CBANK,
// FRAME_SIZE, MIN_STACK_SIZE, MAX_STACK_SIZE, REGCOUNT.
const SYMBOL_ATTRIBUTES = new Set([0x0a, 0x11, 0x12, 0x23, 0x2f]);
const EIFMT_SVAL = 4;

// A 64-bit field as a number (compared with lengths below 2^53; a larger one fails the compare).
const u64 = (bytes, at) => Number(bytes.readBigUInt64LE(at));

function sectionHeaders(bytes, shoff, shnum) {
  return Array.from({ length: shnum }, (_, i) => {
    const at = shoff + i * 64;
    return {
      i,
      name: bytes.readUInt32LE(at),
      type: bytes.readUInt32LE(at + 4),
      flags: u64(bytes, at + 8),
      offset: u64(bytes, at + 24),
      size: u64(bytes, at + 32),
      link: bytes.readUInt32LE(at + 40),
      info: bytes.readUInt32LE(at + 44),
      align: u64(bytes, at + 48),
      entsize: u64(bytes, at + 56),
    };
  });
}

// The section types of cubins: NULL to REL but 5 (hash) and 6 (dynamic), and CUDA's own.
const cubinType = (type) => (type <= SHT.REL && type !== 5 && type !== 6) || type >>> 8 === 0x700000;

// Why a section header is unsound, or null. A cubin's are held to what nvJitLink divides by and
// indexes with: an alignment of 0 was a division by zero (SIGFPE).
function headerFault(s, sections, length, cubin) {
  const names = sections[sections.shstrndx];
  if (s.type !== SHT.NOBITS && s.type !== SHT_CUDA_NOBITS && s.offset + s.size > length) return 'overruns the file';
  if (s.link >= sections.length) return 'links to a section that does not exist';
  if ((s.flags & SHF_INFO_LINK || s.type === SHT.RELA || s.type === SHT.REL) && s.info >= sections.length) {
    return 'names a section that does not exist';
  }
  if (s.i && s.name >= names.size) return 'has a name past the section name table';
  if (s.align > MAX_ALIGN || (s.align & (s.align - 1)) !== 0) return `has an alignment of ${s.align}`;
  if (!cubin || !s.i) return null;
  if (!cubinType(s.type)) return `is of type ${s.type}, which no cubin has`;
  if (!s.align) return 'has an alignment of 0';
  // info is a section index; a code section's function's symbol index below its register count
  // (the top byte); or a symbol table's first global symbol's index (up to its count)
  const info = s.flags & SHF_EXECINSTR ? s.info & 0xffffff : s.info;
  const infoLimit = s.type === SHT.SYMTAB ? s.size / 24 + 1 : Math.max(sections.length, symbolCount(s, sections));
  if (info >= infoLimit) return 'has an info field out of range';
  if ((s.type === SHT_CUDA_CALLGRAPH || s.type === SHT_CUDA_PROTOTYPE) && s.entsize !== 8) {
    return 'has the wrong entry size';
  }
  return null;
}

// Symbol types and bindings a cubin's symbols have (CUDA's texture, surface, sampler and object
// types beside ELF's), and the reserved section indices they use (absolute, common).
const CUBIN_SYMBOL_TYPES = new Set([0, 1, 2, 3, 4, 10, 11, 12, 13]);
const STB_GLOBAL = 1;
const STB_WEAK = 2;
const STT_OBJECT = 1;
const STT_FUNC = 2;
const RESERVED_SECTIONS = new Set([0xfff1, 0xfff2]);

// Why a cubin's symbol at `at` is unsound, or null.
function cubinSymbolFault(bytes, at) {
  const [info, shndx] = [bytes[at + 4], bytes.readUInt16LE(at + 6)];
  if (info >> 4 > STB_WEAK || !CUBIN_SYMBOL_TYPES.has(info & 0xf)) return 'has a symbol of unknown type or binding';
  if (shndx >= SHN_LORESERVE && !RESERVED_SECTIONS.has(shndx)) return 'has a symbol in a reserved section';
  return null;
}

// The number of symbols of the symbol table section s links to (0 where it is no symbol table).
function symbolCount(s, sections) {
  const table = sections[s.link];
  return table.type === SHT.SYMTAB ? table.size / 24 : 0;
}

// Why a section's contents are unsound, or null.
function contentsFault(bytes, s, sections, cubin) {
  const end = s.offset + s.size;
  const words = (step, check) => {
    for (let at = s.offset; at + step <= end; at += step) {
      const fault = check(at);
      if (fault) return fault;
    }
    return null;
  };
  const symbols = symbolCount(s, sections);
  const badSymbol = (index) => (index >= symbols ? `names symbol ${index} of ${symbols}` : null);
  // call graphs and prototypes name functions (or the null symbol)
  const table = sections[s.link];
  const badFunction = (index) =>
    badSymbol(index) ??
    (index && (bytes[table.offset + index * 24 + 4] & 0xf) !== STT_FUNC
      ? `names symbol ${index}, not a function`
      : null);
  switch (s.type) {
    case SHT.SYMTAB: {
      const strings = sections[s.link];
      if (s.entsize !== 24 || s.size % 24 || strings.type !== SHT.STRTAB) return 'is a malformed symbol table';
      return words(24, (at) => {
        const shndx = bytes.readUInt16LE(at + 6);
        if (bytes.readUInt32LE(at) >= strings.size) return 'has a symbol named past its string table';
        if (shndx < SHN_LORESERVE && shndx >= sections.length) return 'has a symbol in a section that does not exist';
        return cubin ? cubinSymbolFault(bytes, at) : null;
      });
    }
    case SHT.RELA:
    case SHT.REL: {
      const size = s.type === SHT.RELA ? 24 : 16;
      if (s.entsize !== size || s.size % size) return 'is a malformed relocation table';
      const target = sections[s.info];
      return words(size, (at) => {
        if (u64(bytes, at) >= target.size) return 'relocates a place past its section';
        if (cubin && bytes.readUInt32LE(at + 8) > 0xff) return 'has a relocation of unknown type';
        return badSymbol(bytes.readUInt32LE(at + 12));
      });
    }
    case SHT.NOTE:
      for (let at = s.offset; at < end;) {
        if (at + 12 > end) return 'has a note header past its end';
        const align = (n) => Math.ceil(n / 4) * 4;
        at += 12 + align(bytes.readUInt32LE(at)) + align(bytes.readUInt32LE(at + 4));
        if (at > end) return 'has a note past its end';
      }
      return null;
    case SHT_CUDA_INFO:
      for (let at = s.offset; at < end;) {
        if (at + 4 > end) return 'has an attribute header past its end';
        const [format, attribute] = [bytes[at], bytes[at + 1]];
        const size = format === EIFMT_SVAL ? bytes.readUInt16LE(at + 2) : 0;
        if (format < 1 || format > EIFMT_SVAL) return `has an attribute of unknown format ${format}`;
        if (at + 4 + size > end) return 'has an attribute past its end';
        if (SYMBOL_ATTRIBUTES.has(attribute) && size >= 4) {
          const fault = badSymbol(bytes.readUInt32LE(at + 4));
          if (fault) return fault;
        }
        at += 4 + size;
      }
      return null;
    case SHT_CUDA_CALLGRAPH:
      return words(4, (at) => {
        const index = bytes.readUInt32LE(at);
        return index < CALLGRAPH_MARKS ? badFunction(index) : null;
      });
    case SHT_CUDA_PROTOTYPE: // (function, prototype number)
      return words(8, (at) =>
        bytes.readUInt32LE(at + 4) > 0xffff
          ? 'has a prototype number out of range'
          : badFunction(bytes.readUInt32LE(at)),
      );
    default:
      return null;
  }
}

/** Why bytes are not a sound 64-bit little-endian ELF file (of EM_CUDA where cubin), or null. */
function elfFault(bytes, cubin) {
  if (bytes.length < 64 || bytes.readUInt32LE(0) !== ELF_MAGIC) return 'it is not an ELF file';
  if (bytes[4] !== 2 || bytes[5] !== 1) return 'it is not a 64-bit little-endian ELF file';
  if (cubin && bytes.readUInt16LE(18) !== EM_CUDA) return 'its ELF header is not a CUDA one (e_machine)';
  const [phoff, shoff] = [u64(bytes, 32), u64(bytes, 40)];
  const [ehsize, phentsize, phnum, shentsize, shnum, shstrndx] = [52, 54, 56, 58, 60, 62].map((at) =>
    bytes.readUInt16LE(at),
  );
  if (ehsize !== 64) return 'its ELF header has the wrong size';
  if (phnum && (phentsize !== 56 || phoff + phnum * 56 > bytes.length)) return 'its program headers overrun it';
  if (!shnum) return cubin ? 'it has no sections' : null;
  if (shentsize !== 64 || shoff + shnum * 64 > bytes.length) return 'its section headers overrun it';
  if (shstrndx >= shnum) return 'its section name table index is out of range';
  const sections = sectionHeaders(bytes, shoff, shnum);
  sections.shstrndx = shstrndx;
  for (const s of sections) {
    const fault = headerFault(s, sections, bytes.length, cubin);
    if (fault) return `its section ${s.i} ${fault}`;
  }
  for (const s of sections) {
    const fault = contentsFault(bytes, s, sections, cubin);
    if (fault) return `its section ${s.i} ${fault}`;
  }
  return null;
}

/** The names of the functions and variables a sound cubin defines globally (not weakly). */
function globalDefinitions(bytes) {
  const sections = sectionHeaders(bytes, u64(bytes, 40), bytes.readUInt16LE(60));
  const names = [];
  for (const table of sections.filter((s) => s.type === SHT.SYMTAB)) {
    const strings = sections[table.link];
    for (let at = table.offset; at < table.offset + table.size; at += 24) {
      const [info, shndx] = [bytes[at + 4], bytes.readUInt16LE(at + 6)];
      if (info >> 4 !== STB_GLOBAL || shndx === 0 || ![STT_OBJECT, STT_FUNC].includes(info & 0xf)) continue;
      const start = strings.offset + bytes.readUInt32LE(at);
      const end = bytes.indexOf(0, start);
      names.push(bytes.toString('latin1', start, end < 0 || end > strings.offset + strings.size ? start : end));
    }
  }
  return names;
}

module.exports = { elfFault, globalDefinitions, ELF_MAGIC };
