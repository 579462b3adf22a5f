// Compiled by `tsc --strict` in npm test: the typings accept what the README shows.
import cuda = require('cudadrv');
import autoinit = require('cudadrv/autoprimaryctx');

async function main(): Promise<void> {
  if (!cuda.isAvailable()) return;
  const dev: cuda.Device = new cuda.Device(0);
  const cc: [number, number] = dev.computeCapability();
  const sms: number = dev.multiprocessorCount;
  const ctx: cuda.Context = dev.makeContext(cuda.CtxFlags.SCHED_AUTO);
  const stream = new cuda.Stream(cuda.StreamFlags.NON_BLOCKING);
  const start = new cuda.Event().record(stream);
  const end = new cuda.Event().record(stream);
  const same: cuda.Stream = await stream.synchronize();
  await end.synchronize();
  const ms: number = end.timeSince(start);
  cuda.Context.setLimit(cuda.Limit.STACK_SIZE, 2048);
  const current: cuda.Context | null = cuda.Context.getCurrent();
  try {
    new cuda.Device(99);
  } catch (e) {
    if (e instanceof cuda.CudaError) console.log(e.code, e.codeName, e.api);
  }
  const { liveHandles, cleanupsFailed }: { liveHandles: number; cleanupsFailed: number } = cuda.stats();
  console.log(cc, sms, same, ms, current, autoinit.device.name(), liveHandles, cleanupsFailed);
  const controller = new AbortController();
  const waits: cuda.WaitOptions = { signal: controller.signal };
  await stream.synchronize(waits);
  await end.synchronize({ signal: AbortSignal.timeout(1000) });
  await cuda.Context.synchronize(waits);
  await ctx.synchronize({});
  {
    await using scoped = new cuda.Stream();
    await scoped.synchronize();
  }
  ctx.detach();
}

void main();
