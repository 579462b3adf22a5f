'use strict';
// The shape of lib/ (DESIGN.md): no require cycles, lazy requires included, and no module reading
// another's underscore fields; the layers of src/, each folder including only those below it; no
// source file over 500 lines; the layouts lib/ and the addon share agree; and no test file requires
// another.
const assert = require('assert');
const fs = require('fs');
const path = require('path');

const LIB = path.join(__dirname, '..', '..', 'lib');
const files = fs
  .readdirSync(LIB, { recursive: true })
  .filter((f) => f.endsWith('.js'))
  .map((f) => path.join(LIB, f));

// lib/ file → the lib/ files it requires, wherever the require is (a lazy one counts).
function requires(file) {
  const text = fs.readFileSync(file, 'utf8');
  const found = [];
  for (const [, spec] of text.matchAll(/require\(\s*['"](\.{1,2}\/[^'"]*)['"]\s*\)/g)) {
    const base = path.resolve(path.dirname(file), spec);
    const target = [base, `${base}.js`, path.join(base, 'index.js')].find(
      (f) => fs.existsSync(f) && fs.statSync(f).isFile(),
    );
    if (target && target.startsWith(LIB)) found.push(target);
  }
  return found;
}

describe('the layout of lib/', function () {
  it('has no require cycles, lazy requires included', function () {
    const graph = new Map(files.map((f) => [f, requires(f)]));
    const cycles = [];
    const state = new Map(); // file → 'open' | 'done'
    const stack = [];
    const visit = (file) => {
      state.set(file, 'open');
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'open') {
          cycles.push(
            stack
              .slice(stack.indexOf(next))
              .concat(next)
              .map((f) => path.relative(LIB, f))
              .join(' → '),
          );
        } else if (!state.has(next)) {
          visit(next);
        }
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file);
    assert.deepStrictEqual(cycles, []);
  });

  it('no module reads an underscore field that another module defines', function () {
    const owners = new Map(); // field name → files using it
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      for (const name of new Set([...text.matchAll(/\.(_[A-Za-z]\w*)/g)].map((m) => m[1]))) {
        owners.set(name, [...(owners.get(name) ?? []), path.relative(LIB, file)]);
      }
    }
    const shared = [...owners].filter(([, users]) => users.length > 1).map(([name, users]) => `${name}: ${users}`);
    assert.deepStrictEqual(shared, []);
  });
});

// The folders of src/, lowest first: a file may include its own folder's headers and those of a
// lower level. src/addon.c, at the top, sees every layer.
const SRC = path.join(__dirname, '..', '..', 'src');
const LEVELS = { core: 0, driver: 1, cache: 1, memory: 2, kernel: 3, compiler: 4, '.': 5 };
const GENERATED = new Set(['cuda_constants.h']); // written into the build's intermediate directory

// Each problem with the quoted includes of texts ({ 'driver/context.c': text }, paths relative to
// src/): a header that is not in src/, an include of a folder not below the file's, a cycle.
function layerProblems(texts) {
  const problems = [];
  const graph = new Map();
  for (const [file, text] of Object.entries(texts)) {
    const folder = path.dirname(file);
    const edges = [];
    for (const [, name] of text.matchAll(/^\s*#\s*include\s+"([^"]+)"/gm)) {
      if (GENERATED.has(name)) continue;
      const target = path.normalize(path.join(folder, name));
      if (!(target in texts)) {
        problems.push(`${file} includes ${name}, which is not in src/`);
        continue;
      }
      const to = path.dirname(target);
      if (!(folder in LEVELS) || !(to in LEVELS)) problems.push(`${file}: ${folder} or ${to} has no level`);
      else if (to !== folder && LEVELS[to] >= LEVELS[folder])
        problems.push(`${file} includes ${target}: ${to}/ is not below ${folder}/`);
      edges.push(target);
    }
    graph.set(file, edges);
  }
  const state = new Map();
  const stack = [];
  const visit = (file) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file)) {
      if (state.get(next) === 'open')
        problems.push(`cycle: ${stack.slice(stack.indexOf(next)).concat(next).join(' → ')}`);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return problems;
}

describe('the layout of test/', function () {
  it('no test file requires another: under --parallel its tests would run again in the requiring file', function () {
    const TEST = path.join(__dirname, '..');
    const offenders = fs
      .readdirSync(TEST, { recursive: true })
      .filter((f) => f.endsWith('.test.js') && !f.includes('node_modules'))
      .filter((f) => /require\(\s*['"][^'"]*\.test(\.js)?['"]\s*\)/.test(fs.readFileSync(path.join(TEST, f), 'utf8')));
    assert.deepStrictEqual(offenders, []);
  });
});

