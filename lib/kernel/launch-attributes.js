'use strict';
// Launch attributes (cuLaunchKernelEx) in a launcher's header: which a call's options ask for (a
// bit each, src/kernel/launcher.h) and their values, and the events of those that take one, bound
// to the launcher in C. A launch with none of them takes cuLaunchKernel's cheaper path.
const { Event } = require('../driver/event');
const { EventFlags } = require('../driver/constants');
const { getDriverVersion } = require('../driver/version');
const { RuntimeError } = require('../driver/errors');
const check = require('../internal/checks');
const layouts = require('../internal/layouts');

const L = layouts.launch;

// Options that name a launch attribute, and the driver each needs where that is newer than the
// floor (12.0).
const ATTRIBUTE_KEYS = [
  'cluster',
  'cooperative',
  'priority',
  'preferredCluster',
  'clusterSchedulingPolicy',
  'memSyncDomain',
  'sharedMemoryCarveout',
  'programmaticStreamSerialization',
  'programmaticEvent',
  'completionEvent',
];
const NEEDS = { completionEvent: 12030, sharedMemoryCarveout: 12040, preferredCluster: 12080 };
const POLICIES = { default: 0, spread: 1, 'load-balancing': 2 };
const DOMAINS = { default: 0, remote: 1 };

let driverVersion = 0;
function requireDriver(key) {
  const needs = NEEDS[key];
  if (needs === undefined) return;
  if (driverVersion === 0) driverVersion = getDriverVersion();
  if (driverVersion >= needs) return;
  const v = (n) => `${Math.floor(n / 1000)}.${(n % 1000) / 10}`;
  throw new RuntimeError(
    `the launch attribute ${key} needs a driver for CUDA ${v(needs)} or newer; the installed one is for ` +
      `CUDA ${v(driverVersion)}: update the NVIDIA driver, or launch without ${key}`,
  );
}

function flag(key, value) {
  return value !== undefined && check.boolean(key, value);
}

// The Event of an event attribute: one made with EventFlags.DISABLE_TIMING, as the driver asks.
function eventOf(key, event) {
  if (!(event instanceof Event)) check.instance(key, event, Event);
  if ((event.flags & EventFlags.DISABLE_TIMING) === 0 || (event.flags & EventFlags.INTERPROCESS) !== 0) {
    throw new TypeError(
      `${key} must be an Event made with EventFlags.DISABLE_TIMING (and not INTERPROCESS): ` +
        'new Event(cuda.EventFlags.DISABLE_TIMING)',
    );
  }
  return event;
}

// The programmatic event option: an Event, or { event, triggerAtBlockStart }.
function programmatic(u32, value) {
  if (value instanceof Event) {
    u32[L.triggerAtStart] = 0;
    return eventOf('programmaticEvent', value);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      `programmaticEvent must be an Event or { event, triggerAtBlockStart }, not ${check.describe(value)}`,
    );
  }
  for (const key in value) {
    if (key !== 'event' && key !== 'triggerAtBlockStart') {
      throw new TypeError(`programmaticEvent: unknown key '${key}' (the keys are event and triggerAtBlockStart)`);
    }
  }
  u32[L.triggerAtStart] = flag('programmaticEvent.triggerAtBlockStart', value.triggerAtBlockStart) ? 1 : 0;
  return eventOf('programmaticEvent.event', value.event);
}

// Binds the launcher's events where they differ from those bound.
function bindEvents(launcher, programmaticEvent, completionEvent) {
  if (launcher.events[0] === programmaticEvent && launcher.events[1] === completionEvent) return;
  launcher.setEvents(programmaticEvent, completionEvent);
  launcher.events = [programmaticEvent, completionEvent];
}

// Lets go of the launcher's events, which a launch without them need not keep alive.
function unbindEvents(launcher) {
  bindEvents(launcher, null, null);
}

// Writes the attributes options asks for into the launcher's header (dim3 writes a shape);
// returns their bits.
function writeAttributes(launcher, options, dim3) {
  const u32 = launcher.u32;
  const {
    cluster,
    cooperative,
    priority,
    preferredCluster,
    clusterSchedulingPolicy,
    memSyncDomain,
    sharedMemoryCarveout,
    programmaticStreamSerialization,
    programmaticEvent,
    completionEvent,
  } = options;
  let bits = 0;
  if (cluster !== undefined) {
    dim3(u32, L.cluster, cluster, 'cluster');
    bits = L.attrCluster;
  }
  if (flag('cooperative', cooperative)) bits |= L.attrCooperative;
  if (flag('programmaticStreamSerialization', programmaticStreamSerialization)) bits |= L.attrSerialization;
  if (
    priority === undefined &&
    preferredCluster === undefined &&
    clusterSchedulingPolicy === undefined &&
    memSyncDomain === undefined &&
    sharedMemoryCarveout === undefined &&
    programmaticEvent === undefined &&
    completionEvent === undefined
  ) {
    if (launcher.events[0] !== null || launcher.events[1] !== null) unbindEvents(launcher);
    return bits;
  }
  if (priority !== undefined) {
    check.integer('priority', priority, -2147483648, 2147483647);
    u32[L.priority] = priority >>> 0;
    bits |= L.attrPriority;
  }
  if (preferredCluster !== undefined) {
    requireDriver('preferredCluster');
    dim3(u32, L.preferredCluster, preferredCluster, 'preferredCluster');
    bits |= L.attrPreferredCluster;
  }
  if (clusterSchedulingPolicy !== undefined) {
    u32[L.scheduling] = check.choice(
      'clusterSchedulingPolicy',
      clusterSchedulingPolicy,
      POLICIES,
      "'default', 'spread' or 'load-balancing'",
    );
    bits |= L.attrScheduling;
  }
  if (memSyncDomain !== undefined) {
    u32[L.syncDomain] = check.choice('memSyncDomain', memSyncDomain, DOMAINS, "'default' or 'remote'");
    bits |= L.attrSyncDomain;
  }
  if (sharedMemoryCarveout !== undefined) {
    requireDriver('sharedMemoryCarveout');
    // The driver refuses CU_SHAREDMEM_CARVEOUT_DEFAULT (-1) here (580 on an H100): no attribute is the default.
    if (sharedMemoryCarveout === -1) {
      throw new RangeError(
        "sharedMemoryCarveout must be a percentage from 0 to 100; leave it out for the kernel's own setting",
      );
    }
    check.integer('sharedMemoryCarveout', sharedMemoryCarveout, 0, 100);
    u32[L.carveout] = sharedMemoryCarveout >>> 0;
    bits |= L.attrCarveout;
  }
  const events = [null, null];
  if (programmaticEvent !== undefined) {
    events[0] = programmatic(u32, programmaticEvent);
    bits |= L.attrProgrammaticEvent;
  }
  if (completionEvent !== undefined) {
    requireDriver('completionEvent');
    events[1] = eventOf('completionEvent', completionEvent);
    bits |= L.attrCompletionEvent;
  }
  bindEvents(launcher, events[0], events[1]);
  return bits;
}

module.exports = { ATTRIBUTE_KEYS, writeAttributes, unbindEvents };
