// Compiled by `tsc --strict` in npm test: the tools typings accept what the README shows.
import cuda = require('cudadrv');
import tools = require('cudadrv/tools');
import auto = require('cudadrv/autoinit');

function toolsUsage(): void {
  const ctx: cuda.Context = tools.makeDefaultContext();
  const primary = tools.makeDefaultContext((dev) => {
    const c = dev.retainPrimaryContext();
    c.push();
    return c;
  });
  const dev: cuda.Device = tools.getDefaultDevice(0);
  const compile = tools.contextDependentMemoize((name: string, n: number) => `${name}${n}`, { maxSize: 16 });
  const key: string = compile('k', 3);
  tools.clearContextCaches();
  const test = tools.markCudaTest(async (c: cuda.Context) => {
    c.synchronizeSync();
  });

  const data = new tools.DeviceData(auto.device);
  const fromAttributes = new tools.DeviceData(auto.device.getAttributes());
  const occ = new tools.OccupancyRecord(data, 256, 4096, 32);
  const limit: 'device' | 'warps' | 'regs' | 'smem' = occ.limitedBy;
  const fraction: number = occ.occupancy + occ.tbPerMp + occ.warpsPerMp + (occ.tbPerMpLimits.regs ?? 0);
  const aligned: number =
    data.align(100, 8) + fromAttributes.alignDtype(10, 4) + tools.DeviceData.makeValidTexChannelCount(3);

  const pool = new tools.DeviceMemoryPool();
  const a: tools.PooledDeviceAllocation = pool.allocate(1 << 20);
  const ptr: bigint = a.ptr;
  a.free();
  const counts: number = pool.heldBlocks + pool.activeBlocks + pool.managedBytes + pool.activeBytes;
  pool.freeHeld();
  pool.stopHolding();
  const bin: number = tools.binNumber(1000n) + tools.allocSize(3) + tools.bitlog2(17);

  const hostPool = new tools.PageLockedMemoryPool(new tools.PageLockedAllocator(cuda.HostAllocFlags.PORTABLE));
  const floats: Float32Array = hostPool.allocate([2, 3], 'float32');
  const ints: Int32Array = hostPool.allocate(6, Int32Array);
  const pooled: tools.PooledHostAllocation | null = tools.PooledHostAllocation.of(floats);
  pooled?.free();

  console.log(ctx, primary, dev, key, test, limit, fraction, aligned, ptr, counts, bin, ints, auto.context);
}

void toolsUsage;
