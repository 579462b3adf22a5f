'use strict';
// Reads constant groups out of the CUDA headers: the enums and #define families that cudadrv
// exports as frozen objects (cuda.CtxFlags, cuda.DeviceAttribute, ...). The build uses it to list
// member names (their values come from the C compiler); the tests use it to check every name and
// value against the header independently of the addon.
const fs = require('fs');
const path = require('path');

// name: the JS group; enum: the C typedef name of the enum, or define: the #define prefix;
// strip: the prefix removed from each member's name.
const GROUPS = [
  { name: 'CudaResult', enum: 'CUresult', strip: 'CUDA_' },
  { name: 'CtxFlags', enum: 'CUctx_flags', strip: 'CU_CTX_' },
  { name: 'EventFlags', enum: 'CUevent_flags', strip: 'CU_EVENT_' },
  { name: 'StreamFlags', enum: 'CUstream_flags', strip: 'CU_STREAM_' },
  { name: 'DeviceAttribute', enum: 'CUdevice_attribute', strip: 'CU_DEVICE_ATTRIBUTE_' },
  { name: 'PointerAttribute', enum: 'CUpointer_attribute', strip: 'CU_POINTER_ATTRIBUTE_' },
  { name: 'ProfilerOutputMode', enum: 'CUoutput_mode', strip: 'CU_OUT_', file: 'cudaProfiler.h' },
  { name: 'FunctionAttribute', enum: 'CUfunction_attribute', strip: 'CU_FUNC_ATTRIBUTE_' },
  { name: 'FuncCache', enum: 'CUfunc_cache', strip: 'CU_FUNC_CACHE_' },
  { name: 'SharedConfig', enum: 'CUsharedconfig', strip: 'CU_SHARED_MEM_CONFIG_' },
  { name: 'ArrayFormat', enum: 'CUarray_format', strip: 'CU_AD_FORMAT_' },
  { name: 'Array3DFlags', define: 'CUDA_ARRAY3D_', strip: 'CUDA_ARRAY3D_' },
  { name: 'AddressMode', enum: 'CUaddress_mode', strip: 'CU_TR_ADDRESS_MODE_' },
  { name: 'FilterMode', enum: 'CUfilter_mode', strip: 'CU_TR_FILTER_MODE_' },
  { name: 'MemoryType', enum: 'CUmemorytype', strip: 'CU_MEMORYTYPE_' },
  { name: 'ComputeMode', enum: 'CUcomputemode', strip: 'CU_COMPUTEMODE_' },
  { name: 'JitOption', enum: 'CUjit_option', strip: 'CU_JIT_' },
  { name: 'JitTarget', enum: 'CUjit_target', strip: 'CU_TARGET_' },
  { name: 'JitFallback', enum: 'CUjit_fallback', strip: 'CU_' },
  { name: 'JitInputType', enum: 'CUjitInputType', strip: 'CU_JIT_INPUT_' },
  { name: 'HostAllocFlags', define: 'CU_MEMHOSTALLOC_', strip: 'CU_MEMHOSTALLOC_' },
  { name: 'MemAttachFlags', enum: 'CUmemAttach_flags', strip: 'CU_MEM_ATTACH_' },
  { name: 'MemHostRegisterFlags', define: 'CU_MEMHOSTREGISTER_', strip: 'CU_MEMHOSTREGISTER_' },
  { name: 'Limit', enum: 'CUlimit', strip: 'CU_LIMIT_' },
  { name: 'IpcMemFlags', enum: 'CUipcMem_flags', strip: 'CU_IPC_MEM_' },
  { name: 'GraphicsRegisterFlags', enum: 'CUgraphicsRegisterFlags', strip: 'CU_GRAPHICS_REGISTER_FLAGS_' },
  { name: 'ArrayCubemapFace', enum: 'CUarray_cubemap_face', strip: 'CU_CUBEMAP_FACE_' },
  { name: 'MemPoolAttribute', enum: 'CUmemPool_attribute', strip: 'CU_MEMPOOL_ATTR_' },
  { name: 'MemAdvise', enum: 'CUmem_advise', strip: 'CU_MEM_ADVISE_' },
  { name: 'MemLocationType', enum: 'CUmemLocationType', strip: 'CU_MEM_LOCATION_TYPE_' },
  { name: 'MemAllocationHandleType', enum: 'CUmemAllocationHandleType', strip: 'CU_MEM_HANDLE_TYPE_' },
  { name: 'MemAccessFlags', enum: 'CUmemAccess_flags', strip: 'CU_MEM_ACCESS_FLAGS_PROT_' },
  { name: 'MemcpyFlags', enum: 'CUmemcpyFlags', strip: 'CU_MEMCPY_FLAG_' },
  { name: 'P2PAttribute', enum: 'CUdevice_P2PAttribute', strip: 'CU_DEVICE_P2P_ATTRIBUTE_' },
  { name: 'TensorMapDataType', enum: 'CUtensorMapDataType', strip: 'CU_TENSOR_MAP_DATA_TYPE_' },
  { name: 'TensorMapInterleave', enum: 'CUtensorMapInterleave', strip: 'CU_TENSOR_MAP_INTERLEAVE_' },
  { name: 'TensorMapSwizzle', enum: 'CUtensorMapSwizzle', strip: 'CU_TENSOR_MAP_SWIZZLE_' },
  { name: 'TensorMapL2Promotion', enum: 'CUtensorMapL2promotion', strip: 'CU_TENSOR_MAP_L2_PROMOTION_' },
  { name: 'TensorMapFloatOOBFill', enum: 'CUtensorMapFloatOOBfill', strip: 'CU_TENSOR_MAP_FLOAT_OOB_FILL_' },
  { name: 'TensorMapIm2ColWideMode', enum: 'CUtensorMapIm2ColWideMode', strip: 'CU_TENSOR_MAP_IM2COL_WIDE_MODE_' },
  { name: 'StreamCaptureMode', enum: 'CUstreamCaptureMode', strip: 'CU_STREAM_CAPTURE_MODE_' },
  { name: 'GraphNodeType', enum: 'CUgraphNodeType', strip: 'CU_GRAPH_NODE_TYPE_' },
  { name: 'GraphInstantiateFlags', enum: 'CUgraphInstantiate_flags', strip: 'CUDA_GRAPH_INSTANTIATE_FLAG_' },
  { name: 'GraphDebugDotFlags', enum: 'CUgraphDebugDot_flags', strip: 'CU_GRAPH_DEBUG_DOT_FLAGS_' },
  { name: 'TextureFlags', define: 'CU_TRSF_', strip: 'CU_' },
  { name: 'TextureArrayFlags', define: 'CU_TRSA_', strip: 'CU_' },
];

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
}

