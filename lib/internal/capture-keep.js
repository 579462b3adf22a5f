'use strict';
// What captured work uses, kept for its graph. A node captured from a stream runs at every launch
// of the graph, long after the call that recorded it: the kernels, device memory and page-locked
// buffers it uses must live as long as the graph, as an explicit graph's nodes' do (graph.js).
// Each capture under way (stream.beginCapture() to endCapture()) has a record, found by the
// driver's capture id, so that work on a stream that joined the capture (by waiting on an event
// recorded in it) is kept too. While no capture is under way a call pays one size check.
const binding = require('./binding');

const ACTIVE = 1; // CU_STREAM_CAPTURE_STATUS_ACTIVE

// Capture id → the Set of objects its work uses. (C pins what the driver's graph names itself:
// kernels' modules, arrays, page-locked memory, events.)
const open = new Map();

// The id of the capture stream records into, or null.
function captureIdOf(stream) {
  const [status, id] = binding.streamCaptureInfo(stream, undefined);
  return status === ACTIVE ? id : null;
}

// stream.beginCapture() started a capture: its id, with a record opened for it.
function openCapture(stream) {
  const id = captureIdOf(stream);
  if (id !== null) open.set(id, new Set());
  return id;
}

// The capture of id ended (or failed): what its work used, forgotten.
function closeCapture(id) {
  const uses = open.get(id) ?? new Set();
  open.delete(id);
  return uses;
}

// Work using values (kernel k's launch when k is not null) was enqueued on stream (a Stream or
// null): kept for the capture the stream records into, if any.
function keepForCapture(stream, k, values) {
  if (open.size === 0 || stream === null || stream === undefined) return;
  const uses = open.get(captureIdOf(stream));
  if (uses === undefined) return;
  if (k !== null) uses.add(k); // and with it, the Module
  for (const value of values) {
    if ((value !== null && typeof value === 'object') || typeof value === 'function') uses.add(value);
  }
}

module.exports = { open, openCapture, closeCapture, keepForCapture };
