'use strict';
// Every js block of the README, the guides and the declarations' @examples runs as written, on the GPU: each is a file of its
// own in a consumer project that installs cudadrv by its name (an ES module where it imports),
// run by node, or by Mocha with cudadrv's plugin where it is a test (it uses it() or
// describeGpu()), and must exit 0. A block whose first line names a file (`// importer.js`) is
// that file, written beside the others for a block that starts it, and not run itself.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { describeGpu } = require('../support/gpu');
const { consumerProject } = require('../support/consumer-project');
const { PAGES, codeBlocks, isModule } = require('../support/doc-blocks');

const MOCHA = path.join(__dirname, '..', '..', 'node_modules', 'mocha', 'bin', 'mocha.js');
const NAMED = /^\/\/ ([\w-]+\.m?js)\n/;
const isTest = (code) => /^(describeGpu|describe|it)\(/m.test(code);

describeGpu("the code in the README, the guides and the declarations' examples, run on the GPU", function () {
  let project;

  before(function () {
    project = consumerProject('docs-run');
    fs.writeFileSync(path.join(project, 'package.json'), '{ "type": "commonjs" }\n');
    for (const page of PAGES) {
      for (const { lang, code } of codeBlocks(page)) {
        const named = lang === 'js' && NAMED.exec(code);
        if (named) fs.writeFileSync(path.join(project, named[1]), code);
      }
    }
  });

  after(function () {
    if (project) fs.rmSync(project, { recursive: true, force: true });
  });

  for (const page of PAGES) {
    const blocks = codeBlocks(page).filter(({ lang, code }) => lang === 'js' && !NAMED.test(code));
    for (const { line, code } of blocks) {
      it(`${page}, the block at line ${line}`, function () {
        this.timeout(120000);
        const file = path.join(project, `${page.replace(/[/.]/g, '_')}_${line}.${isModule(code) ? 'mjs' : 'js'}`);
        fs.writeFileSync(file, `${code}\n`);
        // the plugin by its path: this Mocha is cudadrv's own, outside the project
        const plugin = () => require.resolve('cudadrv/testing/mocha', { paths: [project] });
        const command = isTest(code) ? [MOCHA, '--require', plugin(), file] : [file];
        const child = spawnSync(process.execPath, command, { cwd: project, encoding: 'utf8', timeout: 100000 });
        assert.strictEqual(
          child.status,
          0,
          `exit ${child.status} (${child.signal}):\n${child.stdout}\n${child.stderr}`,
        );
      });
    }
  }
});
