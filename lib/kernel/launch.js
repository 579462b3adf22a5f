'use strict';
// The launch path of kernels: launch dimensions, a kernel's state, the generic call
// (kernel(...args, options)) and prepared calls.
//
// Every launch goes through a launcher (src/kernel/launch.c): a native function bound to the kernel, to
// an ArrayBuffer holding the launch dimensions, attributes and packed parameters, and to the
// stream its launches go to. A format (the types of a call's arguments) is compiled once into a
// launcher and a packer that writes straight into that buffer; a launch then costs one call into
// C, plus one more when the stream differs from the last launch's. The buffers never leave these
// files (this one and kernel.js): C holds raw pointers into them.
const binding = require('../internal/binding');
const { LogicError } = require('../driver/errors');
const { Stream } = require('../driver/stream');
const { Event } = require('../driver/event');
const { checkSignal, abortError, abortable } = require('../internal/abort');
const { open: openCaptures, keepForCapture } = require('../internal/capture-keep');
const check = require('../internal/checks');
const layouts = require('../internal/layouts');
const { memAlloc } = require('../memory/device-memory');
const { memcpyHtoD, memcpyHtoDAsync, memcpyDtoH, memcpyDtoHAsync } = require('../memory/copies');
const { TYPES } = require('./scalars');
const { layout } = require('./formats');
const packing = require('./packing');
const { ATTRIBUTE_KEYS, writeAttributes, unbindEvents } = require('./launch-attributes');

const { viewsOf, classify, fieldOf, packerFor, packerStatements, compilePacker } = packing;

// The header before the parameters, as src/kernel/launcher.h lays it out: grid, block, shared bytes,
// the launch attributes asked for (bits) and their values (launch-attributes.js).
const { grid: GRID, block: BLOCK, shared: SHARED, attributes: ATTRIBUTES } = layouts.launch;
const { headerWords: HEADER_WORDS, headerBytes: HEADER_BYTES } = layouts.launch;
const MAX_FORMATS = 64; // per kernel, for the generic call path

// ---- launch dimensions ----

// A dimension: a number from 1 to 2**32 - 1 (no bigint, which >>> would refuse with a TypeError).
const positiveU32 = (v) => typeof v === 'number' && v >>> 0 === v && v !== 0;

function badDims(d, what) {
  if (Array.isArray(d)) {
    if (d.length < 1 || d.length > 3) throw new RangeError(`${what} must have 1 to 3 dimensions, not ${d.length}`);
    const bad = d.find((v) => !positiveU32(v));
    if (typeof bad !== 'number') throw new TypeError(`${what} dimensions must be numbers, not ${check.describe(bad)}`);
    throw new RangeError(`${what} dimensions must be integers from 1 to 4294967295, not ${bad}`);
  }
  if (typeof d === 'number') throw new RangeError(`${what} must be an integer from 1 to 4294967295, not ${d}`);
  if (d === undefined && what === 'block') {
    throw new TypeError(
      'block is required: pass the launch options { block: [x, y, z], grid, ... } ' + 'as the last argument',
    );
  }
  throw new TypeError(`${what} must be a number or an array of 1 to 3 numbers, not ${check.describe(d)}`);
}

function dim3(u32, at, d, what) {
  let x = d;
  let y = 1;
  let z = 1;
  if (typeof d !== 'number') {
    if (!Array.isArray(d) || d.length < 1 || d.length > 3) badDims(d, what);
    x = d[0];
    if (d.length > 1) {
      y = d[1];
      if (d.length > 2) z = d[2];
    }
  }
  if (!positiveU32(x) || !positiveU32(y) || !positiveU32(z)) badDims(d, what);
  u32[at] = x;
  u32[at + 1] = y;
  u32[at + 2] = z;
}

// Writes grid and block into a launcher's header, and what options (undefined, or an object)
// asks for: shared bytes, launch attributes.
function writeDims(launcher, grid, block, options) {
  const u32 = launcher.u32;
  if (grid === undefined) {
    u32[GRID] = 1;
    u32[GRID + 1] = 1;
    u32[GRID + 2] = 1;
  } else {
    dim3(u32, GRID, grid, 'grid');
  }
  dim3(u32, BLOCK, block, 'block');
  if (options === undefined) {
    u32[SHARED] = 0;
    u32[ATTRIBUTES] = 0;
    if (launcher.events[0] !== null || launcher.events[1] !== null) unbindEvents(launcher);
    return;
  }
  const { shared } = options;
  if (shared === undefined) u32[SHARED] = 0;
  else if (typeof shared === 'number' && shared >>> 0 === shared) u32[SHARED] = shared;
  else check.integer('shared', shared, 0, 4294967295);
  u32[ATTRIBUTES] = writeAttributes(launcher, options, dim3);
}

