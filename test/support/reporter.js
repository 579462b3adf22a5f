'use strict';
// Mocha's spec reporter, closing with one plain line that CI reads: "N passed, N failed, N skipped".
const Mocha = require('mocha');

class CountingSpec extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once('end', () => {
      const { passes, failures, pending } = this.stats;
      process.stdout.write(`${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}

module.exports = CountingSpec;
