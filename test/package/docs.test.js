'use strict';
// The README's and the guides' code: every js and ts block is type-checked by tsc --strict
// (TypeScript 7) in a consumer project that installs cudadrv by its name, each as written, a file
// of its own: ES modules (a block with import) as they are, others as CommonJS (checkJs). Nothing
// is added: a block that uses cuda requires it and makes its context itself (the GPU suite runs
// every block: test/package/docs-run.test.js).
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { consumerProject } = require('../support/consumer-project');
const { PAGES, codeBlocks, isModule } = require('../support/doc-blocks');

const ROOT = path.join(__dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
// What a newcomer reaches for first: each has an @example in its declaration's comment.
const MAIN = ['Device', 'Context', 'GreenContext', 'Stream', 'Event', 'memAlloc', 'toDevice', 'memcpyHtoD'];
MAIN.push('pagelockedEmpty', 'memPrefetchAsync', 'MemoryPool', 'GrowableBuffer', 'Kernel', 'Module', 'TensorMap');
MAIN.push('compile', 'Linker', 'SourceModule', 'Graph', 'GraphExec', 'makeDefaultContext', 'OccupancyRecord');
MAIN.push('DeviceMemoryPool', 'describeGpu');

// The languages a block may be marked with; js and ts blocks are checked, the others are shell
// commands, C++ or output.
const LANGUAGES = new Set(['js', 'ts', 'sh', 'cuda', 'c', 'json', 'text']);

/** The file a block is checked as, as written: [name, text]. An ES module (a block with import) is
 * a .mjs file, any other block a CommonJS .js file (top-level await is an error there). */
function fileOf(page, { lang, line, code }) {
  const base = `${page.replace(/[/.]/g, '_')}_${line}`;
  const esm = isModule(code);
  const extension = { js: esm ? 'mjs' : 'js', ts: esm ? 'mts' : 'cts' }[lang];
  return [`${base}.${extension}`, `${code}\n${esm || lang === 'ts' ? 'export {};\n' : ''}`];
}

describe('the code in the README and the guides', function () {
  this.timeout(120000);
  let project;

  before(function () {
    if (!fs.existsSync(TSC)) {
      console.log(`      (skipped: no TypeScript compiler at ${TSC})`); // the GPU machine's copy has none
      this.skip();
    }
    project = consumerProject('docs', ['node', 'mocha']);
    fs.writeFileSync(path.join(project, 'package.json'), '{ "type": "commonjs" }\n');
    const compilerOptions = {
      strict: true,
      noEmit: true,
      allowJs: true,
      checkJs: true,
      target: 'es2022',
      module: 'node16',
      moduleResolution: 'node16',
      lib: ['es2022', 'esnext.disposable'],
      types: ['node', 'mocha'],
      noUnusedLocals: false,
    };
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*'] }));
  });

  after(function () {
    if (project) fs.rmSync(project, { recursive: true, force: true });
  });

  it('every block says its language, so that none escapes the check', function () {
    for (const page of PAGES) {
      for (const { lang, line } of codeBlocks(page)) {
        assert.ok(LANGUAGES.has(lang), `${page}:${line}: a block marked '${lang}' (use one of ${[...LANGUAGES]})`);
      }
    }
  });

  it('the main classes and functions each have an @example', function () {
    const text = fs
      .readdirSync(path.join(ROOT, 'typings'))
      .filter((f) => f.endsWith('.d.ts'))
      .map((f) => fs.readFileSync(path.join(ROOT, 'typings', f), 'utf8'))
      .join('\n');
    const missing = MAIN.filter((name) => {
      const declaration = new RegExp(`\\*/\\s*export declare (class|function) ${name}\\b`).exec(text);
      return (
        !declaration || !text.slice(text.lastIndexOf('/**', declaration.index), declaration.index).includes('@example')
      );
    });
    assert.deepStrictEqual(missing, []);
  });

  for (const page of PAGES.filter((p) => codeBlocks(p).some((b) => b.lang === 'js' || b.lang === 'ts'))) {
    it(`${page}: every js and ts block type-checks`, function () {
      const blocks = codeBlocks(page).filter((b) => b.lang === 'js' || b.lang === 'ts');
      for (const file of fs.readdirSync(project)) if (/\.(c|m)?(j|t)s$/.test(file)) fs.rmSync(path.join(project, file));
      const where = new Map();
      for (const block of blocks) {
        const [name, text] = fileOf(page, block);
        fs.writeFileSync(path.join(project, name), text);
        where.set(name, block.line);
      }
      const result = spawnSync(process.execPath, [TSC, '-p', '.'], { cwd: project, encoding: 'utf8' });
      // "file(line,col): error TS...": named by the page's block and its line there.
      const errors = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) =>
          line.replace(
            /^([^(]+)\((\d+),(\d+)\)/,
            (m, name, row) => `${page} block at line ${where.get(name)}, its line ${row - 1}`,
          ),
        );
      assert.deepStrictEqual(errors, []);
    });
  }
});
