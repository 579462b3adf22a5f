'use strict';
// SIGINT and SIGTERM end a process that uses cudadrv as they end any Node process: at once, by
// the signal (or through the user's own handler). NVRTC's front end installed handlers of its own
// (which call exit() from whichever thread the signal lands on) and put Node's back without
// SA_RESETHAND, after which Node's handler caught its own re-raised signal for ever: the process
// spun at full CPU until SIGKILL. src/core/signals.c keeps NVIDIA's libraries off the dispositions.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { nvrtcLoads } = require('../support/nvrtc-available');
const { describeGpu } = require('../support/gpu');

const CHILD = path.join(__dirname, '..', '..', 'test', 'support', 'signal-child.js');

/** Runs the child in state, sends signal `delay` ms after it says ready; its ending and how long
 * it took after the signal. */
function signalled(state, signal, { env = {}, handler = false, delay = 300 } = {}) {
  return new Promise((resolve, reject) => {
    const args = [CHILD, state, ...(handler ? ['handler'] : [])];
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env, SIGNAL_NAME: signal } });
    let stdout = '';
    let stderr = '';
    let sentAt = null;
    let helpers = [];
    const killer = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.stdout.on('data', (d) => {
      stdout += d;
      if (sentAt === null && stdout.includes('ready')) {
        sentAt = -1;
        setTimeout(() => {
          helpers = childrenOf(child.pid);
          sentAt = performance.now();
          child.kill(signal);
        }, delay);
      }
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code, endedBy) => {
      clearTimeout(killer);
      const elapsed = sentAt > 0 ? performance.now() - sentAt : null;
      resolve({ code, signal: endedBy, elapsed, stdout, stderr, helpers });
    });
  });
}

// The pids of the processes whose parent is pid (Linux's /proc).
function childrenOf(pid) {
  const children = [];
  for (const entry of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      // the parent's pid is the field after the command's closing parenthesis and the state
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      /* ended meanwhile */
    }
  }
  return children;
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function assertEndedBy(result, signal) {
  assert.ok(result.elapsed !== null, `never got ready: ${result.stderr.slice(-500)}`);
  assert.deepStrictEqual(
    { code: result.code, signal: result.signal },
    { code: null, signal },
    result.stderr.slice(-500),
  );
  assert.ok(result.elapsed < 1000, `ended ${result.elapsed.toFixed(0)} ms after ${signal}`);
}

