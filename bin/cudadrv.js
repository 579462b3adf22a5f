#!/usr/bin/env node
'use strict';
// The command line: cudadrv info | doctor | compile (lib/cli/).
Promise.resolve(require('../lib/cli').main(process.argv.slice(2))).then((code) => {
  process.exitCode = code;
});
