'use strict';
// The documentation site as a reader follows it: built by TypeDoc (scripts/docs.js, as npm run
// docs) into a directory of its own, every link and source on every page leads somewhere. A
// relative link must name a file the site holds, and its #fragment an id on that page (the
// README's and the guides' links between each other included). Links off the site are listed by
// host, not followed: this machine reaches no web server.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const TYPEDOC = path.join(ROOT, 'scripts', 'docs', 'node_modules', 'typedoc');

function pages(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return pages(full);
    return entry.name.endsWith('.html') ? [full] : [];
  });
}

// The ids a page defines (id="..." and name="..."), decoded as a browser matches a fragment.
const idsCache = new Map();
function idsOf(file) {
  if (!idsCache.has(file)) {
    const html = fs.readFileSync(file, 'utf8');
    idsCache.set(file, new Set([...html.matchAll(/\s(?:id|name)="([^"]*)"/g)].map((m) => m[1])));
  }
  return idsCache.get(file);
}

describe('the documentation site', function () {
  this.timeout(180000);
  let site;

  before(function () {
    if (!fs.existsSync(path.join(ROOT, 'node_modules', '.bin', 'tsc'))) this.skip(); // the GPU machine's copy
    site = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-site-'));
    const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'docs.js'), '--out', site], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.strictEqual(built.status, 0, `the docs build failed:\n${built.stdout}${built.stderr}`);
    assert.ok(fs.existsSync(TYPEDOC), 'scripts/docs.js installed TypeDoc');
  });

  after(function () {
    if (site) fs.rmSync(site, { recursive: true, force: true });
  });

  it('opens on the README and lists every guide', function () {
    const index = fs.readFileSync(path.join(site, 'index.html'), 'utf8');
    assert.match(index, /Quick start/);
    const guides = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
    assert.strictEqual(fs.readdirSync(path.join(site, 'documents')).length, guides.length);
  });

  it('every relative link and source names a file of the site, and every #fragment an id on it', function () {
    const broken = [];
    const hosts = new Set();
    for (const page of pages(site)) {
      const html = fs.readFileSync(page, 'utf8');
      for (const [, target] of html.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
        if (/^(https?:)?\/\//.test(target)) {
          hosts.add(new URL(target, 'https://x').host);
          continue;
        }
        if (/^(mailto|data|javascript):/.test(target)) continue;
        const [file, fragment] = target.split('#');
        const resolved = file ? path.resolve(path.dirname(page), decodeURIComponent(file.split('?')[0])) : page;
        const where = `${path.relative(site, page)}: ${target}`;
        if (!resolved.startsWith(site + path.sep) || !fs.existsSync(resolved)) broken.push(`${where} (no such file)`);
        else if (fragment && resolved.endsWith('.html') && !idsOf(resolved).has(decodeURIComponent(fragment))) {
          broken.push(`${where} (no such id)`);
        }
      }
    }
    assert.deepStrictEqual(broken, []);
    assert.ok(hosts.size > 0, 'links off the site were seen, so links were read at all');
  });
});
