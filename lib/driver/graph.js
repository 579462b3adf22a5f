'use strict';
// CUDA graphs: work recorded once and launched again and again for the cost of one launch. A
// graph is built node by node (new Graph(), graph.addKernel(...)...) or captured from a stream
// (stream.beginCapture() ... stream.endCapture()), then instantiated into a GraphExec.
//
// A node is named to C by its index in its graph (src/driver/graph.c keeps the table). What the
// nodes use (kernels and their modules, device memory, child graphs) is held by the Graph, and by
// each GraphExec made from it, so that garbage collection never frees it under them (a captured
// graph holds what internal/capture-keep.js kept of its work); C also refuses to unload a module
// whose kernels a graph uses.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { ADD_KERNEL_NODE, ADD_COPY_NODE } = require('../internal/graph-nodes');
const { Context } = require('./context');
const { Event } = require('./event');
const { LogicError } = require('./errors');
const { ConditionalHandle, CONDITIONAL_TYPES, COND_ASSIGN_DEFAULT, makeHandle } = require('./conditional');
const { GraphNode, graphs, kernelNodes, held, keep, indexIn } = require('./graph-node');
const { GraphExec } = require('./graph-exec');
const { MEMSET_KEYS, memsetArgs, copyArgs, setKernelArgs, setMemset, setMemcpy } = require('./graph-args');
const { GraphMemory, makeGraphMemory, freedByNode } = require('./graph-memory');
const { GraphInstantiateFlags, GraphDebugDotFlags } = require('./constants');

// No dependencies: C takes them as a Uint32Array of node indices (reading one runs no JS).
const NONE = new Uint32Array(0);

// Lets a Graph be made around a graph C wraps (a capture's, a conditional node's body) rather
// than a new one of cuGraphCreate.
let adopting = false;

// The indices of after (a GraphNode, an array of them, or undefined: none) in graph, for C; a
// node listed twice counts once (the driver refuses a dependency given twice).
function nodeIndices(graph, after) {
  if (after === undefined) return NONE;
  const list = after instanceof GraphNode ? [after] : check.list('after', after, 'a GraphNode or an array of them');
  const indices = Uint32Array.from(list, (node, i) => indexIn(graph, node, `after[${i}]`));
  const distinct = new Set(indices);
  return distinct.size === indices.length ? indices : Uint32Array.from(distinct);
}

// A conditional node's body → the Graph of that node, which it keeps alive: a body is usable (and
// captured into) only while its graph is.
const parents = new WeakMap();

// The graph at the top of graph's bodies: graph, unless it is a conditional node's body.
function familyOf(graph) {
  while (parents.has(graph)) graph = parents.get(graph);
  return graph;
}

// Handles that are a conditional node's condition: the driver takes each for one node only.
const usedHandles = new WeakSet();
// A family's top graph → how many of its handles are no node's condition yet: driver 580 refuses
// to instantiate such a graph ("invalid argument"), which cudadrv says in words first.
const idleHandles = new WeakMap();
const countIdle = (graph, change) => {
  const family = familyOf(graph);
  idleHandles.set(family, (idleHandles.get(family) ?? 0) + change);
};

// A Graph around a graph C wraps next (a capture's, a conditional node's body), not a new one.
function adoptedGraph() {
  adopting = true;
  try {
    return new Graph();
  } finally {
    adopting = false;
  }
}

// A captured graph keeps the objects its work uses.
function holdFor(graph, uses) {
  const set = held.get(graph);
  for (const use of uses) set.add(use);
}

/**
 * Work recorded once and launched many times: `new Graph()` and its add methods, or
 * `stream.beginCapture()` ... `stream.endCapture()`. Nothing in a graph runs until an
 * instantiation of it is launched.
 */
class Graph {
  constructor() {
    if (!adopting) binding.graphCreate(this);
    held.set(this, new Set());
    graphs.add(this);
  }

  /** How many nodes the graph holds. */
  get nodeCount() {
    return binding.graphNodeCount(this);
  }

