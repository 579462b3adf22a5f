'use strict';
// The set of live handles (src/driver/live_handles.c): the addon knows its objects by it, so a
// handle missing from it would be refused as "expected a Stream", and one left in it after its
// finalizer would be a freed struct taken for a live one. Thousands of handles made and dropped at
// random, on the main thread and in workers at once (each thread has a set of its own), one worker
// terminated mid-round: every kept handle still works and cuda.stats().liveHandles comes back to
// exactly what is held, on each thread.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');

const ROOT = path.join(__dirname, '..', '..');

const CHILD = `
const { Worker, isMainThread, workerData, parentPort } = require('worker_threads');
const cuda = require(process.env.ROOT);
const settle = () => new Promise((resolve) => setImmediate(resolve));

// Each handle used once; the first refusal's message, or null. (Not in churn(): an async
// function's suspended frame may keep its loop's last handle alive.)
function use(handles) {
  for (const h of handles) {
    try {
      if (h instanceof cuda.Event) h.query();
      else h.isDone();
    } catch (e) {
      return e.message;
    }
  }
  return null;
}

// Rounds of making events and streams, keeping a pseudo-random part; { rounds, failures }.
async function churn(seed, rounds) {
  new cuda.Device(0).retainPrimaryContext().push();
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) >>> 0) / 2 ** 32);
  (() => new cuda.Stream().synchronizeSync())(); // what a first Stream makes and keeps: its Context's object
  for (let i = 0; i < 5; i++) {
    gc();
    await settle();
  }
  const base = cuda.stats().liveHandles;
  const failures = [];
  let kept = [];
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < 1500; i++) kept.push(i % 5 ? new cuda.Event() : new cuda.Stream());
    kept = kept.filter(() => random() < 0.5);
    let live = -1;
    for (let tries = 0; tries < 50 && live !== base + kept.length; tries++) {
      gc();
      await settle();
      live = cuda.stats().liveHandles;
    }
    if (live !== base + kept.length) failures.push(\`round \${round}: \${live} live, \${base + kept.length} held\`);
    const refused = use(kept);
    if (refused) failures.push(\`round \${round}: \${refused}\`);
  }
  kept = [];
  let live = -1;
  for (let tries = 0; tries < 50 && live !== base; tries++) {
    gc();
    await settle();
    live = cuda.stats().liveHandles;
  }
  if (live !== base) failures.push(\`at the end: \${live} live, \${base} before\`);
  return { rounds, failures };
}

if (isMainThread) {
  (async () => {
    const workers = [1, 2].map((seed) => new Worker(__filename, { workerData: seed }));
    const results = workers.map((w) => new Promise((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
      w.once('exit', (code) => resolve({ exited: code }));
    }));
    setTimeout(() => workers[1].terminate(), 50); // mid-round
    const main = await churn(7, 6);
    console.log(JSON.stringify({ main, workers: await Promise.all(results) }));
  })();
} else {
  churn(workerData, 4).then((result) => parentPort.postMessage(result));
}
`;

describe('the set of live handles (stand-in driver)', function () {
  this.timeout(120000);
  const standIn = standInDriver();

  it('thousands of handles made and dropped at random on three threads: kept ones work, counts exact', function () {
    const fs = require('fs');
    const os = require('os');
    const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-live-')), 'child.js');
    fs.writeFileSync(script, CHILD);
    const run = spawnSync(process.execPath, ['--expose-gc', script], {
      encoding: 'utf8',
      env: { ...process.env, ROOT, LD_LIBRARY_PATH: standIn.dir },
      timeout: 110000,
    });
    fs.rmSync(path.dirname(script), { recursive: true, force: true });
    assert.strictEqual(run.signal, null, `killed by ${run.signal}: ${run.stderr.slice(-600)}`);
    assert.strictEqual(run.status, 0, run.stderr.slice(-600));
    const { main, workers } = JSON.parse(run.stdout.trim().split('\n').pop());
    assert.deepStrictEqual(main, { rounds: 6, failures: [] });
    assert.deepStrictEqual(workers[0], { rounds: 4, failures: [] });
    assert.ok(workers[1].exited !== undefined || workers[1].failures.length === 0, JSON.stringify(workers[1]));
  });
});
