'use strict';
// `cudadrv compile FILE.cu -o OUT --arch sm_90`: NVRTC through cudadrv's compile cache. A compute_XY
// arch writes PTX, an sm_XY one a cubin; NVRTC's warnings go to stderr, a compile error's log too
// (exit code 1).
const fs = require('fs');
const path = require('path');
const { UsageError } = require('./common');
const { readBounded } = require('../internal/files');

const SOURCE_LIMIT = 64 * 1024 * 1024; // bytes of source read

const options = {
  output: { type: 'string', short: 'o' },
  arch: { type: 'string' },
  include: { type: 'string', short: 'I', multiple: true, default: [] },
  define: { type: 'string', short: 'D', multiple: true, default: [] },
  'no-cache': { type: 'boolean' },
  'no-extern-c': { type: 'boolean' },
};

function run(values, positionals) {
  if (positionals.length !== 1) throw new UsageError('compile takes one source file');
  const { compileSync, DEFAULT_OPTIONS, CompileError } = { ...require('../compiler'), ...require('..') };
  const [file] = positionals;
  let source;
  try {
    source = readBounded(file, SOURCE_LIMIT, `cannot read ${file}`).toString();
  } catch (error) {
    process.stderr.write(`cudadrv: ${error.message}\n`);
    return 1;
  }
  let image;
  try {
    image = compileSync(source, {
      name: path.basename(file),
      arch: values.arch,
      includeDirs: [path.dirname(path.resolve(file)), ...values.include],
      options: [...DEFAULT_OPTIONS, ...values.define.map((d) => `-D${d}`)],
      noExternC: values['no-extern-c'] ?? false,
      cacheDir: values['no-cache'] ? false : undefined,
      messageHandler: (log) => process.stderr.write(log),
    });
  } catch (error) {
    // A bad --arch or -I is the command line's fault.
    if (error instanceof RangeError || error instanceof TypeError) throw new UsageError(error.message);
    if (!(error instanceof CompileError)) throw error;
    process.stderr.write(`cudadrv: ${error.message}\n`);
    return 1;
  }
  const extension = image.target.startsWith('sm_') ? '.cubin' : '.ptx';
  const output = values.output ?? path.join(path.dirname(file), path.basename(file, path.extname(file)) + extension);
  fs.writeFileSync(output, image);
  process.stderr.write(`cudadrv: wrote ${output} (${image.target}, ${image.length} bytes)\n`);
  return 0;
}

module.exports = { options, run };
