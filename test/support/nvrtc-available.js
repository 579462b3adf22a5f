'use strict';
// Whether NVRTC loads here: the compiler's tests skip without it (it needs no GPU).
function nvrtcLoads() {
  try {
    require('../../lib/compiler/nvrtc').nvrtcVersion();
    return true;
  } catch {
    return false;
  }
}

module.exports = { nvrtcLoads };
