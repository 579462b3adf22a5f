'use strict';
// Inputs that once took the process down. C never trusts lib/: each case is tried through the
// public API (lib/'s message) and straight at the addon (C's own check), in a child process so
// that a crash shows as a signal rather than ending the test run.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');

const ROOT = JSON.stringify(path.join(__dirname, '..', '..'));

// Runs script in a new node with the collector exposed; { status, signal, stdout, stderr }.
function child(script, env = {}) {
  return spawnSync(process.execPath, ['--expose-gc', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60000,
  });
}

// script prints one JSON line; the child must end with status 0 and no signal.
function outcome(script, env) {
  const result = child(script, env);
  assert.strictEqual(result.signal, null, `killed by ${result.signal}: ${result.stderr.slice(-400)}`);
  assert.strictEqual(result.status, 0, result.stderr.slice(-400));
  return JSON.parse(result.stdout.trim().split('\n').pop());
}

// The error a call throws, as { name, message }, after which the collector runs twice.
const CAUGHT = `
const caught = (f) => { try { f(); return null; } catch (e) { return { name: e.constructor.name, message: e.message }; } };
const settle = (value) => { gc(); setImmediate(() => { gc(); setImmediate(() => console.log(JSON.stringify(value))); }); };
`;

describe("hostile input: host memory past the runtime's array limit", function () {
  const { MAX_LENGTH } = require('buffer').constants;
  const beyond = MAX_LENGTH + 1;

  it('alignedEmpty(limit + 1) is a RangeError naming the limit (it was a double free)', function () {
    const error = outcome(`${CAUGHT} const cuda = require(${ROOT});
      settle(caught(() => cuda.alignedEmpty(${beyond}, 'uint8')));`);
    assert.strictEqual(error.name, 'RangeError');
    assert.match(error.message, new RegExp(`${beyond} bytes cannot be made.*at most ${MAX_LENGTH} bytes`));
  });

  it('the addon itself refuses such a buffer with a RangeError, and frees the memory once', function () {
    if (MAX_LENGTH >= 2 ** 40) this.skip(); // no runtime limit to go past on this Node
    const error = outcome(`${CAUGHT} const binding = require(${ROOT} + '/lib/internal/binding');
      settle(caught(() => binding.alignedAlloc({}, ${beyond}, 4096, false, true)));`);
    assert.strictEqual(error.name, 'RangeError');
  });

  it('below the limit such arrays work', function () {
    const length = outcome(`${CAUGHT} const cuda = require(${ROOT});
      const a = cuda.alignedEmpty(1 << 20, 'uint8'); a[a.length - 1] = 7; settle(a.length + a[a.length - 1]);`);
    assert.strictEqual(length, (1 << 20) + 7);
  });
});

describe('hostile input: host memory running out', function () {
  // A child whose address space is limited to what node takes plus 1.5 GiB: one GiB fits, two do not.
  function limited(script) {
    const base = outcome(`require(${ROOT});
      console.log(JSON.stringify(+/VmSize:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]))`);
    const limitKiB = base + 1.5 * 2 ** 20;
    const result = spawnSync('bash', ['-c', `ulimit -v ${limitKiB} && exec "$0" -e "$1"`, process.execPath, script], {
      encoding: 'utf8',
      timeout: 60000,
    });
    assert.strictEqual(result.status, 0, result.stderr.slice(-400));
    return JSON.parse(result.stdout.trim().split('\n').pop());
  }

  it('is a MemoryError (it was a plain Error), and a collection is tried before giving up', function () {
    // AddressSanitizer reserves terabytes of address space for its shadow: no limit can be set
    if (process.env.CUDADRV_SANITIZED) this.skip();
    const out = limited(`${CAUGHT} const cuda = require(${ROOT});
      let first = cuda.alignedEmpty(2 ** 30, 'uint8');
      const whileAlive = caught(() => cuda.alignedEmpty(2 ** 30, 'uint8'));
      first = null; // unreachable now: the second try finds its memory after a collection
      const second = cuda.alignedEmpty(2 ** 30, 'uint8');
      console.log(JSON.stringify({ whileAlive, second: second.length }));`);
    assert.deepStrictEqual(out, {
      whileAlive: { name: 'MemoryError', message: 'out of host memory; free memory or allocate less' },
      second: 2 ** 30,
    });
  });
});

