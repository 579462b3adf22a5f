// Type declarations for cudadrv as an ES module (import cuda from 'cudadrv'): the same API as the
// CommonJS module's, as named exports and as the default export, as lib/index.mjs gives them.
import * as cuda from './index.js';

export * from './index.js';
export default cuda;
