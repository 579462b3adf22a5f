// Type declarations for cudadrv/testing/mocha: the Mocha root-hook plugin
// (`mocha --require cudadrv/testing/mocha`): a context per test file, and a failure for a file
// that leaves a context behind.

/**
 * The Mocha root-hook plugin (`mocha --require cudadrv/testing/mocha`): a context per test file,
 * and a failing test for a file that leaves a context behind.
 * @packageDocumentation
 * @module cudadrv/testing/mocha
 */
/** The root hooks Mocha reads from a --require'd module. */
export declare const mochaHooks: {
  /** Makes the file's context current for a test that starts with none. */
  beforeEach(this: unknown): void;
  /** Restores the context stack the test started with, noting the contexts it made. */
  afterEach(this: unknown): void;
  /** Detaches the file contexts still attached when the run ends. */
  afterAll(this: unknown): void;
};

export {};