// ---- the state of a kernel, wrapped by src/kernel/launch.c around its CUfunction ----

class KernelState {
  constructor(module, name, signature) {
    this.module = module;
    this.name = name;
    this.signature = signature; // [{ char, text }] parsed from the source, or null
    this.info = undefined; // cuFuncGetParamInfo's [offset, size, ...], null where unknown
    this.formats = new Map(); // generic call path: argument codes → compiled format
    this.last = null;
    this.preparedFormat = null; // the characters of prepare()'s format, for messages
    this.legacy = null; // the deprecated launch API's settings
  }
}

// Checks argument types against the parameter types parsed from the source.
function checkSignature(k, fields) {
  const sig = k.signature;
  if (sig === null) return;
  fields.forEach((field, i) => {
    const param = sig[i];
    if (param === undefined || param.char === null) return;
    const want = TYPES[param.char];
    if (field.blob || field.kind !== want.kind || field.size !== want.size) {
      const given = field.blob
        ? `${field.size} bytes copied verbatim`
        : field.kind === 'pointer'
          ? 'a pointer'
          : `cuda.${field.name}`;
      throw new TypeError(
        `kernel '${k.name}' parameter ${i + 1} (${param.text}) is ` +
          `${want.kind === 'pointer' ? 'a pointer' : want.name}, but argument ${i + 1} is ${given}` +
          `${want.kind === 'pointer' ? '; pass device memory' : `; pass cuda.${want.name}(...) or a number`}`,
      );
    }
  });
}

// A launcher for fields: its layout (checked against the kernel's), native launch and buffer.
function compileFormat(k, fields) {
  if (k.info === undefined) k.info = binding.funcGetParamInfo(k);
  checkSignature(k, fields);
  const { offsets, size } = layout(fields, k.info, k.name);
  return launcherOf(k, size, offsets);
}

function launcherOf(k, size, offsets) {
  const [launch, buffer, setStream, addToGraph, setInGraphExec, setInGraph, setEvents] = binding.launcherCreate(
    k,
    size,
  );
  return {
    offsets,
    size,
    launch,
    setStream,
    addToGraph,
    setInGraphExec,
    setInGraph,
    setEvents,
    stream: null, // the stream bound in C
    events: [null, null], // the events bound in C (launch-attributes.js)
    u32: new Uint32Array(buffer, 0, HEADER_WORDS),
    views: viewsOf(buffer, HEADER_BYTES, size),
  };
}

// Binds stream (a Stream; null or undefined: the default stream) to launcher where it is not
// bound already. C checks that it is a Stream.
function bindStream(launcher, stream) {
  const s = stream === undefined ? null : stream;
  if (s === launcher.stream) return;
  launcher.setStream(s);
  launcher.stream = s;
}

// Launches with what the header holds, on stream.
function launchOn(launcher, stream) {
  if (stream !== launcher.stream) bindStream(launcher, stream);
  launcher.launch();
}

// ---- the generic call: kernel(...args, { block, grid, stream, shared, launch attributes,
// timeKernel, texrefs, signal }) ----

const OPTION_KEYS = new Set([
  'block',
  'grid',
  'stream',
  'shared',
  ...ATTRIBUTE_KEYS,
  'timeKernel',
  'texrefs',
  'signal',
]);

function isOptions(o) {
  if (typeof o !== 'object' || o === null || typeof o.ptr === 'bigint') return false;
  const proto = Object.getPrototypeOf(o);
  return proto === Object.prototype || proto === null;
}

function checkOptions(options) {
  for (const key in options) {
    if (!OPTION_KEYS.has(key)) {
      throw new TypeError(
        `unknown launch option '${key}': the options are block, grid, stream, shared, timeKernel, ` +
          `texrefs, signal and the launch attributes (${ATTRIBUTE_KEYS.join(', ')})`,
      );
    }
  }
  const { stream, texrefs } = options;
  if (stream != null && !(stream instanceof Stream)) check.instance('stream', stream, Stream);
  if (texrefs !== undefined) checkTexrefs(texrefs);
}

function checkTexrefs(texrefs) {
  const { TextureReference } = require('./texref');
  const expected = 'an array of TextureReference (from module.getTexref(name))';
  if (!check.list('texrefs', texrefs, expected).every((t) => t instanceof TextureReference)) {
    throw new TypeError(`texrefs must be ${expected}`);
  }
}

