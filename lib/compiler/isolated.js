'use strict';
// Isolated compiles and links (the `isolated` option, CUDADRV_ISOLATE=1): NVRTC and nvJitLink run
// in helper processes (lib/compiler/helper.js) that cudadrv starts and reuses, one request at a
// time each, at most one per processor. A crash or hang in NVIDIA's code then ends a helper, never
// this process: the request's result says what ended it, and the next request starts a new
// helper. What the libraries print to stderr there (nvJitLink prints some errors) comes back with
// each result. An idle helper is no reason to stay alive, and ends after IDLE_MS.
// (child_process and the framing are required where a helper starts: child_process alone takes
// longer to load than a cached compile, which every process that compiles loads this for.)
const fs = require('fs');
const os = require('os');
const path = require('path');
const { constants } = require('buffer');
const { RuntimeError } = require('../driver/errors');

const HELPER = path.join(__dirname, 'helper.js');
const IDLE_MS = 10_000;
const STDERR_LIMIT = 64 * 1024; // the last bytes of a request's stderr kept
const SLOTS = (os.availableParallelism ? os.availableParallelism() : os.cpus().length) || 1;

const idle = new Set(); // helpers waiting for a request
const waiting = []; // requests waiting for a helper, as functions that start them
let helpers = 0; // alive
const noop = () => {};

/** The error the binding threw in the helper, for this process: a RangeError or TypeError as it
 * was (an input the addon refused), else a RuntimeError saying where. */
function helperError(result, what) {
  if (result.name === 'RangeError') return new RangeError(result.error);
  if (result.name === 'TypeError') return new TypeError(result.error);
  return new RuntimeError(`the isolated ${what}'s helper process: ${result.error}`);
}

/** Whether compiles and links are isolated where their options do not say: CUDADRV_ISOLATE=1. */
function isolatedByDefault() {
  return process.env.CUDADRV_ISOLATE === '1';
}

