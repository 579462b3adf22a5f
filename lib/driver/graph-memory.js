'use strict';
// The memory of a graph's allocation node (graph.addMemAlloc(), in graph.js): an address fixed when
// the node is made, whose bytes exist from the time a launch runs the allocation node to the time
// a free node, or free() outside the graph, frees them.
const binding = require('../internal/binding');
const { LogicError } = require('./errors');

const MADE_HERE = Symbol('made by graph.addMemAlloc()');
// GraphMemory objects a free node frees: no longer to be used by nodes added after.
const freedByNode = new WeakSet();

/**
 * Device memory that a graph allocates at each launch (`graph.addMemAlloc(bytes)`): use it in
 * nodes after the allocation node, and, once a launch has run that node, anywhere until it is
 * freed. Once a free node for it is added (`graph.addMemFree(memory)`), using it in anything new
 * is a LogicError: what runs after the free node would use freed memory.
 */
class GraphMemory {
  #ptr;
  #size;

  constructor(token, ptr, size) {
    if (token !== MADE_HERE) throw new TypeError('a GraphMemory comes from graph.addMemAlloc()');
    this.#ptr = ptr;
    this.#size = size;
  }

  /** Its device address; a LogicError once a free node frees it. */
  getPointer() {
    if (freedByNode.has(this)) {
      throw new LogicError(
        'this GraphMemory is freed by a free node (graph.addMemFree()): use it only in nodes added before that one',
      );
    }
    return this.#ptr;
  }

  /** Its device address, as getPointer() gives it. */
  get ptr() {
    return this.getPointer();
  }

  /** Its size in bytes. */
  get size() {
    return this.#size;
  }

  /** Whether a free node frees it. */
  get freed() {
    return freedByNode.has(this);
  }

  /**
   * Frees what a launch allocated, outside any graph, on stream (the default stream when
   * omitted): stream-ordered (cuMemFreeAsync), after the work enqueued there before. The next
   * launch of the graph allocates it again. A LogicError once no Graph or GraphExec holds the
   * allocation node (free the memory before destroying them); a CudaError where it is not
   * allocated now.
   */
  free(stream = null) {
    binding.graphMemoryFree(this.#ptr, stream);
  }
}

const makeGraphMemory = (ptr, size) => new GraphMemory(MADE_HERE, ptr, size);

module.exports = { GraphMemory, makeGraphMemory, freedByNode };
