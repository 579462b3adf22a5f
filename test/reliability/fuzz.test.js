'use strict';
// The fuzzer's short form (test/reliability/fuzz/run.js; `npm run fuzz` runs 200,000 calls): 20,000 calls in
// each mode with a fixed seed and 20,000 with a random one, printed so that a failure can be
// repeated. Every throw must be a TypeError, RangeError, CudaError or AbortError, and no child may
// die or hang.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { fuzz, report, fromRuns } = require('./fuzz/run');

const CALLS = 20000;
const FIXED_SEED = 20261123;
const RANDOM_SEED = Math.floor(Math.random() * 2 ** 31);

describe('fuzzer, mutation mode: changed binaries linked and changed sources compiled, isolated', function () {
  this.timeout(600000);
  const { nvrtcLoads } = require('../support/nvrtc-available');
  for (const seed of [FIXED_SEED, RANDOM_SEED]) {
    it(`seed ${seed}: 400 calls each give a result or a documented error; crashes and hangs stay in the helper`, async function () {
      if (!nvrtcLoads()) this.skip();
      const result = await fuzz({ mode: 'mutate', seed, calls: 400 });
      const text = report('mutate', seed, result);
      assert.deepStrictEqual([result.unexpected.length, result.failures.length], [0, 0], text);
      const made = Object.values(result.counts).reduce((a, b) => a + b, 0);
      assert.strictEqual(made, 400, text);
      assert.ok(result.counts['refused (RangeError)'] > 0 && result.counts.returned > 0, text);
    });
  }
});

describe('fuzzer: random calls over the whole API and the addon', function () {
  this.timeout(600000);
  for (const mode of ['no-driver', 'stand-in']) {
    for (const seed of [FIXED_SEED, RANDOM_SEED]) {
      it(`${mode}, seed ${seed}: ${CALLS} calls throw only the documented errors, crash nothing, hang nothing`, async function () {
        if (mode === 'stand-in' && process.platform !== 'linux') this.skip();
        const result = await fuzz({ mode, seed, calls: CALLS });
        const text = report(mode, seed, result);
        assert.deepStrictEqual([result.unexpected.length, result.failures.length], [0, 0], text);
        const made = Object.values(result.counts).reduce((a, b) => a + b, 0);
        assert.ok(made >= CALLS, `${made} outcomes counted for ${CALLS} calls`);
        assert.ok(result.counts.returned > CALLS / 20, `only ${result.counts.returned} calls returned: ${text}`);
      });
    }
  }
});

// Replays FIXED_SEED's calls 0-80 on the stand-in with --trace-driver dir; returns the path of the
// child's trace: the one that holds the fuzzer's labels (helper processes write their own).
function standInTrace(dir) {
  const { spawnSync } = require('child_process');
  const args = ['--mode', 'stand-in', '--seed', String(FIXED_SEED), '--only', '0-80', '--trace-driver', dir];
  const run = spawnSync(process.execPath, [require.resolve('./fuzz/run'), ...args], { encoding: 'utf8' });
  assert.strictEqual(run.status, 0, run.stderr);
  const name = fs.readdirSync(dir).find((f) => fs.readFileSync(path.join(dir, f), 'utf8').includes('\n#0: '));
  return path.join(dir, name);
}

// replay-trace.c built in dir against the stand-in, run on trace with env added: spawnSync's result.
function replayOnStandIn(dir, trace, env = {}) {
  const { spawnSync } = require('child_process');
  const { buildStandIn, buildAgainstDriver } = require('../support/stand-in-driver');
  const standIn = buildStandIn(path.join(dir, 'stand-in'));
  const source = path.join(__dirname, 'fuzz', 'replay-trace.c');
  const program = buildAgainstDriver(source, path.join(dir, 'replay-trace'), standIn);
  return spawnSync(program, [trace], { encoding: 'utf8', env: { ...process.env, LD_LIBRARY_PATH: standIn, ...env } });
}

