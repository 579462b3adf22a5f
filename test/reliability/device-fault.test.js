'use strict';
// What only a real device can do: a kernel that faults (a sticky error, which the stand-in driver
// cannot make), and device memory allocated to exhaustion.
const assert = require('assert');
const { spawn } = require('child_process');
const path = require('path');
const { describeGpu } = require('../support/gpu');
const cuda = require('../..');

const CHILD = path.join(__dirname, '..', 'support', 'device-fault-child.js');

// Runs the child: { code, signal, stdout, stderr, report (what it wrote to fd 3) }.
function runChild() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    const text = { stdout: '', stderr: '', report: '' };
    child.stdout.on('data', (d) => (text.stdout += d));
    child.stderr.on('data', (d) => (text.stderr += d));
    child.stdio[3].on('data', (d) => (text.report += d));
    child.on('close', (code, signal) => resolve({ code, signal, ...text }));
  });
}

describeGpu('on a device: faults and exhaustion', function () {
  this.timeout(120000);

  it('a kernel that faults: the wait, frees and further calls are LaunchErrors; destroy, no new context, exit 0 with nothing printed', async function () {
    const result = await runChild();
    assert.deepStrictEqual(
      { code: result.code, signal: result.signal, stdout: result.stdout, stderr: result.stderr },
      { code: 0, signal: null, stdout: '', stderr: '' },
    );
    const report = JSON.parse(result.report);
    const fault = (api) => ({ name: 'LaunchError', codeName: 'CUDA_ERROR_ILLEGAL_ADDRESS', api });
    assert.deepStrictEqual(report.wait, fault('cuCtxSynchronize'));
    assert.deepStrictEqual(report.frees, [fault('cuMemFree'), fault('cuMemFree')]);
    for (const [call, got] of Object.entries(report.calls)) {
      assert.strictEqual(got.name, 'LaunchError', `${call}: ${JSON.stringify(got)}`);
      assert.strictEqual(got.codeName, 'CUDA_ERROR_ILLEGAL_ADDRESS', `${call}: ${JSON.stringify(got)}`);
    }
    assert.deepStrictEqual(report.detach, { ok: true });
    // the driver refuses the process any new context: only a restart recovers
    assert.deepStrictEqual(report.newContext, fault('cuCtxCreate'));
    assert.strictEqual(report.primaryContext.name, 'LaunchError', JSON.stringify(report.primaryContext));
  });

  it('device memory allocated to exhaustion is a MemoryError; freed, it can all be allocated again', function () {
    const GIB = 2 ** 30;
    const { total } = cuda.memGetInfo();
    assert.throws(() => cuda.memAlloc(total + GIB), {
      name: 'MemoryError',
      codeName: 'CUDA_ERROR_OUT_OF_MEMORY',
      api: 'cuMemAlloc',
    });
    const fill = () => {
      const chunks = [];
      for (;;) {
        try {
          chunks.push(cuda.memAlloc(GIB));
        } catch (error) {
          assert.strictEqual(error.name, 'MemoryError', error.message);
          assert.strictEqual(error.codeName, 'CUDA_ERROR_OUT_OF_MEMORY');
          return chunks;
        }
        if (chunks.length * GIB > total) throw new Error(`allocated ${chunks.length} GiB of a ${total}-byte device`);
      }
    };
    const first = fill();
    assert.ok(first.length * GIB > total / 2, `only ${first.length} GiB of ${total / GIB} could be allocated`);
    for (const chunk of first) chunk.free();
    const second = fill();
    for (const chunk of second) chunk.free();
    assert.strictEqual(second.length, first.length);
    // and the memory works: a copy through a chunk of the second round
    const again = cuda.memAlloc(GIB);
    const bytes = Uint8Array.from({ length: 4096 }, () => Math.floor(Math.random() * 256));
    cuda.memcpyHtoD(again, bytes);
    const back = new Uint8Array(4096);
    cuda.memcpyDtoH(back, again);
    again.free();
    assert.deepStrictEqual(back, bytes);
  });
});