// Whether list's arguments have format's codes: at once for the very arguments of the last call
// (a loop passing the same memory and scalars), else classified again.
function sameFormat(format, list, n, sig) {
  const codes = format.codes;
  if (codes.length !== n) return false;
  const last = format.lastArgs;
  for (let i = 0; i < n; i++) {
    const arg = list[i];
    if (arg !== last[i]) {
      if (classify(arg, i, sig) !== codes[i]) return false;
      last[i] = arg;
    }
  }
  return true;
}

function formatFor(k, list, n) {
  const codes = [];
  for (let i = 0; i < n; i++) codes.push(classify(list[i], i, k.signature));
  const key = codes.join(' ');
  let format = k.formats.get(key);
  if (format === undefined) {
    const fields = codes.map(fieldOf);
    format = compileFormat(k, fields);
    format.codes = codes;
    format.lastArgs = list.slice(0, n);
    format.pack = packerFor(fields, format.offsets, format.views);
    format.handlers = codes.flatMap((code, i) => (code === '*' ? [i] : []));
    if (format.handlers.length === 0) format.handlers = null;
    if (k.formats.size >= MAX_FORMATS) k.formats.delete(k.formats.keys().next().value);
    k.formats.set(key, format);
  }
  return format;
}

function callKernel(k, list) {
  const n = list.length - 1;
  const options = list[n];
  if (n < 0 || !isOptions(options)) {
    throw new TypeError(
      `kernel '${k.name}': the last argument must be the launch options ` +
        '{ block: [x, y, z], grid, stream, shared, timeKernel }; block is required',
    );
  }
  checkOptions(options);
  // An aborted signal launches nothing, as fetch() sends nothing.
  const { signal } = options;
  if (signal !== undefined && checkSignal(signal).aborted) throw abortError(`kernel '${k.name}'`, signal);
  let format = k.last;
  if (format === null || !sameFormat(format, list, n, k.signature)) k.last = format = formatFor(k, list, n);
  if (format.handlers !== null || options.timeKernel) return callAndWait(format, list, n, options, k.name);
  writeDims(format, options.grid, options.block, options);
  format.pack(list);
  launchOn(format, options.stream);
  if (openCaptures.size !== 0) keepForCapture(options.stream, k, list.slice(0, n));
  return undefined;
}

const NODE_OPTION_KEYS = new Set(['block', 'grid', 'shared']);

// Packs list (a call's arguments and options) into k's launcher for a graph's kernel node, as
// for a launch; what names the call in messages. The launcher.
function packNode(k, list, what) {
  const n = list.length - 1;
  const options = list[n];
  if (n < 0 || !isOptions(options)) {
    throw new TypeError(
      `${what}(kernel '${k.name}', ...args, options): the last argument must be the launch ` +
        'options { block: [x, y, z], grid, shared }; block is required',
    );
  }
  for (const key in options) {
    if (!NODE_OPTION_KEYS.has(key)) {
      throw new TypeError(
        `unknown kernel node option '${key}': the options are block, grid, shared and after ` +
          '(a cluster or cooperative launch is captured from a stream instead)',
      );
    }
  }
  let format = k.last;
  if (format === null || !sameFormat(format, list, n, k.signature)) k.last = format = formatFor(k, list, n);
  if (format.handlers !== null) {
    throw new TypeError(
      `${what}(kernel '${k.name}'): In, Out and InOut copy at each call, which a graph's node ` +
        'cannot; pass device memory, and add copy nodes',
    );
  }
  writeDims(format, options.grid, options.block, options);
  format.pack(list);
  return format;
}

// A kernel node of graph after deps (node indices); lib/driver/graph.js checks the graph and the
// nodes. Its index.
function addKernelNode(k, graph, deps, list) {
  return packNode(k, list, 'graph.addKernel').addToGraph(graph, deps);
}

// Node index of graph, a kernel node of k, launches list's arguments in exec from now on (exec
// null: in graph, for the GraphExecs instantiated later).
function setKernelNode(k, exec, graph, index, list) {
  if (exec === null) packNode(k, list, 'graph.setKernelArgs').setInGraph(graph, index);
  else packNode(k, list, 'exec.setKernelArgs').setInGraphExec(exec, graph, index);
}

