// Compiled by `tsc --strict` in npm test: the compiler's typings accept what the README shows.
import cuda = require('cudadrv');
import { compile, compileSync, SourceModule, DEFAULT_OPTIONS, CompiledImage, CompileOptions } from 'cudadrv/compiler';

async function main(): Promise<void> {
  const [major, minor]: [number, number] = cuda.nvrtcVersion();
  const again: [number, number] = cuda.compiler.nvrtcVersion();
  DEFAULT_OPTIONS.push('-lineinfo');
  const opts: CompileOptions = {
    options: ['-DN=4'],
    arch: 'sm_90',
    code: 'compute_90',
    includeDirs: ['.'],
    headers: { 'a.h': '' },
    nameExpressions: ['k<float>'],
    noExternC: true,
    keep: false,
    cacheDir: false,
    name: 'k.cu',
    messageHandler: (log: string) => console.log(log),
  };
  const ptx: CompiledImage = await compile('template <typename T> __global__ void k(T *x) {}', opts);
  const lowered: string = ptx.loweredNames['k<float>'];
  const cubin: Buffer = compileSync('__global__ void k() {}', { cacheDir: '/tmp/cudadrv-cache' });
  const text: string = `${ptx.target} ${ptx.log} ${cubin.length} ${ptx.keptIn ?? ''}`;
  try {
    compileSync('broken');
  } catch (e) {
    if (e instanceof cuda.CompileError) console.log(e.log, e.options, e.source, e.code, e.codeName, e.api);
  }
  const controller = new AbortController();
  try {
    await compile('__global__ void k() {}', { signal: controller.signal, timeout: 5000 });
  } catch (e) {
    if (e instanceof cuda.AbortError) console.log(e.name, e.cause);
  }
  const mod: SourceModule = new SourceModule('__global__ void k() {}');
  const later: SourceModule = await SourceModule.compile('__global__ void k() {}', { arch: 'sm_90' });
  const names: Record<string, string> = later.loweredNames;
  console.log(major, minor, again, lowered, text, mod.log, names, later.lowered('k'));
}

void main();
