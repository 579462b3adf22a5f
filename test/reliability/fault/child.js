'use strict';
// The fault-injection run, in a process whose libcuda.so.1 is the stand-in driver with its trace,
// live counts and failure injection on (FAKE_CUDA_TRACE, FAKE_CUDA_COUNTS, FAKE_CUDA_FAIL).
//   child.js discover                      each operation once, traced: which entry points it reaches
//   child.js inject <symbol> <operation>   the operation with every call of symbol failing
// Prints one JSON object (see discover() and inject()).
const fs = require('fs');
const os = require('os');
const path = require('path');
const cuda = require('../../..');
const binding = require('../../../lib/internal/binding');
const { liveCounts, tracedCalls } = require('../../support/stand-in-driver');
const { OPERATIONS } = require('./operations');

const LOG = process.env.FAKE_CUDA_LOG;
const COUNTS = process.env.FAKE_CUDA_COUNTS;
const INJECTED = 2; // CUDA_ERROR_OUT_OF_MEMORY: a MemoryError

// The entry points of the addon's table (src/core/loader.h), by name.
function tableSymbols() {
  const header = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'src', 'core', 'loader.h'), 'utf8');
  const table = header.slice(header.indexOf('#define CU_FUNCTIONS'), header.indexOf('#define CU_TABLE_ENTRY'));
  return [...table.matchAll(/X\((cu\w+), \d+\)/g)].map((m) => m[1]);
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
// Until what the garbage collector can release is released: finalizers run from immediates, and
// the addon's reaper thread frees off the main thread (memReclaim waits for it: counts read while
// it worked looked settled under load, two test files at once).
async function quiesce() {
  let last = '';
  for (let i = 0; i < 20; i++) {
    global.gc();
    binding.memReclaim(false);
    await settle();
    await new Promise((resolve) => setTimeout(resolve, 2));
    const now = fs.readFileSync(COUNTS, 'utf8');
    if (now === last && i >= 3) return;
    last = now;
  }
}

function describeError(error) {
  if (error === undefined) return null;
  void error?.stack;
  return {
    name: error?.constructor?.name,
    api: error?.api ?? null,
    code: error?.code ?? null,
    message: String(error?.message ?? error).split('\n')[0],
  };
}

// Each operation once, traced: { table, reached: { symbol: first operation reaching it } }.
async function discover(dir) {
  for (const [name, operation] of Object.entries(OPERATIONS)) {
    fs.appendFileSync(LOG, `mark ${name}\n`);
    try {
      await operation(dir);
    } catch (error) {
      throw new Error(`operation ${name} fails without injection: ${error.stack}`, { cause: error });
    } finally {
      fs.appendFileSync(LOG, 'end\n');
    }
  }
  await quiesce();
  const reached = {};
  for (const [name, calls] of Object.entries(tracedCalls(LOG))) {
    for (const call of calls) {
      const symbol = call.replace(/_v\d+$/, '');
      if (!reached[symbol]) reached[symbol] = name;
    }
  }
  return { table: tableSymbols(), reached };
}

// The operation again with every call of symbol failing: { error, before, after }, the live
// counts before it and once the garbage collector has released what it can.
async function inject(dir, symbol, operation) {
  await quiesce();
  const before = liveCounts(COUNTS);
  let error;
  process.env.FAKE_CUDA_FAIL = `${symbol}:1+:${INJECTED}`;
  try {
    await OPERATIONS[operation](dir);
  } catch (thrown) {
    error = thrown;
  }
  process.env.FAKE_CUDA_FAIL = '';
  // described, then dropped: until its stack is formatted, an error holds its frames' receivers
  const described = describeError(error);
  error = undefined;
  await quiesce();
  return { error: described, before, after: liveCounts(COUNTS) };
}

async function main() {
  const [mode, symbol, operation] = process.argv.slice(2);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-fault-'));
  const context = new cuda.Device(0).makeContext(); // current for the operations
  try {
    const result = mode === 'discover' ? await discover(dir) : await inject(dir, symbol, operation);
    process.stdout.write(JSON.stringify(result));
  } finally {
    context.detach();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
