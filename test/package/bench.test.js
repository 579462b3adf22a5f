'use strict';
// The benchmark suite's machinery (bench/run.js, bench/floor.c): what can be checked without a GPU.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const bench = { ...require('../../bench/run'), ...require('../../bench/report') };
const { hasGpu } = require('../support/gpu');

const RUN = path.join(__dirname, '..', '..', 'bench', 'run.js');
const FLOOR = path.join(__dirname, '..', '..', 'build', 'bench', 'floor');

function runBench(args) {
  return spawnSync(process.execPath, [RUN, ...args], { encoding: 'utf8', timeout: 120000 });
}

function stats(median, extra = {}) {
  return { median, ...extra };
}

describe('bench/run.js', function () {
  this.timeout(120000);

  it('--dry-run builds floor.c, checks it against the suite, prints the table and writes JSON', function () {
    const out = path.join(os.tmpdir(), `cudadrv-bench-${process.pid}.json`);
    const run = runBench(['--dry-run', '--out', out]);
    assert.strictEqual(run.stderr, '');
    assert.strictEqual(run.status, 0, run.stdout);
    const lines = run.stdout.split('\n');
    assert.match(lines[0], /^\| operation +\| cudadrv +\| C +\| ratio +\| target +\| ok +\|$/);
    const rows = lines.filter((line) => line.startsWith('| ')).slice(1);
    assert.strictEqual(rows.length, bench.OPERATIONS.length);
    assert.match(
      rows[0],
      /^\| empty kernel launch, callable +\| 2\.\d\d µs ±\d+% +\| 2\.\d\d µs ±\d+% +\| 1\.\d\d× +\| ≤ 1\.15× +\| yes +\|$/,
    );
    assert.match(run.stdout, /\nevery target met \(\d+ of \d+\)\n$/);
    const json = JSON.parse(fs.readFileSync(out, 'utf8'));
    fs.unlinkSync(out);
    assert.strictEqual(json.dryRun, true);
    assert.deepStrictEqual(
      json.results.map((r) => r.id),
      bench.OPERATIONS.map((op) => op.id),
    );
    for (const r of json.results) {
      assert.ok(['ok', 'info'].includes(r.status), `${r.id}: ${r.status}`);
      assert.strictEqual(r.cudadrv.n, r.cudadrv.samples.length);
    }
    assert.deepStrictEqual(json.missed, []);
  });

  it('floor.c refuses an operation it does not know before touching the driver', function () {
    const run = spawnSync(
      FLOOR,
      ['--cuda', '/nowhere', '--kernels', 'k.cu', '--compile', 'c.cu', 'launch.empty:1:2:3', 'launch.nothing:1:2:3'],
      { encoding: 'utf8' },
    );
    assert.strictEqual(run.status, 1);
    assert.strictEqual(run.stdout, '');
    assert.strictEqual(
      run.stderr,
      'floor: bad operation launch.nothing:1:2:3: want OP:WARMUP:REPS:BATCH with OP from --list\n',
    );
  });

  it('without a GPU, exits 1 with one line that says so', function () {
    if (hasGpu) this.skip(); // there, it would run the whole suite
    const run = runBench([]);
    assert.strictEqual(run.status, 1);
    assert.strictEqual(run.stdout, '');
    assert.match(
      run.stderr,
      /^bench: no CUDA device to measure \(.+\); run it on a machine with an NVIDIA GPU, or try --dry-run\n$/,
    );
  });

  it('an unknown argument exits 1 with the usage', function () {
    const run = runBench(['--fast']);
    assert.strictEqual(run.status, 1);
    assert.match(
      run.stderr,
      /^bench: unknown argument --fast; usage: node bench\/run\.js \[--out FILE\] \[--only REGEX\] \[--dry-run\]\n$/,
    );
  });

  it('--only keeps the lines a target refers to', function () {
    assert.deepStrictEqual(
      bench.select('^graph\\.launch').map((op) => op.id),
      ['launch.prepared', 'graph.launch'],
    );
    assert.throws(() => bench.select('nothing-like-this'), /matches no operation/);
  });

  it('summarize: median, 10th and 90th percentiles, spread', function () {
    const s = bench.summarize([5, 1, 4, 2, 3, 6, 7, 8, 9, 10, 11]);
    assert.strictEqual(s.median, 6);
    assert.strictEqual(s.p10, 2);
    assert.strictEqual(s.p90, 10);
    assert.strictEqual(s.spread, (10 - 2) / 2 / 6);
    assert.strictEqual(s.n, 11);
    assert.strictEqual(bench.summarize([]), null);
  });

  it('evaluate: every kind of target, met, missed, and not measurable', function () {
    const op = (target) => ({ target });
    const ratio = { kind: 'ratio', max: 1.1 };
    assert.deepStrictEqual(bench.evaluate(op(ratio), stats(2.2), stats(2), {}), { ratio: 1.1, status: 'ok' });
    assert.strictEqual(bench.evaluate(op(ratio), stats(2.3), stats(2), {}).status, 'missed');
    assert.strictEqual(bench.evaluate(op(ratio), stats(2.3), null, {}).status, 'n/a');
    assert.strictEqual(bench.evaluate(op(ratio), null, stats(2), {}).status, 'n/a');
    const bandwidth = { kind: 'bandwidth', min: 0.95 };
    assert.strictEqual(bench.evaluate(op(bandwidth), stats(19), stats(20), {}).status, 'ok');
    assert.strictEqual(bench.evaluate(op(bandwidth), stats(18.9), stats(20), {}).status, 'missed');
    const absolute = { kind: 'absolute', max: 5 };
    assert.deepStrictEqual(bench.evaluate(op(absolute), stats(5), undefined, {}), { ratio: null, status: 'ok' });
    assert.strictEqual(bench.evaluate(op(absolute), stats(5.01), stats(1), {}).status, 'missed');
    const delta = { kind: 'delta', max: 0.5 };
    assert.strictEqual(bench.evaluate(op(delta), stats(2.5), stats(2.1), {}).status, 'ok');
    assert.strictEqual(bench.evaluate(op(delta), stats(2.7), stats(2.1), {}).status, 'missed');
    const of = { kind: 'of', op: 'launch.prepared', max: 0.2 };
    const others = { 'launch.prepared': { js: stats(2) } };
    assert.strictEqual(bench.evaluate(op(of), stats(0.4), stats(0.1), others).status, 'ok');
    assert.strictEqual(bench.evaluate(op(of), stats(0.41), stats(0.1), others).status, 'missed');
    assert.strictEqual(bench.evaluate(op(of), stats(0.1), null, {}).status, 'n/a');
    assert.deepStrictEqual(bench.evaluate(op(null), stats(3), stats(2), {}), { ratio: 1.5, status: 'info' });
  });

  it('a line whose side failed says why, and the run fails', function () {
    const ops = bench.select('^alloc\\.async$|^pool\\.alloc$');
    const results = bench.assemble(
      ops,
      {
        'alloc.async': { error: 'TypeError: cuda.memAllocAsync is not a function' },
        'pool.alloc': { samples: [1, 1.2, 1.1] },
      },
      { 'alloc.async': { samples: [2, 2, 2] } },
    );
    assert.deepStrictEqual(
      results.map((r) => r.status),
      ['n/a', 'ok'],
    );
    assert.deepStrictEqual(
      results[0].notes.filter((n) => !n.includes('take turns')),
      ['cudadrv: TypeError: cuda.memAllocAsync is not a function'],
    );
    assert.match(
      bench.formatTable(results),
      /\| memAllocAsync \+ free, 1 MiB +\| n\/a +\| 2\.00 µs ±0% +\| — +\| ≤ 1\.1× +\| n\/a \|/,
    );
  });

  it('launch lines take turns with C: a C round and a round of each line sharing its C operation, who goes first alternating', async function () {
    const byId = Object.fromEntries(bench.OPERATIONS.map((op) => [op.id, op]));
    for (const id of [
      'launch.callable',
      'launch.prepared',
      'launch.prepared4',
      'launch.sync',
      'launch.await',
      'copy.htod.small',
      'copy.dtoh.small',
      'copy.dtoh.pageable',
      'alloc',
      'alloc.async',
    ]) {
      assert.ok(byId[id].rounds > 1, id);
    }
    assert.ok(byId['launch.prepared'].spec[2] <= 256, 'a batch small enough that the launch queue never fills');
    const calls = [];
    const op = (id, fail = false) => ({
      id,
      unit: 'us',
      c: 'launch.empty',
      rounds: 3,
      spec: [1, 2, 4],
      js: (env) => {
        env.note(`${id} set up`);
        if (fail) throw new TypeError('no kernel');
        return { step: () => calls.push(id), after: () => calls.push(`${id} synchronized`) };
      },
    });
    const env = {
      note(text) {
        this.notes.push(text);
      },
    };
    const cSamples = [
      [1000, 2000],
      [3000, 4000],
      [5000, 6000],
    ];
    const cRound = async (spec) => {
      calls.push(`C ${spec.join(':')}`);
      return { samples: cSamples[calls.filter((c) => c.startsWith('C ')).length - 1] };
    };
    const { jsRuns, cRun } = await bench.alternate([op('a'), op('b'), op('bad', true)], env, cRound);
    const batch = (id) => [id, id, id, id, `${id} synchronized`];
    const lines = [...[1, 2, 3].flatMap(() => batch('a')), ...[1, 2, 3].flatMap(() => batch('b'))];
    assert.deepStrictEqual(calls, ['C 1:2:4', ...lines, ...lines, 'C 1:2:4', 'C 1:2:4', ...lines]);
    assert.deepStrictEqual(cRun, { samples: [1, 2, 3, 4, 5, 6] });
    assert.strictEqual(jsRuns.a.samples.length, 6);
    assert.ok(jsRuns.b.samples.every((us) => us > 0));
    assert.deepStrictEqual(jsRuns.a.notes, ['a set up']);
    assert.deepStrictEqual(jsRuns.bad, { error: 'TypeError: no kernel', notes: ['bad set up'] });
    // C failing: its error, no more C rounds, the cudadrv rounds all the same
    calls.length = 0;
    const failed = await bench.alternate([op('a')], env, async () => {
      calls.push('C');
      return { error: 'cuLaunchKernel failed: invalid argument' };
    });
    assert.deepStrictEqual(failed.cRun, { error: 'cuLaunchKernel failed: invalid argument' });
    assert.deepStrictEqual(
      calls.filter((c) => c === 'C'),
      ['C'],
    );
    assert.strictEqual(failed.jsRuns.a.samples.length, 6);
  });

  it("FloorServer: floor.c --serve's first line, one result line per request, and why it ended", async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-floor-'));
    const stub = path.join(dir, 'floor');
    // a stand-in for floor.c --serve: echoes what it was asked; "stop" ends it with a message
    fs.writeFileSync(
      stub,
      `#!${process.execPath}
      const args = process.argv.slice(2);
      console.log(JSON.stringify({ device: 'stub', args }));
      require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
        if (line.startsWith('stop:')) { console.error('floor: stopped as asked'); process.exit(1); }
        console.log(JSON.stringify({ samples: line.split(':').slice(1).map(Number) }));
      });`,
      { mode: 0o755 },
    );
    try {
      const server = new bench.FloorServer(stub, '/cuda');
      const started = await server.started();
      assert.strictEqual(started.device, 'stub');
      assert.deepStrictEqual(started.args.slice(0, 3), ['--serve', '--cuda', '/cuda']);
      const [first, second] = await Promise.all([
        server.request('launch.empty', [1, 10, 128]),
        server.request('launch.args4', [2, 3, 4]),
      ]);
      assert.deepStrictEqual([first, second], [{ samples: [1, 10, 128] }, { samples: [2, 3, 4] }]);
      assert.deepStrictEqual(await server.request('stop', [1, 1, 1]), {
        error: 'floor.c --serve ended: floor: stopped as asked',
      });
      assert.deepStrictEqual(await server.request('launch.empty', [1, 1, 1]), {
        error: 'floor.c --serve ended: floor: stopped as asked',
      });
      server.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('units: nanoseconds per step to µs, ms, GB/s, and per kernel of a graph', function () {
    const byId = Object.fromEntries(bench.OPERATIONS.map((op) => [op.id, op]));
    assert.strictEqual(bench.inUnit(byId['launch.prepared'], 2500), 2.5);
    assert.strictEqual(bench.inUnit(byId['compile.cold'], 3e8), 300);
    assert.strictEqual(bench.inUnit(byId['copy.htod.pinned'], (256 * 2 ** 20) / 25), 25);
    assert.strictEqual(bench.inUnit(byId['graph.launch'], 20000), 0.2);
  });
});

describe('bench/call-times.js', function () {
  this.timeout(120000);

  it("--stand-in: the timer in front of the driver counts each line's calls, on both sides, warm-ups left out", function () {
    const script = path.join(__dirname, '..', '..', 'bench', 'call-times.js');
    const run = spawnSync(
      process.execPath,
      [script, '--stand-in', '--rounds', '1', '--only', '^(await\\.complete|alloc)$', '--json'],
      { encoding: 'utf8', timeout: 110000 },
    );
    assert.strictEqual(run.status, 0, run.stderr + run.stdout);
    const rows = Object.fromEntries(JSON.parse(run.stdout).map((r) => [r.id, r]));
    assert.deepStrictEqual(Object.keys(rows), ['await.complete', 'alloc']);
    // one cuStreamQuery a step each; cudadrv's allocation also asks which context is current
    const calls = (id) => [rows[id].js.calls, rows[id].c.calls].map((n) => Math.round(n * 100) / 100);
    assert.deepStrictEqual(calls('await.complete'), [1, 1]);
    assert.deepStrictEqual(calls('alloc'), [3, 2]);
    for (const row of Object.values(rows)) {
      for (const side of [row.js, row.c]) {
        // the time inside the timed calls, the timer's readings included (the stand-in's calls
        // take about as long as a reading, so that what is left of them may come out below 0)
        const timed = side.inDriverNs + side.calls * side.clockNs;
        assert.ok(timed > 0 && timed < side.stepNs, `${row.id}: ${JSON.stringify(side)}`);
        assert.ok(Number.isFinite(side.ownNs), `${row.id}: ${JSON.stringify(side)}`);
      }
    }
  });

  it('with no line it can time, exits 1 naming those it can', function () {
    const script = path.join(__dirname, '..', '..', 'bench', 'call-times.js');
    const run = spawnSync(process.execPath, [script, '--stand-in', '--only', '^compile\\.cold$'], { encoding: 'utf8' });
    assert.strictEqual(run.status, 1);
    assert.match(run.stderr, /^call-times: no line to time: those with their calls known are await\.complete, /);
  });
});
