import { Context, Device } from './index';

/** The default device. */
export declare const device: Device;
/** Its context, current on this thread, cleaned up at process exit. */
export declare const context: Context;
