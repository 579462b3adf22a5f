/**
 * Importing it makes a context on the default device current (PyCUDA's pycuda.autoinit);
 * `cudadrv/autoprimaryctx` does the same with the primary context.
 * @packageDocumentation
 * @module cudadrv/autoinit
 */
import { Context, Device } from './index';

/** The default device. */
export declare const device: Device;
/** Its context, current on this thread, cleaned up at process exit. */
export declare const context: Context;
