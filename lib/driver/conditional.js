'use strict';
// The condition of a CUDA graph's conditional nodes (graph.conditionalHandle(), in graph.js).
const MADE_HERE = Symbol('made by graph.conditionalHandle()');

const CONDITIONAL_TYPES = { if: 0, while: 1, switch: 2 }; // CUgraphConditionalNodeType
const COND_ASSIGN_DEFAULT = 1; // CU_GRAPH_COND_ASSIGN_DEFAULT

/**
 * A conditional node's condition, from `graph.conditionalHandle()`: a kernel sets it with
 * `cudadrv::setConditional(handle, value)` (`#include <cudadrv/graph.cuh>`), given
 * `cuda.uint64(handle.value)` as an argument.
 */
class ConditionalHandle {
  #graph;
  #value;

  constructor(token, graph, value) {
    if (token !== MADE_HERE) throw new TypeError('a ConditionalHandle comes from graph.conditionalHandle()');
    this.#graph = graph;
    this.#value = value;
  }

  /** The handle the kernels take, as a 64-bit unsigned integer. */
  get value() {
    return this.#value;
  }

  /** The graph it was made for: its conditional nodes, and their bodies', may use it. */
  get graph() {
    return this.#graph;
  }
}

// The handle value (a bigint) of graph, as graph.conditionalHandle() returns it.
const makeHandle = (graph, value) => new ConditionalHandle(MADE_HERE, graph, value);

module.exports = { ConditionalHandle, CONDITIONAL_TYPES, COND_ASSIGN_DEFAULT, makeHandle };
