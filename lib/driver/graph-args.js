'use strict';
// The arguments of kernel, memset and copy nodes shared by the Graph methods that add nodes and
// the Graph and GraphExec methods that change them (graph.js, graph-exec.js): checked against what
// is known of the memory, in the form C takes.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { devicePointer, fits } = require('../internal/pointer');
const { SET_KERNEL_NODE } = require('../internal/graph-nodes');
const { kernelNodes, keep, typeOf } = require('./graph-node');

const MEMSET_KEYS = ['elementSize', 'pitch', 'height'];

// [dest address, pitch, value bits, elementSize, count, rows] for C, of a memset of count elements
// of elementSize bytes (1, 2 or 4) at dest, height rows pitch bytes apart; method names the call.
function memsetArgs(method, dest, value, count, options) {
  const { elementSize = 1, pitch, height = 1 } = options ?? {};
  if (elementSize !== 1 && elementSize !== 2 && elementSize !== 4) {
    throw new RangeError(`elementSize must be 1, 2 or 4, not ${check.describe(elementSize)}`);
  }
  const bits = elementSize * 8;
  check.integer('value', value, -(2 ** (bits - 1)), 2 ** bits - 1);
  const word = elementSize === 4 ? value >>> 0 : value & ((1 << bits) - 1);
  count = check.size('count', count);
  const rows = check.size('height', height);
  const rowBytes = count * elementSize;
  const stride = pitch === undefined ? rowBytes : check.size('pitch', pitch);
  if (rows > 1 && stride < rowBytes) throw new RangeError(`pitch ${stride} is less than a row of ${rowBytes} bytes`);
  if (count === 0 || rows === 0) throw new RangeError('a memset node sets at least one element');
  fits(stride * (rows - 1) + rowBytes, dest, method);
  return [devicePointer(dest, 'dest'), stride, word, elementSize, count, rows];
}

// A side of a copy node for C: a host array as it is (C checks that it is page-locked), else the
// address of device memory that holds bytes.
function copySide(memory, name, bytes, method) {
  if (ArrayBuffer.isView(memory)) return memory;
  if (memory instanceof ArrayBuffer) return check.uint8View(name, memory);
  fits(bytes, memory, `${method} ${name}`);
  return devicePointer(memory, name);
}

// [dest, src, bytes] for C, of a 1D copy; method names the call.
function copyArgs(method, dest, src, bytes) {
  bytes = check.size('bytes', bytes);
  if (bytes === 0) throw new RangeError('a copy node copies at least one byte');
  return [copySide(dest, 'dest', bytes, method), copySide(src, 'src', bytes, method), bytes];
}

// A TypeError unless node index of graph is of that kind.
function checkKind(graph, index, kind, method) {
  const actual = typeOf(graph, index);
  if (actual !== kind) throw new TypeError(`${method}: node is ${check.withArticle(actual)} node, not a ${kind} node`);
}

// Kernel node index of graph launches list (a call's arguments and options) in exec, or in graph
// where exec is null; uses keeps the arguments.
function setKernelArgs(exec, graph, index, list, uses) {
  const kernel = kernelNodes.get(graph)?.get(index);
  const method = exec === null ? 'graph.setKernelArgs()' : 'exec.setKernelArgs()';
  if (kernel === undefined) throw new TypeError(`${method}: node is not a kernel node made by graph.addKernel()`);
  kernel[SET_KERNEL_NODE](exec, graph, index, list);
  keep(uses, list.slice(0, -1));
}

// Memset node index of graph sets what args (addMemset's, but after) say, in exec, or in graph
// where exec is null; uses keeps dest.
function setMemset(exec, graph, index, args, uses) {
  const method = exec === null ? 'graph.setMemset()' : 'exec.setMemset()';
  check.keys(args[3], MEMSET_KEYS, method);
  checkKind(graph, index, 'memset', method);
  binding.graphSetMemset(exec, graph, index, ...memsetArgs(method, ...args));
  keep(uses, [args[0]]);
}

// Copy node index of graph copies what args (addMemcpy's dest, src, bytes) say, in exec, or in
// graph where exec is null; uses keeps both sides.
function setMemcpy(exec, graph, index, args, uses) {
  const method = exec === null ? 'graph.setMemcpy()' : 'exec.setMemcpy()';
  checkKind(graph, index, 'memcpy', method);
  binding.graphSetMemcpy(exec, graph, index, ...copyArgs(method, ...args));
  keep(uses, args.slice(0, 2));
}

module.exports = { MEMSET_KEYS, memsetArgs, copyArgs, setKernelArgs, setMemset, setMemcpy };
