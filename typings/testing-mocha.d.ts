// Type declarations for cudadrv/testing/mocha: the Mocha root-hook plugin
// (`mocha --require cudadrv/testing/mocha`): a context per test file, and a failure for a file
// that leaves a context behind.

/** The root hooks Mocha reads from a --require'd module. */
export declare const mochaHooks: {
  beforeEach(this: unknown): void;
  afterEach(this: unknown): void;
  afterAll(this: unknown): void;
};

export {};