describe('hostile input: NUL characters in names and paths', function () {
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  it('a file path holding NUL is a TypeError (C read it only up to the NUL, another file)', function () {
    const error = outcome(`${CAUGHT} const cuda = require(${ROOT});
      settle(caught(() => cuda.moduleFromFile('kernel.cubin\\0.txt')));`);
    assert.deepStrictEqual(error, { name: 'TypeError', message: 'path must be a string without NUL characters (\\0)' });
  });

  it('a kernel name holding NUL is a TypeError, the name without it still found (stand-in driver)', function () {
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT});
      new cuda.Device(0).retainPrimaryContext().push();
      const module = cuda.moduleFromBuffer(Buffer.from('entry scale 8\\n'));
      settle({ error: caught(() => module.getFunction('scale\\0other')), found: typeof module.getFunction('scale') });`,
      { LD_LIBRARY_PATH: standIn.dir },
    );
    assert.deepStrictEqual(result, {
      error: { name: 'TypeError', message: 'name must be a string without NUL characters (\\0)' },
      found: 'function',
    });
  });
});

describe('hostile input: the launch parameter buffer', function () {
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  it('transferred away, a launch is a LogicError (C read the freed bytes)', function () {
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT}); const binding = require(${ROOT} + '/lib/internal/binding');
      new cuda.Device(0).retainPrimaryContext().push();
      const kernel = cuda.moduleFromBuffer(Buffer.from('entry scale 8\\n')).getFunction('scale');
      const [launch, buffer] = binding.launcherCreate(kernel._k, 8);
      new Uint32Array(buffer, 0, 6).fill(1);
      const before = caught(launch);
      const moved = structuredClone(buffer, { transfer: [buffer] });
      settle({ before, after: caught(launch), moved: moved.byteLength });`,
      { LD_LIBRARY_PATH: standIn.dir },
    );
    assert.deepStrictEqual(result, {
      before: null,
      after: {
        name: 'LogicError',
        message: "this launcher's parameter buffer was detached (transferred away); get a new launcher for the kernel",
      },
      moved: require('../../lib/internal/binding').layouts.launch.headerBytes + 8, // the header and 8 bytes of parameters
    });
  });
});

describe('hostile input: JS run by the addon while it adds a graph node', function () {
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  // A getter of an Array's element runs JS in the middle of a call into C: reading dependencies
  // that way, a getter could destroy the graph or fill its node table between C's checks and its
  // writes. Dependencies are a Uint32Array (no JS runs); a conditional node's body objects are
  // read before anything is checked.
  it('dependencies that are not a Uint32Array are a TypeError; a getter destroying the graph finds nothing checked yet', function () {
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT}); const binding = require(${ROOT} + '/lib/internal/binding');
      new cuda.Device(0).retainPrimaryContext().push();
      const g = new cuda.Graph();
      g.addEmpty();
      let ran = false;
      const deps = [];
      Object.defineProperty(deps, 0, { get() { ran = true; g.destroy(); return 0; }, enumerable: true });
      const plain = caught(() => binding.graphAddEmpty(g, deps));
      const typed = caught(() => binding.graphAddEmpty(g, Uint32Array.of(5)));
      const h = g.conditionalHandle();
      const bodies = [];
      Object.defineProperty(bodies, 0, { get() { g.destroy(); return {}; }, enumerable: true });
      const destroyed = caught(() => binding.graphAddConditional(g, new Uint32Array(0), h.value, 0, bodies));
      settle({ plain, ran, typed, destroyed });`,
      { LD_LIBRARY_PATH: standIn.dir },
    );
    assert.deepStrictEqual(result, {
      plain: { name: 'TypeError', message: 'dependencies must be a Uint32Array of node indices' },
      ran: false,
      typed: { name: 'RangeError', message: 'no such node in this graph' },
      destroyed: {
        name: 'LogicError',
        message: 'this Graph has been destroyed; make a new one (new Graph(), or a stream capture)',
      },
    });
  });
});

describe('hostile input: work a stream capture would record', function () {
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  it('launchHostFunc on a capturing stream is a LogicError (a graph would settle its Promise at every launch)', function () {
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT});
      new cuda.Device(0).retainPrimaryContext().push();
      const stream = new cuda.Stream().beginCapture();
      let called = 0;
      const error = caught(() => stream.launchHostFunc(() => called++));
      stream.endCapture().destroy();
      stream.launchHostFunc(() => called++).then(() => settle({ error, called }));`,
      { LD_LIBRARY_PATH: standIn.dir },
    );
    assert.deepStrictEqual(result, {
      error: {
        name: 'LogicError',
        message:
          'stream.launchHostFunc(): the stream is capturing into a graph, which would call the function ' +
          'at each of its launches while the Promise settles once; call it outside the capture',
      },
      called: 1,
    });
  });
});

