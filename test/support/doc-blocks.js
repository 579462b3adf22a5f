'use strict';
// The code of the README, the guides and the declarations' @example blocks, as the docs tests read
// it (docs.test.js type-checks every js and ts block, docs-run.test.js runs every js block on the
// GPU).
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...fs
    .readdirSync(path.join(ROOT, 'typings'))
    .filter((f) => f.endsWith('.d.ts'))
    .map((f) => `typings/${f}`),
];

/** The code blocks of a Markdown page, or of a declaration file's comments: [{ lang, line, code }]. */
function codeBlocks(page) {
  const blocks = [];
  let lines = fs.readFileSync(path.join(ROOT, page), 'utf8').split('\n');
  // a comment's lines less their ' * ': its fences then start lines, as on a page
  if (page.endsWith('.d.ts')) lines = lines.map((line) => line.replace(/^\s*\*( |$)/, ''));
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('```')) continue;
    const end = lines.indexOf('```', i + 1);
    blocks.push({ lang: lines[i].slice(3), line: i + 1, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Whether a block is an ES module (it imports), and so a .mjs file; others are CommonJS. */
const isModule = (code) => /^import /m.test(code);

module.exports = { PAGES, codeBlocks, isModule };