describe('SIGINT and SIGTERM end the process (NVRTC and nvJitLink, no GPU needed)', function () {
  this.timeout(120000);
  before(function () {
    if (!nvrtcLoads()) this.skip();
  });

  for (const signal of ['SIGINT', 'SIGTERM']) {
    for (const state of ['after-compile', 'during-compile', 'during-compile-sync', 'during-link']) {
      it(`${signal} ${state.replace(/-/g, ' ')}: ended by the signal within 1 s`, async function () {
        assertEndedBy(await signalled(state, signal), signal);
      });
    }
    for (const state of ['during-isolated-compile', 'during-isolated-link']) {
      it(`${signal} ${state.replace(/-/g, ' ')}: ended by the signal within 1 s, and its helper ends too`, async function () {
        const result = await signalled(state, signal);
        assertEndedBy(result, signal);
        assert.strictEqual(result.helpers.length, 1, 'one helper process was running the work');
        const deadline = Date.now() + 10000; // the helper sees its stdin end once its work is done
        while (result.helpers.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.ok(!result.helpers.some(alive), 'the helper outlived its parent by 10 s');
      });
    }
    it(`${signal} after a compile, with the user's handler: the handler runs`, async function () {
      const result = await signalled('after-compile', signal, { handler: true });
      assert.deepStrictEqual({ code: result.code, signal: result.signal }, { code: 7, signal: null }, result.stderr);
      assert.match(result.stdout, /handled/);
      assert.ok(result.elapsed < 1000, `ended ${result.elapsed} ms after ${signal}`);
    });
  }
});

describe('SIGINT and SIGTERM with live GPU objects (stand-in driver)', function () {
  this.timeout(60000);
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  for (const signal of ['SIGINT', 'SIGTERM']) {
    it(`${signal} idle with contexts, memory and streams alive: ended by the signal within 1 s`, async function () {
      assertEndedBy(await signalled('idle', signal, { env: { LD_LIBRARY_PATH: standIn.dir } }), signal);
    });
    it(`${signal} while a thread waits in cuCtxSynchronize: ended by the signal within 1 s`, async function () {
      const env = { LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_SYNC_MS: '20000' };
      assertEndedBy(await signalled('during-context-wait', signal, { env }), signal);
    });
    it(`${signal} while a graph's host-function nodes are called and posted: ended by the signal within 1 s`, async function () {
      assertEndedBy(await signalled('during-host-calls', signal, { env: { LD_LIBRARY_PATH: standIn.dir } }), signal);
    });
    it(`${signal} while host-function nodes are called, with the user's handler: it runs and its exit status stands`, async function () {
      const env = { LD_LIBRARY_PATH: standIn.dir };
      const result = await signalled('during-host-calls', signal, { env, handler: true });
      assert.deepStrictEqual({ code: result.code, signal: result.signal }, { code: 7, signal: null }, result.stderr);
      assert.match(result.stdout, /handled/);
    });
    it(`${signal} while pools, batched copies, prefetches and growing buffers are at work: ended by the signal within 1 s`, async function () {
      assertEndedBy(await signalled('during-pool-work', signal, { env: { LD_LIBRARY_PATH: standIn.dir } }), signal);
    });
    it(`${signal} while kernels launch with attributes and events the collector takes: ended by the signal within 1 s`, async function () {
      const env = { LD_LIBRARY_PATH: standIn.dir };
      assertEndedBy(await signalled('during-attribute-launches', signal, { env }), signal);
    });
    it(`${signal} while the main thread and two workers stage copies of pageable memory: ended by the signal within 1 s`, async function () {
      assertEndedBy(await signalled('during-staged-copies', signal, { env: { LD_LIBRARY_PATH: standIn.dir } }), signal);
    });
    it(`${signal} while green contexts are made, worked in and detached: ended by the signal within 1 s`, async function () {
      assertEndedBy(await signalled('during-green-work', signal, { env: { LD_LIBRARY_PATH: standIn.dir } }), signal);
    });
    it(`${signal} while green contexts are made with the driver's table near full and its releases slow (makers out of memory, collections and retries under way): ended by the signal within 1 s`, async function () {
      const env = { LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_OBJECTS: '300', FAKE_CUDA_SYNC_MS: '1' };
      assertEndedBy(await signalled('during-green-work', signal, { env }), signal);
    });
    it(`${signal} idle, with the user's handler: the handler runs and its exit status stands`, async function () {
      const result = await signalled('idle', signal, { env: { LD_LIBRARY_PATH: standIn.dir }, handler: true });
      assert.deepStrictEqual({ code: result.code, signal: result.signal }, { code: 7, signal: null }, result.stderr);
      assert.match(result.stdout, /handled/);
    });
  }
});

describeGpu('SIGINT and SIGTERM on the GPU: a wait on a long kernel, host-function nodes called', function () {
  this.timeout(60000);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    it(`${signal} while a graph's host-function nodes are called on the GPU, with the user's handler: it runs and its exit status stands`, async function () {
      const result = await signalled('during-host-calls', signal, { handler: true });
      assert.deepStrictEqual({ code: result.code, signal: result.signal }, { code: 7, signal: null }, result.stderr);
      assert.ok(result.elapsed < 1000, `ended ${result.elapsed} ms after ${signal}`);
    });
    it(`${signal} while a graph's host-function nodes are called on the GPU: ended by the signal within 1 s`, async function () {
      assertEndedBy(await signalled('during-host-calls', signal), signal);
    });
    it(`${signal} while a 10 s kernel is awaited: ended by the signal within 1 s`, async function () {
      assertEndedBy(await signalled('during-kernel', signal, { delay: 500 }), signal);
    });
  }
});
