'use strict';
// Objects that another native addon wrapped, passed where cudadrv wants its own. Node-API's
// napi_unwrap gives back any addon's pointer: cudadrv must know its own (its live set of handles)
// before it reads one. A small addon (test/support/fixtures/foreign-wrap.c) wraps objects around
// pointers that crash when read; every function of the addon gets them in every position, in a
// child process, so that a crash shows as a signal.
const assert = require('assert');
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');

const ROOT = path.join(__dirname, '..', '..');
const FIXTURE = path.join(__dirname, '..', 'support', 'fixtures', 'foreign-wrap.c');

// Where this Node's node_api.h is, or null.
function nodeHeaders() {
  const candidates = [
    path.join(process.config.variables.node_prefix || '/usr', 'include', 'node'),
    path.join(path.dirname(process.execPath), '..', 'include', 'node'),
  ];
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'node_api.h'))) || null;
}

const CHILD = `
const cuda = require(process.env.ROOT);
const binding = require(process.env.ROOT + '/lib/internal/binding');
const foreign = require(process.env.FOREIGN);
new cuda.Device(0).retainPrimaryContext().push();
const stream = new cuda.Stream();
const event = new cuda.Event();
// Pointers that crash when read: near null, unmapped, and one byte of the other addon's memory.
const objects = [1, 0xdead0000, -1].map((address) => foreign.wrap({}, address));
const caught = (f) => {
  try {
    const value = f();
    if (value && typeof value.then === 'function') value.catch(() => {});
    return 'returned';
  } catch (e) {
    return e.constructor.name + ': ' + e.message;
  }
};
const outcomes = {};
for (const name of Object.keys(binding).sort()) {
  if (typeof binding[name] !== 'function') continue;
  for (const object of objects)
    for (let count = 1; count <= 4; count++) {
      const outcome = caught(() => binding[name](...Array(count).fill(object)));
      (outcomes[outcome] = outcomes[outcome] || []).push(name);
    }
}
stream.context.push(); // the sweep popped contexts (ctxPopCurrent takes no arguments)
gc();
setImmediate(() => {
  gc();
  console.log(JSON.stringify({
    outcomes,
    streamQuery: caught(() => binding.streamQuery(objects[0])),
    waitForEvent: caught(() => stream.waitForEvent(objects[1])),
    eventAsStream: caught(() => binding.streamQuery(event)),
    graphOnForeign: caught(() => binding.graphCreate(objects[2])),
    streamStillWorks: stream.isDone() && event.record(stream).query(),
  }));
});
`;

describe('hostile input: objects another addon wrapped (stand-in driver)', function () {
  this.timeout(60000);
  const standIn = standInDriver();
  let addon = null;

  before(function () {
    const headers = nodeHeaders();
    if (!headers) {
      console.log("      (no node_api.h beside this Node, so skipped: the other addon can't be built)");
      this.skip();
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-foreign-'));
    addon = path.join(dir, 'foreign.node');
    execFileSync(process.env.CC || 'cc', ['-shared', '-fPIC', '-O2', `-I${headers}`, FIXTURE, '-o', addon]);
  });
  after(function () {
    if (addon) fs.rmSync(path.dirname(addon), { recursive: true, force: true });
  });

  it('are refused with a TypeError by every function, and never read', function () {
    const run = spawnSync(process.execPath, ['--expose-gc', '-e', CHILD], {
      encoding: 'utf8',
      env: { ...process.env, ROOT, FOREIGN: addon, LD_LIBRARY_PATH: standIn.dir },
      timeout: 50000,
    });
    assert.strictEqual(run.signal, null, `killed by ${run.signal}: ${run.stderr.slice(-600)}`);
    assert.strictEqual(run.status, 0, run.stderr.slice(-600));
    const result = JSON.parse(run.stdout.trim().split('\n').pop());
    assert.strictEqual(result.streamQuery, 'TypeError: expected a Stream');
    assert.strictEqual(result.waitForEvent, 'TypeError: expected an Event');
    assert.strictEqual(result.eventAsStream, 'TypeError: expected a Stream');
    assert.strictEqual(
      result.graphOnForeign,
      "TypeError: cudadrv: the object to hold the Graph already holds a handle or another addon's object",
    );
    assert.strictEqual(result.streamStillWorks, true);
    // Every function that takes a handle said which kind it wanted; none failed inside.
    const outcomes = Object.keys(result.outcomes);
    const refused = outcomes.map((o) => /^TypeError: expected an? ([A-Z]\w+)$/.exec(o)).filter(Boolean);
    const kinds = refused.map((match) => match[1]);
    for (const kind of ['Stream', 'Event', 'Context', 'Graph', 'GraphExec', 'Module', 'Kernel', 'MemoryPool']) {
      assert.ok(kinds.includes(kind), `no function refused a foreign ${kind}; refused: ${kinds.join(', ')}`);
    }
    const internal = outcomes.filter((o) => /internal error|Node-API status/.test(o));
    assert.deepStrictEqual(internal, [], internal.map((o) => `${o}: ${result.outcomes[o].join(', ')}`).join('\n'));
  });
});
