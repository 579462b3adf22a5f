'use strict';
// Stream capture into graphs, for stream.beginCapture(), endCapture() and captureInfo() (stream.js):
// into a new Graph, or into one of the user's after some of its nodes.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { Graph, GraphNode, checkKeys, nodeIndices, adoptedGraph } = require('./graph');

// Stream → the Graph its capture records into (stream.beginCapture(mode, { into })).
const captures = new WeakMap();

// stream.beginCapture(mode, options): into a new graph, or into options.into after options.after.
function beginCapture(stream, mode, options) {
  checkKeys(options, ['into', 'after'], 'stream.beginCapture()');
  if (options?.into === undefined) {
    if (options?.after !== undefined)
      throw new TypeError('stream.beginCapture(): after needs into, the graph it names nodes of');
    binding.streamBeginCapture(stream, mode);
    captures.delete(stream);
    return;
  }
  const graph = check.instance('into', options.into, Graph);
  binding.streamBeginCaptureToGraph(stream, graph, nodeIndices(graph, options.after), mode);
  captures.set(stream, graph);
}

// stream.endCapture(): the Graph the capture recorded into (a new one unless it was given).
function graphFromCapture(stream) {
  const into = captures.get(stream);
  if (into !== undefined) {
    binding.streamEndCaptureInto(stream, into);
    captures.delete(stream);
    return into;
  }
  const graph = adoptedGraph();
  binding.streamEndCapture(stream, graph);
  return graph;
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

module.exports = { beginCapture, graphFromCapture, captureInfo };
