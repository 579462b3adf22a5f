'use strict';
// Fault injection (test/reliability/fault/): every entry point of the addon's driver table fails, in turn,
// under a public operation that reaches it, through the stand-in driver's FAKE_CUDA_FAIL. The
// failure must come out as the right CudaError subclass naming the call, what the operation took
// before the failure must be released (the stand-in's live counts come back), and nothing may
// crash or hand the driver a stale handle.
const assert = require('assert');
const { spawn, spawnSync } = require('child_process');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');

const CHILD = path.join(__dirname, 'fault', 'child.js');

// Calls whose failure cannot give back what they release: the error (if the call was not made by
// a finalizer or the reaper thread, which cannot throw) names the call, and the driver keeps the
// object. Nothing crashes, and no stale handle reaches the driver.
const RELEASES = new Set([
  'cuCtxDestroy',
  'cuDevicePrimaryCtxRelease',
  'cuStreamDestroy',
  'cuEventDestroy',
  'cuMemFree',
  'cuMemFreeAsync',
  'cuMemFreeHost',
  'cuMemHostUnregister',
  'cuIpcCloseMemHandle',
  'cuModuleUnload',
  'cuLibraryUnload',
  'cuLinkDestroy',
  'cuArrayDestroy',
  'cuTexObjectDestroy',
  'cuSurfObjectDestroy',
  'cuGraphDestroy',
  'cuGraphExecDestroy',
  'cuMemPoolDestroy',
  'cuMemRelease',
  'cuMemUnmap',
  'cuMemAddressFree',
  'cuGreenCtxDestroy',
]);
// Calls whose failure the addon is built to work past, and why.
const TOLERATED = {
  cuGetErrorString: "an error message falls back to the code's name",
  cuMemGetAddressRange: "an opened IPC allocation's size is then unknown (0)",
  cuThreadExchangeStreamCaptureMode: 'the relaxed capture mode for frees is optional (drivers without captures)',
  cuFuncGetParamInfo: 'parameter layouts are then unknown, as on drivers before 12.4: arguments need explicit types',
  cuCtxPopCurrent: 'detach(): the driver pops a context it destroys',
  cuCtxGetCurrent: 'detach() pops the context only where it is known to be current',
  cuStreamIsCapturing: "a stream whose capture state is unknown gets the callback that keeps an async copy's buffer",
};
// Entry points no operation reaches through the stand-in, and why.
const UNREACHED = {
  cuInit: 'called once when the driver loads: its failure is the next test',
  cuGetErrorName: 'resolved to check that the library is a CUDA driver; names come from lib/',
  cuUserObjectRelease:
    'called only where cuGraphRetainUserObject failed (graph-host.test.js checks that it ran the destructor)',
  cuStreamCreate:
    'Event.synchronize() waits on a stream of its own only while the event is incomplete; the stand-in completes work at once',
};

function run(args, env, dir) {
  return new Promise((resolve) => {
    const id = args.join('-').replace(/\W/g, '_');
    const child = spawn(process.execPath, ['--expose-gc', CHILD, ...args], {
      env: {
        ...process.env,
        LD_LIBRARY_PATH: dir,
        FAKE_CUDA_TRACE: '1',
        FAKE_CUDA_DEVICES: '2',
        FAKE_CUDA_FAIL: '',
        FAKE_CUDA_LOG: path.join(dir, `${id}.log`),
        FAKE_CUDA_COUNTS: path.join(dir, `${id}.counts`),
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

async function inParallel(items, limit, fn) {
  const results = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i]);
      }
    }),
  );
  return results;
}

describe('fault injection: every driver entry point fails in turn (stand-in driver)', function () {
  this.timeout(180000);
  const standIn = standInDriver();
  let discovered;

  before(async function () {
    const child = await run(['discover'], {}, standIn.dir);
    assert.strictEqual(child.status, 0, child.stderr.slice(-2000));
    discovered = JSON.parse(child.stdout);
  });

  it('operations reach every entry point of the table but those listed with a reason', function () {
    const unreached = discovered.table.filter((symbol) => !discovered.reached[symbol]);
    assert.deepStrictEqual(unreached.sort(), Object.keys(UNREACHED).sort());
    for (const symbol of [...RELEASES, ...Object.keys(TOLERATED)]) assert.ok(discovered.table.includes(symbol), symbol);
  });

  it('each failure is a MemoryError naming the call, releases what was taken, and crashes nothing', async function () {
    const symbols = discovered.table.filter((symbol) => discovered.reached[symbol]);
    const problems = [];
    await inParallel(symbols, 4, async (symbol) => {
      const operation = discovered.reached[symbol];
      const child = await run(['inject', symbol, operation], {}, standIn.dir);
      const where = `${symbol} (under ${operation})`;
      if (child.status !== 0 || child.signal) {
        problems.push(`${where}: exit ${child.status} ${child.signal || ''} ${child.stderr.slice(-400)}`);
        return;
      }
      const { error, before, after } = JSON.parse(child.stdout);
      if (after.stale !== before.stale)
        problems.push(`${where}: ${after.stale - before.stale} stale handles reached the driver`);
      if (RELEASES.has(symbol)) {
        if (error && (error.name !== 'MemoryError' || error.api !== symbol))
          problems.push(`${where}: ${JSON.stringify(error)}`);
      } else if (symbol in TOLERATED) {
        if (error) problems.push(`${where}: tolerated, yet ${JSON.stringify(error)}`);
      } else {
        if (!error) problems.push(`${where}: no error`);
        else if (error.name !== 'MemoryError' || error.api !== symbol)
          problems.push(`${where}: ${JSON.stringify(error)}`);
        const leaked = Object.keys(after).filter((kind) => after[kind] !== before[kind]);
        if (leaked.length)
          problems.push(
            `${where}: live counts changed: ${leaked.map((k) => `${k} ${before[k]} -> ${after[k]}`).join(', ')}`,
          );
      }
    });
    assert.deepStrictEqual(problems.sort(), []);
  });

  it('a failing cuInit is a MemoryError naming it, at every call (the driver is initialized once)', function () {
    const script = `const cuda = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
      const errors = [];
      for (let i = 0; i < 2; i++) {
        try { cuda.Device.count(); } catch (e) { errors.push({ name: e.constructor.name, api: e.api }); }
        process.env.FAKE_CUDA_FAIL = '';
      }
      console.log(JSON.stringify(errors));`;
    const child = spawnSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      env: { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_FAIL: 'cuInit:1+:2' },
    });
    assert.strictEqual(child.status, 0, child.stderr.slice(-1000));
    assert.deepStrictEqual(JSON.parse(child.stdout), Array(2).fill({ name: 'MemoryError', api: 'cuInit' }));
  });
});