// Evaluates a C constant expression of literals, earlier members and | & << >> + - ~ ( ).
function evaluate(expr, known) {
  const js = expr
    .replace(/\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b/g, (m, n) => `${BigInt(n)}n`)
    .replace(/\b([A-Za-z_]\w*)\b/g, (m, name) => {
      if (!(name in known)) throw new Error(`cuda-header: unknown name ${name} in "${expr}"`);
      return `${known[name]}n`;
    });
  if (!/^[\d\sn|&<>+\-~()]*$/.test(js)) throw new Error(`cuda-header: cannot evaluate "${expr}"`);
  return Number(BigInt.asIntN(64, Function(`return (${js});`)()));
}

// Returns [{ cName, value }] for one enum typedef, in header order.
function parseEnum(text, typedefName, known) {
  const re = new RegExp(`typedef\\s+enum\\s+\\w*\\s*\\{([^}]*)\\}\\s*${typedefName}\\s*;`);
  const m = re.exec(text);
  if (!m) throw new Error(`cuda-header: enum ${typedefName} not found`);
  const body = m[1]
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n');
  const members = [];
  let next = 0;
  for (const item of body.split(',')) {
    const t = item.trim();
    if (!t) continue;
    const [, cName, expr] = /^(\w+)\s*(?:=\s*([\s\S]+))?$/.exec(t) || [];
    if (!cName) throw new Error(`cuda-header: cannot read enum member "${t}"`);
    const value = expr === undefined ? next : evaluate(expr.trim(), known);
    known[cName] = value;
    members.push({ cName, value });
    next = value + 1;
  }
  return members;
}

