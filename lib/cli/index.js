'use strict';
// `cudadrv <command>`: info, doctor, compile. Exit codes: 0 done; 1 what was asked for failed (no
// driver, a problem found, a compile error); 2 the command line was wrong.
const { parseArgs } = require('util');
const { UsageError } = require('./common');

const COMMANDS = {
  info: () => require('./info'),
  doctor: () => require('./doctor'),
  compile: () => require('./compile'),
};

const USAGE = `usage: cudadrv <command> [options]   (cudadrv <command> --help: that command's)

  info [--json]          devices, driver, NVRTC, nvJitLink: versions, paths and free memory
  doctor [--json]        why the driver, NVRTC or the compile cache does not work, and the fix
  compile FILE.cu [-o OUT] [--arch sm_90] [-I DIR]... [-D NAME[=VALUE]]... [--no-cache]
          [--no-extern-c] [-- NVRTC OPTIONS...]
                         compile CUDA C++ with NVRTC (through cudadrv's cache); a compute_XY
                         arch writes PTX, an sm_XY one a cubin
  help, --help           this text
  --version              cudadrv's version

exit codes: 0 done, 1 failed (no driver, a problem found, a compile error), 2 wrong usage
`;

/** Runs the command line args (without node and the script); returns the exit code, or a Promise
 * of it for a command that works asynchronously (compile). */
function main(args) {
  const [name, ...rest] = args;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    (name ? process.stdout : process.stderr).write(USAGE);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`cudadrv ${require('../../package.json').version}\n`);
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, name)) return usage(`unknown command "${name}"`);
  const command = COMMANDS[name]();
  // what follows "--" goes to the command as it is (compile: NVRTC's options)
  const end = rest.indexOf('--');
  const own = end < 0 ? rest : rest.slice(0, end);
  const passed = end < 0 ? [] : rest.slice(end + 1);
  if (own.includes('--help') || own.includes('-h')) {
    process.stdout.write(command.usage);
    return 0;
  }
  let parsed;
  try {
    if (passed.length && !command.passes) throw new UsageError(`${name} takes nothing after "--"`);
    parsed = parseArgs({ args: own, options: command.options, allowPositionals: true, strict: true });
    const code = command.run(parsed.values, parsed.positionals, passed);
    return code instanceof Promise ? code.catch(failed) : code;
  } catch (error) {
    return failed(error);
  }
}

// The exit code of a command that threw error.
function failed(error) {
  if (error instanceof UsageError || String(error.code).startsWith('ERR_PARSE_ARGS')) return usage(error.message);
  process.stderr.write(`cudadrv: ${error.message}\n`); // a CudaError: NVRTC missing, a driver failure
  return 1;
}

function usage(message) {
  process.stderr.write(`cudadrv: ${message}\n\n${USAGE}`);
  return 2;
}

module.exports = { main };
