'use strict';
// require('cudadrv/autoprimaryctx'): the primary context of the default device (makeDefaultContext's
// choice), made current on require and released at process exit, silently. The primary context is
// the one every other CUDA library in the process shares (PyCUDA's pycuda.autoprimaryctx).
const { makeDefaultContext, retainPrimaryContext } = require('./tools/default-context');
const { atExit } = require('./tools/at-exit');

const context = makeDefaultContext(retainPrimaryContext);
atExit(context);

const { device } = context;
// shorthand properties: Node's ESM loader finds both names (import { device, context } from ...)
module.exports = { device, context };
