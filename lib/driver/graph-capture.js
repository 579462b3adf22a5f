'use strict';
// Stream capture into graphs, for stream.beginCapture(), endCapture() and captureInfo() (stream.js):
// into a new Graph, or into one of the user's after some of its nodes. What the captured work
// uses (internal/capture-keep.js) becomes the graph's to keep.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { openCapture, closeCapture } = require('../internal/capture-keep');
const { Graph, GraphNode, nodeIndices, adoptedGraph, holdFor } = require('./graph');

// Stream → the Graph its capture records into (stream.beginCapture(mode, { into })).
const captures = new WeakMap();
// Stream → the id of the capture it began.
const ids = new WeakMap();
// A stream collected mid-capture: the addon ended the capture (the driver must not destroy a
// capturing stream); its record closes here, what its work used going to the Graph it captured
// into, if one of the user's, whose nodes stay.
const abandoned = new FinalizationRegistry(({ id, into }) => settle(into, closeCapture(id)));

// stream.beginCapture(mode, options): into a new graph, or into options.into after options.after.
function beginCapture(stream, mode, options) {
  check.keys(options, ['into', 'after'], 'stream.beginCapture()');
  if (options?.into === undefined) {
    if (options?.after !== undefined)
      throw new TypeError('stream.beginCapture(): after needs into, the graph it names nodes of');
    binding.streamBeginCapture(stream, mode);
    captures.delete(stream);
  } else {
    const graph = check.instance('into', options.into, Graph);
    binding.streamBeginCaptureToGraph(stream, graph, nodeIndices(graph, options.after), mode);
    captures.set(stream, graph);
  }
  const id = openCapture(stream);
  ids.set(stream, id);
  if (id !== null) abandoned.register(stream, { id, into: options?.into }, stream);
}

// stream.endCapture(): the Graph the capture recorded into (a new one unless it was given), which
// keeps what the captured work uses.
function graphFromCapture(stream) {
  const into = captures.get(stream);
  const graph = into ?? adoptedGraph();
  try {
    if (into !== undefined) binding.streamEndCaptureInto(stream, into);
    else binding.streamEndCapture(stream, graph);
  } catch (error) {
    if (binding.streamIsCapturing(stream) === 0) forget(stream); // it ended, and failed
    throw error;
  }
  holdFor(graph, forget(stream));
  return graph;
}

// The capture stream began is over: what its work used.
function forget(stream) {
  const id = ids.get(stream);
  ids.delete(stream);
  captures.delete(stream);
  abandoned.unregister(stream);
  return closeCapture(id);
}

// What a capture ended with its stream used: the Graph it recorded into keeps it.
function settle(into, uses) {
  if (into !== undefined) holdFor(into, uses);
}

// stream.destroy() ended a capture under way on it (the addon ends it first).
function endWithStream(stream) {
  if (ids.has(stream)) settle(captures.get(stream), forget(stream));
}

const CAPTURE_STATUS = ['none', 'active', 'invalidated'];

// stream.captureInfo(): { status, id, graph, dependencies }.
function captureInfo(stream) {
  const into = captures.get(stream);
  const [status, id, deps] = binding.streamCaptureInfo(stream, into);
  const name = CAPTURE_STATUS[status] ?? 'unknown';
  if (name !== 'active') return { status: name, id: null, graph: null, dependencies: [] };
  const dependencies = Array.isArray(deps) ? deps.map((index) => new GraphNode(into, index)) : deps;
  return { status: name, id, graph: Array.isArray(deps) ? into : null, dependencies };
}

module.exports = { beginCapture, graphFromCapture, captureInfo, endWithStream };
