'use strict';
// Green contexts through the stand-in driver: a device's SMs split into groups, green contexts
// made of them working as contexts (current, streams, memory, detach), events recorded and waited
// across them, bad input refused, an old driver's missing calls named, what was made in green
// contexts collected around their detach(), and the stand-in's own count of primary retains from
// two threads.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { childRunner } = require('../support/graph-child');
const { buildAgainstDriver } = require('../support/stand-in-driver');
const { runEventWaits } = require('../support/event-waits-child');

describe('green contexts through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run, dir, standIn } = childRunner('cudadrv-green-');

  it('SMs split into groups; green contexts on them are Contexts; events are recorded and waited across them; detach() ends their use, and each is destroyed once what was made in it is gone', function () {
    run(`
      const dev = new cuda.Device(0);
      const all = dev.smResource();
      assert.deepStrictEqual({ ...all }, { smCount: 132, minSmPartitionSize: 8, smCoscheduledAlignment: 2 });
      const minCount = 9 + Math.floor(Math.random() * 40); // rounded up to a multiple of 2
      const size = minCount + (minCount % 2);
      const { groups, remaining } = all.split({ groups: 2, minCount });
      assert.deepStrictEqual(groups.map((g) => g.smCount), [size, size]);
      assert.strictEqual(remaining.smCount, 132 - 2 * size);
      assert.ok(groups.every((g) => g instanceof cuda.SmResource));
      const many = all.split({ minCount: 8, groups: 256 });
      assert.strictEqual(many.groups.length, 16, '132 SMs hold 16 groups of 8');
      const [a, b] = [dev.makeGreenContext(groups[0]), dev.makeGreenContext([groups[1]])];
      assert.ok(a instanceof cuda.GreenContext && a instanceof cuda.Context);
      assert.strictEqual(a.smResource().smCount, size);
      assert.strictEqual(cuda.Context.getCurrent(), ctx, 'not made current');
      a.push();
      assert.strictEqual(cuda.Context.getCurrent(), a);
      let stream = new cuda.Stream();
      assert.strictEqual(stream.context, a);
      const memory = cuda.memAlloc(256);
      cuda.memsetD8Async(memory, 7, 256, stream);
      await stream.synchronize();
      assert.deepStrictEqual(cuda.fromDevice(memory, 256, 'uint8'), new Uint8Array(256).fill(7));
      let event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      assert.strictEqual(a.recordEvent(event), a);
      cuda.Context.pop();
      // a stream of b made without making b current: its work goes to b
      let own = b.makeStream();
      assert.strictEqual(own.context, b);
      assert.strictEqual(cuda.Context.getCurrent(), ctx);
      assert.strictEqual(own.flags, cuda.StreamFlags.NON_BLOCKING);
      assert.throws(() => b.makeStream(0), { api: 'cuGreenCtxStreamCreate', code: 1 });
      assert.throws(() => b.makeStream(1, 0.5), { name: 'RangeError', message: 'priority must be an integer from -2147483648 to 2147483647, not 0.5' });
      assert.strictEqual(b.waitEvent(event), b);
      a.detach();
      b.detach();
      const lines = () => log().filter((l) => l.startsWith('green') || l.startsWith('sm split'));
      const made = [
        'sm split ' + size + ' of 132 from 0: 2 groups',
        'sm split 8 of 132 from 0: 16 groups',
        'green create sms=0+' + size,
        'green create sms=' + size + '+' + size,
        'green record sms=0+' + size + ' event1',
        'green stream sms=' + size + '+' + size,
        'green wait sms=' + size + '+' + size + ' event1',
      ];
      assert.deepStrictEqual(lines(), made, 'each waits for what was made in it');
      const detached = { name: 'LogicError', message: 'this Context has been detached; make or retain a new one' };
      assert.throws(() => a.recordEvent(event), detached);
      assert.throws(() => a.smResource(), detached);
      assert.throws(() => stream.synchronizeSync(), { name: 'LogicError' });
      own.destroy();
      stream.destroy();
      memory.free();
      event.destroy();
      [own, stream, event] = [];
      for (let i = 0; i < 3; i++) { global.gc(); await new Promise(setImmediate); }
      assert.deepStrictEqual(lines().slice(made.length).sort(), ['green destroy sms=' + size + '+' + size, 'green destroy sms=0+' + size].sort());
    `);
  });

  it('after detach(), what was made in a green context is refused and still released through it (the driver keeps it, save the streams it refuses); the green context goes with the last of their objects', function () {
    run(
      `
      const { liveCounts } = require(${JSON.stringify(path.join(__dirname, '..', 'support', 'stand-in-driver'))});
      const counts = () => liveCounts(process.env.FAKE_CUDA_COUNTS);
      const kinds = ['streams', 'events', 'device_memory', 'graph_execs'];
      const live = () => Object.fromEntries(kinds.map((k) => [k, counts()[k]]));
      const before = live();
      const destroyed = () => log().filter((l) => l.startsWith('green destroy')).length;
      const dev = new cuda.Device(0);
      let green = dev.makeGreenContext(dev.smResource().split({ groups: 2, minCount: 8 }).groups[0]);
      green.push();
      const held = [new cuda.Stream(), new cuda.Stream()];
      const memory = cuda.memAlloc(64);
      let event = new cuda.Event();
      cuda.Context.pop();
      let made = green.makeStream(); // cuGreenCtxStreamCreate
      held[0].destroy();
      assert.deepStrictEqual(live(), { ...before, streams: before.streams + 2, events: before.events + 1, device_memory: before.device_memory + 1 });
      green.detach();
      green = null; // the GreenContext object holds nothing after detach()
      global.gc();
      assert.strictEqual(destroyed(), 0, 'not while what was made in it lives');
      const gone = (kind) => ({ name: 'LogicError', message: 'the Context of this ' + kind + ' has been detached, and the ' + kind + ' with it; make it again in a live context' });
      assert.throws(() => held[1].synchronizeSync(), gone('Stream'));
      assert.throws(() => made.isDone(), gone('Stream'));
      assert.throws(() => event.query(), gone('Event'));
      memory.free(); // freed, not left to the process
      event.destroy();
      held[1].destroy();
      made.destroy();
      assert.deepStrictEqual(live(), before, 'nothing of it left in the driver');
      assert.strictEqual(destroyed(), 0, 'not while their objects live');
      [held.length, event, made] = [0];
      for (let i = 0; i < 3; i++) { global.gc(); await new Promise(setImmediate); }
      assert.strictEqual(destroyed(), 1, 'with the last of them');
    `,
      { FAKE_CUDA_COUNTS: path.join(dir(), 'counts'), FAKE_CUDA_STALE_ABORT: '1' },
    );
  });

  it('a wait for an interprocess event of another context, which driver 580 crashes on, is refused saying what to do; waits in its own context work (in a child process: the stand-in aborts where the driver crashes)', function () {
    runEventWaits({ LD_LIBRARY_PATH: standIn.dir }, false);
  });

  it('bad input is refused with what to pass; the driver refuses groups it did not make', function () {
    run(`
      const dev = new cuda.Device(0);
      const all = dev.smResource();
      const { groups } = all.split({ groups: 3, minCount: 16 });
      for (const [call, name, message] of [
        [() => all.split({ groups: 0 }), 'RangeError', 'groups must be an integer from 1 to 256, not 0'],
        [() => all.split({ minCount: -1 }), 'RangeError', 'minCount must be an integer from 1 to 4294967295, not -1'],
        [() => dev.makeGreenContext('x'), 'TypeError', 'resources must be an SmResource or an array of them (from device.smResource().split()), not the string "x"'],
        [() => dev.makeGreenContext([{}]), 'TypeError', 'resources must be an SmResource or an array of them (from device.smResource().split())'],
        [() => dev.makeGreenContext([]), 'RangeError', 'give 1 to 256 SmResource'],
        [() => new cuda.SmResource(), 'TypeError', /^get an SmResource from device.smResource\\(\\)/],
      ]) assert.throws(call, { name, message });
      // more SMs than the device has, up to the largest count (the stand-in divided by 0 there)
      for (const minCount of [133, 2 ** 31, 2 ** 32 - 1]) {
        const { groups: none, remaining } = all.split({ groups: 2, minCount });
        assert.deepStrictEqual([none.length, remaining.smCount], [0, 132], String(minCount));
      }
      const green = dev.makeGreenContext(groups.slice(0, 2)); // two groups side by side
      assert.strictEqual(green.smResource().smCount, 32);
      assert.throws(() => green.recordEvent({}), { name: 'TypeError', message: /^event must be an Event/ });
      // an event of another context is recorded by its own context only; waited for by any
      const elsewhere = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      assert.throws(() => green.recordEvent(elsewhere), { name: 'LogicError', message: /^recordEvent\\(event\\): the event was made in another context; make it while this green context is current/ });
      assert.strictEqual(green.waitEvent(elsewhere), green);
      assert.throws(() => dev.makeGreenContext([groups[2], groups[0]]), { api: 'cuDevResourceGenerateDesc', code: 915 });
      // the binding checks what reaches it: a context that is not green, objects that are not resources
      const binding = require(${JSON.stringify(require.resolve('../../lib/internal/binding'))});
      assert.throws(() => binding.greenCtxEvent(ctx, new cuda.Event(), false), { name: 'TypeError', message: 'expected a green context (device.makeGreenContext())' });
      assert.throws(() => binding.greenCtxEvent(green, elsewhere, false), { api: 'cuGreenCtxRecordEvent', code: 400 });
      assert.throws(() => binding.smResourceSplit({}, 1, 1), { name: 'TypeError', message: 'expected a SmResource' });
      assert.throws(() => binding.greenCtxCreate({}, 0, [ctx]), { name: 'TypeError', message: 'expected a SmResource' });
      green.detach();
    `);
  });

  it('on a driver for CUDA 12.3, green contexts are a RuntimeError naming the call and CUDA 12.4', function () {
    run(
      `
      assert.throws(() => new cuda.Device(0).smResource(), {
        name: 'RuntimeError',
        message: /^cuDeviceGetDevResource is not provided by the installed CUDA driver \\(version 12\\.3\\); it needs a driver for CUDA 12\\.4 or newer/,
      });
    `,
      { FAKE_CUDA_DRIVER_VERSION: '12030' },
    );
  });

  it('green contexts detached with streams and memory in them dropped: the collector takes those, and nothing is left', function () {
    const counts = path.join(dir(), 'counts');
    run(
      `
      const live = (name) => Number(new RegExp('^' + name + ' +(\\\\d+)', 'm').exec(fs.readFileSync(${JSON.stringify(counts)}, 'utf8'))[1]);
      const before = ['contexts', 'primary', 'streams', 'device_memory'].map(live);
      const [group] = new cuda.Device(0).smResource().split({ minCount: 8 }).groups;
      (() => {
        for (let i = 0; i < 200; i++) {
          const green = new cuda.Device(0).makeGreenContext(group);
          green.push();
          const stream = new cuda.Stream();
          cuda.memsetD8Async(cuda.memAlloc(64), 1, 64, stream);
          cuda.Context.pop();
          if (i % 2) green.detach(); // as a made context, a green one lives until detach()
          else setImmediate(() => green.detach()); // with its stream and memory perhaps collected first
          if (i % 50 === 0) global.gc();
        }
      })();
      for (let i = 0; i < 4; i++) { global.gc(); await new Promise(setImmediate); }
      // the reaper frees the memory, and a context detached meanwhile goes with its last release:
      // wait for it (it lags on a busy machine)
      require(${JSON.stringify(require.resolve('../../lib/internal/reclaim'))}).collectGarbage();
      assert.deepStrictEqual(['contexts', 'primary', 'streams', 'device_memory'].map(live), before);
      assert.strictEqual(log().filter((l) => l.startsWith('green destroy')).length, 200);
    `,
      { FAKE_CUDA_COUNTS: counts },
    );
  });

  it("the stand-in counts the primary context retains of two threads at once (green contexts hold one; the reaper destroys them while the main thread makes more), keeps the virtual memory mappings of both, and the advice on each one's managed memory (not a freed allocation's at its address)", function () {
    const source = path.join(__dirname, '..', 'support', 'fixtures', 'stand-in-threads.c');
    const program = buildAgainstDriver(source, path.join(dir(), 'threads'), standIn.dir);
    const ran = spawnSync(program, { encoding: 'utf8', env: { ...process.env, LD_LIBRARY_PATH: standIn.dir } });
    // a lost count: "active 1"; a lost mapping: "cuMemUnmap: 1"; advice lost or stale: "preferred location: 999"
    assert.strictEqual(ran.stdout + ran.stderr, 'active 0\n');
  });
});
