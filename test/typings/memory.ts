// Compiled by `tsc --strict` in npm test: the memory typings accept what the README shows.
import cuda = require('cudadrv');

async function memory(): Promise<void> {
  if (!cuda.isAvailable()) return;
  const ctx = new cuda.Device(0).makeContext();
  const stream = new cuda.Stream();

  const { free, total }: { free: number; total: number } = cuda.memGetInfo();
  const a: cuda.DeviceAllocation = cuda.memAlloc(4096);
  const address: bigint = a.ptr;
  const view: cuda.DeviceAllocation = a.slice(16, 64);
  const data = new Float32Array(1024).map((_, i) => i);
  cuda.memcpyHtoD(a, data);
  cuda.memcpyDtoH(data, a);
  cuda.memcpyHtoDAsync(view, data.subarray(0, 16), stream);
  cuda.memcpyDtoHAsync(new DataView(new ArrayBuffer(64)), view, stream);
  cuda.memcpyDtoD(view, a.slice(0, 64));
  cuda.memcpyDtoDAsync(a.ptr, view, 64, stream);
  cuda.memcpyPeer(a, view, 64, ctx, ctx);
  cuda.memsetD32(a, 0x3f800000, 1024);
  cuda.memsetD8Async(view, 255, 64, stream);
  const back: Float32Array = cuda.fromDevice(a, [32, 32], 'float32');
  const same: Float32Array = cuda.fromDevice(a, 1024, Float32Array);
  const like: Int32Array = cuda.fromDeviceLike(a, new Int32Array(8));
  const bigs: BigUint64Array = cuda.fromDevice(a.ptr, 4, 'uint64');
  const copied: cuda.DeviceAllocation = cuda.toDevice(data);
  const { allocation, pitch } = cuda.memAllocPitch(100, 10, 4);
  cuda.memsetD2D8(allocation, pitch, 1, 100, 10);

  const copy = new cuda.Memcpy2D();
  copy.setSrcHost(data);
  copy.setDstDevice(allocation);
  copy.srcPitch = 400;
  copy.dstPitch = pitch;
  copy.widthInBytes = 100;
  copy.height = 10;
  copy.run({ aligned: true });
  copy.run(stream);
  const box = new cuda.Memcpy3DPeer();
  box.setSrcContext(ctx);
  box.depth = 1;

  const ordered = cuda.memAllocAsync(1024, stream);
  ordered.free(stream);
  const pool = cuda.MemoryPool.getDefault(new cuda.Device(0));
  pool.setAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD, 1 << 20);
  const used: number = pool.getAttribute(cuda.MemPoolAttribute.USED_MEM_CURRENT);
  const handle: Buffer = cuda.memGetIpcHandle(a);

  const pinned: Float64Array = cuda.pagelockedZeros([4, 4], 'float64', { flags: cuda.HostAllocFlags.DEVICEMAP });
  const host = cuda.hostAllocationOf(pinned);
  if (host instanceof cuda.PagelockedHostAllocation) {
    const flags: number = host.getFlags();
    const devicePointer: bigint = host.getDevicePointer();
    console.log(flags, devicePointer);
    host.free();
  }
  const aligned: Uint8Array = cuda.alignedEmpty(8192, Uint8Array, { alignment: 4096 });
  const registered: Uint8Array = cuda.registerHostMemory(aligned);
  const registration = cuda.hostAllocationOf(registered) as cuda.RegisteredHostMemory;
  registration.unregister();
  const managed: Int16Array = cuda.managedZerosLike(new Int16Array(16));
  (cuda.hostAllocationOf(managed) as cuda.ManagedAllocation).attach(cuda.MemAttachFlags.GLOBAL, stream);

  class Holder extends cuda.PointerHolderBase {
    getPointer(): bigint {
      return address;
    }
  }
  cuda.memsetD8(new Holder(), 0, 1);
  {
    using scratch = cuda.memAlloc(16);
    cuda.memsetD8(scratch, 0, 16);
  }
  await stream.synchronize();
  console.log(free, total, back, same, like, bigs, copied, used, handle);
  a.free();
  ctx.detach();
}

void memory();
