'use strict';
// require('cudadrv/autoinit'): a new context on the default device (makeDefaultContext's choice),
// current on require and detached at process exit, silently (PyCUDA's pycuda.autoinit).
const { makeDefaultContext, makeNewContext } = require('./tools/default-context');
const { atExit } = require('./tools/at-exit');

const context = makeDefaultContext(makeNewContext);
atExit(context);

const { device } = context;
// shorthand properties: Node's ESM loader finds both names (import { device, context } from ...)
module.exports = { device, context };
