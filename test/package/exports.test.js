'use strict';
// What the package exports at run time against what its declarations say, for every subpath of
// package.json "exports"; and a consumer project that imports each subpath by the package's name
// type-checks under both module resolutions TypeScript users have: node16 (TypeScript 7, "exports")
// and the old node10 (TypeScript 5, "typesVersions").
const assert = require('assert');
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { consumerProject } = require('../support/consumer-project');
const ts = require('typescript5');
const { standInDriver } = require('../support/stand-in-driver');

const ROOT = path.join(__dirname, '..', '..');
const pkg = require('../../package.json');
// The declarations of a subpath for require() (".": per condition, the others for both)
const typesOf = (key) => pkg.exports[key].types ?? pkg.exports[key].require?.types;
const SUBPATHS = Object.keys(pkg.exports).filter(typesOf);

/* The value (not type-only) names a declaration file exports. */
function declaredValues(file) {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    types: ['node'],
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
  });
  const checker = program.getTypeChecker();
  const symbol = checker.getSymbolAtLocation(program.getSourceFile(file));
  return checker
    .getExportsOfModule(symbol)
    .filter((s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s).flags & ts.SymbolFlags.Value)
    .map((s) => s.name)
    .sort();
}

describe('exports and declarations', function () {
  this.timeout(120000);
  const standIn = standInDriver(); // autoinit makes a context when required

  let runtime;
  before(function () {
    // Each subpath required by the package's name, in a child of its own (autoinit makes a context).
    const script = `
      const specifiers = ${JSON.stringify(SUBPATHS.map((key) => key.replace(/^\./, 'cudadrv')))};
      (async () => {
        const out = {};
        for (const specifier of specifiers) out[specifier] = Object.keys(require(specifier)).sort();
        out.esm = Object.keys(await import('cudadrv')).filter((name) => name !== 'default').sort();
        console.log(JSON.stringify(out));
        process.exit(0);
      })();`;
    const modules = consumerProject('exports');
    try {
      const env = { ...process.env, LD_LIBRARY_PATH: standIn.dir };
      runtime = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: modules, env }).toString());
    } finally {
      fs.rmSync(modules, { recursive: true, force: true });
    }
  });

  for (const key of SUBPATHS) {
    it(`${key.replace(/^\./, 'cudadrv')}: every runtime export is declared, every declared value exists`, function () {
      const declared = declaredValues(path.join(ROOT, typesOf(key)));
      assert.deepStrictEqual(runtime[key.replace(/^\./, 'cudadrv')], declared);
    });
  }

  it("the ES module's named exports are the CommonJS module's, and its declarations (index.d.mts) say so", function () {
    assert.deepStrictEqual(runtime.esm, runtime.cudadrv);
    const declared = declaredValues(path.join(ROOT, pkg.exports['.'].import.types));
    assert.deepStrictEqual(
      declared.filter((name) => name !== 'default'),
      runtime.esm,
    );
    assert.ok(declared.includes('default'), 'import cuda from "cudadrv" is declared');
  });

  it('typesVersions maps every subpath to the declarations "exports" names', function () {
    const mapped = Object.fromEntries(
      Object.entries(pkg.typesVersions['*']).map(([key, [file]]) => [`./${key}`, `./${file}`]),
    );
    const expected = Object.fromEntries(SUBPATHS.filter((key) => key !== '.').map((key) => [key, typesOf(key)]));
    assert.deepStrictEqual(mapped, expected);
  });

  describe('a consumer project', function () {
    let project;
    before(function () {
      project = consumerProject('consumer', ['node']);
      // A wrong type on each import: only declarations that were found can catch it.
      const lines = SUBPATHS.map((key, i) => {
        const specifier = key.replace(/^\./, 'cudadrv');
        return `import * as m${i} from '${specifier}';\nconst n${i}: number = m${i};\nexport { n${i} };`;
      });
      fs.writeFileSync(path.join(project, 'consumer.ts'), `${lines.join('\n')}\n`);
    });
    after(function () {
      if (project) fs.rmSync(project, { recursive: true, force: true });
    });

    /* tsc's diagnostics: one error code per import when every subpath has its declarations. */
    function errors(test, compiler, resolution) {
      if (!fs.existsSync(compiler)) {
        console.log(`      (skipped: no TypeScript compiler at ${compiler})`); // the GPU machine's copy has none
        test.skip();
      }
      const args = ['--noEmit', '--strict', '--module', resolution === 'node10' ? 'commonjs' : 'node16'];
      args.push('--moduleResolution', resolution, '--types', 'node', 'consumer.ts');
      if (resolution === 'node10') args.push('--ignoreDeprecations', '5.0');
      const result = spawnSync(process.execPath, [compiler, ...args], { cwd: project, encoding: 'utf8' });
      return [...result.stdout.matchAll(/error (TS\d+)/g)].map((m) => m[1]);
    }

    it('node16 resolution (TypeScript 7) finds the declarations of every subpath', function () {
      const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      assert.deepStrictEqual(
        errors(this, tsc, 'node16'),
        SUBPATHS.map(() => 'TS2322'),
      );
    });

    it('node10 resolution (TypeScript 5, typesVersions) finds the declarations of every subpath', function () {
      const tsc = path.join(ROOT, 'node_modules', 'typescript5', 'bin', 'tsc');
      assert.deepStrictEqual(
        errors(this, tsc, 'node10'),
        SUBPATHS.map(() => 'TS2322'),
      );
    });
  });
});