// A file for a helper's stderr, already unlinked: the helper appends, this process reads.
function stderrFile() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-helper-'));
  try {
    return fs.openSync(path.join(dir, 'stderr'), 'a+', 0o600);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// What the helper printed since the last call, and the file emptied.
function takeStderr(helper) {
  const size = fs.fstatSync(helper.fd).size;
  const length = Math.min(size, STDERR_LIMIT);
  const bytes = Buffer.alloc(length);
  fs.readSync(helper.fd, bytes, 0, length, size - length);
  fs.ftruncateSync(helper.fd, 0);
  return bytes.toString();
}

// How a helper ended: 'killed by SIGSEGV', 'exited with code 1'.
function endedBy(code, signal) {
  return signal ? `killed by ${signal}` : `exited with code ${code}`;
}

// A reply as the helper must send it ({ outcome } of op's shape, or { error }); a helper whose
// memory NVIDIA's code corrupted may send anything.
function sound(op, reply) {
  if (reply === null || typeof reply !== 'object') return false;
  if (typeof reply.error === 'string') return typeof reply.name === 'string';
  const o = reply.outcome;
  const strings = (values) => Array.isArray(values) && values.every((v) => typeof v === 'string');
  if (o === null || typeof o !== 'object' || !Number.isInteger(o.code) || !strings([o.api, o.codeName])) return false;
  if (op === 'compile' && !(strings([o.log]) && strings(o.files))) return false;
  if (op === 'link' && (!strings([o.infoLog, o.errorLog]) || !Number.isInteger(o.input))) return false;
  if (o.code !== 0) return true;
  return Buffer.isBuffer(o.image) && (op === 'link' || strings(o.loweredNames));
}

// Every helper alive, ended with this process: a helper running NVIDIA's code in a loop would
// never see its stdin end.
const alive = new Set();
let killAtExit = false;

function start() {
  const { spawn } = require('child_process');
  if (!killAtExit) {
    killAtExit = true;
    process.once('exit', () => alive.forEach((helper) => helper.child.kill('SIGKILL')));
  }
  const { FrameReader } = require('./frames');
  const fd = stderrFile();
  const child = spawn(process.execPath, [HELPER, 'serve'], { stdio: ['pipe', 'pipe', fd] });
  const helper = { child, fd, job: null, timer: null, gone: false };
  helpers++;
  alive.add(helper);
  const reader = new FrameReader(
    constants.MAX_LENGTH,
    (reply) => {
      const job = helper.job;
      if (!job || !sound(job.op, reply)) return child.kill('SIGKILL'); // then ended, as below
      helper.job = null;
      job.settle({ ...reply, stderr: takeStderr(helper) });
      rest(helper);
    },
    () => child.kill('SIGKILL'),
  );
  child.stdout.on('data', (chunk) => reader.push(chunk));
  child.stdin.on('error', () => child.kill('SIGKILL')); // it is gone: its exit says how
  const end = (how) => {
    if (helper.gone) return;
    helper.gone = true;
    helpers--;
    alive.delete(helper);
    idle.delete(helper);
    clearTimeout(helper.timer);
    const job = helper.job;
    helper.job = null;
    job?.settle(job.cancelled ? { cancelled: true } : { ...how, stderr: takeStderr(helper) });
    fs.closeSync(fd);
    waiting.shift()?.();
  };
  child.on('exit', (code, signal) => end({ ended: endedBy(code, signal), signal }));
  child.on('error', (error) => {
    end({ ended: `could not run (${error.message})`, signal: null });
    child.kill('SIGKILL');
  });
  return helper;
}

// A helper done with its request: idle, holding nothing alive, until the next or IDLE_MS.
function rest(helper) {
  const next = waiting.shift();
  if (next) {
    next(helper);
    return;
  }
  for (const handle of [helper.child, helper.child.stdin, helper.child.stdout]) handle.unref();
  idle.add(helper);
  helper.timer = setTimeout(() => helper.child.kill(), IDLE_MS).unref();
}

function assign(helper, job, request) {
  helper.job = job;
  for (const handle of [helper.child, helper.child.stdin, helper.child.stdout]) handle.ref();
  job.cancel = () => {
    job.cancelled = true;
    helper.child.kill('SIGKILL');
  };
  helper.child.stdin.write(require('./frames').frame(request));
}

/**
 * Runs op ('compile': binding.nvrtcCompile's arguments; 'link': binding.link's) in a helper with
 * library (the file of NVRTC or nvJitLink to load there): { promise, cancel }. The promise
 * resolves with { outcome, stderr } (the binding's outcome), { error, name, stderr } (what the
 * binding threw there: helperError), { ended, signal, stderr } (the helper ended: how, and the
 * signal that ended it or null) or, after
 * cancel() (which kills the helper), { cancelled: true }.
 */
function run(op, library, args) {
  const job = { op, cancelled: false, cancel: () => (job.cancelled = true) };
  const promise = new Promise((resolve) => (job.settle = resolve));
  const request = { op, library, args };
  const begin = (helper) => {
    if (!job.cancelled) return assign(helper, job, request);
    job.settle({ cancelled: true }); // given up while it waited for a helper
    rest(helper);
  };
  const [first] = idle;
  if (first) {
    idle.delete(first);
    clearTimeout(first.timer);
    begin(first);
  } else if (helpers < SLOTS) {
    begin(start());
  } else {
    waiting.push((helper) => begin(helper ?? start()));
  }
  return { promise, cancel: () => job.cancel() };
}

/** run() on the calling thread, in a helper of its own: its promise's value. */
function runSync(op, library, args) {
  const { spawnSync } = require('child_process');
  const { frame, FrameReader } = require('./frames');
  const result = spawnSync(process.execPath, [HELPER, 'once'], {
    input: frame({ op, library, args }),
    maxBuffer: constants.MAX_LENGTH,
  });
  const stderr = (result.stderr ?? Buffer.alloc(0)).subarray(-STDERR_LIMIT).toString();
  if (result.error) return { ended: `could not run (${result.error.message})`, signal: null, stderr };
  if (result.signal || result.status !== 0) {
    return { ended: endedBy(result.status, result.signal), signal: result.signal, stderr };
  }
  let reply = null;
  new FrameReader(constants.MAX_LENGTH, (value) => (reply = value), noop).push(result.stdout);
  if (!sound(op, reply)) return { ended: 'sent a reply that cannot be read', signal: null, stderr };
  return { ...reply, stderr };
}

module.exports = { run, runSync, isolatedByDefault, helperError };
