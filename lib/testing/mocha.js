'use strict';
/**
 * cudadrv/testing/mocha: a Mocha root-hook plugin (`mocha --require cudadrv/testing/mocha`).
 * - Each test file gets a context of its own (where a GPU can be used): it is current during the
 *   file's tests that start with no context current, and detached when the file is done.
 * - A file fails when its tests leave a context behind: still current after the test, or made
 *   during a test and neither detached nor destroyed by the end of the file.
 * Tests that need a GPU use describeGpu or markCudaTest (cudadrv/testing), which skip with the
 * reason where there is none. Each file's check is a test of its own, "leaves no context behind".
 */
const { Context, isDetached, liveContexts } = require('../driver/context');
const { noGpuReason } = require('../tools/mark-cuda-test');
const { makeDefaultContext } = require('../tools/default-context');

const files = new Map(); // file → { context, made: Set, leftCurrent, ended }
let planned = false;
let running = null; // for the test running: { state, pushed, top, before }

function stateOf(file) {
  if (!files.has(file)) files.set(file, { context: null, made: new Set(), leftCurrent: 0, ended: false });
  return files.get(file);
}

/* Adds to the run, for each file, a test "leaves no context behind" that ends the file: after
 * its last top-level suite (and that suite's hooks), or, for a file of top-level tests only, at
 * the end. A test, not a hook: a hook that fails would stop the rest of the run. */
function plan(root, Test) {
  const names = [...new Set([...root.tests, ...root.suites].map((item) => item.file).filter(Boolean))];
  const Suite = root.constructor;
  for (const file of names) {
    const check = Suite.create(root, `cudadrv/testing: ${file}`);
    check.file = file;
    const test = new Test('leaves no context behind', () => endFile(file));
    test.file = file;
    checks.add(test);
    check.addTest(test);
    root.suites.pop(); // Suite.create appended it: move it after the file's last suite
    const last = root.suites.findLastIndex((suite) => suite.file === file);
    root.suites.splice(last === -1 ? root.suites.length : last + 1, 0, check);
  }
}

const checks = new Set(); // the tests plan() added

/* Detaches the file's context; throws an Error naming what the file left behind. */
function endFile(file) {
  const state = stateOf(file);
  if (state.ended) return;
  state.ended = true;
  state.context?.detach();
  const live = new Set(liveContexts());
  const leaked = [...state.made].filter((ctx) => live.has(ctx));
  leaked.forEach((ctx) => ctx.detach());
  const problems = [];
  const plural = (n) => `${n} context${n === 1 ? '' : 's'}`;
  if (state.leftCurrent) problems.push(`${plural(state.leftCurrent)} left current after a test`);
  if (leaked.length) problems.push(`${plural(leaked.length)} never detached`);
  if (problems.length) {
    throw new Error(
      `cudadrv: ${file} leaked ${problems.join(' and ')}; detach (or pop) every context a test makes, ` +
        'or use markCudaTest/describeGpu, which do',
    );
  }
}

exports.mochaHooks = {
  beforeEach() {
    const test = this.currentTest;
    if (!planned) {
      let root = test.parent;
      while (root.parent) root = root.parent;
      plan(root, test.constructor);
      planned = true;
    }
    if (checks.has(test) || noGpuReason() !== null) return; // without a GPU, no context to give or check
    const state = stateOf(test.file);
    let pushed = false;
    if (Context.getCurrent() === null) {
      if (state.context && isDetached(state.context)) state.context = null; // a test detached it: a new one
      if (!state.context) {
        state.context = makeDefaultContext();
        Context.pop();
      }
      state.context.push();
      pushed = true;
    }
    running = { state, pushed, top: Context.getCurrent(), before: new Set(liveContexts()) };
  },
  afterEach() {
    if (running) {
      const { state, pushed, top, before } = running;
      running = null;
      for (const ctx of liveContexts()) if (!before.has(ctx)) state.made.add(ctx);
      let current = Context.getCurrent();
      for (; current && !(top && current.equals(top)); current = Context.getCurrent()) {
        Context.pop();
        state.leftCurrent++;
      }
      if (pushed && current) Context.pop();
    }
  },
  afterAll() {
    for (const state of files.values()) if (!state.ended) state.context?.detach();
  },
};