describe('hostile input: objects of a detached context', function () {
  const { standInDriver, liveCounts } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  it('each is a LogicError saying so, and no stale handle reaches the driver (it was a use after free there)', function () {
    const counts = path.join(standIn.dir, 'detached.counts');
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT});
      const context = new cuda.Device(0).makeContext();
      const module = cuda.moduleFromBuffer(Buffer.from('entry scale 8\\ntexref tex\\nsurfref surf\\n'));
      const kernel = module.getFunction('scale');
      const [tex, surf] = [module.getTexref('tex'), module.getSurfref('surf')];
      const [stream, event] = [new cuda.Stream(), new cuda.Event()];
      const array = new cuda.CudaArray({ width: 16, format: cuda.ArrayFormat.FLOAT, numChannels: 1 });
      const binding = require(${ROOT} + '/lib/internal/binding');
      const memory = cuda.memAlloc(64);
      binding.memcpyHtoDAsync(memory.ptr, new Uint8Array(16), stream); // the addon's last stream now
      context.detach();
      const uses = {
        kernel: () => kernel(cuda.pointer(0n), { block: 1 }), kernelAttribute: () => kernel.getAttribute(0),
        texref: () => tex.getFlags(), surfref: () => surf.setArray(array), module: () => module.getGlobal('g'),
        stream: () => stream.isDone(), event: () => event.query(), array: () => array.getDescriptor(),
        lastStream: () => binding.memcpyHtoDAsync(memory.ptr, new Uint8Array(16), stream),
      };
      const errors = {};
      for (const [name, use] of Object.entries(uses)) errors[name] = caught(use);
      settle(errors);`,
      { LD_LIBRARY_PATH: standIn.dir, FAKE_CUDA_COUNTS: counts },
    );
    for (const [name, error] of Object.entries(result)) {
      assert.strictEqual(error?.name, 'LogicError', `${name}: ${JSON.stringify(error)}`);
      assert.match(error.message, /Context of this \w+ has been detached|has been freed|has been destroyed/, name);
    }
    assert.strictEqual(liveCounts(counts).stale, 0, 'no stale handle reached the stand-in');
  });
  it('pinned and managed arrays read as empty once their context is detached (they were freed memory)', function () {
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT});
      const context = new cuda.Device(0).makeContext();
      const [pinned, managed] = [cuda.pagelockedZeros(256, 'uint8'), cuda.managedZeros(64, 'float32')];
      const aligned = cuda.alignedZeros(64, 'float32');
      const lengths = () => [pinned.length, managed.length, aligned.length];
      const before = lengths();
      context.detach();
      const other = new cuda.Device(0).makeContext();
      cuda.memcpyDtoH(pinned, cuda.memAlloc(256));
      settle({ before, after: lengths() });`,
      { LD_LIBRARY_PATH: standIn.dir },
    );
    assert.deepStrictEqual(result, { before: [256, 64, 64], after: [0, 0, 64] });
  });
});

describe('hostile input: values the engine would have named instead of cudadrv', function () {
  // Each of these ended in the engine's own words ("Cannot convert undefined or null to object",
  // "Cannot mix BigInt and other types", "Cannot perform Construct on a detached ArrayBuffer"...),
  // which name no argument. The fuzzer now fails on such a message from a call of the API.
  const cuda = require('../..');
  const tools = require('../../lib/tools');
  const detached = () => {
    const buffer = new ArrayBuffer(8);
    structuredClone(buffer, { transfer: [buffer] });
    return buffer;
  };

  it('each is a TypeError or RangeError naming the argument', function () {
    const cases = [
      [() => cuda.toArray(), 'TypeError', 'expected a TypedArray, not undefined'],
      [() => cuda.matrixToArray(null, [1, 1]), 'TypeError', 'expected a TypedArray, not null'],
      [
        () => new cuda.Module(detached()),
        'TypeError',
        'image is over a detached ArrayBuffer (transferred away); pass memory still in use',
      ],
      [() => new cuda.Module('', 5), 'TypeError', 'options must be an object, not number 5'],
      [
        () => cuda.memcpyDtoH(detached(), 0n),
        'TypeError',
        'dest is over a detached ArrayBuffer (transferred away); pass memory still in use',
      ],
      [() => new cuda.ArrayDescriptor(7), 'TypeError', 'descriptor must be an object, not number 7'],
      [
        () => new cuda.LogicError(Symbol('m')),
        'TypeError',
        "a CudaError's message must be a string, not symbol Symbol(m)",
      ],
      [() => new cuda.RuntimeError('m', 3), 'TypeError', 'info must be an object, not number 3'],
      [
        () => tools.contextDependentMemoize(() => 1, 'big'),
        'TypeError',
        'options must be an object, not the string "big"',
      ],
      [
        () => new tools.PageLockedAllocator().free(new Float32Array(2)),
        'TypeError',
        'free(array): array must be pinned memory from allocate(), not a Float32Array',
      ],
    ];
    for (const [call, name, message] of cases) assert.throws(call, { name, message });
    // null options are no options
    assert.strictEqual(new cuda.LaunchError('m', null).code, null);
    assert.strictEqual(tools.contextDependentMemoize((x) => x + 1, null)(1), 2);
  });
});

