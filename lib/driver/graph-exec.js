'use strict';
// Instantiated graphs (graph.instantiate(), in graph.js): launches, uploads, updates of the whole
// graph and of single nodes, nodes turned off and on.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { LogicError } = require('./errors');
const { CudaResult } = require('./constants');
const { held, indexIn, typeOf } = require('./graph-node');
const { setKernelArgs, setMemset, setMemcpy } = require('./graph-args');

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

function makeLauncher(exec) {
  const [launch, setStream] = binding.graphExecLauncher(exec);
  return { launch, setStream, stream: null };
}

/** An instantiated Graph: `graph.instantiate()`, then `exec.launch(stream)` as often as needed. */
class GraphExec {
  constructor() {
    throw new TypeError('a GraphExec comes from graph.instantiate()');
  }

  /** Enqueues the whole graph on stream (the default stream when omitted); returns at once. */
  launch(stream = null) {
    const mine = held.get(this);
    if (mine === undefined) {
      binding.graphExecLaunch(this, stream); // a TypeError for what is not a GraphExec
      return this;
    }
    // The hot path, as a kernel's launcher: functions bound in C to this exec and to a stream, so
    // that a launch reads no JS value there (cuGraphLaunch of 100 nodes takes about 2 µs).
    const launcher = mine.launcher || (mine.launcher = makeLauncher(this));
    if (stream !== launcher.stream) {
      launcher.setStream(stream);
      launcher.stream = stream;
    }
    launcher.launch();
    return this;
  }

  /**
   * The handle a kernel launches this graph by (a CUgraphExec, as a bigint): pass it as
   * `cuda.uint64(exec.deviceHandle)` to a kernel of a DynamicSourceModule, itself a node of a
   * graph, that calls `cudaGraphLaunch(exec, cudaStreamGraphFireAndForget)` (or TailLaunch). The
   * GraphExec must be instantiated with `{ deviceLaunch: true }` (a LogicError otherwise: device
   * code launching another one faults, and the context is lost); it is uploaded now if it was not.
   * Keep the GraphExec until those kernels have run: the handle keeps nothing alive.
   */
  get deviceHandle() {
    const mine = held.get(this);
    if (!mine?.deviceLaunch) {
      binding.graphExecHandle(this); // a TypeError or LogicError for what is not a live GraphExec
      throw new LogicError(
        'exec.deviceHandle: this GraphExec was not instantiated for device launch; ' +
          'instantiate the graph with { deviceLaunch: true }',
      );
    }
    if (!mine.uploaded) this.upload(null);
    return binding.graphExecHandle(this);
  }

  /** Uploads the graph to the device on stream, so that the first launch costs no more than the
   * next ones. Optional. */
  upload(stream = null) {
    binding.graphExecUpload(this, stream);
    const mine = held.get(this);
    if (mine) mine.uploaded = true;
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
    const mine = held.get(this);
    if (mine) mine.uses = new Set([...mine.uses, ...held.get(graph)]);
    return this;
  }

  /**
   * Makes a kernel node launch other arguments and shape from the next launch on:
   * `exec.setKernelArgs(node, ...args, { grid, block, shared })`, the arguments of a call of the
   * node's kernel (which cannot change), packed now.
   */
  setKernelArgs(node, ...list) {
    const [graph, index] = execNode(this, node, 'setKernelArgs');
    setKernelArgs(this, graph, index, list, held.get(this).uses);
    return this;
  }

  /** Makes a memset node set other memory or values from the next launch on: the arguments of
   * graph.addMemset() but after (the driver keeps the node 1D, in its context). */
  setMemset(node, dest, value, count, options) {
    const [graph, index] = execNode(this, node, 'setMemset');
    setMemset(this, graph, index, [dest, value, count, options], held.get(this).uses);
    return this;
  }

  /** Makes a 1D copy node copy other memory from the next launch on: the arguments of
   * graph.addMemcpy(dest, src, bytes) (page-locked host arrays included). */
  setMemcpy(node, dest, src, bytes) {
    const [graph, index] = execNode(this, node, 'setMemcpy');
    setMemcpy(this, graph, index, [dest, src, bytes], held.get(this).uses);
    return this;
  }

  /** Turns a kernel, memset or copy node off (later launches skip it) or on again. */
  setEnabled(node, enabled) {
    check.boolean('enabled', enabled);
    const [graph, index] = execNode(this, node, 'setEnabled');
    switchable(graph, index, 'setEnabled', () => binding.graphExecSetEnabled(this, graph, index, enabled));
    return this;
  }

  /** Whether node (a kernel, memset or copy node) runs at this GraphExec's launches. */
  isEnabled(node) {
    const [graph, index] = execNode(this, node, 'isEnabled');
    return switchable(graph, index, 'isEnabled', () => binding.graphExecGetEnabled(this, graph, index));
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

// call()'s result; where the driver refused node index of graph for its kind (only kernel, memset
// and copy nodes can be turned off), a TypeError that says so.
function switchable(graph, index, method, call) {
  try {
    return call();
  } catch (error) {
    const type = typeOf(graph, index);
    if (['kernel', 'memset', 'memcpy'].includes(type)) throw error;
    throw new TypeError(
      `exec.${method}(): node is ${check.withArticle(type)} node; only kernel, memset and memcpy nodes ` +
        'can be turned off and on',
      { cause: error },
    );
  }
}

// The graph exec was made from and node's index in it, for C.
function execNode(exec, node, method) {
  const mine = held.get(exec);
  if (!mine) throw new TypeError(`exec.${method}(): this is not a GraphExec`);
  return [mine.graph, indexIn(mine.graph, node, 'node')];
}

module.exports = { GraphExec };
