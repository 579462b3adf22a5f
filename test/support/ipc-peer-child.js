'use strict';
// One side of IPC between two processes on two devices (test/driver/two-gpus.test.js), run with
// child_process.fork: `writer DEVICE` or `reader DEVICE`. The writer fills memory through a kernel
// that first spins for a while, records an interprocess event after it, and sends both handles;
// the reader opens them on its own device, makes its stream wait for the event, and sends back
// what it read. Messages: { handles } / { read } to the parent, { handles } / 'done' from it.
const cuda = require('../..');
const { SourceModule } = require('../../lib/compiler');

const [role, ordinal] = [process.argv[2], Number(process.argv[3])];
const N = 1 << 16;
const ctx = new cuda.Device(ordinal).makeContext();

const finish = () => {
  ctx.detach();
  process.disconnect();
};

if (role === 'writer') {
  const seed = Number(process.argv[4]);
  const fill = new SourceModule(`
    __global__ void fill(int *p, int n, int seed) {
      long long start = clock64();
      while (clock64() - start < 100000000LL) {} // some 50 ms: the reader must wait for it
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) p[i] = i * 2654435761u ^ seed;
    }`).getFunction('fill');
  const memory = cuda.memAlloc(N * 4);
  const stream = new cuda.Stream();
  const event = new cuda.Event(cuda.EventFlags.INTERPROCESS | cuda.EventFlags.DISABLE_TIMING);
  fill(memory, cuda.int32(N), cuda.int32(seed), { block: 256, grid: N / 256, stream });
  event.record(stream);
  process.send({
    handles: { memory: cuda.memGetIpcHandle(memory).toString('hex'), event: event.ipcHandle().toString('hex') },
  });
  process.on('message', (message) => {
    if (message !== 'done') return;
    stream.synchronizeSync();
    memory.free();
    finish();
  });
} else {
  process.on('message', async ({ handles }) => {
    const memory = new cuda.IPCMemoryHandle(
      Buffer.from(handles.memory, 'hex'),
      cuda.IpcMemFlags.LAZY_ENABLE_PEER_ACCESS,
    );
    const event = cuda.Event.fromIpcHandle(Buffer.from(handles.event, 'hex'));
    const stream = new cuda.Stream();
    const host = cuda.pagelockedEmpty(N, 'int32');
    stream.waitForEvent(event);
    cuda.memcpyDtoHAsync(host, memory, stream);
    await stream.synchronize();
    memory.close();
    // disconnect only once the message is out: a disconnect right after send() can lose it
    process.send({ read: Buffer.from(host.buffer, host.byteOffset, host.byteLength).toString('base64') }, finish);
  });
}
