'use strict';
// The system's libcuda.so.1, as the loader's cache names it, for the tools that put a library of
// their own before it (bench/call-times.js, the fuzzer's --trace-driver) or hide it (the
// fuzzer's no-driver mode).
const { spawnSync } = require('child_process');

// Its path (the x86-64 one where the cache holds several), or null where there is none.
function systemDriverPath() {
  // /sbin is not on a user's PATH on every distribution
  const cache =
    ['ldconfig', '/sbin/ldconfig'].map((c) => spawnSync(c, ['-p'], { encoding: 'utf8' }).stdout).find(Boolean) || '';
  const found =
    /\slibcuda\.so\.1 \(.*x86-64.*\) => (\S+)/.exec(cache) || /\slibcuda\.so\.1 \(.*\) => (\S+)/.exec(cache);
  return found ? found[1] : null;
}

module.exports = { systemDriverPath };
