'use strict';
// Bun and Deno, from their npm packages (npm ci --prefix test/runtimes, linux-x64; CI does), run the smoke
// subset (test/runtimes/smoke.js) on the stand-in driver, and Deno without permissions is told
// every flag cudadrv needs. Where a runtime is not installed its tests skip, saying so, and fail
// instead where CUDADRV_REQUIRE_RUNTIMES=1 (as .ci/run sets).
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');
const { nvrtcLoads } = require('../support/nvrtc-available');

const RUNTIMES = path.join(__dirname, '..', 'runtimes');
const SMOKE = path.join(RUNTIMES, 'smoke.js');
const COMMANDS = {
  Bun: ['@oven/bun-linux-x64/bin/bun', []],
  Deno: ['@deno/linux-x64-glibc/deno', ['run', '-A']],
};

function binary(name) {
  return path.join(RUNTIMES, 'node_modules', name);
}

for (const [runtime, [name, args]] of Object.entries(COMMANDS)) {
  describe(`${runtime}, from its npm package, on the stand-in driver (no GPU needed)`, function () {
    this.timeout(60000);
    const standIn = standInDriver();

    before(function () {
      const missing = !fs.existsSync(binary(name))
        ? `${runtime} is not installed here: run npm ci --prefix test/runtimes (linux-x64 only)`
        : !nvrtcLoads()
          ? 'NVRTC does not load here'
          : null;
      if (!missing) return;
      if (process.env.CUDADRV_REQUIRE_RUNTIMES === '1') throw new Error(`${missing} (CUDADRV_REQUIRE_RUNTIMES=1)`);
      console.log(`      (skipped: ${missing})`);
      this.skip();
    });

    // The compile cache goes to a directory of the stand-in's; without one named, cudadrv asks
    // for the home directory.
    function run(extraArgs, env = { CUDADRV_CACHE_DIR: path.join(standIn.dir, 'cache') }) {
      const { CUDADRV_CACHE_DIR, XDG_CACHE_HOME, ...inherited } = process.env;
      return spawnSync(binary(name), [...extraArgs, SMOKE], {
        encoding: 'utf8',
        env: { ...inherited, NO_COLOR: '1', LD_LIBRARY_PATH: standIn.dir, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    }

    it('requires cudadrv, compiles, copies, launches and waits; the driver got the arguments', function () {
      const log = path.join(standIn.dir, `${runtime}.log`);
      fs.rmSync(log, { force: true });
      const child = run(args, { FAKE_CUDA_LOG: log, CUDADRV_CACHE_DIR: path.join(standIn.dir, 'cache') });
      assert.strictEqual(child.status, 0, child.stderr);
      const { dest, n } = JSON.parse(child.stdout);
      const params = Buffer.alloc(20);
      params.writeBigUInt64LE(BigInt(dest), 0);
      params.writeBigUInt64LE(BigInt(dest), 8);
      params.writeInt32LE(n, 16);
      const launches = fs
        .readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('launch '));
      assert.deepStrictEqual(launches, [
        `launch add grid=4,1,1 block=32,1,1 shared=0 stream=1 params=${params.toString('hex')}`,
      ]);
    });

    if (runtime === 'Deno') {
      for (const [granted, refused] of [
        [['--allow-read'], 'env'],
        [['--allow-read', '--allow-env'], 'ffi'],
        [['--allow-read', '--allow-env', '--allow-ffi'], 'sys'],
      ]) {
        it(`without --allow-${refused}, the error names every permission cudadrv needs`, function () {
          const child = run(['run', ...granted], {});
          assert.notStrictEqual(child.status, 0);
          assert.match(child.stderr, /NotCapable: cudadrv: Deno refused a permission \(Requires (\w+) access/);
          assert.strictEqual(/Requires (\w+) access/.exec(child.stderr)[1], refused);
          assert.match(child.stderr, /needs --allow-read --allow-env --allow-ffi --allow-sys=homedir .*, or -A\./);
          assert.doesNotMatch(child.stderr, /npm rebuild/);
        });
      }
    }
  });
}
