// Compiled by `tsc --strict` in npm test: the kernel typings accept what the README shows, launch
// attributes included, and refuse what the code refuses.
import cuda = require('cudadrv');

async function launches(module: cuda.Module, out: cuda.DeviceAllocation, stream: cuda.Stream): Promise<void> {
  const kernel: cuda.Kernel = module.getFunction('cluster_info');
  kernel(out, { block: [64], grid: [8, 4, 2], cluster: [2, 2, 2] });
  kernel(out, { block: 128, grid: 264, stream, cooperative: true, shared: 1024 });
  const seconds: number = await kernel(out, { block: 64, grid: 16, cluster: 8, timeKernel: true });
  const prepared: cuda.Kernel = kernel.prepare('P');
  prepared.preparedCall([10], [64], out, { cluster: [2], shared: 1024 });
  prepared.preparedCall(3, 64, out);
  prepared.preparedAsyncCall(264, 128, stream, out, { cooperative: true });
  const timed: (options?: cuda.WaitOptions) => Promise<number> = prepared.preparedTimedCall(1, 1, out, {
    cooperative: false,
  });
  const signal = AbortSignal.timeout(1000);
  const late: number = await kernel(out, { block: 64, timeKernel: true, signal });
  const hosted: string = await stream.launchHostFunc(() => 'here', { signal });
  // @ts-expect-error a signal is an AbortSignal
  kernel(out, { block: 1, signal: 'soon' });
  const options: cuda.PreparedOptions = { cluster: 4, cooperative: true };
  const attributes: cuda.LaunchAttributes = options;
  // @ts-expect-error cooperative is a boolean
  kernel(out, { block: 1, cooperative: 1 });
  // @ts-expect-error a cluster has 1 to 3 dimensions
  kernel(out, { block: 1, cluster: [1, 1, 1, 1] });
  console.log(seconds, await timed({ signal }), late, hosted, attributes);
}

void launches;
