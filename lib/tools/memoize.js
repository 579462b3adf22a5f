'use strict';
// Memoization per context (PyCUDA's context_dependent_memoize and clear_context_caches): what a
// function made in one context (a compiled module, a kernel) is reused in that context only.
const binding = require('../internal/binding');
const { Context } = require('../driver/context');
const check = require('../internal/checks');

let driver; // whether the driver loads here; without it, no context is ever current

function currentContext() {
  if (driver === undefined) driver = binding.isAvailable();
  return driver ? Context.getCurrent() : null;
}

// Ids for arguments compared by identity (objects, functions, symbols), never reused.
const objectIds = new WeakMap();
const symbolIds = new Map();
let lastId = 0;

function identity(value, table) {
  let id = table.get(value);
  if (id === undefined) {
    id = ++lastId;
    table.set(value, id);
  }
  return id;
}

// A string key for an argument list: primitives by value (SameValueZero, so NaN equals NaN and -0
// equals 0), everything else by identity.
function keyOf(args) {
  let key = '';
  for (const arg of args) {
    switch (typeof arg) {
      case 'string':
        key += `s${arg.length}:${arg}`;
        break;
      case 'number':
        key += `n${arg},`;
        break;
      case 'bigint':
        key += `b${arg},`;
        break;
      case 'boolean':
        key += arg ? 't' : 'f';
        break;
      case 'undefined':
        key += 'u';
        break;
      case 'symbol':
        key += `y${identity(arg, symbolIds)},`;
        break;
      default:
        key += arg === null ? 'z' : `o${identity(arg, objectIds)},`;
    }
  }
  return key;
}

// Every memoized function's cache, held weakly so that a dropped function takes its cache along.
const caches = new Set();
const forget = new FinalizationRegistry((ref) => caches.delete(ref));

class ContextCache {
  constructor(maxSize) {
    this.maxSize = maxSize;
    this.clear();
  }

  clear() {
    this.byContext = new WeakMap(); // Context → Map(key → result), oldest use first
    this.noContext = new Map();
  }

  entries(ctx) {
    if (ctx === null) return this.noContext;
    let entries = this.byContext.get(ctx);
    if (entries === undefined) {
      entries = new Map();
      this.byContext.set(ctx, entries);
    }
    return entries;
  }
}

/**
 * fn memoized per current context and arguments: a second call with the same arguments (primitives
 * compared by value, objects by identity) in the same context returns the first result. Each
 * context keeps the `maxSize` (default 256) most recently used results; a rejected Promise is not
 * kept. clearContextCaches() empties every such cache.
 */
function contextDependentMemoize(fn, opts) {
  const { maxSize = 256 } = check.options('options', opts);
  check.func('fn', fn);
  check.integer('maxSize', maxSize, 1);
  const cache = new ContextCache(maxSize);
  const ref = new WeakRef(cache);
  caches.add(ref);
  forget.register(cache, ref);
  const memoized = function (...args) {
    const entries = cache.entries(currentContext());
    const key = keyOf(args);
    if (entries.has(key)) {
      const result = entries.get(key);
      entries.delete(key); // most recently used last
      entries.set(key, result);
      return result;
    }
    const result = fn.apply(this, args);
    entries.set(key, result);
    if (entries.size > cache.maxSize) entries.delete(entries.keys().next().value);
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      result.then(null, () => {
        if (entries.get(key) === result) entries.delete(key);
      });
    }
    return result;
  };
  Object.defineProperty(memoized, 'name', { value: fn.name });
  return memoized;
}

/** Empties the cache of every function made by contextDependentMemoize, releasing what it held. */
function clearContextCaches() {
  for (const ref of caches) {
    const cache = ref.deref();
    if (cache !== undefined) cache.clear();
  }
}

module.exports = { contextDependentMemoize, clearContextCaches };