// The trace of `lines` replayed on the stand-in with env added: its lines saying what it did with
// each call (skip, made, differs) and its end line.
function replayLines(lines, env = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-replay-'));
  try {
    const trace = path.join(dir, 'trace');
    fs.writeFileSync(trace, `${lines.join('\n')}\n`);
    const replay = replayOnStandIn(dir, trace, env);
    assert.strictEqual(replay.status, 0, `${replay.signal}\n${replay.stdout}`);
    return replay.stdout.split('\n').filter((l) => /^(skip|made|differs|end:) /.test(l));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("fuzzer's minimizer", function () {
  this.timeout(600000);
  // A stand-in run with a planted abort (CUDADRV_FUZZ_PLANT): its one failure, and the report.
  async function planted(plant, calls, parallel, backtrace = false) {
    process.env.CUDADRV_FUZZ_PLANT = plant;
    const write = process.stderr.write;
    const said = [];
    process.stderr.write = (chunk, ...rest) => said.push(String(chunk)) && write.call(process.stderr, chunk, ...rest);
    let result;
    try {
      result = await fuzz({ mode: 'stand-in', seed: FIXED_SEED, calls, parallel, backtrace });
    } finally {
      delete process.env.CUDADRV_FUZZ_PLANT;
      process.stderr.write = write;
    }
    const text = report('stand-in', FIXED_SEED, result);
    assert.strictEqual(result.failures.length, 1, text);
    const [{ died, last, sequence }] = result.failures;
    return { failure: { died, last, sequence }, text, said: said.join('') };
  }

  it('cuts a death that two calls cause (a planted abort) down to those two, trying candidates in parallel, and says each shorter list as found', async function () {
    if (process.platform !== 'linux') this.skip();
    const { failure, text, said } = await planted('37,211', 300, 4);
    assert.deepStrictEqual(failure, { died: 'SIGABRT', last: 211, sequence: [37, 211] }, text);
    const lists = said
      .split('\n')
      .filter((l) => l.startsWith(`fuzz stand-in, seed ${FIXED_SEED}: `) && l.includes(' calls repeat it'));
    assert.ok(lists.length >= 2, said);
    assert.strictEqual(lists.at(-1), `fuzz stand-in, seed ${FIXED_SEED}: 2 calls repeat it: --only 37,211`);
  });

  it('--only takes runs (J-K), and with --minimize cuts a replay that dies down, trying first without the calls that threw before the driver, saying the lists in runs', function () {
    if (process.platform !== 'linux') this.skip();
    const { spawnSync } = require('child_process');
    const script = require.resolve('./fuzz/run');
    const args = ['--mode', 'stand-in', '--seed', String(FIXED_SEED), '--parallel', '4', '--minimize'];
    // of the 23 calls, only all of them holds call 34 among the tails of 1, 4, 16...: a shorter
    // first list is the one without the calls that threw
    const run = spawnSync(process.execPath, [script, ...args, '--only', '30-40,200-211'], {
      encoding: 'utf8',
      env: { ...process.env, CUDADRV_FUZZ_PLANT: '34,211' },
    });
    assert.strictEqual(run.status, 1, run.stderr);
    assert.match(run.stdout, /^SIGABRT at call 211\n/, run.stdout);
    assert.match(run.stdout, /\nshortest: --only 34,211 \(died in 4 of 4 more replays\)\n$/, run.stdout);
    const lists = [...run.stderr.matchAll(/: (\d+) calls repeat it: --only ([-\d,]+)\n/g)];
    assert.ok(lists.length >= 2 && Number(lists[0][1]) < 16, run.stderr);
    const first = fromRuns(lists[0][2]);
    assert.ok(first.length === Number(lists[0][1]) && first.includes(34) && first.at(-1) === 211, run.stderr);
    for (const [only, run] of [
      ['1,9-3', '9-3'],
      ['0-,5', '0-'],
    ]) {
      const bad = spawnSync(process.execPath, [script, ...args, '--only', only], { encoding: 'utf8' });
      assert.ok(
        bad.stderr.includes(`RangeError: --only takes call indices and runs of them (I,J-K,...), not "${run}"`),
      );
    }
  });

  it('--minimize credits no list with a death that a second replay of it does not repeat', function () {
    if (process.platform !== 'linux') this.skip();
    const { spawnSync } = require('child_process');
    const once = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-plant-once-'));
    try {
      const script = require.resolve('./fuzz/run');
      const args = ['--mode', 'stand-in', '--seed', String(FIXED_SEED), '--parallel', '4', '--minimize'];
      // each list of calls dies the first time it is replayed only
      const env = { ...process.env, CUDADRV_FUZZ_PLANT: '34,211', CUDADRV_FUZZ_PLANT_ONCE: once };
      const run = spawnSync(process.execPath, [script, ...args, '--only', '30-40,200-211'], { encoding: 'utf8', env });
      assert.strictEqual(run.status, 1, run.stderr);
      assert.match(run.stdout, /^SIGABRT at call 211\n/, run.stdout);
      assert.match(run.stdout, /\nno shorter list dies the same way twice\n$/, run.stdout);
      assert.doesNotMatch(run.stderr, /calls repeat it/, run.stderr);
      // the first replay and at least one shorter list died once: the latter was not credited
      assert.ok(fs.readdirSync(once).length >= 2, run.stderr);
    } finally {
      fs.rmSync(once, { recursive: true, force: true });
    }
  });

  it('--trace-driver writes each driver call a replay made, its result, the handle it gave and the structures pool and memory calls read, beside the label of the call that made it', function () {
    if (process.platform !== 'linux') this.skip();
    const { spawnSync } = require('child_process');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-trace-'));
    try {
      const trace = fs.readFileSync(standInTrace(dir), 'utf8').split('\n').slice(0, -1);
      const labels = trace.filter((l) => l.startsWith('#')).map((l) => Number(/^#(\d+): /.exec(l)[1]));
      assert.deepStrictEqual(
        labels,
        Array.from({ length: 81 }, (_, i) => i),
      );
      // each result follows its call on the same thread, and the handles made are used after
      const open = new Map();
      const made = new Set();
      let used = 0;
      const dump = /^\d+ {3}\*a\d: /; // the structure a call in driver-trace.c's shown[] reads
      for (const line of trace.filter((l) => !l.startsWith('#') && !dump.test(l))) {
        const [, thread, way, name, rest] = /^(\d+) ([<>]) (cu\w+)(.*)$/.exec(line);
        if (way === '>') {
          assert.ok(!open.has(thread), line);
          open.set(thread, name);
          const first = /^\((\w+),/.exec(rest)?.[1];
          if (made.has(first)) used++;
        } else {
          assert.strictEqual(open.get(thread), name, line);
          open.delete(thread);
          const handle = / = 0 \*a0=(\w+)$/.exec(rest)?.[1];
          if (/Create$/.test(name) && handle) made.add(handle);
        }
      }
      assert.ok(made.size > 0 && used > 0, `${made.size} handles made, ${used} calls on them`);
      // the set-up's new MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 }): its CUmemPoolProps
      // (allocType PINNED and handleTypes POSIX_FILE_DESCRIPTOR, location DEVICE 0, ..., maxSize)
      const props = trace[trace.findIndex((l) => / > cuMemPoolCreate\(/.test(l)) + 1];
      assert.deepStrictEqual(props.split(': ')[1].split(' ').slice(0, 4), ['100000001', '1', '0', '10000'], props);
      const script = require.resolve('./fuzz/run');
      const args = ['--seed', String(FIXED_SEED), '--only', '0-80', '--trace-driver', dir];
      const refused = spawnSync(process.execPath, [script, '--mode', 'no-driver', ...args], { encoding: 'utf8' });
      assert.match(refused.stderr, /RangeError: --trace-driver traces a driver: use --mode driver or stand-in/);
      const whole = spawnSync(process.execPath, [script, '--mode', 'stand-in', '--trace-driver', dir], {
        encoding: 'utf8',
      });
      assert.match(whole.stderr, /RangeError: --trace-driver traces a replay: give --only or --from too/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("replay-trace.c makes the driver calls of a trace again from C: on the stand-in, every pool, context, green context and stream the trace made, with the trace's results", function () {
    if (process.platform !== 'linux') this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-replay-'));
    try {
      const tracePath = standInTrace(dir);
      const trace = fs.readFileSync(tracePath, 'utf8');
      const log = path.join(dir, 'calls.log');
      const replay = replayOnStandIn(dir, tracePath, { FAKE_CUDA_LOG: log, FAKE_CUDA_TRACE: '1' });
      assert.strictEqual(replay.status, 0, replay.stderr);
      assert.match(replay.stdout, /^end: \d+ calls made, \d+ left out$/m);
      const calls = fs.readFileSync(log, 'utf8');
      for (const call of [
        'cuMemPoolCreate',
        'cuMemPoolDestroy',
        'cuCtxCreate',
        'cuGreenCtxCreate',
        'cuStreamCreateWithPriority',
      ]) {
        const traced = trace.split(` > ${call}(`).length - 1;
        assert.ok(traced > 0, `the trace makes ${call}`);
        assert.strictEqual(calls.split(`call ${call}`).length - 1, traced, `${call}: made as often as in the trace`);
      }
      // (a synchronize may differ: the trace's context held the error of a launch not replayed)
      const made =
        /^differs: cu(MemPool\w*|Ctx(Create|Destroy)|GreenCtx(Create|Destroy)|Stream(CreateWithPriority|Destroy)) /m;
      assert.doesNotMatch(replay.stdout, made);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('replay-trace.c leaves out a call taking a handle that a call it left out made, wherever the handle lies (a descriptor among the mappings was passed on, and the stand-in faulted reading it)', function () {
    if (process.platform !== 'linux') this.skip();
    // the descriptor's call is left out (its resources lie in the traced process's heap); the
    // descriptor it gave lies below the stack's range, unmapped here
    const replay = replayLines([
      '7 > cuDevResourceGenerateDesc(7ffc00000400, 2000000, 1, 0, 0, 0)',
      '7 < cuDevResourceGenerateDesc = 0 *a0=7e0000001000',
      '7 > cuGreenCtxCreate(7ffc00000408, 7e0000001000, 0, 1, 0, 0)',
      '7 < cuGreenCtxCreate = 0 *a0=3000000',
      '7 > cuGreenCtxDestroy(3000000, 0, 0, 0, 0, 0)',
      '7 < cuGreenCtxDestroy = 0',
    ]);
    assert.deepStrictEqual(replay, [
      'skip 7 < cuDevResourceGenerateDesc = 0 *a0=7e0000001000',
      'skip 7 < cuGreenCtxCreate = 0 *a0=3000000',
      'skip 7 < cuGreenCtxDestroy = 0',
      'end: 0 calls made, 3 left out',
    ]);
  });

  it("replay-trace.c leaves out a call taking a handle, or an address in a range, that a cut's left-out line says a call made (at addresses it would otherwise pass on), but not a structure the trace dumped at such an address", function () {
    if (process.platform !== 'linux') this.skip();
    const lines = [
      // a pool at an address neither in a heap nor in a stack (it was passed on as a value), an
      // allocation in a stack's range (an address inside it was passed on as a zeroed buffer)
      '7 - cuMemPoolCreate(7ffc00000400) *a0=7e0000002000',
      '7 - cuMemAlloc(7ffc00000408) *a0=7f0000200000',
      '7 > cuMemPoolDestroy(7e0000002000, 0, 0, 0, 0, 0)',
      '7 < cuMemPoolDestroy = 0',
      '7 > cuMemFree(7f0000200100, 0, 0, 0, 0, 0)',
      '7 < cuMemFree = 0',
      // a module unloaded, whose heap address then holds the SM resources a descriptor is made
      // of (1 in 5 stand-in traces had it so, and the green context was left out)
      '7 - cuModuleLoadData(7ffc00000410) *a0=3000000',
      '7 > cuDevResourceGenerateDesc(7ffc00000420, 3000000, 1, 0, 0, 0)',
      '7   *a1: 454b414600000001 53524d53 0 0 0 0 0 0 0 0 0 0 800000008 2 0 0 0 0',
      '7 < cuDevResourceGenerateDesc = 0 *a0=7e0000004000',
    ];
    assert.deepStrictEqual(replayLines(lines, { FAKE_CUDA_FAULT: 'cuMemPoolDestroy' }), [
      'skip 7 < cuMemPoolDestroy = 0',
      'skip 7 < cuMemFree = 0',
      'made cuDevResourceGenerateDesc, line 8',
      'end: 1 calls made, 2 left out',
    ]);
  });

  it("cut-trace.js cuts a trace whose replay faults in its last call down to the calls the fault needs: the stand-in faulting in cuMemPoolDestroy, the pool's making, export and import", function () {
    if (process.platform !== 'linux') this.skip();
    const { spawnSync } = require('child_process');
    const { buildStandIn } = require('../support/stand-in-driver');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-cut-trace-'));
    try {
      // the trace up to its first cuMemPoolDestroy, which never returns: the set-up's pool
      // imported from its own export; that pool moved to an address neither in a heap nor in a
      // stack, as it lay in CI's run of 7fd4f2c (a cut without its making passed it on then)
      const lines = fs.readFileSync(standInTrace(dir), 'utf8').split('\n');
      const upTo = lines.findIndex((l) => / > cuMemPoolDestroy\(/.test(l));
      const pool = / > cuMemPoolDestroy\((\w+),/.exec(lines[upTo])[1];
      const moved = lines
        .slice(0, upTo + 1)
        .join('\n')
        .replaceAll(new RegExp(`\\b${pool}\\b`, 'g'), '7e0000002000');
      assert.ok(moved.includes('*a0=7e0000002000'), 'the trace made the pool it destroys');
      const trace = path.join(dir, 'faulting.trace');
      fs.writeFileSync(trace, `${moved}\n`);
      const standIn = buildStandIn(path.join(dir, 'stand-in'));
      const args = [require.resolve('./fuzz/cut-trace'), trace, '--driver', standIn, '--parallel', '2'];
      const env = { ...process.env, FAKE_CUDA_FAULT: 'cuMemPoolDestroy' };
      const run = spawnSync(process.execPath, args, { encoding: 'utf8', env });
      assert.strictEqual(run.status, 0, run.stdout + run.stderr);
      const fault = /^\S+: (fault: signal 11 at libcuda\.so\.1\+0x[0-9a-f]+), in the last of (\d+) calls made$/m.exec(
        run.stdout,
      );
      assert.ok(fault && Number(fault[2]) > 100, run.stdout);
      assert.match(run.stdout, /: 4 calls, the last never returned in 4 of 4 more replays$/m);
      const same = run.stdout.split('\n').filter((l) => l === `  ${fault[1]}`);
      assert.strictEqual(same.length, 4, run.stdout); // the same fault each time
      const cut = fs.readFileSync(`${trace}.cut`, 'utf8');
      const calls = [...cut.matchAll(/^\d+ > (cu\w+)\((\w+), (\w+)/gm)];
      assert.deepStrictEqual(
        calls.map((c) => c[1]),
        [
          'cuMemPoolCreate',
          'cuMemPoolExportToShareableHandle',
          'cuMemPoolImportFromShareableHandle',
          'cuMemPoolDestroy',
        ],
        cut,
      );
      // the calls left out stand as lines saying what they made, in the trace's order
      const leftOut = cut.split('\n').filter((l) => l && !/^\d+ (>|<| {2}\*a\d)|^#/.test(l));
      assert.ok(leftOut.length > 100, cut);
      for (const l of leftOut) assert.match(l, /^\d+ - cu\w+\(\w+\) \*a0=\w+$/, cut);
      // each call acts on what the one before made: the pool, its descriptor, the imported pool
      const made = [...cut.matchAll(/ < cu\w+ = 0 \*a0=(\w+)$/gm)].map((m) => m[1]);
      assert.strictEqual(calls[1][3], made[0], cut);
      assert.strictEqual(calls[2][3], (BigInt(`0x${made[1]}`) & 0xffffffffn).toString(16), cut); // an int
      assert.strictEqual(calls[3][2], made[2], cut);
      // and the cut replays to the same fault
      assert.ok(run.stdout.trimEnd().endsWith(fault[1]), run.stdout);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a death before the first call with the chunk that replays it, not minimized', async function () {
    if (process.platform !== 'linux') this.skip();
    const { failure, text } = await planted('set-up', 10, 1);
    assert.deepStrictEqual(failure, { died: 'SIGABRT', last: null, sequence: null }, text);
    assert.match(
      text,
      new RegExp(`SIGABRT \\(seed ${FIXED_SEED}, repeat with: .* --seed ${FIXED_SEED} --from 0 --to 10\\)`),
    );
  });

  it('with --backtrace, a death prints the native stack it happened on (fault-report.c, preloaded)', async function () {
    if (process.platform !== 'linux') this.skip();
    const { failure, text } = await planted('set-up', 10, 1, true);
    assert.deepStrictEqual(failure, { died: 'SIGABRT', last: null, sequence: null }, text);
    // the report's excerpt starts at the stack: the handler's frame, then libc's abort() the child called
    assert.match(text, /stderr: \*\*\* fault-report: SIGABRT at address 0x[0-9a-f]+ in pid \d+; native stack/, text);
    assert.match(text, /\n +\S*libc\.so\.6\(abort\+0x[0-9a-f]+\)/, text);
    // then the registers, and the words at those that hold an address (the stack pointer does)
    if (process.arch === 'x64') {
      assert.match(text, /\n +rip [0-9a-f]{16} {2}rsp ([0-9a-f]{16}) {2}rbp [0-9a-f]{16} {2}rax [0-9a-f]{16}\n/, text);
      assert.match(text, /\n +at rsp: [0-9a-f]{16} [0-9a-f]{16} [0-9a-f]{16} [0-9a-f]{16}\n/, text);
    }
  });
});
