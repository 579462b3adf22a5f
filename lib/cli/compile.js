'use strict';
// `cudadrv compile FILE.cu -o OUT --arch sm_90`: NVRTC through cudadrv's compile cache. A compute_XY
// arch writes PTX, an sm_XY one a cubin; NVRTC's warnings go to stderr, a compile error's log too
// (exit code 1).
const fs = require('fs');
const path = require('path');
const { UsageError, elapsedLine } = require('./common');
const { readBounded } = require('../internal/files');

const SOURCE_LIMIT = 64 * 1024 * 1024; // bytes of source read

const usage = `usage: cudadrv compile FILE.cu [options] [-- NVRTC OPTIONS...]

  -o, --output OUT       where to write (FILE.ptx or FILE.cubin beside the source by default)
  --arch ARCH            compute_XY writes PTX, sm_XY a cubin (the current device's by default)
  -I, --include DIR      a directory of headers (repeatable)
  -D, --define N[=V]     a macro (repeatable)
  --no-cache             compile even where cudadrv's cache has the result
  --no-extern-c          keep C++ linkage: templates and overloads (then the names are mangled)
  -- OPTIONS...          NVRTC's own options, as they are (-O3, --use_fast_math, -lineinfo)

exit codes: 0 written, 1 a compile error or an unreadable file, 2 wrong usage
`;

const options = {
  output: { type: 'string', short: 'o' },
  arch: { type: 'string' },
  include: { type: 'string', short: 'I', multiple: true, default: [] },
  define: { type: 'string', short: 'D', multiple: true, default: [] },
  'no-cache': { type: 'boolean' },
  'no-extern-c': { type: 'boolean' },
};

async function run(values, positionals, nvrtcOptions) {
  if (positionals.length !== 1) throw new UsageError('compile takes one source file');
  const { compile, DEFAULT_OPTIONS, CompileError } = { ...require('../compiler'), ...require('..') };
  const [file] = positionals;
  let source;
  try {
    source = readBounded(file, SOURCE_LIMIT, `cannot read ${file}`).toString();
  } catch (error) {
    process.stderr.write(`cudadrv: ${error.message}\n`);
    return 1;
  }
  let image;
  // on a terminal, a compile that takes more than 2 s says so as it goes (NVRTC runs on a thread)
  const stop = elapsedLine(process.stderr, `compiling ${path.basename(file)}`);
  try {
    image = await compile(source, {
      name: path.basename(file),
      arch: values.arch,
      includeDirs: [path.dirname(path.resolve(file)), ...values.include],
      options: [...DEFAULT_OPTIONS, ...values.define.map((d) => `-D${d}`), ...nvrtcOptions],
      noExternC: values['no-extern-c'] ?? false,
      cacheDir: values['no-cache'] ? false : undefined,
      messageHandler: (log) => process.stderr.write(log),
    });
  } catch (error) {
    stop();
    // A bad --arch or -I is the command line's fault.
    if (error instanceof RangeError || error instanceof TypeError) throw new UsageError(error.message);
    if (!(error instanceof CompileError)) throw error;
    process.stderr.write(`cudadrv: ${error.message}\n`);
    return 1;
  }
  stop();
  const extension = image.target.startsWith('sm_') ? '.cubin' : '.ptx';
  const output = values.output ?? path.join(path.dirname(file), path.basename(file, path.extname(file)) + extension);
  fs.writeFileSync(output, image);
  process.stderr.write(`cudadrv: wrote ${output} (${image.target}, ${image.length} bytes)\n`);
  return 0;
}

module.exports = { options, run, usage, passes: true };
