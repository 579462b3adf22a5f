'use strict';
// What the fuzzer calls: every export of cudadrv, cudadrv/compiler and cudadrv/tools, every
// static and prototype method, getter and setter of every class among them, and every function
// of the native addon itself (C never trusts lib/: a caller can reach the addon by its path).
const path = require('path');
const root = path.join(__dirname, '..', '..', '..');

const cuda = require(root);
const compiler = require(path.join(root, 'lib', 'compiler', 'index.js'));
const tools = require(path.join(root, 'lib', 'tools', 'index.js'));
const binding = require(path.join(root, 'lib', 'internal', 'binding'));

// lib/'s hook into the addon: replacing it is replacing cudadrv, not calling it.
const HOOKS = new Set(['setErrorFactory']);

const isClass = (f) => /^class\b/.test(Function.prototype.toString.call(f));

// Members that cudadrv's classes inherit from JavaScript's own (Error.captureStackTrace...) are
// not cudadrv's to fuzz.
const BUILT_IN = new Set([Object.prototype, Function.prototype, Error, Error.prototype]);

function members(object, stop) {
  const seen = new Map();
  for (let o = object; o && o !== stop && !BUILT_IN.has(o); o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === 'constructor' || name === 'prototype' || name === 'length' || name === 'name' || seen.has(name))
        continue;
      seen.set(name, Object.getOwnPropertyDescriptor(o, name));
    }
  }
  return seen;
}

function collect() {
  const targets = [];
  const classes = new Set();
  const enums = [];
  for (const [prefix, module] of [
    ['cuda', cuda],
    ['compiler', compiler],
    ['tools', tools],
  ]) {
    for (const name of Object.keys(module)) {
      const v = module[name];
      const label = `${prefix}.${name}`;
      if (typeof v === 'object' && v !== null && Object.values(v).every((x) => typeof x === 'number')) {
        enums.push([label, v]);
      } else if (typeof v === 'function' && isClass(v)) {
        if (classes.has(v)) continue;
        classes.add(v);
        targets.push({ kind: 'new', label: `new ${label}`, fn: v, holder: module, key: name });
        for (const [m, d] of members(v, Function.prototype)) {
          if (typeof d.value === 'function')
            targets.push({
              kind: 'static',
              label: `${label}.${m}`,
              fn: d.value,
              owner: v,
              key: m,
              internal: m.startsWith('_'),
            });
        }
        for (const [m, d] of members(v.prototype, Object.prototype)) {
          const at = `${label}.prototype.${m}`;
          const internal = m.startsWith('_'); // lib/'s own, not the API
          if (typeof d.value === 'function')
            targets.push({ kind: 'method', label: at, fn: d.value, owner: v, key: m, internal });
          if (d.get)
            targets.push({
              kind: 'method',
              label: `get ${at}`,
              fn: d.get,
              owner: v,
              key: m,
              accessor: 'get',
              internal,
            });
          if (d.set)
            targets.push({
              kind: 'method',
              label: `set ${at}`,
              fn: d.set,
              owner: v,
              key: m,
              accessor: 'set',
              internal,
            });
        }
      } else if (typeof v === 'function') {
        targets.push({ kind: 'fn', label, fn: v, holder: module, key: name });
      }
    }
  }
  for (const name of Object.keys(binding)) {
    if (typeof binding[name] === 'function' && !HOOKS.has(name)) {
      targets.push({ kind: 'fn', label: `binding.${name}`, fn: binding[name], internal: true });
    }
  }
  return { targets, enums };
}

// Where a target's function is found: the object whose property `key` holds it.
function homeOf(target) {
  if (target.kind === 'method') {
    for (let o = target.owner.prototype; o; o = Object.getPrototypeOf(o)) {
      if (Object.prototype.hasOwnProperty.call(o, target.key)) return o;
    }
  }
  if (target.kind === 'static') {
    for (let o = target.owner; o; o = Object.getPrototypeOf(o)) {
      if (Object.prototype.hasOwnProperty.call(o, target.key)) return o;
    }
  }
  return target.holder;
}

/**
 * Runs `run` with every public target replaced by a wrapper that records the call it gets
 * ({ target, self, args }); returns the calls. The examples of valid use the fuzzer mutates.
 */
async function record(targets, run) {
  const calls = [];
  const restore = [];
  const wrap = (home, key, descriptor) => {
    if (!restore.some((r) => r.home === home && r.key === key)) {
      restore.push({ home, key, descriptor: Object.getOwnPropertyDescriptor(home, key) });
    }
    Object.defineProperty(home, key, descriptor);
  };
  for (const target of targets) {
    if (target.internal) continue;
    const home = homeOf(target);
    const current = Object.getOwnPropertyDescriptor(home, target.key);
    if (!current || !current.configurable) continue;
    const original = target.fn;
    if (target.kind === 'new') {
      const proxy = new Proxy(original, {
        construct(fn, args, newTarget) {
          calls.push({ target, args });
          return Reflect.construct(fn, args, newTarget === proxy ? fn : newTarget);
        },
      });
      wrap(home, target.key, { ...current, value: proxy });
      continue;
    }
    const wrapper = function (...args) {
      calls.push({ target, self: this, args });
      return original.apply(this, args);
    };
    wrap(home, target.key, { ...current, [target.accessor || 'value']: wrapper });
  }
  try {
    await run();
  } finally {
    for (const { home, key, descriptor } of restore.reverse()) Object.defineProperty(home, key, descriptor);
  }
  return calls;
}

module.exports = { collect, record, cuda, compiler, tools };
