'use strict';
// Inputs that once took the process down. C never trusts lib/: each case is tried through the
// public API (lib/'s message) and straight at the addon (C's own check), in a child process so
// that a crash shows as a signal rather than ending the test run.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');

const ROOT = JSON.stringify(path.join(__dirname, '..'));

// Runs script in a new node with the collector exposed; { status, signal, stdout, stderr }.
function child(script, env = {}) {
  return spawnSync(process.execPath, ['--expose-gc', '-e', script],
    { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60000 });
}

// script prints one JSON line; the child must end with status 0 and no signal.
function outcome(script, env) {
  const result = child(script, env);
  assert.strictEqual(result.signal, null, `killed by ${result.signal}: ${result.stderr.slice(-400)}`);
  assert.strictEqual(result.status, 0, result.stderr.slice(-400));
  return JSON.parse(result.stdout.trim().split('\n').pop());
}

// The error a call throws, as { name, message }, after which the collector runs twice.
const CAUGHT = `
const caught = (f) => { try { f(); return null; } catch (e) { return { name: e.constructor.name, message: e.message }; } };
const settle = (value) => { gc(); setImmediate(() => { gc(); setImmediate(() => console.log(JSON.stringify(value))); }); };
`;

describe('hostile input: host memory past the runtime\'s array limit', function () {
  const { MAX_LENGTH } = require('buffer').constants;
  const beyond = MAX_LENGTH + 1;

  it('alignedEmpty(limit + 1) is a RangeError naming the limit (it was a double free)', function () {
    const error = outcome(`${CAUGHT} const cuda = require(${ROOT});
      settle(caught(() => cuda.alignedEmpty(${beyond}, 'uint8')));`);
    assert.strictEqual(error.name, 'RangeError');
    assert.match(error.message, new RegExp(`${beyond} bytes cannot be made.*at most ${MAX_LENGTH} bytes`));
  });

  it('the addon itself refuses such a buffer with a RangeError, and frees the memory once', function () {
    if (MAX_LENGTH >= 2 ** 40) this.skip(); // no runtime limit to go past on this Node
    const error = outcome(`${CAUGHT} const binding = require(${ROOT} + '/lib/binding');
      settle(caught(() => binding.alignedAlloc({}, ${beyond}, 4096, false, true)));`);
    assert.strictEqual(error.name, 'RangeError');
  });

  it('below the limit such arrays work', function () {
    const length = outcome(`${CAUGHT} const cuda = require(${ROOT});
      const a = cuda.alignedEmpty(1 << 20, 'uint8'); a[a.length - 1] = 7; settle(a.length + a[a.length - 1]);`);
    assert.strictEqual(length, (1 << 20) + 7);
  });
});

describe('hostile input: NUL characters in names and paths', function () {
  const { standInDriver } = require('./support/stand-in-driver');
  const standIn = standInDriver();

  it('a file path holding NUL is a TypeError (C read it only up to the NUL, another file)', function () {
    const error = outcome(`${CAUGHT} const cuda = require(${ROOT});
      settle(caught(() => cuda.moduleFromFile('kernel.cubin\\0.txt')));`);
    assert.deepStrictEqual(error, { name: 'TypeError', message: 'path must be a string without NUL characters (\\0)' });
  });

  it('a kernel name holding NUL is a TypeError, the name without it still found (stand-in driver)', function () {
    const result = outcome(`${CAUGHT} const cuda = require(${ROOT});
      new cuda.Device(0).retainPrimaryContext().push();
      const module = cuda.moduleFromBuffer(Buffer.from('entry scale 8\\n'));
      settle({ error: caught(() => module.getFunction('scale\\0other')), found: typeof module.getFunction('scale') });`,
    { LD_LIBRARY_PATH: standIn.dir });
    assert.deepStrictEqual(result, {
      error: { name: 'TypeError', message: 'name must be a string without NUL characters (\\0)' },
      found: 'function',
    });
  });
});