function parseDefines(text, prefix, known) {
  const members = [];
  const re = new RegExp(`^#define\\s+(${prefix}\\w+)\\s+(.+)$`, 'gm');
  for (let m; (m = re.exec(text));) {
    const value = evaluate(m[2].trim(), known);
    known[m[1]] = value;
    members.push({ cName: m[1], value });
  }
  return members;
}

// Remembers every #define of a plain number, which enum members may refer to.
function collectNumericDefines(text, known) {
  const re = /^#define\s+(\w+)\s+\(?\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*\)?\s*$/gm;
  for (let m; (m = re.exec(text));) known[m[1]] = Number(BigInt(m[2]));
}

// CU_JIT_NUM_INPUT_TYPES lacks its group's prefix CU_JIT_INPUT_: such members keep their name less CU_.
function memberName(cName, strip) {
  return cName.startsWith(strip) ? cName.slice(strip.length) : cName.replace(/^CUDA_|^CU_/, '');
}

// Reads every group from the headers in includeDir: { GroupName: [{ name, cName, value }] }.
function readGroups(includeDir) {
  const texts = {};
  const known = {};
  const result = {};
  for (const group of GROUPS) {
    const file = group.file || 'cuda.h';
    if (!texts[file]) {
      texts[file] = stripComments(fs.readFileSync(path.join(includeDir, file), 'utf8'));
      collectNumericDefines(texts[file], known);
    }
    const members = group.enum
      ? parseEnum(texts[file], group.enum, known)
      : parseDefines(texts[file], group.define, known);
    result[group.name] = members.map((m) => ({ ...m, name: memberName(m.cName, group.strip) }));
  }
  return result;
}

// A doxygen comment's text as one line of plain words: leading stars, markup and :: dropped.
function plain(comment) {
  return comment
    .replace(/^\s*\*+ ?/gm, '')
    .replace(/<\/?\w+>/g, '')
    .replace(/\\deprecated\b/g, 'Deprecated:')
    .replace(/\\n\b/g, ' ')
    .replace(/\\[pec] (\w+)/g, '$1')
    .replace(/::(\w)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^<\s*/, '');
}

/**
 * The header's own words for its constants and enums, from includeDir's headers: { C name: text }
 * for every enum member and #define with a doxygen comment (after it, or just before it), and
 * { typedef name: text } for every enum with one before it.
 */
function readDocs(includeDir) {
  const docs = {};
  for (const file of new Set(GROUPS.map((group) => group.file || 'cuda.h'))) {
    const raw = fs.readFileSync(path.join(includeDir, file), 'utf8');
    for (const [, name, text] of raw.matchAll(/^\s*(\w+)\s*(?:=[^,\n]*)?,?[ \t]*\/\*\*<([\s\S]*?)\*\//gm)) {
      docs[name] = plain(text);
    }
    for (const [, text, name] of raw.matchAll(/\/\*\*((?:(?!\*\/)[^])*)\*\/\s*(?:#define\s+)?(\w+)\b/g)) {
      if (!(name in docs) && name !== 'typedef') docs[name] = plain(text);
    }
    const tags = {};
    for (const [, text, tag] of raw.matchAll(/\/\*\*((?:(?!\*\/)[^])*)\*\/\s*typedef\s+enum\s+(\w+)\s*\{/g)) {
      tags[tag] = plain(text);
    }
    for (const [, tag, name] of stripComments(raw).matchAll(/typedef\s+enum\s+(\w+)\s*\{[^}]*\}\s*(\w+)\s*;/g)) {
      if (tags[tag]) docs[name] = tags[tag];
    }
  }
  return docs;
}

module.exports = { GROUPS, readGroups, readDocs };
