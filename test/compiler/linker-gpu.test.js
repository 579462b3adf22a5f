'use strict';
// Linked code on a device: kernels linked from two sources (relocatable and LTO-IR) against a CPU
// reference on random data, dynamic parallelism through DynamicSourceModule, and a Library's
// kernel in two contexts and in a worker thread.
const assert = require('assert');
const path = require('path');
const { Worker } = require('worker_threads');
const { describeGpu } = require('../support/gpu');
const { sources, DYNAMIC_SOURCE } = require('../support/link-sources');
const cuda = require('../..');
const { compileSync, Linker, DynamicSourceModule } = require('../../lib/compiler');

const N = 256;
const randomFloats = () => Float32Array.from({ length: N }, () => Math.fround(Math.random() * 200 - 100));

// Runs kernel(p) on random data with one block of N threads: [input, output].
async function runOn(kernel) {
  const input = randomFloats();
  const output = Float32Array.from(input);
  await kernel(cuda.InOut(output), { block: [N, 1, 1] });
  return [input, output];
}

describeGpu('linked code on the GPU', function () {
  this.timeout(120000);
  const arch = () => {
    const [major, minor] = cuda.Context.getDevice().computeCapability();
    return `sm_${major}${minor}`;
  };

  it('relocatable cubins linked with nvJitLink compute twice their input', async function () {
    const s = sources();
    const linked = new Linker()
      .add(compileSync(s.library, { relocatable: true }))
      .add(compileSync(s.main, { relocatable: true }))
      .link();
    const [input, output] = await runOn(cuda.moduleFromBuffer(linked).getFunction(s.kernel));
    assert.deepStrictEqual(
      output,
      input.map((x) => Math.fround(2 * x)),
    );
  });

  it('LTO-IR linked with link-time optimization, loaded as a Library', async function () {
    const s = sources();
    const linked = await new Linker({ lto: true, arch: arch() })
      .add(compileSync(s.library, { lto: true }))
      .add(compileSync(s.main, { lto: true }))
      .linkAsync();
    const library = cuda.libraryFromBuffer(linked);
    const [input, output] = await runOn(library.getKernel(s.kernel));
    assert.deepStrictEqual(
      output,
      input.map((x) => Math.fround(2 * x)),
    );
    library.unload();
  });

  it('DynamicSourceModule: a kernel that launches a child kernel', async function () {
    for (const module of [new DynamicSourceModule(DYNAMIC_SOURCE), await DynamicSourceModule.compile(DYNAMIC_SOURCE)]) {
      const input = randomFloats();
      const data = cuda.toDevice(input);
      module.getFunction('parent')(data, cuda.int32(N), { block: 1 });
      cuda.Context.synchronizeSync();
      assert.deepStrictEqual(
        cuda.fromDevice(data, N, 'float32'),
        input.map((x) => Math.fround(2 * x)),
      );
    }
  });

  it("a Library's kernel launches in two contexts, and in a worker thread", async function () {
    const s = sources();
    const image = compileSync(`${s.library}\n${s.main}`, { noExternC: true });
    const library = cuda.libraryFromBuffer(image);
    const kernel = library.getKernel(s.kernel);
    const [input, output] = await runOn(kernel);
    assert.deepStrictEqual(
      output,
      input.map((x) => Math.fround(2 * x)),
    );
    const other = cuda.Context.getDevice().makeContext();
    try {
      const [input2, output2] = await runOn(kernel);
      assert.deepStrictEqual(
        output2,
        input2.map((x) => Math.fround(2 * x)),
      );
    } finally {
      other.detach();
    }
    const root = path.join(__dirname, '..', '..');
    const worker = new Worker(
      `const cuda = require(${JSON.stringify(root)});
       const { parentPort, workerData } = require('worker_threads');
       const ctx = new cuda.Device(0).retainPrimaryContext(); ctx.push();
       const kernel = cuda.libraryFromBuffer(workerData.image).getKernel(workerData.name);
       const data = new Float32Array(workerData.input);
       kernel(cuda.InOut(data), { block: [data.length, 1, 1] }).then(() => { cuda.Context.pop(); ctx.detach(); parentPort.postMessage(Array.from(data)); });`,
      { eval: true, workerData: { image, name: s.kernel, input: Array.from(input) } },
    );
    const result = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    assert.deepStrictEqual(
      Float32Array.from(result),
      input.map((x) => Math.fround(2 * x)),
    );
  });
});
