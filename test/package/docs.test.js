'use strict';
// The README's and the guides' code: every js and ts block is type-checked by tsc --strict
// (TypeScript 7) in a consumer project that installs cudadrv by its name. A block is a file of
// its own: ES modules (a block with import) as they are, others as CommonJS (checkJs), inside an
// async function where they await. A block that does not declare `cuda` gets it required.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { consumerProject } = require('../support/consumer-project');

const ROOT = path.join(__dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

// The languages a block may be marked with; js and ts blocks are checked, the others are shell
// commands, C++ or output.
const LANGUAGES = new Set(['js', 'ts', 'sh', 'cuda', 'c', 'json', 'text']);

/** The code blocks of a Markdown page: [{ lang, line, code }]. */
function codeBlocks(page) {
  const blocks = [];
  const lines = fs.readFileSync(path.join(ROOT, page), 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('```')) continue;
    const end = lines.indexOf('```', i + 1);
    blocks.push({ lang: lines[i].slice(3), line: i + 1, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** The file a block is checked as: [name, text]. */
function fileOf(page, { lang, line, code }) {
  const base = `${page.replace(/[/.]/g, '_')}_${line}`;
  const esm = /^import /m.test(code);
  const needsCuda = !/\b(const|import) cuda\b|\bimport \* as cuda\b/.test(code);
  if (esm) {
    return [
      `${base}.${lang === 'ts' ? 'mts' : 'mjs'}`,
      `${needsCuda ? "import cuda from 'cudadrv';\n" : ''}${code}\nexport {};\n`,
    ];
  }
  const prelude = needsCuda
    ? lang === 'ts'
      ? "import cuda = require('cudadrv');\n"
      : "const cuda = require('cudadrv');\n"
    : '';
  const body = /\bawait\b/.test(code) ? `(async () => {\n${code}\n})();` : code;
  const tail = lang === 'ts' ? '\nexport {};\n' : '\n'; // a .cts file is a module only with an export
  return [`${base}.${lang === 'ts' ? 'cts' : 'js'}`, `${prelude}${body}${tail}`];
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
