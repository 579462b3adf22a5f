'use strict';
// Launch attributes (cuLaunchKernelEx) beyond clusters and cooperative launches, through the
// stand-in driver: what a call's and a prepared call's options ask for reaches the driver exactly
// (the stand-in logs each attribute's id and value), bad values are refused before it, and an
// attribute newer than the driver is a RuntimeError naming the version it needs.
const assert = require('assert');
const path = require('path');
const { childRunner } = require('../support/graph-child');

describe('launch attributes through a stand-in driver (no GPU needed)', function () {
  this.timeout(60000);
  const { run, dir } = childRunner('cudadrv-launch-attrs-');

  // The stand-in's attribute ids (CU_LAUNCH_ATTRIBUTE_*) and the launches it logged.
  const PRELUDE = `
    const ID = { cooperative: 2, cluster: 4, scheduling: 5, serialization: 6, programmatic: 7, priority: 8,
      syncDomain: 10, preferredCluster: 11, completion: 12, carveout: 14 };
    const attrsOf = () => log().filter((l) => /^launch(ex)? /.test(l)).map((l) => (l.match(/ attrs=(\\S*)/) ?? [null, null])[1]);
    const k = new cuda.Module(MODULE).getFunction('empty');
  `;

  it("each attribute of a call's options reaches cuLaunchKernelEx with its value; a call with none takes cuLaunchKernel", function () {
    run(`${PRELUDE}
      const stream = new cuda.Stream();
      const priority = -Math.floor(Math.random() * 5);
      const carveout = Math.floor(Math.random() * 101);
      const programmatic = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      const completion = new cuda.Event(cuda.EventFlags.DISABLE_TIMING | cuda.EventFlags.BLOCKING_SYNC);
      k({ block: 32, grid: 8, stream, priority });
      k({ block: 32, grid: [8, 4], cluster: [2, 2], preferredCluster: [4, 4], clusterSchedulingPolicy: 'spread' });
      k({ block: 32, clusterSchedulingPolicy: 'load-balancing', memSyncDomain: 'remote', sharedMemoryCarveout: carveout });
      k({ block: 32, memSyncDomain: 'default', clusterSchedulingPolicy: 'default' });
      k({ block: 32, stream, programmaticStreamSerialization: true, programmaticEvent: programmatic });
      k({ block: 32, programmaticEvent: { event: programmatic, triggerAtBlockStart: true }, completionEvent: completion });
      k({ block: 32, programmaticStreamSerialization: false, cooperative: false });
      k({ block: 32 });
      const p = k.prepare('');
      p.preparedCall(4, 32, { priority: 3, completionEvent: completion });
      p.preparedAsyncCall(4, 32, stream, { programmaticEvent: { event: programmatic }, programmaticStreamSerialization: true });
      p.preparedCall(4, 32);
      assert.deepStrictEqual(attrsOf(), [
        ID.priority + ':' + priority,
        ID.cluster + ':2,2,1;' + ID.preferredCluster + ':4,4,1;' + ID.scheduling + ':1',
        ID.scheduling + ':2;' + ID.syncDomain + ':1;' + ID.carveout + ':' + carveout,
        ID.scheduling + ':0;' + ID.syncDomain + ':0',
        ID.serialization + ':1;' + ID.programmatic + ':event1,0',
        ID.programmatic + ':event1,1;' + ID.completion + ':event2',
        null,
        null,
        ID.priority + ':3;' + ID.completion + ':event2',
        ID.serialization + ':1;' + ID.programmatic + ':event1,0',
        null,
      ]);
    `);
  });

  it('bad values are refused before the driver, with what to pass; the driver refuses what does not fit the launch', function () {
    run(`${PRELUDE}
      const timing = new cuda.Event();
      const quiet = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      const cases = [
        [{ priority: 1.5 }, 'RangeError', 'priority must be an integer from -2147483648 to 2147483647, not 1.5'],
        [{ priority: '1' }, 'TypeError', 'priority must be an integer number, not the string "1"'],
        [{ clusterSchedulingPolicy: 'fast' }, 'TypeError', "clusterSchedulingPolicy must be 'default', 'spread' or 'load-balancing', not the string \\"fast\\""],
        [{ memSyncDomain: 1 }, 'TypeError', "memSyncDomain must be 'default' or 'remote', not number 1"],
        [{ sharedMemoryCarveout: 101 }, 'RangeError', 'sharedMemoryCarveout must be an integer from 0 to 100, not 101'],
        [{ sharedMemoryCarveout: -1 }, 'RangeError', "sharedMemoryCarveout must be a percentage from 0 to 100; leave it out for the kernel's own setting"],
        [{ programmaticStreamSerialization: 1 }, 'TypeError', 'programmaticStreamSerialization must be true or false, not number 1'],
        [{ preferredCluster: [2, 0] }, 'RangeError', 'preferredCluster dimensions must be integers from 1 to 4294967295, not 0'],
        [{ programmaticEvent: timing }, 'TypeError', 'programmaticEvent must be an Event made with EventFlags.DISABLE_TIMING (and not INTERPROCESS): new Event(cuda.EventFlags.DISABLE_TIMING)'],
        [{ completionEvent: timing }, 'TypeError', 'completionEvent must be an Event made with EventFlags.DISABLE_TIMING (and not INTERPROCESS): new Event(cuda.EventFlags.DISABLE_TIMING)'],
        [{ programmaticEvent: { event: quiet, trigger: true } }, 'TypeError', "programmaticEvent: unknown key 'trigger' (the keys are event and triggerAtBlockStart)"],
        [{ programmaticEvent: { event: quiet, triggerAtBlockStart: 1 } }, 'TypeError', 'programmaticEvent.triggerAtBlockStart must be true or false, not number 1'],
        [{ programmaticEvent: [quiet] }, 'TypeError', 'programmaticEvent must be an Event or { event, triggerAtBlockStart }, not an Array'],
        [{ completionEvent: {} }, 'TypeError', /^completionEvent must be/],
      ];
      for (const [options, name, message] of cases) {
        assert.throws(() => k({ block: 1, ...options }), { name, message }, Object.keys(options)[0]);
        assert.throws(() => k.prepare('').preparedCall(1, 1, options), { name, message });
      }
      // what only the driver knows: a preferred cluster needs a cluster it is a multiple of
      assert.throws(() => k({ block: 1, grid: 8, preferredCluster: 4 }), { name: 'LogicError', api: 'cuLaunchKernelEx', code: 912 });
      assert.throws(() => k({ block: 1, grid: 8, cluster: 4, preferredCluster: 2 }), { name: 'LogicError', code: 912 });
      // a destroyed event is refused; the launch after it works
      quiet.destroy();
      assert.throws(() => k({ block: 1, completionEvent: quiet }), { name: 'LogicError', message: /this Event has been destroyed/ });
      assert.throws(() => k({ block: 1, programmaticEvent: { event: quiet } }), { name: 'LogicError', message: /this Event has been destroyed/ });
      k({ block: 1 });
      assert.strictEqual(log().filter((l) => l.startsWith('launch')).length, 1, 'only the last call reached the driver');
    `);
  });

  const cudaVersion = (v) => `${Math.floor(v / 1000)}.${(v % 1000) / 10}`;
  for (const [version, key, value, needs] of [
    [12020, 'completionEvent', 'new cuda.Event(cuda.EventFlags.DISABLE_TIMING)', '12.3'],
    [12030, 'sharedMemoryCarveout', '50', '12.4'],
    [12070, 'preferredCluster', '2', '12.8'],
  ]) {
    it(`on a driver for CUDA ${cudaVersion(version)}, ${key} is a RuntimeError naming CUDA ${needs}; the other attributes work`, function () {
      run(
        `${PRELUDE}
        assert.throws(() => k({ block: 1, grid: 4, cluster: 2, ${key}: ${value} }), {
          name: 'RuntimeError',
          message: 'the launch attribute ${key} needs a driver for CUDA ${needs} or newer; the installed one is for CUDA ${cudaVersion(version)}: update the NVIDIA driver, or launch without ${key}',
        });
        k({ block: 1, priority: 1, programmaticStreamSerialization: true, memSyncDomain: 'remote' });
        assert.deepStrictEqual(attrsOf(), [ID.priority + ':1;' + ID.syncDomain + ':1;' + ID.serialization + ':1']);
      `,
        { FAKE_CUDA_DRIVER_VERSION: String(version) },
      );
    });
  }

  it('events bound for launches are let go: dropped ones are collected while launches go on, and none is destroyed early', function () {
    const counts = path.join(dir(), 'counts');
    run(
      `${PRELUDE}
      const liveEvents = () => Number(/^events +(\\d+)/m.exec(fs.readFileSync(${JSON.stringify(counts)}, 'utf8'))[1]);
      const stream = new cuda.Stream();
      const p = k.prepare('');
      const collect = async () => { for (let i = 0; i < 4; i++) { global.gc(); await new Promise(setImmediate); } };
      // (in a function of its own: a suspended async function's frame would hold the last event)
      (() => {
        for (let i = 0; i < 2000; i++) {
          const event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
          if (i % 2) k({ block: 1, stream, completionEvent: event });
          else p.preparedAsyncCall(1, 1, stream, { programmaticEvent: { event, triggerAtBlockStart: true } });
          if (i % 100 === 0) global.gc();
        }
      })();
      await collect();
      // the generic launcher and the prepared one each keep the last event they were given...
      assert.strictEqual(liveEvents(), 2);
      await stream.synchronize();
      // ...and let it go at their next launch without one
      k({ block: 1, stream });
      p.preparedAsyncCall(1, 1, stream);
      await collect();
      assert.strictEqual(log().filter((l) => l.startsWith('launchex')).length, 2000);
      assert.strictEqual(liveEvents(), 0, 'every dropped event was destroyed');
    `,
      { FAKE_CUDA_COUNTS: counts },
    );
  });
});

