'use strict';
// The parameter lists of kernels: struct format strings, the C layout of a list of fields, and
// kernel signatures read from CUDA C++ source.
const { describe } = require('../internal/checks');
const { TENSOR_MAP, TENSOR_MAP_FIELD } = require('../internal/kernel-argument');
const { TYPES, NAMED, TYPED_ARRAY_TYPES } = require('./scalars');

// ---- formats ----

// A parameter: a scalar type, or bytes copied verbatim ({ size, align, blob: true }).
function blobField(view) {
  const size = view.byteLength;
  const element = view.BYTES_PER_ELEMENT || 1;
  // CUDA's vector types (char2 ... int4, float4, double2) align to their size up to 16 bytes;
  // other structs to their widest element, as far as a TypedArray can tell.
  const power = size <= 16 && (size & (size - 1)) === 0;
  return { size, align: power ? Math.max(size, element) : element, blob: true };
}

/**
 * The types of a prepare() format: a string of struct characters (`'PPi'`, `'2f P'`, repeat
 * counts allowed) or an array of characters, dtype names ('float32'), TypedArray constructors and
 * cuda.TensorMap.
 */
function parseFormat(format) {
  const types = [];
  const items = typeof format === 'string' ? [format] : format;
  if (!Array.isArray(items)) {
    throw new TypeError(
      `the format must be a string of struct characters ('PPi') or an array of ` +
        `them and dtype names, not ${describe(format)}`,
    );
  }
  for (const item of items) {
    if (typeof item === 'function' && TENSOR_MAP in item) {
      types.push(TENSOR_MAP_FIELD);
    } else if (typeof item === 'function' && TYPED_ARRAY_TYPES[item.name]) {
      types.push(TYPES[TYPED_ARRAY_TYPES[item.name]]);
    } else if (typeof item === 'string' && NAMED[item]) {
      types.push(TYPES[NAMED[item]]);
    } else if (typeof item === 'string') {
      parseCharacters(item, types);
    } else {
      throw new TypeError(
        `a format item must be a struct character, a dtype name, a TypedArray ` +
          `constructor or cuda.TensorMap, not ${describe(item)}`,
      );
    }
  }
  return types;
}

function parseCharacters(text, types) {
  const token = /\s*(\d*)\s*(\S)/y;
  let match;
  while (token.lastIndex < text.length && (match = token.exec(text))) {
    const type = TYPES[match[2]];
    if (!type) {
      throw new TypeError(
        `unknown format character ${JSON.stringify(match[2])} in ` +
          `${JSON.stringify(text)}: use b B h H i I l L q Q n N e f d ? P, or a dtype name`,
      );
    }
    const count = match[1] === '' ? 1 : Number(match[1]);
    for (let i = 0; i < count; i++) types.push(type);
  }
}

// ---- layout ----

// Offsets of fields laid out as C lays out a parameter list (each at its alignment); where the
// driver reports the kernel's own layout (info: [offset, size, ...]), its offsets, after checking
// the count and every size. `kernel` names the kernel in messages. The driver's offsets count from
// where the parameters begin in constant memory, which is not itself aligned (on sm_90 a TensorMap
// first in the list lies at byte 112): their alignment is the compiler's, and cannot be judged here.
function layout(fields, info, kernel) {
  const offsets = [];
  let size = 0;
  if (info) {
    const count = info.length / 2;
    if (count !== fields.length) {
      throw new TypeError(
        `kernel '${kernel}' takes ${count} parameter${count === 1 ? '' : 's'}, ` +
          `but ${fields.length} argument${fields.length === 1 ? ' was' : 's were'} given`,
      );
    }
    fields.forEach((field, k) => {
      const want = info[2 * k + 1];
      if (field.size !== want) {
        throw new TypeError(
          `kernel '${kernel}' parameter ${k + 1} takes ${want} bytes, but argument ` +
            `${k + 1} is ${label(field)} (${field.size} bytes); ${suggest(want)}`,
        );
      }
      offsets.push(info[2 * k]);
      size = Math.max(size, info[2 * k] + want);
    });
    return { offsets, size };
  }
  for (const field of fields) {
    size = Math.ceil(size / field.align) * field.align;
    offsets.push(size);
    size += field.size;
  }
  return { offsets, size };
}

function label(field) {
  if (field.tensorMap) return field.name;
  return field.blob ? `${field.size} bytes copied verbatim` : field.name === 'pointer' ? 'a pointer' : field.name;
}

function suggest(size) {
  const byName = {
    1: 'cuda.int8, cuda.uint8 or cuda.bool',
    2: 'cuda.int16, cuda.uint16 or cuda.float16',
    4: 'cuda.int32, cuda.uint32 or cuda.float32',
    8: 'cuda.int64, cuda.uint64, cuda.float64 or device memory',
  };
  return byName[size] ? `pass ${byName[size]}` : `pass a TypedArray of ${size} bytes`;
}

// ---- kernel signatures parsed from CUDA C++ source ----

