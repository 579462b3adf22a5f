'use strict';
// Every Node-API call in src/ has its status checked: passed to NAPI_CALL or NAPI_CALL_BOOL,
// compared, assigned, returned, or counted through NAPI_UNTHROWN where nothing can be thrown. A
// call standing alone as a statement, or cast to void, drops its status: this test names it.
const assert = require('assert');
const fs = require('fs');
const path = require('path');

const SRC = path.join(__dirname, '..', '..', 'src');

// The source without comments and string literals (same length, so offsets keep their lines).
function codeOnly(text) {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, (m) =>
    m.replace(/[^\n]/g, ' '),
  );
}

// Where the parenthesis closing at `close` opens.
function opening(code, close) {
  let depth = 0;
  for (let i = close; i >= 0; i--) {
    if (code[i] === ')') depth++;
    else if (code[i] === '(' && --depth === 0) return i;
  }
  return -1;
}

// The Node-API calls of code whose status is dropped: [{ line, call }].
function droppedStatuses(code) {
  const dropped = [];
  for (const m of code.matchAll(/\bnapi_[a-z0-9_]+(?=\s*\()/g)) {
    if (m[0] === 'napi_fail') continue; // the addon's own thrower, not Node-API
    let i = m.index - 1;
    while (i >= 0 && /\s/.test(code[i])) i--;
    let statement = ';{}'.includes(code[i]) || /\belse$/.test(code.slice(0, i + 1));
    if (code[i] === ')') {
      const open = opening(code, i);
      const before = code.slice(0, open).trimEnd();
      statement = /\b(if|for|while)$/.test(before) || /^\(\s*void\s*\)$/.test(code.slice(open, i + 1));
    }
    if (statement) dropped.push({ line: code.slice(0, m.index).split('\n').length, call: m[0] });
  }
  return dropped;
}

describe('Node-API statuses', function () {
  it('the checker finds a dropped status, and passes checked ones', function () {
    const sample = codeOnly(`
      void f(napi_env env) {
        napi_delete_reference(env, r);
        if (x) napi_typeof(env, v, &t);
        else napi_typeof(env, v, &t);
        (void)napi_get_null(env, &n);
        NAPI_CALL(env, napi_get_null(env, &n));
        if (napi_typeof(env, v, &t) != napi_ok) return;
        napi_status s = napi_typeof(env, v, &t);
        NAPI_UNTHROWN(napi_delete_reference(env, r)); /* napi_typeof(x); */
      }`);
    assert.deepStrictEqual(
      droppedStatuses(sample).map((d) => d.line),
      [3, 4, 5, 6],
    );
  });

  it('no call in src/ drops its status', function () {
    const found = [];
    for (const file of fs.readdirSync(SRC, { recursive: true }).filter((f) => f.endsWith('.c'))) {
      const code = codeOnly(fs.readFileSync(path.join(SRC, file), 'utf8'));
      for (const { line, call } of droppedStatuses(code)) found.push(`src/${file}:${line} ${call}`);
    }
    assert.deepStrictEqual(found, []);
  });
});
