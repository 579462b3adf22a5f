'use strict';
// Giving up a wait: `{ signal }` on every Promise-returning wait. The GPU work and the native wait
// go on (neither can be interrupted); only the caller stops waiting, at once.
const { describe } = require('./checks');
const { AbortError } = require('../driver/errors');

// The waits on each signal, behind one listener: many may share one signal without adding a
// listener each (Node warns past 10).
const waitingOn = new WeakMap(); // AbortSignal → { all: Set of functions, fire }

/** Calls giveUp when signal aborts; returns the function that stops listening. */
function onAbort(signal, giveUp) {
  let waiting = waitingOn.get(signal);
  if (!waiting) {
    const all = new Set();
    waiting = { all, fire: () => all.forEach((f) => f()) };
    waitingOn.set(signal, waiting);
    signal.addEventListener('abort', waiting.fire);
  }
  waiting.all.add(giveUp);
  return () => {
    waiting.all.delete(giveUp);
    if (waiting.all.size === 0 && waitingOn.get(signal) === waiting) {
      signal.removeEventListener('abort', waiting.fire);
      waitingOn.delete(signal);
    }
  };
}

/** signal (undefined: none), checked to be an AbortSignal. */
function checkSignal(signal) {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(`signal must be an AbortSignal, not ${describe(signal)}`);
  }
  return signal;
}

/** The signal of a wait's options (undefined or null: none), checked. */
function signalOf(opts) {
  if (opts === undefined || opts === null) return undefined;
  if (typeof opts !== 'object') throw new TypeError(`options must be an object, not ${describe(opts)}`);
  return checkSignal(opts.signal);
}

/** An AbortError for the wait `what`, carrying the signal's reason. */
function abortError(what, signal) {
  const reason = signal.reason;
  return new AbortError(`${what} was aborted` + (reason instanceof Error ? `: ${reason.message}` : ''), {
    cause: reason,
  });
}

/** A wait's Promise from the binding's answer: its Promise, or, where the work was complete at
 * once, true (a Promise of value made here costs less than one made through Node-API). */
function waitResult(answer, value) {
  return answer === true ? Promise.resolve(value) : answer;
}

/** start()'s Promise, or an AbortError as soon as signal aborts (at once where it already has,
 * and then start() is not called). */
function abortable(signal, what, start) {
  if (signal === undefined) return start();
  if (signal.aborted) return Promise.reject(abortError(what, signal));
  const promise = start();
  return new Promise((resolve, reject) => {
    const stop = onAbort(signal, () => {
      stop();
      reject(abortError(what, signal));
    });
    promise.then(
      (value) => {
        stop();
        resolve(value);
      },
      (error) => {
        stop();
        reject(error);
      },
    );
  });
}

module.exports = { onAbort, checkSignal, signalOf, abortError, abortable, waitResult };
