'use strict';
// A model-based test of the context stack, run on the stand-in driver by
// test/driver/context-model.test.js: random retain, make, push, pop, detach, drop and collect over
// several handles of the primary context and of created contexts, each step checked against a
// model of this thread's stack. Prints { steps } and exits 0, or prints the failing step's history
// to stderr and exits 1. Arguments: seed, steps.
const assert = require('assert');
const path = require('path');
const root = path.join(__dirname, '..', '..');
const cuda = require(root);
const binding = require(path.join(root, 'lib', 'internal', 'binding'));

const seed = Number(process.argv[2]);
const steps = Number(process.argv[3]);
let state = seed >>> 0 || 1;
const random = (n) => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) % n;
};

const device = new cuda.Device(0);
const slots = []; // { handle, context: its model context, live, dropped } (handle undefined once dropped)
const contexts = new Map(); // model context name → { address, owners, alive }
const stack = []; // model: context names, bottom first
const collected = new Set(); // slots whose handle the collector has taken
const registry = new FinalizationRegistry((slot) => collected.add(slot));
const history = [];
let made = 0;

function ownersOf(name) {
  return slots.filter((s) => s.context === name && s.live).length;
}

// What detach() or collection of the handle in slot does to the model: the last owner takes its
// context off the stack and kills it; another owner changes nothing.
function release(slot) {
  const last = ownersOf(slot.context) === 1;
  slot.live = false;
  if (last) {
    contexts.get(slot.context).alive = false;
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i] === slot.context) stack.splice(i, 1);
  }
}

function addressOf(name) {
  return contexts.get(name).address;
}

function check(what) {
  const current = binding.ctxGetCurrent();
  const expected = stack.length ? addressOf(stack[stack.length - 1]) : null;
  assert.strictEqual(current, expected, `after ${what}: current context`);
}

const actions = {
  make() {
    const handle = device.makeContext(); // pushed
    const name = `made${made++}`;
    contexts.set(name, { address: binding.ctxGetCurrent(), alive: true });
    stack.push(name);
    slots.push({ handle, context: name, live: true });
    return `make ${name}`;
  },
  retain() {
    const handle = device.retainPrimaryContext(); // not pushed
    if (!contexts.get('primary')?.alive) contexts.set('primary', { address: null, alive: true });
    slots.push({ handle, context: 'primary', live: true });
    return 'retain primary';
  },
  push() {
    const i = random(slots.length);
    const slot = slots[i];
    if (!slot?.handle) return null;
    if (!slot.live) {
      assert.throws(() => slot.handle.push(), { name: 'LogicError' });
      return `push detached #${i}: LogicError`;
    }
    slot.handle.push();
    const model = contexts.get(slot.context);
    if (model.address === null) model.address = binding.ctxGetCurrent();
    stack.push(slot.context);
    return `push #${i} (${slot.context})`;
  },
  pop() {
    if (!stack.length) {
      assert.throws(() => cuda.Context.pop(), { name: 'LogicError' });
      return 'pop empty: LogicError';
    }
    cuda.Context.pop();
    return `pop ${stack.pop()}`;
  },
  detach() {
    const i = random(slots.length);
    const slot = slots[i];
    if (!slot?.handle) return null;
    slot.handle.detach();
    if (slot.live) release(slot);
    return `detach #${i} (${slot.context})`;
  },
  drop() {
    const i = random(slots.length);
    const slot = slots[i];
    if (!slot?.handle) return null;
    registry.register(slot.handle, slot);
    slot.handle = undefined;
    slot.dropped = true;
    return `drop #${i} (${slot.context}${slot.live ? '' : ', detached'})`;
  },
};
const kinds = ['make', 'retain', 'retain', 'push', 'push', 'push', 'pop', 'pop', 'detach', 'drop', 'drop', 'collect'];

// Collects, and applies to the model the handles the collector reports taken. The report (a
// FinalizationRegistry callback) may come a task after the handle's own finalizer: while this
// thread's current context differs from the model's, more rounds are given, up to 20.
async function collect() {
  for (let round = 0; round < 20; round++) {
    global.gc();
    await new Promise((resolve) => setImmediate(resolve));
    for (const slot of collected) {
      if (slot.live) release(slot);
      collected.delete(slot);
    }
    const expected = stack.length ? addressOf(stack[stack.length - 1]) : null;
    if (round >= 2 && binding.ctxGetCurrent() === expected) return;
  }
}

async function main() {
  for (let step = 0; step < steps; step++) {
    const kind = kinds[random(kinds.length)];
    const what = kind === 'collect' ? (await collect(), 'collect') : actions[kind]();
    if (what === null) continue;
    history.push(what);
    check(what);
  }
  for (const slot of slots) if (slot.handle) (slot.handle.detach(), slot.live && release(slot));
  await collect();
  check('detaching every handle');
  while (stack.length) {
    cuda.Context.pop();
    stack.pop();
    check('popping what is left');
  }
  console.log(JSON.stringify({ steps: history.length }));
}

main().catch((error) => {
  console.error(`seed ${seed}: ${error.message}\n${history.slice(-25).join('\n')}`);
  process.exit(1);
});
