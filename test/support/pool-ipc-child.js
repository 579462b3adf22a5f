'use strict';
// Memory shared between two processes by a file descriptor, as docs/memory.md shows it.
// `exporter KIND MODE` makes shareable memory (KIND 'pool': a MemoryPool and an allocation from it;
// 'vmm': PhysicalMemory mapped into a VirtualAddressRange), fills it (MODE 'kernel': a kernel that
// first spins, on a GPU; 'copy': an async copy, on the stand-in), records an interprocess event, and
// forks `importer KIND` with the descriptor as its fd 4; it sends the importer what it needs (the
// pointer's export data, or the allocation's size) and the event's handle. The importer imports
// the memory, waits for the event, reads it, writes it over with a memset, lets it go and sends
// back what it read; the exporter then checks both ways against the CPU and prints
// { read: 'ok', written: 'ok' }. Exit status 0 when all went right.
const assert = require('assert');
const fs = require('fs');
const { fork } = require('child_process');
const cuda = require('../..');

const [role, kind, mode] = process.argv.slice(2);
const N = 1 << 16;
const MARK = 0x5eed5eed;
const expected = (seed) => Int32Array.from({ length: N }, (_, i) => Math.imul(i, 2654435761) ^ seed);

cuda.init();
const ctx = new cuda.Device(0).makeContext();

// Shareable memory of N words: { memory, handle, message (for the importer), release() }.
function shareable(stream) {
  if (kind === 'pool') {
    const pool = new cuda.MemoryPool({ handleType: 'posix-fd' });
    const memory = pool.allocate(N * 4, stream);
    return {
      memory,
      handle: pool.exportHandle(),
      message: { pointer: pool.exportPointer(memory).toString('hex'), bytes: N * 4 },
      release: () => {
        memory.free(stream);
        stream.synchronizeSync();
        pool.destroy();
      },
    };
  }
  const bytes = Math.ceil((N * 4) / cuda.memGetAllocationGranularity()) * cuda.memGetAllocationGranularity();
  const physical = new cuda.PhysicalMemory(bytes, { handleType: 'posix-fd' });
  const memory = new cuda.VirtualAddressRange(bytes);
  memory.map(0, physical);
  memory.setAccess(0, bytes, 0);
  return {
    memory,
    handle: physical.exportHandle(),
    message: { bytes },
    release: () => {
      memory.free();
      physical.release();
    },
  };
}

// The memory the exporter shared, as the message describes it: { memory, release() }.
function imported(message) {
  if (kind === 'pool') {
    const pool = cuda.MemoryPool.importHandle(4);
    fs.closeSync(4); // the driver keeps what it needs
    const memory = pool.importPointer(Buffer.from(message.pointer, 'hex'), message.bytes);
    return {
      memory,
      release: () => {
        memory.free(); // before the exporter frees it
        pool.destroy();
      },
    };
  }
  const physical = cuda.PhysicalMemory.importHandle(4, message.bytes);
  fs.closeSync(4);
  const memory = new cuda.VirtualAddressRange(message.bytes);
  memory.map(0, physical);
  physical.release(); // the mapping keeps it
  memory.setAccess(0, message.bytes, 0);
  return { memory, release: () => memory.free() };
}

async function exporter() {
  const seed = Math.floor(Math.random() * 2 ** 31);
  const stream = new cuda.Stream();
  const shared = shareable(stream);
  const { memory, handle } = shared;
  if (mode === 'kernel') {
    const { SourceModule } = require('../../lib/compiler');
    const fill = new SourceModule(`
      __global__ void fill(int *p, int n, int seed) {
        long long start = clock64();
        while (clock64() - start < 100000000LL) {} // some 50 ms: the importer must wait for it
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) p[i] = i * 2654435761u ^ seed;
      }`).getFunction('fill');
    fill(memory, cuda.int32(N), cuda.int32(seed), { block: 256, grid: N / 256, stream });
  } else {
    cuda.memcpyHtoDAsync(memory, expected(seed), stream);
  }
  const event = new cuda.Event(cuda.EventFlags.INTERPROCESS | cuda.EventFlags.DISABLE_TIMING);
  event.record(stream);
  const child = fork(__filename, ['importer', kind], { stdio: ['ignore', 'inherit', 'pipe', 'ipc', handle.fd] });
  handle.close(); // the child has its own copy of the descriptor
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.send({ ...shared.message, event: event.ipcHandle().toString('hex') });
  const reply = await Promise.race([
    new Promise((resolve) => child.once('message', resolve)),
    exited.then(({ code, signal }) => {
      throw new Error(`the importer exited (${signal ?? code}) before replying:\n${stderr}`);
    }),
  ]);
  child.send('done');
  assert.deepStrictEqual(await exited, { code: 0, signal: null }, stderr);
  const bytes = Buffer.from(reply.read, 'base64');
  assert.deepStrictEqual(new Int32Array(bytes.buffer, bytes.byteOffset, N), expected(seed));
  const after = cuda.fromDevice(memory, N, 'uint32');
  assert.ok(
    after.every((v) => v === MARK),
    'the importer wrote every word',
  );
  shared.release();
  console.log(JSON.stringify({ read: 'ok', written: 'ok' }));
}

function importer() {
  process.on('message', async (message) => {
    if (message === 'done') return finish();
    const { memory, release } = imported(message);
    const event = cuda.Event.fromIpcHandle(Buffer.from(message.event, 'hex'));
    const stream = new cuda.Stream();
    const host = cuda.pagelockedEmpty(N, 'int32');
    stream.waitForEvent(event);
    cuda.memcpyDtoHAsync(host, memory, stream);
    cuda.memsetD32Async(memory, MARK, N, stream);
    await stream.synchronize();
    release();
    process.send({ read: Buffer.from(host.buffer, host.byteOffset, host.byteLength).toString('base64') });
  });
  const finish = () => {
    ctx.detach();
    process.disconnect();
  };
}

if (role === 'exporter') {
  exporter().then(
    () => ctx.detach(),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
} else {
  importer();
}
