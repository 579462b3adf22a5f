#!/usr/bin/env node
'use strict';
// The command line: cudadrv info | doctor | compile (lib/cli/).
process.exitCode = require('../lib/cli').main(process.argv.slice(2));
