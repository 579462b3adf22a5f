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
 * or fails where CUDADRV_REQUIRE_GPU=1. */
export declare function describeGpu(title: string, body: (this: any) => void): unknown;

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
