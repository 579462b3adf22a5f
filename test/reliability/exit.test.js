'use strict';
// The process exits cleanly, whatever the addon's threads are doing: exit() runs NVRTC's and the
// driver's destructors, so no thread of the addon may still be inside them (src/core/threads.c).
const assert = require('assert');
const { spawn } = require('child_process');
const path = require('path');
const { nvrtcLoads } = require('../support/nvrtc-available');

const COMPILER = JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'compiler', 'index.js'));

// A source NVRTC takes some hundreds of milliseconds over, so that exit comes mid-compile.
const SLOW_SOURCE = `
let src = '';
for (let i = 0; i < 300; i++)
  src += 'template<int N> __device__ float f' + i + '(float x) { return x * N + ' + i + '; }\\n' +
    'extern "C" __global__ void g' + i + '(float *x) { x[0] = f' + i + '<' + i + '>(x[0]); }\\n';
`;

function runChild(script) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', script], {
      env: { ...process.env, CUDADRV_DISABLE_CACHE: '1' },
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

describe('process exit while the addon works', function () {
  this.timeout(60000);
  before(function () {
    if (!nvrtcLoads()) this.skip();
  });

  // Before the fix, 4 of 6 such runs died (SIGSEGV, or glibc's abort) inside NVRTC.
  it('process.exit() during compile(): status 0, no signal, at every moment of the compile', async function () {
    for (const delay of [10, 40, 80, 120, 200, 300]) {
      const result = await runChild(`${SLOW_SOURCE}
        require(${COMPILER}).compile(src, { arch: 'sm_90', noExternC: true });
        setTimeout(() => process.exit(0), ${delay});`);
      assert.deepStrictEqual(
        { code: result.code, signal: result.signal },
        { code: 0, signal: null },
        `exit after ${delay} ms: ${result.stderr.slice(-300)}`,
      );
    }
  });

  it('an uncaught throw during compile(): status 1 and the error printed, no signal', async function () {
    for (const delay of [20, 100, 250]) {
      const result = await runChild(`${SLOW_SOURCE}
        require(${COMPILER}).compile(src, { arch: 'sm_90', noExternC: true });
        setTimeout(() => { throw new Error('thrown on purpose'); }, ${delay});`);
      assert.strictEqual(result.signal, null, result.stderr.slice(-300));
      assert.strictEqual(result.code, 1);
      assert.match(result.stderr, /Error: thrown on purpose/);
    }
  });
});