describe('hostile input: launch values the engine would have named (stand-in driver)', function () {
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  it('bigint and symbol dimensions, a bigint shared size, a TypedScalar of no type, a bigint offset', function () {
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT});
      new cuda.Device(0).retainPrimaryContext().push();
      const kernel = cuda.moduleFromBuffer(Buffer.from('entry scale 8\\n')).getFunction('scale');
      const x = cuda.memAlloc(64);
      settle([
        caught(() => kernel(x, { block: [3, 1n, 1] })),
        caught(() => kernel(x, { block: [Symbol('s')] })),
        caught(() => kernel(x, { block: 1, shared: 1n })),
        caught(() => kernel(new cuda.TypedScalar(1), { block: 1 })),
        caught(() => x.asBuffer(8, 1n)).name, // a bigint offset is a size like any other
      ]);`,
      { LD_LIBRARY_PATH: standIn.dir },
    );
    assert.deepStrictEqual(result, [
      { name: 'TypeError', message: 'block dimensions must be numbers, not bigint 1' },
      { name: 'TypeError', message: 'block dimensions must be numbers, not symbol Symbol(s)' },
      { name: 'TypeError', message: 'shared must be an integer number, not bigint 1' },
      {
        name: 'TypeError',
        message:
          'argument 1 is a TypedScalar of no C type; make scalars with cuda.int32(n), cuda.float32(x) and the like',
      },
      'LogicError', // device memory has no host view; it was "Cannot mix BigInt and other types"
    ]);
  });
});

describe("hostile input: asBuffer views through a PointerHolderBase of the caller's (stand-in driver)", function () {
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  it('read as empty once the memory is freed through its own allocation or its context (they viewed freed memory)', function () {
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT});
      const ctx = new cuda.Device(0).makeContext();
      const viewOf = (array) => {
        const allocation = cuda.hostAllocationOf(array);
        const Holder = class extends cuda.PointerHolderBase { getPointer() { return allocation.getDevicePointer(); } };
        return new Uint8Array(new Holder().asBuffer(8, 4));
      };
      const pinned = cuda.pagelockedZeros(64, 'uint8', { flags: cuda.HostAllocFlags.DEVICEMAP });
      const managed = cuda.managedZeros(64, 'uint8');
      const [a, b, c] = [viewOf(pinned), viewOf(pinned), viewOf(managed)];
      a[0] = 7;
      const before = [pinned[4], a.length, b.length, c.length];
      cuda.hostAllocationOf(pinned).free();
      const afterFree = [a.length, b.length, c.length];
      ctx.detach();
      const foreign = caught(() => new (class extends cuda.PointerHolderBase { getPointer() { return 4096n; } })().asBuffer(8)).name;
      settle({ before, afterFree, afterDetach: c.length, foreign });`,
      { LD_LIBRARY_PATH: standIn.dir },
    );
    assert.deepStrictEqual(result, {
      before: [7, 8, 8, 8],
      afterFree: [0, 0, 8],
      afterDetach: 0,
      foreign: 'LogicError', // an address no allocation holds
    });
  });
});

describe('hostile input: a module path that is a FIFO (stand-in driver)', function () {
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  it('is a RuntimeError, not a load that waits forever (the fuzzer found it)', function () {
    const dir = require('fs').mkdtempSync(path.join(require('os').tmpdir(), 'cudadrv-fifo-'));
    spawnSync('mkfifo', [path.join(dir, 'module.cubin')]);
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT});
      new cuda.Device(0).retainPrimaryContext().push();
      settle(caught(() => cuda.moduleFromFile(${JSON.stringify(path.join(dir, 'module.cubin'))})));`,
      { LD_LIBRARY_PATH: standIn.dir },
    );
    require('fs').rmSync(dir, { recursive: true });
    assert.strictEqual(result.name, 'RuntimeError');
    assert.match(result.message, /other than a regular file/);
  });
});

describe('hostile input: an IPC event handle asked for in another context (stand-in driver)', function () {
  const { standInDriver } = require('../support/stand-in-driver');
  const standIn = standInDriver();

  it("is the event's handle, taken in the event's context (driver 580 crashed; the fuzzer found it)", function () {
    const result = outcome(
      `${CAUGHT} const cuda = require(${ROOT});
      const device = new cuda.Device(0);
      const first = device.makeContext();
      const event = new cuda.Event(cuda.EventFlags.INTERPROCESS | cuda.EventFlags.DISABLE_TIMING);
      const second = device.makeContext();
      const handle = event.ipcHandle();
      settle([handle.length, cuda.Context.getCurrent() === second, caught(() => { first.detach(); event.ipcHandle(); })]);`,
      { LD_LIBRARY_PATH: standIn.dir },
    );
    assert.deepStrictEqual(result, [
      64,
      true,
      {
        name: 'LogicError',
        message: 'the Context of this Event has been detached, and the Event with it; make it again in a live context',
      },
    ]);
  });
});