const C_TYPES = {
  char: 'b',
  'signed char': 'b',
  'unsigned char': 'B',
  short: 'h',
  'short int': 'h',
  'signed short': 'h',
  'unsigned short': 'H',
  'unsigned short int': 'H',
  int: 'i',
  signed: 'i',
  'signed int': 'i',
  unsigned: 'I',
  'unsigned int': 'I',
  long: 'l',
  'long int': 'l',
  'signed long': 'l',
  'unsigned long': 'L',
  'unsigned long int': 'L',
  'long long': 'q',
  'long long int': 'q',
  'signed long long': 'q',
  'unsigned long long': 'Q',
  'unsigned long long int': 'Q',
  float: 'f',
  double: 'd',
  bool: '?',
  __half: 'e',
  half: 'e',
  size_t: 'N',
  ptrdiff_t: 'n',
  ssize_t: 'n',
  intptr_t: 'n',
  uintptr_t: 'N',
  int8_t: 'b',
  uint8_t: 'B',
  int16_t: 'h',
  uint16_t: 'H',
  int32_t: 'i',
  uint32_t: 'I',
  int64_t: 'q',
  uint64_t: 'Q',
  cudaTextureObject_t: 'Q',
  cudaSurfaceObject_t: 'Q',
  CUtexObject: 'Q',
  CUsurfObject: 'Q',
};
const TYPE_WORDS = new Set(['char', 'short', 'int', 'long', 'signed', 'unsigned', 'float', 'double', 'bool']);
const QUALIFIERS = new Set(['const', 'volatile', '__restrict__', '__restrict', 'restrict', 'register']);
const ATTRIBUTES = new Set([
  '__launch_bounds__',
  '__cluster_dims__',
  '__maxnreg__',
  '__attribute__',
  '__declspec',
  'alignas',
]);

// Comments, string and character literals and preprocessor lines, blanked (lengths kept).
function blankNonCode(source) {
  return source
    .replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/^[ \t]*#(?:[^\n]*\\\n)*[^\n]*/gm, (m) => m.replace(/[^\n]/g, ' '));
}

// The index just past the bracket that closes the one at `open`.
function closing(text, open) {
  const pairs = { '(': ')', '[': ']', '{': '}' };
  const stack = [pairs[text[open]]];
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i];
    if (c === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return i + 1;
    } else if (c in pairs) {
      stack.push(pairs[c]);
    }
  }
  return -1;
}

function splitParameters(list) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === '(' || c === '<' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === '>' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  return parts.map((p) => p.trim()).filter((p, i, all) => p !== '' || all.length > 1);
}

// { char, text } of one parameter declaration: char is its format character, or null for a
// type cudadrv does not know (structs, vector types, templates).
function parameterType(text) {
  const declaration = text.replace(/\s*=[^]*$/, '').replace(/\bstd::/g, '');
  if (/[*]/.test(declaration)) return { char: 'P', text };
  if (/[&<>[\]:]/.test(declaration)) return { char: null, text };
  const words = declaration.split(/\s+/).filter((w) => w !== '' && !QUALIFIERS.has(w));
  if (words.length > 1 && !TYPE_WORDS.has(words[words.length - 1])) words.pop(); // the name
  return { char: C_TYPES[words.join(' ')] ?? null, text };
}

/**
 * The parameter types of the `__global__` functions of CUDA C++ source, by name: Map(name →
 * [{ char, text }]). Templates, and names declared twice with different parameters, are left out
 * (their types are not known for sure).
 */
function parseKernelSignatures(source) {
  const text = blankNonCode(source);
  const found = new Map();
  const ambiguous = new Set();
  const global = /\b__global__\b/g;
  let match;
  while ((match = global.exec(text))) {
    const start = Math.max(
      text.lastIndexOf(';', match.index),
      text.lastIndexOf('}', match.index),
      text.lastIndexOf('{', match.index),
    );
    if (/\btemplate\b/.test(text.slice(start + 1, match.index))) continue;
    const word = /[A-Za-z_]\w*|\(/g;
    word.lastIndex = global.lastIndex;
    let name = null;
    let token;
    while ((token = word.exec(text))) {
      if (token[0] !== '(') {
        name = token[0];
        continue;
      }
      const end = closing(text, token.index);
      if (end < 0) break;
      if (ATTRIBUTES.has(name)) {
        word.lastIndex = end;
        name = null;
        continue;
      }
      if (name !== null) {
        const params = splitParameters(text.slice(token.index + 1, end - 1));
        const types = params.length === 1 && params[0] === 'void' ? [] : params.map(parameterType);
        const key = types.map((t) => t.char).join(',');
        if (found.has(name) && found.get(name).key !== key) ambiguous.add(name);
        found.set(name, { key, types });
      }
      break;
    }
  }
  const signatures = new Map();
  for (const [name, { types }] of found) if (!ambiguous.has(name)) signatures.set(name, types);
  return signatures;
}

module.exports = { parseFormat, layout, blobField, parseKernelSignatures };
