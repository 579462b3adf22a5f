'use strict';
// A file of checks that runs in a child process of its own, so that a crash fails one test, not
// Mocha: checksChild(module, main, label) runs main() where the file is the program (exit 1 on a
// failed check, label printed when all held), and returns run(env, args) for the test, which
// runs the file so, with env added to this process's, and asserts that it exited 0.
const assert = require('assert');
const { spawnSync } = require('child_process');

function checksChild(module, main, label) {
  if (require.main === module) {
    main().then(
      () => console.log(`${label}: every check held`),
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  }
  return (env, args = []) => {
    const child = spawnSync(process.execPath, ['--expose-gc', module.filename, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      timeout: 120000,
    });
    assert.strictEqual(child.status, 0, `${child.error ?? ''}\n${child.stdout}${child.stderr}`);
  };
}

module.exports = { checksChild };