  // The node indices of options.after (undefined: none) for C, and options checked.
  #after(options, keys, method) {
    check.keys(options, keys, `graph.${method}()`);
    if (options === undefined) return NONE;
    return nodeIndices(this, options.after);
  }

  #node(index, ...uses) {
    keep(held.get(this), uses);
    return new GraphNode(this, index);
  }

  /**
   * Makes a kernel node that addKernel() made launch other arguments and shape in the GraphExecs
   * instantiated from now on (exec.setKernelArgs() changes one GraphExec):
   * `graph.setKernelArgs(node, ...args, { grid, block, shared })`, a call of the node's kernel
   * (which cannot change), packed now.
   */
  setKernelArgs(node, ...list) {
    setKernelArgs(null, this, indexIn(this, node, 'node'), list, held.get(this));
    return this;
  }

  /** A node that does nothing: joins its dependencies (`{ after: [a, b] }`) for the nodes after it. */
  addEmpty(options) {
    return this.#node(binding.graphAddEmpty(this, this.#after(options, ['after'], 'addEmpty')));
  }

  /**
   * A kernel node: `graph.addKernel(kernel, ...args, { grid, block, shared, after })` takes the
   * arguments a kernel call takes (checked against the kernel's parameters), packed now. Device
   * memory must be passed as device memory: In, Out and InOut copy at each call, which a node
   * cannot.
   */
  addKernel(kernel, ...list) {
    if (typeof kernel !== 'function' || typeof kernel[ADD_KERNEL_NODE] !== 'function') {
      throw new TypeError(`kernel must be a Kernel (module.getFunction(name)), not ${check.describe(kernel)}`);
    }
    const options = list[list.length - 1];
    let deps = NONE;
    if (options !== null && typeof options === 'object' && 'after' in options) {
      deps = this.#after({ after: options.after }, ['after'], 'addKernel');
      const { after, ...rest } = options;
      list[list.length - 1] = rest;
    }
    const index = kernel[ADD_KERNEL_NODE](this, deps, list);
    if (!kernelNodes.has(this)) kernelNodes.set(this, new Map());
    kernelNodes.get(this).set(index, kernel);
    return this.#node(index, kernel, ...list.slice(0, -1));
  }

  /**
   * A memset node: sets `count` elements of `elementSize` bytes (1, 2 or 4) at dest to value; with
   * `{ pitch, height }`, height rows of count elements, pitch bytes apart.
   */
  addMemset(dest, value, count, options) {
    const after = this.#after(options, ['after', ...MEMSET_KEYS], 'addMemset');
    const args = memsetArgs('graph.addMemset()', dest, value, count, options);
    return this.#node(binding.graphAddMemset(this, after, ...args), dest);
  }

  /** Makes a memset node set other memory or values in the GraphExecs instantiated from now on:
   * the arguments of addMemset() but after. */
  setMemset(node, dest, value, count, options) {
    setMemset(null, this, indexIn(this, node, 'node'), [dest, value, count, options], held.get(this));
    return this;
  }

  /**
   * A copy node: `bytes` bytes from src to dest, each device memory or an array of page-locked
   * host memory (pagelockedEmpty() and friends), not both host. A host array's allocation cannot
   * be freed while the graph or a GraphExec of it lives (free() is a LogicError).
   * `graph.addMemcpy(copy, { after })`: the 2D or 3D copy a Memcpy2D or Memcpy3D describes now;
   * a CudaArray it names cannot be freed either.
   */
  addMemcpy(dest, src, bytes, options) {
    if (dest !== null && typeof dest === 'object' && typeof dest[ADD_COPY_NODE] === 'function') {
      const [index, uses] = dest[ADD_COPY_NODE](this, this.#after(src, ['after'], 'addMemcpy'));
      return this.#node(index, ...uses);
    }
    const after = this.#after(options, ['after'], 'addMemcpy');
    return this.#node(
      binding.graphAddMemcpy(this, after, ...copyArgs('graph.addMemcpy()', dest, src, bytes)),
      dest,
      src,
    );
  }

  /** Makes a 1D copy node copy other memory in the GraphExecs instantiated from now on: the
   * arguments of addMemcpy(dest, src, bytes). */
  setMemcpy(node, dest, src, bytes) {
    setMemcpy(null, this, indexIn(this, node, 'node'), [dest, src, bytes], held.get(this));
    return this;
  }

  /**
   * A node that records event (as event.record() on a stream does), so that other streams, other
   * graphs and the host can wait for the nodes before it. The event stays usable by the graph
   * whatever becomes of the Event object (destroy() included) until the graph and its GraphExecs
   * are gone.
   */
  addEventRecord(event, options) {
    const after = this.#after(options, ['after'], 'addEventRecord');
    check.instance('event', event, Event);
    return this.#node(binding.graphAddEvent(this, after, event, false), event);
  }

  /** A node that waits for event's last record, so that the nodes after it run after the work
   * recorded there (another stream's, another graph's). */
  addEventWait(event, options) {
    const after = this.#after(options, ['after'], 'addEventWait');
    check.instance('event', event, Event);
    return this.#node(binding.graphAddEvent(this, after, event, true), event);
  }

  /**
   * A node that calls fn (with no arguments) on the main thread each time a launch reaches it.
   * The nodes after it do not wait for fn: the GPU never waits for JavaScript, so fn sees the work
   * of the nodes before it done, and maybe some after. Calls come in launch order, each before
   * the Promise of a wait for the stream the launch was on settles. What fn throws is an uncaught
   * exception. The driver holds fn (a CUDA 11.3 user object) until no graph, GraphExec or launch
   * can reach the node; a fn that refers to the graph keeps it until destroy().
   */
  addHostFunc(fn, options) {
    const after = this.#after(options, ['after'], 'addHostFunc');
    check.func('fn', fn);
    return this.#node(binding.graphAddHost(this, after, fn));
  }

  /**
   * An allocation node (CUDA 11.4): `bytes` bytes of the current context's device, allocated each
   * time a launch runs the node. Returns `{ node, memory }`: memory's address is fixed now, for
   * the nodes after this one; a free node (here or in another graph) frees it, or the next launch
   * of a GraphExec instantiated with `autoFreeOnLaunch`. The driver refuses to launch the graph
   * again while the last launch's allocation is not freed, and to instantiate a graph with memory
   * nodes twice at a time.
   */
  addMemAlloc(bytes, options) {
    const after = this.#after(options, ['after'], 'addMemAlloc');
    bytes = check.size('bytes', bytes);
    const [index, ptr] = binding.graphAddMemAlloc(this, after, bytes);
    return { node: this.#node(index), memory: makeGraphMemory(ptr, bytes) };
  }

  /**
   * A free node (CUDA 11.4): frees memory, which an allocation node of this graph or another
   * gave. From now on, memory is a LogicError in anything new: only nodes already added may use
   * it, and of them, only those this node runs after.
   */
  addMemFree(memory, options) {
    const after = this.#after(options, ['after'], 'addMemFree');
    check.instance('memory', memory, GraphMemory);
    const index = binding.graphAddMemFree(this, after, memory.getPointer());
    freedByNode.add(memory);
    return this.#node(index);
  }

  /** A node that runs a copy of child, made now: later changes to child do not reach it. */
  addChildGraph(child, options) {
    const after = this.#after(options, ['after'], 'addChildGraph');
    check.instance('child', child, Graph);
    const index = this.#node(binding.graphAddChild(this, after, child), ...held.get(child));
    return index;
  }

  /**
   * A condition for conditional nodes of this graph (and of its bodies), in the current context
   * (CUDA 12.3): `{ default: n }` is its value before any kernel sets it, set again at each launch
   * unless `{ resetEachLaunch: false }`.
   */
  conditionalHandle(options) {
    check.keys(options, ['default', 'resetEachLaunch'], 'graph.conditionalHandle()');
    const { default: value = 0, resetEachLaunch = true } = options ?? {};
    check.integer('default', value, 0, 2 ** 32 - 1);
    const flags = check.boolean('resetEachLaunch', resetEachLaunch) ? COND_ASSIGN_DEFAULT : 0;
    const handle = makeHandle(this, binding.graphConditionalHandle(this, value, flags));
    countIdle(this, 1);
    return handle;
  }

  /**
   * A conditional node (CUDA 12.3): `kind` 'while' runs its body as long as the handle's value is
   * not 0 (a kernel in the body clears it), 'if' runs bodies[0] when it is not 0 and, with
   * `{ size: 2 }`, bodies[1] when it is (12.8), 'switch' runs bodies[value] of `size`, up to 256
   * (12.8).
   * Returns `{ node, bodies }`: fill the bodies, which are Graphs, with add methods.
   */
  addConditional(handle, kind, options) {
    const after = this.#after(options, ['after', 'size'], 'addConditional');
    check.instance('handle', handle, ConditionalHandle);
    const type = check.choice('kind', kind, CONDITIONAL_TYPES, "'if', 'while' or 'switch'");
    const size = options?.size ?? 1;
    check.integer('size', size, 1, kind === 'switch' ? 256 : kind === 'if' ? 2 : 1);
    if (familyOf(handle.graph) !== familyOf(this)) {
      throw new LogicError(
        'graph.addConditional(): handle was made by another Graph; make it with ' +
          'graph.conditionalHandle() of this graph (or of the graph whose conditional node holds it)',
      );
    }
    if (usedHandles.has(handle)) {
      throw new LogicError(
        'graph.addConditional(): handle is the condition of another conditional node already; ' +
          'make one handle for each node (graph.conditionalHandle())',
      );
    }
    const bodies = Array.from({ length: size }, adoptedGraph);
    const index = binding.graphAddConditional(this, after, handle.value, type, bodies);
    usedHandles.add(handle);
    countIdle(this, -1);
    for (const body of bodies) {
      held.set(body, held.get(this)); // what bodies use, the graph keeps
      parents.set(body, this);
    }
    return { node: this.#node(index, handle), bodies };
  }

  /** Every node, in the order they were added (or the driver's, for a captured graph). */
  nodes() {
    return Array.from({ length: binding.graphNodeCount(this) }, (_, i) => new GraphNode(this, i));
  }

  /** Every dependency as `[from, to]`: `to` runs after `from`. Needs a CUDA 12.3 driver. */
  edges() {
    const flat = binding.graphEdges(this);
    const nodes = this.nodes();
    const pairs = [];
    for (let i = 0; i < flat.length; i += 2) pairs.push([nodes[flat[i]], nodes[flat[i + 1]]]);
    return pairs;
  }

  /** The graph in Graphviz's DOT language, as the driver describes it (cuGraphDebugDotPrint);
   * flags: GraphDebugDotFlags (VERBOSE by default). */
  toDot(flags = GraphDebugDotFlags.VERBOSE) {
    check.integer('flags', flags, 0, 2 ** 32 - 1);
    return binding.graphDebugDotPrint(this, flags).toString('utf8');
  }

  /**
   * A GraphExec of this graph in the current context, ready to launch. Options: `upload` (a
   * Stream: uploads it there now), `autoFreeOnLaunch`, `deviceLaunch`, `useNodePriority`.
   */
  instantiate(options) {
    let flags = 0;
    let upload = null;
    if (options !== undefined) {
      check.keys(options, ['upload', 'autoFreeOnLaunch', 'deviceLaunch', 'useNodePriority'], 'graph.instantiate()');
      if (options.upload !== undefined) {
        upload = options.upload; // C checks that it is a Stream
        flags |= GraphInstantiateFlags.UPLOAD;
      }
      for (const [key, flag] of [
        ['autoFreeOnLaunch', GraphInstantiateFlags.AUTO_FREE_ON_LAUNCH],
        ['deviceLaunch', GraphInstantiateFlags.DEVICE_LAUNCH],
        ['useNodePriority', GraphInstantiateFlags.USE_NODE_PRIORITY],
      ]) {
        if (options[key] !== undefined && check.boolean(key, options[key])) flags |= flag;
      }
    }
    if (idleHandles.get(familyOf(this)) > 0) {
      throw new LogicError(
        'graph.instantiate(): a conditional handle of this graph (graph.conditionalHandle()) is no ' +
          "conditional node's condition, which the driver refuses; give it a node (graph.addConditional(handle, kind)) " +
          'or build the graph without it',
      );
    }
    const exec = Object.create(GraphExec.prototype);
    retryOutOfMemory(() => binding.graphInstantiate(this, exec, flags, upload));
    const deviceLaunch = (flags & GraphInstantiateFlags.DEVICE_LAUNCH) !== 0;
    held.set(exec, { graph: this, uses: new Set(held.get(this)), upload, deviceLaunch, uploaded: upload !== null });
    /** The Context the GraphExec was instantiated in (kept alive by it). */
    exec.context = Context.getCurrent();
    return exec;
  }

  /** Destroys the graph; its GraphExecs stay usable. A second destroy() does nothing. */
  destroy() {
    binding.graphDestroy(this);
    held.set(this, new Set()); // its GraphExecs hold their own
  }

  [Symbol.dispose]() {
    this.destroy();
  }
}

module.exports = { Graph, GraphExec, GraphNode, ConditionalHandle, GraphMemory };
// Internal (not enumerable, so not re-exported by index.js).
for (const [name, value] of Object.entries({ nodeIndices, adoptedGraph, holdFor })) {
  Object.defineProperty(module.exports, name, { value });
}
