'use strict';
// Prints the CUDA toolkit's include directory for binding.gyp, or fails the build saying what to
// install. Only the headers are needed to build: the driver and NVRTC are loaded at run time.
const fs = require('fs');
const path = require('path');

const roots = [process.env.CUDA_PATH, process.env.CUDA_HOME, '/usr/local/cuda'].filter(Boolean);
for (const root of roots) {
  const include = path.join(root, 'include');
  if (fs.existsSync(path.join(include, 'cuda.h')) && fs.existsSync(path.join(include, 'nvrtc.h'))) {
    process.stdout.write(include);
    process.exit(0);
  }
}
process.stderr.write(
  'cudadrv: the CUDA toolkit headers (cuda.h, nvrtc.h) were not found in ' +
    roots.join(', ') +
    '.\ncudadrv: install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads), or set ' +
    'CUDA_PATH to the directory that holds include/cuda.h, then run npm install again.\n',
);
process.exit(1);
