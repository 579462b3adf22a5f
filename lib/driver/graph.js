'use strict';
// CUDA graphs: the work enqueued on a stream, captured once (stream.beginCapture() ...
// stream.endCapture()), instantiated, then launched again and again for the cost of one launch.
const binding = require('../internal/binding');
const { Context } = require('./context');
const { LogicError } = require('./errors');
const { CudaResult } = require('./constants');

// CUgraphExecUpdateResult → why the driver refused an update.
const UPDATE_FAILURES = {
  1: 'the driver refused it',
  2: 'the topology differs (other nodes or dependencies)',
  3: 'a node changed type',
  4: 'a kernel node runs another function',
  5: "a node's parameters changed in a way an update cannot follow",
  6: 'a node is of a kind an update does not support',
  7: 'a kernel node runs another function in a way an update cannot follow',
  8: "a node's attributes changed in a way an update cannot follow",
};

/**
 * Work captured from a stream: `stream.beginCapture()`, enqueue launches, copies and memsets on
 * that stream, then `const graph = stream.endCapture()`. Nothing captured runs until an
 * instantiation of the graph is launched. The captured work keeps no JavaScript object alive:
 * keep the device memory and modules it uses alive while the graph and its GraphExecs are used.
 */
class Graph {
  constructor() {
    throw new TypeError('a Graph comes from stream.endCapture(); call stream.beginCapture() first');
  }

  /** How many operations (nodes) the graph holds. */
  get nodeCount() {
    return binding.graphNodeCount(this);
  }

  /** A GraphExec of this graph in the current context, ready to launch. */
  instantiate() {
    const exec = Object.create(GraphExec.prototype);
    binding.graphInstantiate(this, exec);
    /** The Context the GraphExec was instantiated in (kept alive by it). */
    exec.context = Context.getCurrent();
    return exec;
  }

  /** Destroys the graph; its GraphExecs stay usable. A second destroy() does nothing. */
  destroy() {
    binding.graphDestroy(this);
  }

  [Symbol.dispose]() {
    this.destroy();
  }
}

/** An instantiated Graph: `graph.instantiate()`, then `exec.launch(stream)` as often as needed. */
class GraphExec {
  constructor() {
    throw new TypeError('a GraphExec comes from graph.instantiate()');
  }

  /** Enqueues the whole graph on stream (the default stream when omitted); returns at once. */
  launch(stream = null) {
    binding.graphExecLaunch(this, stream);
    return this;
  }

  /** Uploads the graph to the device on stream, so that the first launch costs no more than the
   * next ones. Optional. */
  upload(stream = null) {
    binding.graphExecUpload(this, stream);
    return this;
  }

  /** Makes later launches run graph's parameters (kernel arguments, copy and memset addresses)
   * instead: graph must have the same shape as the graph instantiated. Throws a LogicError
   * saying why when it does not; instantiate graph instead then. */
  update(graph) {
    const failure = binding.graphExecUpdate(this, graph);
    if (failure !== 0) {
      const reason = UPDATE_FAILURES[failure] || `CUgraphExecUpdateResult ${failure}`;
      throw new LogicError(
        `exec.update(graph): cuGraphExecUpdate failed: ${reason}; ` +
          'instantiate the new graph instead (graph.instantiate())',
        {
          code: CudaResult.ERROR_GRAPH_EXEC_UPDATE_FAILURE,
          codeName: 'CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE',
          api: 'cuGraphExecUpdate',
        },
      );
    }
    return this;
  }

  /** Destroys the executable graph; launches already enqueued still run. A second destroy()
   * does nothing. */
  destroy() {
    binding.graphExecDestroy(this);
  }

  [Symbol.dispose]() {
    this.destroy();
  }
}

module.exports = { Graph, GraphExec };