// With In/Out/InOut or timeKernel: copies in, launches, and returns a Promise that settles once
// the stream is past the kernel and the Out data has arrived (seconds for timeKernel). An abort
// of options.signal rejects it at once; the kernel runs on, and Out data not yet copied is not.
function callAndWait(format, list, n, options, name) {
  const { signal } = options;
  const stream = options.stream ?? null;
  const values = list.slice(0, n);
  const copies = [];
  let start = null;
  let end = null;
  try {
    writeDims(format, options.grid, options.block, options);
    for (const i of format.handlers ?? []) {
      const handler = list[i];
      const device = memAlloc(handler.array.byteLength);
      copies.push({ handler, device });
      values[i] = device;
      if (!handler.copyIn) continue;
      if (stream) memcpyHtoDAsync(device, handler.array, stream);
      else memcpyHtoD(device, handler.array);
    }
    format.pack(values);
    if (options.timeKernel) start = new Event().record(stream);
    launchOn(format, stream);
    if (options.timeKernel) end = new Event().record(stream);
  } catch (error) {
    release(copies, true);
    throw error;
  }
  return abortable(signal, `kernel '${name}'`, () => finishCall(stream, copies, start, end, signal));
}

async function finishCall(stream, copies, start, end, signal) {
  let done = false;
  try {
    await binding.launchWait(stream);
    let queued = false;
    for (const { handler, device } of copies) {
      if (!handler.copyOut || signal?.aborted) continue;
      if (stream) {
        memcpyDtoHAsync(handler.array, device, stream);
        queued = true;
      } else {
        memcpyDtoH(handler.array, device);
      }
    }
    if (queued) await stream.synchronize();
    done = true;
    return end === null ? undefined : end.timeSince(start) / 1000;
  } finally {
    release(copies, !done);
  }
}

// Frees the device copies; after a failure, quietly (the failure is what the caller sees).
function release(copies, quiet) {
  for (const { device } of copies) {
    try {
      device.free();
    } catch (error) {
      if (!quiet) throw error;
    }
  }
}

// ---- prepared calls: prepare(format), then preparedCall(grid, block, ...args, options?) ----

const PREPARED_KEYS = new Set(['shared', ...ATTRIBUTE_KEYS]);

// Called only when a prepared call got other than `expected` arguments: fine when one more came,
// a plain object of options ({ shared, ...launch attributes }) or undefined.
function checkArity(count, expected, options, method, k) {
  if (count === expected + 1 && (options === undefined || isOptions(options))) {
    for (const key in options) {
      if (!PREPARED_KEYS.has(key)) {
        throw new TypeError(
          `${method}(): unknown option '${key}' (the options are shared and the launch attributes: ` +
            `${ATTRIBUTE_KEYS.join(', ')})`,
        );
      }
    }
    return;
  }
  const args = expected - (method === 'preparedAsyncCall' ? 3 : 2);
  throw new TypeError(
    `kernel '${k.name}'.${method}() takes grid, block, ` +
      `${method === 'preparedAsyncCall' ? 'stream, ' : ''}${args} argument${args === 1 ? '' : 's'} ` +
      `(format '${k.preparedFormat}') and optionally { shared, launch attributes }; got ${count} arguments`,
  );
}

// The preparedCall and preparedAsyncCall functions of a compiled format, with one parameter
// per argument so that a call allocates nothing and makes one call into C.
function preparedFunctions(k, fields, compiled) {
  const params = fields.map((f, i) => `a${i}, `).join('');
  const args = fields.map((f, i) => `a${i}`).join(', ');
  const statements = packerStatements(fields, compiled.offsets, (i) => `a${i}`);
  const n = fields.length;
  const body = (method, expected, stream) => `
    if (arguments.length !== ${expected}) checkArity(arguments.length, ${expected}, options, '${method}', k);
    writeDims(launcher, grid, block, options);
    ${statements.join('\n    ')}
    if (${stream} !== launcher.stream) bindStream(launcher, ${stream});
    launch();${
      stream === 'null'
        ? ''
        : `
    if (openCaptures.size !== 0) keepForCapture(stream, k, [${args}]);`
    }`;
  const source = `
  return [
    function preparedCall(grid, block, ${params}options) {${body('preparedCall', n + 2, 'null')}
    },
    function preparedAsyncCall(grid, block, stream, ${params}options) {${body('preparedAsyncCall', n + 3, 'stream')}
    },
  ];`;
  return compilePacker(compiled.views, source, {
    k,
    launcher: compiled,
    launch: compiled.launch,
    writeDims,
    checkArity,
    bindStream,
    openCaptures,
    keepForCapture,
  });
}

function notPrepared(method) {
  return new LogicError(`kernel.${method}(): call kernel.prepare(format) first`);
}

module.exports = {
  KernelState,
  addKernelNode,
  setKernelNode,
  callKernel,
  preparedFunctions,
  notPrepared,
  launcherOf,
  writeDims,
  launchOn,
  checkTexrefs,
  compileFormat,
  dim3,
  checkSignature,
};
