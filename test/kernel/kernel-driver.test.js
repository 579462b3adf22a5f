'use strict';
// Modules, launches and the profiler through a stand-in driver (test/support/fake-driver/), so
// that the C side of loading and launching runs here, without a GPU: each scenario runs in a
// child process whose libcuda.so.1 is the stand-in (test/support/kernel-driver-child.js), and the bytes
// the "driver" received are compared exactly with what C lays out for those arguments.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');

// Expected parameter bytes: size, then [method, offset, value] writes, as hex.
function params(size, writes = []) {
  const buffer = Buffer.alloc(size);
  for (const [method, offset, value] of writes) buffer[method](value, offset);
  return buffer.toString('hex');
}

// A launch as the stand-in logs it; with attrs (ids and values of the launch attributes, as
// "4:2,1,1;2:1": a cluster of 2x1x1, cooperative), one through cuLaunchKernelEx.
function launch(name, { grid = '1,1,1', block = '1,1,1', shared = 0, stream = 0, attrs = null }, hex) {
  return (
    `launch${attrs === null ? '' : 'ex'} ${name} grid=${grid} block=${block} shared=${shared} ` +
    `stream=${stream}${attrs === null ? '' : ` attrs=${attrs}`} params=${hex}`
  );
}

describe('modules and launches through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const standIn = standInDriver();

  function run(scenario, env = {}) {
    const log = path.join(standIn.dir, `${scenario}.log`);
    fs.rmSync(log, { force: true });
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', path.join(__dirname, '..', 'support', 'kernel-driver-child.js'), scenario],
      {
        encoding: 'utf8',
        env: { ...process.env, LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_LOG: log, ...env },
      },
    );
    if (child.status !== 0) throw new Error(`scenario ${scenario} failed:\n${child.stderr}`);
    const lines = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
    return {
      result: JSON.parse(child.stdout),
      lines,
      launches: lines.filter((line) => /^launch(ex)? /.test(line)),
    };
  }

  it("a call packs typed arguments at the kernel's offsets, with its dimensions, shared memory and stream", function () {
    const { result: r, launches } = run('generic');
    const dest = BigInt(r.dest);
    const src = 0x7f0000001000n;
    const add = (n, w = src) =>
      params(20, [
        ['writeBigUInt64LE', 0, dest],
        ['writeBigUInt64LE', 8, w],
        ['writeInt32LE', 16, n],
      ]);
    const v = r.values;
    const all = params(64, [
      ['writeInt8', 0, v.int8],
      ['writeUInt8', 1, v.uint8],
      ['writeInt16LE', 2, v.int16],
      ['writeUInt16LE', 4, v.uint16],
      ['writeInt32LE', 8, v.int32],
      ['writeUInt32LE', 12, v.uint32],
      ['writeBigInt64LE', 16, BigInt(v.int64)],
      ['writeBigUInt64LE', 24, BigInt(v.uint64)],
      ['writeUInt16LE', 32, 0x3554],
      ['writeFloatLE', 36, v.float32],
      ['writeDoubleLE', 40, v.float64],
      ['writeUInt8', 48, 1],
      ['writeBigUInt64LE', 56, dest],
    ]);
    const vec = params(32, [['writeInt8', 0, r.c], ...r.v.map((x, i) => ['writeFloatLE', 16 + 4 * i, x])]);
    const wide = params(48, [['writeDoubleLE', 0, 0.5], ...r.wide.map((x, i) => ['writeDoubleLE', 16 + 8 * i, x])]);
    const table = BigInt(r.table);
    assert.deepStrictEqual(launches, [
      launch('add', { grid: '7,1,1', block: '32,4,1', shared: 96 }, add(r.n)),
      launch('add', { grid: '2,3,4', stream: 1 }, add(r.n)),
      launch('add', {}, add(5)),
      launch('vec', { block: '2,1,1' }, vec),
      launch('all', {}, all),
      launch('empty', { block: '1024,1,1' }, ''),
      launch('wide', {}, wide),
      launch('add', {}, add(1)),
      launch(
        'add',
        {},
        params(20, [
          ['writeBigUInt64LE', 0, table],
          ['writeBigUInt64LE', 8, table],
        ]),
      ),
      launch('packed', {}, '050807060504030201'),
    ]);
  });

  it('prepared calls write the prepared format straight into the launch', function () {
    const { result: r, launches } = run('prepared');
    const a = BigInt(r.a);
    const d = BigInt(r.d);
    const addOf = (x, y, n) =>
      params(20, [
        ['writeBigUInt64LE', 0, x],
        ['writeBigUInt64LE', 8, y],
        ['writeInt32LE', 16, n],
      ]);
    const add = (b, n) => addOf(a, b, n);
    assert.deepStrictEqual(launches, [
      launch('add', { grid: '3,2,1', block: '64,2,2' }, add(0x1000n, r.n)),
      launch('add', { grid: '5,1,1', block: '8,1,1', shared: 512 }, add(0x2000n, r.n)),
      launch('add', { stream: 1 }, add(a, -1)),
      launch('add', { shared: 4 }, add(a, -2)),
      launch('add', {}, add(a, 7)),
      launch('empty', {}, ''),
      launch(
        'all',
        {},
        params(64, [
          ['writeInt8', 0, -1],
          ['writeUInt8', 1, 2],
          ['writeInt16LE', 2, -3],
          ['writeUInt16LE', 4, 4],
          ['writeInt32LE', 8, -5],
          ['writeUInt32LE', 12, 6],
          ['writeBigInt64LE', 16, -7n],
          ['writeBigUInt64LE', 24, 8n],
          ['writeUInt16LE', 32, 0x3e00],
          ['writeFloatLE', 36, 0.25],
          ['writeDoubleLE', 40, -0.5],
          ['writeUInt8', 48, 1],
          ['writeBigUInt64LE', 56, 0x300n],
        ]),
      ),
      launch('add', {}, addOf(d, d + 264n, 3)),
      launch('add', {}, addOf(d + 264n, d, 4)),
      launch('add', {}, addOf(d + 264n, d, 4)),
    ]);
  });

  it("with the source's signatures, bare numbers take their parameter's type", function () {
    const { launches } = run('source');
    assert.deepStrictEqual(launches, [
      launch(
        'add',
        {},
        params(20, [
          ['writeBigUInt64LE', 0, 0x100n],
          ['writeBigUInt64LE', 8, 0x200n],
          ['writeInt32LE', 16, 42],
        ]),
      ),
      launch(
        'all',
        {},
        params(64, [
          ['writeInt8', 0, -1],
          ['writeUInt8', 1, 2],
          ['writeInt16LE', 2, -3],
          ['writeUInt16LE', 4, 4],
          ['writeInt32LE', 8, -5],
          ['writeUInt32LE', 12, 6],
          ['writeBigInt64LE', 16, -7n],
          ['writeBigUInt64LE', 24, 8n],
          ['writeUInt16LE', 32, 0x3e00],
          ['writeFloatLE', 36, 0.25],
          ['writeDoubleLE', 40, -0.5],
          ['writeUInt8', 48, 1],
          ['writeBigUInt64LE', 56, 0x300n],
        ]),
      ),
      launch(
        'vec',
        {},
        params(32, [['writeInt8', 0, -2], ...[1, 2, 3, 4].map((x, i) => ['writeFloatLE', 16 + 4 * i, x])]),
      ),
      launch(
        'add',
        {},
        params(20, [
          ['writeBigUInt64LE', 0, 1n],
          ['writeBigUInt64LE', 8, 2n],
          ['writeUInt32LE', 16, 3],
        ]),
      ),
    ]);
  });

  it("bad input: missing or malformed dimensions and options, wrong argument counts and kinds, the driver's refusals", function () {
    const { launches } = run('badInput');
    assert.strictEqual(launches.length, 1, 'only the last, good call reached the driver');
  });

  it('clusters and cooperative launches go through cuLaunchKernelEx with exactly those attributes; bad ones are refused', function () {
    const { result: r, launches } = run('launchAttributes');
    const hex = params(20, [
      ['writeBigUInt64LE', 0, BigInt(r.p)],
      ['writeBigUInt64LE', 8, BigInt(r.q)],
      ['writeInt32LE', 16, r.n],
    ]);
    const [CLUSTER, COOPERATIVE] = [4, 2]; // CU_LAUNCH_ATTRIBUTE_*
    assert.deepStrictEqual(launches, [
      launch('add', { grid: '8,4,1', block: '32,2,1', shared: 64, stream: 1, attrs: `${CLUSTER}:2,2,1` }, hex),
      launch('add', { grid: '16,1,1', block: '64,1,1', attrs: `${COOPERATIVE}:1` }, hex),
      launch('add', { grid: '4,2,2', block: '64,1,1', attrs: `${CLUSTER}:4,1,2;${COOPERATIVE}:1` }, hex),
      launch('add', { grid: '16,1,1', block: '64,1,1', attrs: `${CLUSTER}:4,1,1` }, hex),
      launch('add', { grid: '16,1,1', block: '64,1,1' }, hex),
      launch('add', { grid: '8,1,1', block: '32,1,1', attrs: `${CLUSTER}:2,1,1` }, hex),
      launch('add', { grid: '6,1,1', block: '32,1,1', shared: 128, stream: 1, attrs: `${COOPERATIVE}:1` }, hex),
      launch('add', { grid: '8,1,1', block: '32,1,1' }, hex),
      launch('add', { grid: '2,1,1', attrs: `${CLUSTER}:2,1,1` }, hex),
      launch('add', { grid: '2,1,1', block: '2,1,1' }, hex),
    ]);
  });

  it('without cuLaunchKernelEx, launches with attributes are a RuntimeError naming it; plain ones work', function () {
    const { launches } = run('noLaunchEx', { FAKE_CUDA_MISSING: 'cuLaunchKernelEx' });
    assert.deepStrictEqual(launches, [launch('empty', {}, ''), launch('empty', {}, '')]);
  });

  it('launches go to the stream each call names (bound in C when it changes); a destroyed stream is refused', function () {
    const { launches } = run('streams');
    const on = (...streams) => streams.map((stream) => launch('empty', { stream }, ''));
    assert.deepStrictEqual(launches, [...on(1, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1), ...on(0, 2, 0, 1, 1)]);
  });

  it('{ signal }: aborted before a call, nothing launches; aborted during it, no Out data and no host function', function () {
    const { result, launches } = run('abort');
    // The two calls aborted while waiting, the one kept, and the prepared call: nothing else.
    assert.deepStrictEqual(
      launches.map((line) => line.replace(/^(launch \w+) .*params=[0-9a-f]{32}([0-9a-f]{8})$/, '$1 $2')),
      [result.n, result.n, result.n, result.n].map((n) => {
        const word = Buffer.alloc(4);
        word.writeInt32LE(n);
        return `launch add ${word.toString('hex')}`;
      }),
    );
  });

  it('without cuFuncGetParamInfo, arguments are laid out with C alignment', function () {
    const { launches } = run('noParamInfo', { FAKE_CUDA_MISSING: 'cuFuncGetParamInfo' });
    assert.deepStrictEqual(launches, [
      launch(
        'vec',
        {},
        params(32, [['writeInt8', 0, 3], ...[1, 2, 3, 4].map((x, i) => ['writeFloatLE', 16 + 4 * i, x])]),
      ),
    ]);
  });

  it('loads images with JIT options and logs, and files; refuses truncated images', function () {
    const file = path.join(standIn.dir, 'module.txt');
    fs.writeFileSync(file, 'entry add 8 8 4\n');
    const { lines, launches } = run('loading', { FAKE_MODULE_FILE: file });
    const loads = lines.filter((line) => line.startsWith('load'));
    const length =
      'entry add 8 8 4\nentry vec 1 16\nentry all 1 1 2 2 4 4 8 8 2 4 8 1 8\nentry empty\n' +
      'entry wide 8 32@16\nentry packed 1 8@1\nglobal table 256\ntexref tex\nsurfref surf';
    assert.deepStrictEqual(loads, [
      `load ${length.length} 0=32 7=3 13=1`,
      `load ${length.length} 0=64 16=0`,
      `load ${length.length}`,
      'load 4',
      'load file 16',
    ]);
    assert.strictEqual(launches.length, 1);
  });

  it('a fatbin made by nvcc passes the header check; truncated ones and entries past the end are refused', function () {
    const {
      result: { size },
      lines,
    } = run('fatbin');
    assert.strictEqual(size, fs.statSync(path.join(__dirname, '..', 'support', 'fixtures', 'scale.fatbin')).size);
    assert.deepStrictEqual(
      lines.filter((line) => line.startsWith('load')),
      [size, size, size + 8, size].map((bytes) => `load fatbin ${bytes}`),
    );
  });

  it('freed modules refuse use with LogicError; dropped ones are unloaded by the garbage collector', function () {
    const { lines } = run('lifetimes');
    const unloaded = lines.filter((line) => line.startsWith('unload')).map((line) => Number(line.split(' ')[1]));
    assert.deepStrictEqual(unloaded.slice(0, 2), [1, 2], 'free() and [Symbol.dispose]() unload at once, once');
    assert.deepStrictEqual(
      unloaded.slice(2).sort(),
      [3, 4, 5, 6, 7],
      'the five dropped modules; not the one a kernel holds',
    );
    assert.strictEqual(lines.filter((line) => line.startsWith('launch empty')).length, 1);
  });

  it('texture references: every setter and getter, byte offsets, bad values', function () {
    const { result, lines } = run('references');
    const at = BigInt(result.aligned);
    assert.deepStrictEqual(
      lines.filter((line) => line.startsWith('tex')),
      [
        `texaddress ${at.toString(16)} 4096`,
        `texaddress ${(at + 16n).toString(16)} 64`,
        `texaddress ${(at + 16n).toString(16)} 64`,
        `texaddress2d ${at.toString(16)} 7 5 ${0x0a} 2 64`,
      ],
    );
  });

  it('function attributes, cache and shared-memory configuration, occupancy', function () {
    const { lines } = run('attributes');
    assert.deepStrictEqual(
      lines.filter((line) => /^(cache|sharedconfig)/.test(line)),
      ['cache add 1', 'sharedconfig add 2'],
    );
  });

  it('the deprecated launch API works, warning once per method', function () {
    const { launches } = run('deprecated');
    const legacy = params(20, [
      ['writeInt32LE', 0, -5],
      ['writeUInt32LE', 4, 0xfffffff0],
      ['writeFloatLE', 16, 0.5],
    ]);
    const set = params(20, [
      ['writeBigUInt64LE', 0, 0x1234n],
      ['writeBigUInt64LE', 8, 0x5678n],
      ['writeInt32LE', 16, -9],
    ]);
    assert.deepStrictEqual(launches, [
      launch('add', { grid: '3,2,1', block: '4,2,1', shared: 64 }, legacy),
      launch('add', { grid: '3,1,1', block: '4,2,1', shared: 64 }, legacy),
      launch('add', { block: '4,2,1', shared: 64 }, set),
      launch('add', { grid: '2,2,1', block: '4,2,1', shared: 64, stream: 1 }, set),
    ]);
  });

  it('initializeProfiler calls the driver and surfaces what it returns', function () {
    const ok = run('profiler');
    assert.deepStrictEqual(ok.result, { initialized: true });
    assert.deepStrictEqual(ok.lines, [
      'profiler /tmp/profiler.cfg /tmp/profiler.out 1',
      'profiler start',
      'profiler stop',
    ]);
    const refused = run('profiler', { FAKE_CUDA_PROFILER_RESULT: '5' });
    assert.deepStrictEqual(refused.result.error, {
      name: 'RuntimeError',
      code: 5,
      api: 'cuProfilerInitialize',
      message: 'cuProfilerInitialize failed: profiler disabled while using external profiling tool',
    });
    const absent = run('profiler', { FAKE_CUDA_MISSING: 'cuProfilerInitialize' });
    assert.strictEqual(absent.result.error.name, 'RuntimeError');
    assert.strictEqual(absent.result.error.api, 'cuProfilerInitialize');
    assert.match(
      absent.result.error.message,
      /^cuProfilerInitialize is not provided by the installed CUDA driver \(version 13\.0\); it needs a driver for CUDA 4\.0 or newer: update the NVIDIA driver/,
    );
    assert.deepStrictEqual(absent.lines, ['profiler start', 'profiler stop']);
  });
});
