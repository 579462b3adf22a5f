'use strict';
// Mocha's configuration. `mocha` (npm test) runs the whole suite; `mocha FILE...` runs just those
// files: a spec in the configuration would be added to the command line's, not replaced by it.
const fs = require('fs');

// Options whose next argument is their value, not a file to run.
const TAKES_VALUE = new Set(['--require', '-r', '--reporter', '-R', '--reporter-option', '-O', '--config']);
TAKES_VALUE.add('--grep').add('-g').add('--fgrep').add('-f').add('--timeout').add('-t').add('--ignore');
TAKES_VALUE.add('--file').add('--extension').add('--ui').add('-u').add('--jobs').add('-j').add('--slow');

const args = process.argv.slice(2);
const files = args.filter((arg, i) => !arg.startsWith('-') && !TAKES_VALUE.has(args[i - 1]) && fs.existsSync(arg));

module.exports = {
  ...(files.length ? {} : { spec: ['test/**/*.test.js'] }),
  ignore: ['test/runtimes/node_modules/**'],
  timeout: 30000,
  'node-option': ['expose-gc'],
  reporter: 'test/support/reporter.js',
  require: ['test/support/setup.js'],
};
