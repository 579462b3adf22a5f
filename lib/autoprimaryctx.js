'use strict';
// require('cudadrv/autoprimaryctx'): the primary context of the default device (makeDefaultContext's
// choice), made current on require and released at process exit, silently. The primary context is
// the one every other CUDA library in the process shares (PyCUDA's pycuda.autoprimaryctx).
// lib/'s modules load through V8's code cache (lib/code-cache.js)
const load = require('./code-cache').requireFrom(module);
const { makeDefaultContext, retainPrimaryContext } = load('./tools/default-context');
const { atExit } = load('./tools/at-exit');

const context = makeDefaultContext(retainPrimaryContext);
atExit(context);

const { device } = context;
// shorthand properties: Node's ESM loader finds both names (import { device, context } from ...)
module.exports = { device, context };
