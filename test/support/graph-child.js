'use strict';
// Runs a test's body in a child process on the stand-in driver (graph-build and graph-host tests),
// with a context current and, in scope: cuda, assert, fs, the stand-in's module text MODULE and
// log() (the stand-in's log lines so far, in dir/log). Asserts the child exits 0; returns its stdout.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { standInDriver } = require('./stand-in-driver');

const ROOT = path.join(__dirname, '..', '..');

function runInChild(standIn, dir, body, extraEnv = {}) {
  const log = path.join(dir, 'log');
  const script = `
    const assert = require('assert');
    const fs = require('fs');
    const cuda = require(${JSON.stringify(ROOT)});
    const log = () => (fs.existsSync(${JSON.stringify(log)}) ? fs.readFileSync(${JSON.stringify(log)}, 'utf8').trim().split('\\n') : []).filter((line) => !line.startsWith('load '));
    const MODULE = 'entry empty\\nentry args4 8 8 4 4\\n';
    cuda.init();
    const ctx = new cuda.Device(0).makeContext();
    (async () => {
      ${body}
    })().then(() => ctx.detach(), (error) => { console.error(error); process.exit(1); }); // workers may still run`;
  const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_LOG: log, ...extraEnv },
    timeout: 120000, // a hang fails the test with what the child printed
  });
  assert.strictEqual(child.status, 0, `${child.error ?? ''}\n${child.stdout}${child.stderr}`);
  return child.stdout;
}

/** Inside a describe(): a fresh directory for each test (named from prefix), and { run(body, env),
 * dir(), standIn }, run being runInChild in that directory with defaults added to env. */
function childRunner(prefix, defaults = {}) {
  const standIn = standInDriver();
  let dir;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { run: (body, env) => runInChild(standIn, dir, body, { ...defaults, ...env }), dir: () => dir, standIn };
}

module.exports = { runInChild, childRunner, ROOT };
