'use strict';
// Whether NVRTC and nvJitLink load here: the compiler's and the linker's tests skip without them
// (they need no GPU).
function loads(load) {
  try {
    load();
    return true;
  } catch {
    return false;
  }
}

const nvrtcLoads = () => loads(() => require('../../lib/compiler/nvrtc').nvrtcVersion());
const nvJitLinkLoads = () => loads(() => require('../../lib/compiler/linker').nvJitLinkVersion());

module.exports = { nvrtcLoads, nvJitLinkLoads };
