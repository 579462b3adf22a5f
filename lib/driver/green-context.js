'use strict';
// Green contexts (CUDA 12.4+): contexts whose work runs on a share of a device's SMs. A device's
// SM resource (device.smResource()) splits into groups; device.makeGreenContext(groups) makes a
// GreenContext, a Context like any other (current, streams, memory, detach()), which can also
// record and wait for events across green contexts. src/driver/green_context.c keeps the
// resources, wrapped in the SmResource objects here.
const binding = require('../internal/binding');
const check = require('../internal/checks');
const { Event } = require('./event');
const { LogicError } = require('./errors');
const { Stream } = require('./stream');
const { StreamFlags } = require('./constants');
const { Context, register } = require('./context');
const { contextMakers } = require('./device');

// [object, smCount, minSmPartitionSize, smCoscheduledAlignment] from C, as an SmResource.
function resourceOf([object, smCount, minSmPartitionSize, smCoscheduledAlignment]) {
  Object.setPrototypeOf(object, SmResource.prototype);
  return Object.defineProperties(object, {
    smCount: { value: smCount, enumerable: true },
    minSmPartitionSize: { value: minSmPartitionSize, enumerable: true },
    smCoscheduledAlignment: { value: smCoscheduledAlignment, enumerable: true },
  });
}

/** A set of a device's SMs: `smCount` of them, split in groups of at least `minSmPartitionSize`,
 * a multiple of `smCoscheduledAlignment`. From device.smResource() or split(). */
class SmResource {
  constructor() {
    throw new TypeError('get an SmResource from device.smResource(), resource.split() or greenContext.smResource()');
  }

  /** Up to `groups` groups of at least `minCount` SMs each (rounded up as the device needs), and
   * the SMs left over: `{ groups, remaining }` (cuDevSmResourceSplitByCount). */
  split(options) {
    check.keys(options, ['groups', 'minCount'], 'split()');
    const { groups = 1, minCount = 1 } = options ?? {};
    const made = binding.smResourceSplit(
      this,
      check.integer('groups', groups, 1, 256),
      check.integer('minCount', minCount, 1, 4294967295),
    );
    const all = made.map(resourceOf);
    return { groups: all.slice(0, -1), remaining: all[all.length - 1] };
  }
}

/** A green context: a Context whose work runs only on the SMs it was made with. */
class GreenContext extends Context {
  /** The SMs it runs on. */
  smResource() {
    return resourceOf(binding.greenCtxGetSmResource(this));
  }

  /** A stream of this green context, made without making it current (CUDA 12.5+; the driver
   * takes StreamFlags.NON_BLOCKING streams only). */
  makeStream(flags = StreamFlags.NON_BLOCKING, priority = 0) {
    check.integer('flags', flags, 0, 4294967295);
    check.integer('priority', priority, -2147483648, 2147483647);
    const stream = Object.create(Stream.prototype);
    binding.greenCtxStreamCreate(stream, this, flags, priority);
    stream.context = this;
    return stream;
  }

  /** Records event where the green context's work (every stream of it) has reached now; event
   * must be made in this green context (make it while the green context is current). */
  recordEvent(event) {
    check.instance('event', event, Event);
    if (event.context !== this) {
      throw new LogicError(
        'recordEvent(event): the event was made in another context; make it while this green context ' +
          'is current (greenContext.push(); new Event(); Context.pop()). waitEvent() takes events of any context',
      );
    }
    binding.greenCtxEvent(this, event, false);
    return this;
  }

  /** Makes the green context's later work (every stream of it) wait for event, of any context (an
   * interprocess event, of this one only: C refuses the others, which driver 580 crashes on). */
  waitEvent(event) {
    check.instance('event', event, Event);
    binding.greenCtxEvent(this, event, true);
    return this;
  }
}

contextMakers.smResource = (device) => resourceOf(binding.deviceGetSmResource(device.handle));
contextMakers.green = (device, resources) => {
  const list = resources instanceof SmResource ? [resources] : resources;
  const expected = 'an SmResource or an array of them (from device.smResource().split())';
  if (!check.list('resources', list, expected).every((r) => r instanceof SmResource)) {
    throw new TypeError(`resources must be ${expected}`);
  }
  return register((ctx) => binding.greenCtxCreate(ctx, device.handle, list), device, GreenContext);
};

module.exports = { SmResource, GreenContext };
