'use strict';
// In, Out and InOut: host arrays a launch copies to the device before it, and back after.
const { describe } = require('../internal/checks');

// ---- In / Out / InOut ----

/** Base of In, Out and InOut: a host TypedArray or DataView that a launch copies to device
 * memory before, and/or back after. */
function ArgumentHandler(array) {
  this.array = handledArray(array, 'ArgumentHandler');
}

function handledArray(array, name) {
  if (!ArrayBuffer.isView(array)) {
    throw new TypeError(`${name}(array): array must be a TypedArray or DataView, not ${describe(array)}`);
  }
  if (array.byteLength === 0) throw new RangeError(`${name}(array): array must not be empty`);
  return array;
}

// In, Out and InOut work with or without new: cuda.In(a) as in PyCUDA.
function handlerClass(name, copyIn, copyOut) {
  const Class = {
    [name]: function (array) {
      if (!new.target) return new Class(array);
      this.array = handledArray(array, name);
      return this;
    },
  }[name];
  Object.setPrototypeOf(Class.prototype, ArgumentHandler.prototype);
  Object.setPrototypeOf(Class, ArgumentHandler);
  Object.defineProperties(Class.prototype, {
    copyIn: { value: copyIn },
    copyOut: { value: copyOut },
  });
  return Class;
}

/** Copied to the device before the launch. */
const In = handlerClass('In', true, false);
/** Copied back from the device after the launch. */
const Out = handlerClass('Out', false, true);
/** Copied to the device before the launch, and back after. */
const InOut = handlerClass('InOut', true, true);

module.exports = { ArgumentHandler, In, Out, InOut };
