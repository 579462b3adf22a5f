'use strict';
// Mocha's configuration. `mocha` (npm test) runs the whole suite, its files in CUDADRV_TEST_JOBS
// processes at once (1 runs them in this one): most of the suite's time is child processes and
// compilers waiting, so two jobs take half the time even on two cores. Where a GPU is (its driver's
// device node, or CUDADRV_REQUIRE_GPU) the default is 1: GPU tests time kernels and one allocates
// the whole device, so they must not share it with another file's. `mocha FILE...` runs just those
// files, here: a spec in the configuration would be added to the command line's, not replaced by it.
const fs = require('fs');

// Options whose next argument is their value, not a file to run.
const TAKES_VALUE = new Set(['--require', '-r', '--reporter', '-R', '--reporter-option', '-O', '--config']);
TAKES_VALUE.add('--grep').add('-g').add('--fgrep').add('-f').add('--timeout').add('-t').add('--ignore');
TAKES_VALUE.add('--file').add('--extension').add('--ui').add('-u').add('--jobs').add('-j').add('--slow');

const args = process.argv.slice(2);
const files = args.filter((arg, i) => !arg.startsWith('-') && !TAKES_VALUE.has(args[i - 1]) && fs.existsSync(arg));

const gpu = fs.existsSync('/dev/nvidiactl') || Boolean(process.env.CUDADRV_REQUIRE_GPU);
const jobs = Number(process.env.CUDADRV_TEST_JOBS || (gpu ? 1 : 2));
if (!Number.isSafeInteger(jobs) || jobs < 1) throw new Error('CUDADRV_TEST_JOBS must be a whole number of 1 or more');

module.exports = {
  ...(files.length ? {} : { spec: ['test/**/*.test.js'], ...(jobs > 1 ? { parallel: true, jobs } : {}) }),
  ignore: ['test/runtimes/node_modules/**'],
  timeout: 30000,
  'node-option': ['expose-gc'],
  reporter: 'test/support/reporter.js',
  require: ['test/support/setup.js'],
};