describe('<cudadrv/launch.cuh>: programmatic dependent launch from kernels (NVRTC, no GPU needed)', function () {
  this.timeout(60000);
  const { nvrtcLoads } = require('../support/nvrtc-available');
  const { compileSync } = require('../../lib/compiler');

  before(function () {
    if (!nvrtcLoads()) this.skip();
  });

  const SOURCE = `#include <cudadrv/launch.cuh>
    __global__ void k(unsigned long long *t) {
      cudadrv::triggerProgrammaticLaunchCompletion();
      cudadrv::gridDependencySynchronize();
      *t = cudadrv::globalTimer();
    }`;
  const ptxOf = (arch) => Buffer.from(compileSync(SOURCE, { arch })).toString('latin1');

  it('for compute capability 9.0 the helpers are griddepcontrol, in that order, and the clock is %globaltimer', function () {
    const ptx = ptxOf('compute_90');
    const launch = ptx.indexOf('griddepcontrol.launch_dependents;');
    const wait = ptx.indexOf('griddepcontrol.wait;');
    assert.ok(launch > 0 && wait > launch, ptx);
    assert.match(ptx, /mov\.u64\s+%rd\d+, %globaltimer;/);
  });

  it('for older GPUs they compile to nothing (the secondary then starts after the primary, as without the attribute)', function () {
    const ptx = ptxOf('compute_80');
    assert.doesNotMatch(ptx, /griddepcontrol/);
    assert.match(ptx, /%globaltimer/);
  });
});
