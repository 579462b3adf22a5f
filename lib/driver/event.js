'use strict';
// Events: markers recorded into streams, for timing and for ordering between streams.
const binding = require('../internal/binding');
const { Context } = require('./context');
const { LogicError } = require('./errors');
const check = require('../internal/checks');
const { retryOutOfMemory } = require('../internal/reclaim');
const { signalOf, abortable, waitResult } = require('../internal/abort');
const { EventFlags } = require('./constants');

// What an event opened from another process's handle was made with.
const EVENT_IPC_FLAGS = EventFlags.INTERPROCESS | EventFlags.DISABLE_TIMING;

/** A CUDA event in the current context: `new Event(flags?)` with EventFlags. */
class Event {
  constructor(flags = 0) {
    check.integer('flags', flags, 0, 4294967295);
    retryOutOfMemory(() => binding.eventCreate(this, flags));
    /** The EventFlags it was made with. */
    this.flags = flags;
    this.context = Context.getCurrent();
    this._recorded = false;
  }

  /** Opens an event another process shared with ipcHandle(). */
  static fromIpcHandle(handle) {
    if (!Buffer.isBuffer(handle) && !(handle instanceof Uint8Array)) {
      throw new TypeError('handle must be the Buffer that event.ipcHandle() returned');
    }
    const event = Object.create(Event.prototype);
    binding.eventFromIpcHandle(event, handle);
    event.flags = EVENT_IPC_FLAGS;
    event.context = Context.getCurrent();
    event._recorded = true;
    return event;
  }

  /** Records the event into stream (the default stream when omitted); returns the event. */
  record(stream = null) {
    binding.eventRecord(this, stream);
    this._recorded = true;
    return this;
  }

  /** true once the work before the recorded point has finished. */
  query() {
    return binding.eventQuery(this);
  }

  /** A Promise of this event once it has completed; `{ signal }` rejects it with an AbortError
   * once the signal aborts. */
  synchronize(options = undefined) {
    return abortable(signalOf(options), 'event.synchronize()', () => waitResult(binding.eventSynchronize(this), this));
  }

  /** Blocks until the event has completed; returns the event. */
  synchronizeSync() {
    binding.eventSynchronizeSync(this);
    return this;
  }

  /** Milliseconds from event `earlier` to this one. */
  timeSince(earlier) {
    return binding.eventElapsedTime(requireRecorded(earlier, 'timeSince'), requireRecorded(this, 'timeSince'));
  }

  /** Milliseconds from this event to event `later`. */
  timeTill(later) {
    return binding.eventElapsedTime(requireRecorded(this, 'timeTill'), requireRecorded(later, 'timeTill'));
  }

  /** A Buffer another process can open with Event.fromIpcHandle() (needs
   * EventFlags.INTERPROCESS | EventFlags.DISABLE_TIMING). */
  ipcHandle() {
    return binding.eventIpcHandle(this);
  }

  /** Destroys the event. A second destroy() does nothing. */
  destroy() {
    binding.eventDestroy(this);
  }

  [Symbol.dispose]() {
    this.destroy();
  }
}

function requireRecorded(event, method) {
  check.instance('event', event, Event);
  if (!event._recorded) {
    throw new LogicError(
      `event.${method}(): an event was never recorded; call event.record(stream) ` + 'on both events first',
    );
  }
  return event;
}

module.exports = { Event };
