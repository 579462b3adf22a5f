'use strict';
// The command line (bin/cudadrv.js), run as a user runs it: its output and its exit code, on the
// stand-in driver (at the driver versions and with the failures a user may have) and on NVRTC.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { standInDriver } = require('../support/stand-in-driver');
const { nvrtcLoads } = require('../support/nvrtc-available');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'cudadrv.js');
const CUDA_ERROR_NO_DEVICE = 100;

function cli(args, env = {}) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('cudadrv (the command line)', function () {
  this.timeout(60000);
  const standIn = standInDriver();
  let tmp;
  before(function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-cli-'));
  });
  after(function () {
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const onStandIn = (extra = {}) => ({
    LD_LIBRARY_PATH: standIn.dir,
    CUDADRV_CACHE_DIR: path.join(tmp, 'cache'),
    ...extra,
  });

  it('is the package\'s "bin", an executable node script', function () {
    assert.deepStrictEqual(require('../../package.json').bin, { cudadrv: 'bin/cudadrv.js' });
    assert.ok(fs.statSync(BIN).mode & 0o111);
    assert.match(fs.readFileSync(BIN, 'utf8'), /^#!\/usr\/bin\/env node\n/);
  });

  describe('usage', function () {
    it('help prints the usage and exits 0; no command exits 2', function () {
      const help = cli(['help']);
      assert.strictEqual(help.code, 0);
      assert.match(help.stdout, /^usage: cudadrv <command>/);
      const none = cli([]);
      assert.strictEqual(none.code, 2);
      assert.match(none.stderr, /^usage: cudadrv <command>/);
    });

    it('--version prints the version; each command --help prints its own usage, exit 0; "--" only where a command takes it', function () {
      const version = cli(['--version']);
      assert.deepStrictEqual([version.code, version.stdout], [0, `cudadrv ${require('../../package.json').version}\n`]);
      for (const [command, words] of [
        ['compile', /^usage: cudadrv compile FILE\.cu \[options\] \[-- NVRTC OPTIONS\.\.\.\]\n[\s\S]*--no-extern-c/],
        ['info', /^usage: cudadrv info \[--json\]/],
        ['doctor', /^usage: cudadrv doctor \[--json\]/],
      ]) {
        const help = cli([command, '--help']);
        assert.strictEqual(help.code, 0, `${command} --help`);
        assert.match(help.stdout, words);
        assert.strictEqual(cli([command, '-h']).stdout, help.stdout);
      }
      assert.match(cli(['help']).stdout, /--no-extern-c/);
      const extra = cli(['info', '--', '-O3']);
      assert.strictEqual(extra.code, 2);
      assert.match(extra.stderr, /^cudadrv: info takes nothing after "--"/);
    });

    it('an unknown command or option exits 2 naming it', function () {
      const command = cli(['frobnicate']);
      assert.strictEqual(command.code, 2);
      assert.match(command.stderr, /^cudadrv: unknown command "frobnicate"/);
      const option = cli(['info', '--bogus']);
      assert.strictEqual(option.code, 2);
      assert.match(option.stderr, /^cudadrv: Unknown option '--bogus'/);
    });
  });

  describe('info', function () {
    it('without a usable driver prints the versions of what is there, then one line saying why, and exits 1', function () {
      const env = onStandIn({ FAKE_CUDA_FAIL: `cuInit:1+:${CUDA_ERROR_NO_DEVICE}` });
      const out = cli(['info'], env);
      assert.strictEqual(out.code, 1);
      const lines = out.stdout.trimEnd().split('\n');
      assert.strictEqual(lines.length, 4, out.stdout);
      assert.match(
        lines[0],
        new RegExp(
          `^cudadrv ${require('../../package.json').version.replace(/\./g, '\\.')}.* \\(built against the CUDA \\d+\\.\\d+ headers\\)$`,
        ),
      );
      assert.match(lines[1], /^NVRTC: /);
      assert.match(lines[2], /^nvJitLink: /);
      assert.match(lines[3], /^cudadrv: no usable CUDA driver: cuInit failed: .*; run "cudadrv doctor" for the fix$/);
      const json = cli(['info', '--json'], env);
      assert.strictEqual(json.code, 1);
      const info = JSON.parse(json.stdout);
      assert.match(info.error, /^no usable CUDA driver: cuInit failed/);
      assert.deepStrictEqual(Object.keys(info), ['error', 'cudadrv', 'headers', 'nvrtc', 'nvJitLink']);
      if (nvrtcLoads())
        assert.strictEqual(info.nvrtc.version, require('../../lib/compiler/nvrtc').nvrtcVersion().join('.'));
    });

    it('lists the driver, each device with its free memory, and NVRTC with where it was found', function () {
      const json = cli(['info', '--json'], onStandIn({ FAKE_CUDA_DEVICES: '2' }));
      assert.strictEqual(json.code, 0, json.stderr);
      const info = JSON.parse(json.stdout);
      assert.strictEqual(info.driver, '13.0');
      assert.deepStrictEqual(
        info.devices.map((d) => [d.ordinal, d.name, d.arch]),
        [
          [0, 'stand-in driver', 'sm_90'],
          [1, 'stand-in driver', 'sm_90'],
        ],
      );
      for (const d of info.devices) assert.ok(d.freeMemory > 0 && d.freeMemory <= d.totalMemory, JSON.stringify(d));
      if (nvrtcLoads()) {
        const { nvrtcLibrary, nvrtcVersion } = require('../../lib/compiler/nvrtc');
        assert.deepStrictEqual(info.nvrtc, { version: nvrtcVersion().join('.'), ...nvrtcLibrary() });
      }
      const text = cli(['info'], onStandIn({ FAKE_CUDA_DEVICES: '2' }));
      assert.strictEqual(text.code, 0);
      assert.match(text.stdout, /^driver: CUDA 13\.0, 2 devices$/m);
      assert.match(
        text.stdout,
        /^device 1: stand-in driver, compute capability 9\.0 \(sm_90\), \d+ multiprocessors, [\d.]+ GiB \([\d.]+ GiB free\)/m,
      );
    });
  });

  describe('doctor', function () {
    it('finds no problem on a current driver with NVRTC and a usable cache, and exits 0', function () {
      if (!nvrtcLoads()) this.skip();
      const out = cli(['doctor'], onStandIn());
      assert.strictEqual(out.code, 0, out.stdout);
      assert.match(out.stdout, /^ok {3}driver: CUDA 13\.0, 1 device$/m);
      assert.match(out.stdout, /^ok {3}NVRTC: \d+\.\d+ from .* \(found by: .*\)$/m);
      assert.match(out.stdout, /no problems found\n$/);
    });

    it('--json gives every check and the count of problems, with the exit code of the text', function () {
      const out = cli(['doctor', '--json'], {
        ...onStandIn({ FAKE_CUDA_FAIL: `cuInit:1+:${CUDA_ERROR_NO_DEVICE}` }),
        CUDADRV_NVRTC_PATH: path.join(tmp, 'no-libnvrtc.so'),
      });
      assert.strictEqual(out.code, 1);
      const report = JSON.parse(out.stdout);
      assert.ok(report.problems >= 2, out.stdout);
      assert.strictEqual(report.problems, report.checks.filter((c) => c.level === 'fail').length);
      const driver = report.checks.find((c) => c.what.startsWith('driver: '));
      assert.strictEqual(driver.level, 'fail');
      assert.match(driver.fix, /no GPU is visible/);
    });

    it('a 12.0 driver: the entry points it lacks are warnings naming the version that has them', function () {
      const out = cli(['doctor'], onStandIn({ FAKE_CUDA_DRIVER_VERSION: '12000' }));
      assert.match(out.stdout, /^warn driver: CUDA 12\.0 lacks cuFuncGetParamInfo \(CUDA 12\.4\)/m);
      assert.match(out.stdout, /fix: update the NVIDIA driver to one for CUDA 12\.4 or newer/);
      if (nvrtcLoads() && require('../../lib/compiler/nvrtc').nvrtcVersion()[0] > 12) {
        // NVRTC 13's PTX cannot be loaded by a 12 driver: a problem, with the fix.
        assert.match(out.stdout, /^fail NVRTC: version 13 writes PTX the CUDA 12 driver cannot load$/m);
        assert.strictEqual(out.code, 1);
      }
    });

    it('no driver, no NVRTC and an unusable cache: each a problem with its fix, exit 1', function () {
      const file = path.join(tmp, 'a-file');
      fs.writeFileSync(file, '');
      const out = cli(['doctor'], {
        ...onStandIn({ FAKE_CUDA_FAIL: `cuInit:1+:${CUDA_ERROR_NO_DEVICE}` }),
        CUDADRV_NVRTC_PATH: path.join(tmp, 'no-libnvrtc.so'),
        CUDADRV_CACHE_DIR: path.join(file, 'cache'),
      });
      assert.strictEqual(out.code, 1);
      assert.match(out.stdout, /^fail driver: cuInit failed: .*\n {5}fix: no GPU is visible/m);
      assert.match(out.stdout, /^fail NVRTC: could not load NVRTC: tried .*no-libnvrtc\.so.*\n {5}fix: install NVRTC/m);
      assert.match(out.stdout, /^fail compile cache: .*a-file\/cache: .*\n {5}fix: set CUDADRV_CACHE_DIR/m);
      assert.match(out.stdout, /3 problems found\n$/);
    });
  });

  describe('compile', function () {
    const SOURCE = '__global__ void put(int *p) { *p = VALUE; }\n';
    let file;
    beforeEach(function () {
      if (!nvrtcLoads()) this.skip();
      file = path.join(tmp, 'put.cu');
      fs.writeFileSync(file, SOURCE);
    });

    it('writes PTX for compute_XY, with -D definitions, beside the source by default', function () {
      const value = 1000 + Math.floor(Math.random() * 1e6);
      const out = cli(['compile', file, '--arch', 'compute_90', '-D', `VALUE=${value}`]);
      assert.strictEqual(out.code, 0, out.stderr);
      const ptx = fs.readFileSync(path.join(tmp, 'put.ptx'), 'utf8');
      assert.match(ptx, /\.entry put\(/);
      assert.ok(ptx.includes(String(value)), 'the defined value is in the PTX');
      assert.match(out.stderr, /wrote .*put\.ptx \(compute_90, \d+ bytes\)/);
    });

    it('passes what follows "--" to NVRTC as it is', function () {
      const value = 2000 + Math.floor(Math.random() * 1e6);
      const output = path.join(tmp, 'passed.ptx');
      const out = cli([
        'compile',
        file,
        '-o',
        output,
        '--arch',
        'compute_90',
        '--no-cache',
        '--',
        `-DVALUE=${value}`,
        '-lineinfo',
      ]);
      assert.strictEqual(out.code, 0, out.stderr);
      const ptx = fs.readFileSync(output, 'utf8');
      assert.ok(ptx.includes(String(value)), 'the value NVRTC was given after "--" is in the PTX');
      assert.match(ptx, /\.loc\s/, '-lineinfo reached NVRTC');
      const bad = cli(['compile', file, '--arch', 'compute_90', '--no-cache', '--', '-DVALUE=1', '--no-such-option']);
      assert.strictEqual(bad.code, 1);
    });

    it('writes a cubin for sm_XY to -o', function () {
      const output = path.join(tmp, 'out.cubin');
      const out = cli(['compile', file, '-o', output, '--arch', 'sm_90', '-DVALUE=7', '--no-cache']);
      assert.strictEqual(out.code, 0, out.stderr);
      const cubin = fs.readFileSync(output);
      assert.strictEqual(cubin.subarray(0, 4).toString('latin1'), '\x7fELF');
    });

    it("a compile error prints NVRTC's log and exits 1; a missing file exits 1", function () {
      const out = cli(['compile', file, '--arch', 'sm_90', '--no-cache']); // VALUE undefined
      assert.strictEqual(out.code, 1);
      assert.match(out.stderr, /put\.cu\(1\): error: identifier "VALUE" is undefined/);
      const missing = cli(['compile', path.join(tmp, 'missing.cu'), '--arch', 'sm_90']);
      assert.strictEqual(missing.code, 1);
      assert.match(missing.stderr, /^cudadrv: cannot read .*missing\.cu: there is no such file \(ENOENT\)/);
    });

    it('a malformed arch or a second file is a usage error (exit 2)', function () {
      const arch = cli(['compile', file, '--arch', 'sm_9']);
      assert.strictEqual(arch.code, 2);
      assert.match(arch.stderr, /^cudadrv: arch must name an architecture/);
      const two = cli(['compile', file, file]);
      assert.strictEqual(two.code, 2);
      assert.match(two.stderr, /^cudadrv: compile takes one source file/);
    });
  });

  describe('the elapsed-time line of long work', function () {
    const { elapsedLine } = require('../../lib/cli/common');
    const stream = (isTTY) => ({
      isTTY,
      text: '',
      write(t) {
        this.text += t;
      },
    });
    const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

    it('on a terminal, appears once the work has taken the delay, is redrawn, and is cleared at the end', async function () {
      const tty = stream(true);
      const stop = elapsedLine(tty, 'compiling big.cu', { after: 30, every: 20 });
      await wait(10);
      assert.strictEqual(tty.text, '', 'nothing before the delay');
      await wait(90);
      stop();
      const lines = tty.text.split('\r').filter(Boolean);
      assert.ok(lines.length >= 3, JSON.stringify(tty.text));
      assert.ok(
        lines.slice(0, -1).every((l) => /^cudadrv: compiling big\.cu\.\.\. \d+ s$/.test(l)),
        JSON.stringify(lines),
      );
      assert.strictEqual(lines.at(-1), '\x1b[K');
      const quick = stream(true);
      elapsedLine(quick, 'compiling small.cu', { after: 30 })();
      await wait(50);
      assert.strictEqual(quick.text, '', 'work done before the delay shows nothing, and clears nothing');
    });

    it('in a pipe or a log, nothing is written', async function () {
      const pipe = stream(false);
      const stop = elapsedLine(pipe, 'compiling big.cu', { after: 1, every: 1 });
      await wait(20);
      stop();
      assert.strictEqual(pipe.text, '');
    });
  });
});
