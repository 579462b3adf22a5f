// Type declarations for cudadrv/testing: helpers for the test suites of projects that use cudadrv.
/**
 * Helpers for the test suites of projects that use cudadrv, under Mocha and node:test.
 * @packageDocumentation
 * @module cudadrv/testing
 */
import type { Context } from './index';

/** A suite (Mocha's describe, or node:test's) whose tests run with a context of
 * makeDefaultContext() current, detached after the suite; under Mocha it is `this.cudaContext`
 * in the suite's tests and hooks. Where no GPU can be used the suite is skipped with the reason,
 * or fails where CUDADRV_REQUIRE_GPU=1.
 * @example
 * ```js
 * // mocha --require cudadrv/testing/mocha test.js
 * const cuda = require('cudadrv');
 * const { describeGpu } = require('cudadrv/testing');
 * describeGpu('on the GPU', function () {   // skipped, saying why, where there is no GPU
 *   it('copies there and back', function () {
 *     const data = Int32Array.from([1, 2, 3]);
 *     const back = cuda.fromDevice(cuda.toDevice(data), [3], 'int32');
 *     if (back[2] !== 3) throw new Error(`got ${back}`);
 *   });
 * });
 * ```
 */
export declare function describeGpu(title: string, body: (this: GpuSuite) => void): unknown;

/** `this` in a describeGpu body under Mocha: its Suite (of which these are the members suites use
 * most). Under node:test a body gets no suite as `this`: use the test context's own options. */
export interface GpuSuite {
  /** The suite's tests' time limit, in ms or as '2s'. */
  timeout(ms: number | string): this;
  /** Retries of a failed test. */
  retries(n: number): this;
  /** What counts as slow, in ms. */
  slow(ms: number | string): this;
  /** Skips the suite. */
  skip(): void;
}

export { markCudaTest } from './tools';

/** Whether a GPU can be used here. */
export declare function hasGpu(): boolean;

/** Why no GPU can be used here (the driver's own words), or null when one can. */
export declare function noGpuReason(): string | null;

/** Where no GPU can be used: skips the running Mocha test or suite (`this` of a test or hook),
 * saying why once, or throws where CUDADRV_REQUIRE_GPU=1; outside Mocha it throws a RuntimeError.
 * */
export declare function skipWithoutGpu(mochaContext?: unknown): void;

export {};
