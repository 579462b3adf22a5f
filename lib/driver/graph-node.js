'use strict';
// A node of a Graph (graph.js), named to C by its index in its graph: its kind, and what the
// driver holds for it, read back.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { LogicError } = require('./errors');
const { GraphNodeType } = require('./constants');

const TYPE_NAMES = Object.fromEntries(
  Object.entries(GraphNodeType).map(([name, value]) => [
    value,
    name.toLowerCase().replace(/_(.)/g, (m, c) => c.toUpperCase()),
  ]),
);

// Every Graph: a GraphNode is made of one only.
const graphs = new WeakSet();
// Graph → Map(node index → the Kernel of its kernel node), for setKernelArgs() and params().
const kernelNodes = new WeakMap();
// What a Graph (a Set) or GraphExec ({ graph, uses, ... }) keeps alive for its nodes.
const held = new WeakMap();

// Adds the objects among values to the set uses.
function keep(uses, values) {
  for (const use of values) if ((use !== null && typeof use === 'object') || typeof use === 'function') uses.add(use);
}

// The kind of node index of graph: 'kernel', 'memset'...; a RangeError past its nodes.
function typeOf(graph, index) {
  const types = binding.graphNodeTypes(graph);
  if (index >= types.length) throw new RangeError('no such node in this graph');
  return TYPE_NAMES[types[index]] ?? 'unknown';
}

let indexIn;

/** A node of a Graph: `graph.addKernel(...)` and the other add methods return one. */
class GraphNode {
  #graph;
  #index;

  constructor(graph, index) {
    if (!graphs.has(graph)) throw new TypeError('a GraphNode comes from a graph.add...() method or graph.nodes()');
    check.integer('index', index, 0, 2 ** 32 - 1);
    this.#graph = graph;
    this.#index = index;
  }

  /** The graph the node belongs to. */
  get graph() {
    return this.#graph;
  }

  /** Its position in graph.nodes(). */
  get index() {
    return this.#index;
  }

  /** What it does: 'kernel', 'memcpy', 'memset', 'host', 'graph' (a child graph), 'empty',
   * 'waitEvent', 'eventRecord', 'memAlloc', 'memFree', 'conditional'... */
  get type() {
    return typeOf(this.#graph, this.#index);
  }

  /**
   * What the driver holds for the node, read back: for a kernel node `{ kernel, grid, block,
   * shared, args }` (args, the parameter bytes, or null where the node was not given them as one
   * buffer; kernel, the Kernel where graph.addKernel() made the node, else null); for a memset
   * `{ dest, value, elementSize, width, height, pitch }`; for a copy `{ dest, src, width, height,
   * depth }` (a side in host memory or an array is null); for an allocation node `{ ptr, bytes }`,
   * a free node `{ ptr }`. Addresses are bigints. null for a node of another kind.
   */
  params() {
    const params = binding.graphNodeParams(this.#graph, this.#index);
    if (params !== null && 'args' in params) {
      params.kernel = kernelNodes.get(this.#graph)?.get(this.#index) ?? null;
    }
    return params;
  }

  static {
    // The index of node in graph, for C; a TypeError or LogicError where it is not one of its
    // nodes. Not a method: lib/ alone calls it.
    indexIn = (graph, node, what) => {
      if (node === null || typeof node !== 'object' || !(#graph in node)) {
        const not = node instanceof GraphNode ? 'an object that only inherits from GraphNode' : check.describe(node);
        throw new TypeError(`${what} must be a GraphNode, not ${not}`);
      }
      if (node.#graph !== graph) throw new LogicError(`${what} is a node of another Graph`);
      return node.#index;
    };
  }
}

module.exports = { GraphNode, graphs, kernelNodes, held, keep, typeOf, indexIn };
