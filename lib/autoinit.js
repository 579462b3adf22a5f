'use strict';
// require('cudadrv/autoinit'): a new context on the default device (makeDefaultContext's choice),
// current on require and detached at process exit, silently (PyCUDA's pycuda.autoinit).
// lib/'s modules load through V8's code cache (lib/code-cache.js)
const load = require('./code-cache').requireFrom(module);
const { makeDefaultContext, makeNewContext } = load('./tools/default-context');
const { atExit } = load('./tools/at-exit');

const context = makeDefaultContext(makeNewContext);
atExit(context);

const { device } = context;
// shorthand properties: Node's ESM loader finds both names (import { device, context } from ...)
module.exports = { device, context };
