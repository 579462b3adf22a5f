'use strict';
// Streams: ordered queues of GPU work, and the ways to wait for them.
const binding = require('../internal/binding');
const { Context } = require('./context');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { signalOf, abortable, waitResult } = require('../internal/abort');
const { StreamCaptureMode } = require('./constants');
const { beginCapture, graphFromCapture, captureInfo, endWithStream } = require('./graph-capture');

/** A CUDA stream in the current context: `new Stream(flags?, priority?)`. */
class Stream {
  constructor(flags = 0, priority = 0) {
    check.integer('flags', flags, 0, 4294967295);
    check.integer('priority', priority, -2147483648, 2147483647);
    retryOutOfMemory(() => binding.streamCreate(this, flags, priority));
    /** The Context the stream belongs to (kept alive by the stream). */
    this.context = Context.getCurrent();
  }

  /** CUstream flags (StreamFlags). */
  get flags() {
    return binding.streamGetFlags(this);
  }

  /** The priority the driver gave the stream (clamped to Context.getStreamPriorityRange()). */
  get priority() {
    return binding.streamGetPriority(this);
  }

  /** A Promise of this stream once everything enqueued so far has finished. Keeps the event loop
   * free and no thread-pool thread busy. `{ signal }` rejects it with an AbortError once the signal
   * aborts (the work goes on). */
  synchronize(options = undefined) {
    return abortable(signalOf(options), 'stream.synchronize()', () =>
      waitResult(binding.streamSynchronize(this), this),
    );
  }

  /** Blocks until everything enqueued so far has finished. */
  synchronizeSync() {
    binding.streamSynchronizeSync(this);
    return this;
  }

  /** true once everything enqueued so far has finished. */
  isDone() {
    return binding.streamQuery(this);
  }

  /** Work enqueued after this call waits until event has completed (an interprocess event, of the
   * stream's context only: C refuses the others, which driver 580 crashes on). */
  waitForEvent(event) {
    binding.streamWaitEvent(this, event);
    return this;
  }

  /** Calls fn on the main thread once the stream reaches this point; returns a Promise of fn's
   * result. Work enqueued later does not wait for fn (the GPU never waits for JavaScript). A
   * LogicError while the stream is capturing: a graph would call fn at each launch. */
  launchHostFunc(fn, options) {
    check.func('fn', fn);
    const signal = signalOf(options);
    return abortable(signal, 'stream.launchHostFunc()', () =>
      binding.streamLaunchHostFunc(this).then(() => (signal?.aborted ? undefined : fn())),
    );
  }

  /** Starts capturing: work enqueued on this stream from now on is recorded into a graph instead
   * of running, until endCapture(). mode (StreamCaptureMode) says where the driver refuses, while
   * the capture lasts, the calls that could wait on it unseen (memAlloc, synchronous copies...),
   * and invalidates the capture when one is made: GLOBAL on every thread, THREAD_LOCAL on this
   * one, RELAXED (the default) nowhere, since garbage collection may free memory at any time.
   *
   * With `{ into: graph, after: [nodes] }` the work is recorded into a Graph of yours, after those
   * of its nodes (CUDA 12.3): endCapture() then returns that graph, the captured nodes added. */
  beginCapture(mode = StreamCaptureMode.RELAXED, options = undefined) {
    check.member('mode', mode, StreamCaptureMode, 'StreamCaptureMode');
    beginCapture(this, mode, options);
    return this;
  }

  /** Ends the capture beginCapture() started and returns the recorded work as a Graph. */
  endCapture() {
    return graphFromCapture(this);
  }

  /** Whether the stream is capturing (an invalidated capture counts: endCapture() says why). */
  isCapturing() {
    return binding.streamIsCapturing(this) !== 0;
  }

  /**
   * The capture under way: `{ status, id, graph, dependencies }`: status 'none', 'active' or
   * 'invalidated'; id, the capture's id (a bigint, unique in the process); graph, the Graph it
   * records into where beginCapture() was given one (else null); dependencies, the nodes the next
   * captured work will follow (GraphNodes of that graph; their count for a graph of the driver's).
   */
  captureInfo() {
    return captureInfo(this);
  }

  /**
   * Destroys the stream; work already enqueued still runs. A capture under way on it ends first:
   * its graph is discarded, or, for a capture into a Graph of yours, that graph keeps the nodes
   * captured so far. A second destroy() does nothing.
   */
  destroy() {
    binding.streamDestroy(this);
    endWithStream(this);
  }

  [Symbol.dispose]() {
    this.destroy();
  }

  /** `await using`: waits for the stream's work, then destroys it. */
  async [Symbol.asyncDispose]() {
    try {
      await this.synchronize();
    } finally {
      this.destroy();
    }
  }
}

// The stream argument of an Async call: a Stream, or null/undefined for the default stream (null).
function streamArg(stream) {
  if (stream === undefined || stream === null) return null;
  return check.instance('stream', stream, Stream, ' (or null for the default stream)');
}

module.exports = { Stream, streamArg };