describe('the layers of src/', function () {
  const texts = Object.fromEntries(
    fs
      .readdirSync(SRC, { recursive: true })
      .filter((f) => /\.[ch]$/.test(f))
      .map((f) => [path.normalize(f), fs.readFileSync(path.join(SRC, f), 'utf8')]),
  );

  it('each folder includes only its own headers and those of the folders below it, without cycles', function () {
    assert.deepStrictEqual(layerProblems(texts), []);
    assert.ok(Object.keys(texts).some((f) => f.startsWith('core/')) && 'addon.c' in texts);
  });

  it('finds an upward include, a sideways one, a stray header and a cycle', function () {
    const changed = (file, line) => ({ ...texts, [file]: `${line}\n${texts[file]}` });
    assert.deepStrictEqual(layerProblems(changed('core/args.c', '#include "../driver/driver.h"')), [
      'core/args.c includes driver/driver.h: driver/ is not below core/',
    ]);
    assert.deepStrictEqual(layerProblems(changed('cache/files.c', ' # include "../driver/driver.h"')), [
      'cache/files.c includes driver/driver.h: driver/ is not below cache/',
    ]);
    assert.deepStrictEqual(layerProblems(changed('driver/wait.c', '#include "waits.h"')), [
      'driver/wait.c includes waits.h, which is not in src/',
    ]);
    const cyclic = { 'kernel/a.h': '#include "b.h"', 'kernel/b.h': '#include "a.h"' };
    assert.deepStrictEqual(layerProblems({ ...texts, ...cyclic }), ['cycle: kernel/a.h → kernel/b.h → kernel/a.h']);
  });

  it('no source file of src/ or lib/ is over 500 lines', function () {
    const long = [];
    for (const [root, pattern] of [
      [SRC, /\.[ch]$/],
      [LIB, /\.js$/],
    ]) {
      for (const f of fs.readdirSync(root, { recursive: true }).filter((name) => pattern.test(name))) {
        const lines = fs.readFileSync(path.join(root, f), 'utf8').split('\n').length - 1;
        if (lines > 500) long.push(`${path.relative(path.join(root, '..'), path.join(root, f))}: ${lines}`);
      }
    }
    assert.deepStrictEqual(long, []);
  });
});

describe('the layouts lib/ and the addon share', function () {
  const layouts = require('../../lib/internal/layouts');
  const binding = require('../../lib/internal/binding');

  it('the addon exports each layout lib/ reads, with exactly the names lib/ knows', function () {
    for (const [layout, names] of Object.entries(layouts.NAMES)) {
      assert.deepStrictEqual(Object.keys(binding.layouts[layout]).sort(), [...names].sort(), layout);
    }
    assert.deepStrictEqual(Object.keys(binding.layouts).sort(), Object.keys(layouts.NAMES).sort());
  });

  it('a layout that differs (a name missing, added or not a number) stops lib/ at require, naming it', function () {
    const copy = (change) => {
      const exported = JSON.parse(JSON.stringify(binding.layouts));
      change(exported);
      return exported;
    };
    const cases = [
      [(l) => delete l.launch.shared, /launch lacks shared/],
      [(l) => (l.copy.extra = 3), /copy has extra, which lib\/ does not know/],
      [(l) => (l.made.id = '0'), /made lacks id/],
      [(l) => delete l.texture, /texture lacks kind, address/],
      [(l) => (l.other = {}), /unknown layouts other/],
    ];
    for (const [change, message] of cases) {
      assert.throws(() => layouts.checked(copy(change)), { name: 'Error', message });
      assert.throws(() => layouts.checked(copy(change)), { message: /npm rebuild cudadrv/ });
    }
    assert.strictEqual(layouts.checked(binding.layouts), binding.layouts);
  });

  it('the values hang together: the launch header holds its words, the copy fields two sides and an extent', function () {
    const { launch, copy, texture, made } = binding.layouts;
    assert.ok(launch.headerWords * 4 <= launch.headerBytes);
    const header = [launch.grid + 2, launch.block + 2, launch.shared, launch.attributes, launch.cluster + 2];
    header.push(launch.priority, launch.preferredCluster + 2, launch.scheduling, launch.syncDomain, launch.carveout);
    for (const slot of [...header, launch.triggerAtStart]) {
      assert.ok(slot < launch.headerWords, String(slot));
    }
    assert.strictEqual(copy.count, copy.depth + 1);
    assert.ok(copy.width >= 2 * copy.side);
    assert.ok(texture.maxAnisotropy < texture.count && texture.filterMode >= texture.addressMode + 3);
    // every slot of a layout is its own, and within the layout's count
    const slots = (layout, names) => names.map((n) => layout[n]);
    const sides = slots(copy, ['x', 'y', 'z', 'lod', 'type', 'device', 'pitch', 'height']);
    for (const [values, below] of [
      [slots(made, ['id', 'context', 'address']), made.count],
      [sides, copy.side],
      [slots(copy, ['width', 'rows', 'depth']), copy.count],
    ]) {
      assert.strictEqual(new Set(values).size, values.length, String(values));
      assert.ok(
        values.every((v) => v < below),
        String(values),
      );
    }
  });
});
