'use strict';
// Public operations that together reach every entry point of the addon's driver table, for the
// fault-injection test: each releases what it makes, so that the stand-in's live counts come back
// to where they were whether it succeeds or fails part-way.
const cuda = require('../../..');

const IMAGE = ['entry add 8 8 4', 'global table 256', 'texref tex', 'surfref surf'].join('\n');
// Links go through the driver's linker (cuLink*), the one of the table.
process.env.CUDADRV_NVJITLINK_PATH = '/nonexistent/libnvJitLink.so';
const settle = () => new Promise((resolve) => setImmediate(resolve));

// Runs fn(resource) and frees the resource after, whatever fn did.
async function withIt(make, fn, free = (r) => r.free()) {
  const resource = make();
  try {
    return await fn(resource);
  } finally {
    free(resource);
  }
}
const withMemory = (bytes, fn) => withIt(() => cuda.memAlloc(bytes), fn);
const withStream = (fn) =>
  withIt(
    () => new cuda.Stream(),
    fn,
    (s) => s.destroy(),
  );
const withModule = (fn) => withIt(() => new cuda.Module(IMAGE), fn);
const array2D = () => new cuda.CudaArray({ width: 16, height: 4, format: cuda.ArrayFormat.FLOAT, numChannels: 1 });
const withArray = (fn) => withIt(array2D, fn);

const OPERATIONS = {
  device: () => {
    const device = new cuda.Device(0);
    device.name();
    device.pciBusId();
    device.computeCapability();
    device.totalMemory();
    device.uuid();
    device.getAttributes();
    device.canAccessPeer(device);
    cuda.Device.count();
    new cuda.Device(device.pciBusId());
  },
  driverVersion: () => cuda.getDriverVersion(),
  makeContext: () => {
    const context = new cuda.Device(0).makeContext();
    context.detach();
  },
  primaryContext: () => {
    const device = new cuda.Device(0);
    device.primaryContextState();
    const context = device.retainPrimaryContext();
    try {
      context.push();
      cuda.Context.pop();
    } finally {
      context.detach();
    }
  },
  contextSettings: async () => {
    cuda.Context.getDevice();
    cuda.Context.getFlags();
    cuda.Context.getApiVersion();
    cuda.Context.getStreamPriorityRange();
    cuda.Context.setLimit(cuda.Limit.STACK_SIZE, cuda.Context.getLimit(cuda.Limit.STACK_SIZE));
    cuda.Context.setCacheConfig(cuda.Context.getCacheConfig());
    cuda.Context.setSharedConfig(cuda.Context.getSharedConfig());
    cuda.Context.synchronizeSync();
    await cuda.Context.synchronize();
  },
  peerAccess: () => {
    // FAKE_CUDA_DEVICES=2: a context on the second device
    const other = new cuda.Device(1).makeContext();
    cuda.Context.pop();
    try {
      cuda.Context.enablePeerAccess(other);
      cuda.Context.disablePeerAccess(other);
    } finally {
      other.detach();
    }
  },
  memory: () =>
    withMemory(4096, (m) => {
      cuda.memGetInfo();
      cuda.memcpyHtoD(m, new Uint8Array(4096));
      cuda.memcpyDtoH(new Uint8Array(4096), m);
      cuda.memcpyDtoD(m.slice(2048), m, 1024);
    }),
  memoryAsync: () =>
    withStream((s) =>
      withMemory(4096, (m) => {
        cuda.memcpyHtoDAsync(m, new Uint8Array(4096), s);
        cuda.memcpyDtoHAsync(new Uint8Array(4096), m, s);
        cuda.memcpyDtoDAsync(m.slice(2048), m, 1024, s);
      }),
    ),
  peerCopies: () =>
    withStream((s) =>
      withMemory(4096, (m) => {
        cuda.memcpyPeer(m.slice(2048), m, 1024);
        cuda.memcpyPeerAsync(m.slice(2048), m, 1024, null, null, s);
      }),
    ),
  pitch: () =>
    withIt(
      () => cuda.memAllocPitch(64, 4, 4).allocation,
      () => {},
    ),
  memsets: () =>
    withStream((s) =>
      withMemory(4096, (m) => {
        cuda.memsetD8(m, 1, 16);
        cuda.memsetD16(m, 1, 16);
        cuda.memsetD32(m, 1, 16);
        cuda.memsetD8Async(m, 1, 16, s);
        cuda.memsetD16Async(m, 1, 16, s);
        cuda.memsetD32Async(m, 1, 16, s);
        cuda.memsetD2D8(m, 64, 1, 16, 4);
        cuda.memsetD2D16(m, 64, 1, 16, 4);
        cuda.memsetD2D32(m, 64, 1, 16, 4);
        cuda.memsetD2D8Async(m, 64, 1, 16, 4, s);
        cuda.memsetD2D16Async(m, 64, 1, 16, 4, s);
        cuda.memsetD2D32Async(m, 64, 1, 16, 4, s);
      }),
    ),
  copy2D: () =>
    withStream((s) =>
      withMemory(4096, (m) => {
        const copy = new cuda.Memcpy2D();
        copy.setSrcHost(new Uint8Array(256));
        copy.setDstDevice(m);
        copy.srcPitch = 64;
        copy.dstPitch = 64;
        copy.widthInBytes = 64;
        copy.height = 4;
        copy.run({ aligned: true });
        copy.run({ aligned: false });
        copy.run(s);
      }),
    ),
  copy3D: () =>
    withStream((s) =>
      withMemory(4096, (m) => {
        const copy = new cuda.Memcpy3D();
        copy.setSrcHost(new Uint8Array(512));
        copy.setDstDevice(m);
        copy.srcPitch = 64;
        copy.dstPitch = 64;
        copy.widthInBytes = 64;
        copy.height = 4;
        copy.depth = 2;
        copy.srcHeight = 4;
        copy.dstHeight = 4;
        copy.run();
        copy.run(s);
      }),
    ),
  copy3DPeer: () =>
    withStream((s) =>
      withMemory(4096, (m) => {
        const context = cuda.Context.getCurrent();
        const copy = new cuda.Memcpy3DPeer();
        copy.setSrcHost(new Uint8Array(512));
        copy.setDstDevice(m);
        copy.setSrcContext(context);
        copy.setDstContext(context);
        copy.srcPitch = 64;
        copy.dstPitch = 64;
        copy.widthInBytes = 64;
        copy.height = 4;
        copy.depth = 2;
        copy.srcHeight = 4;
        copy.dstHeight = 4;
        copy.run();
        copy.run(s);
      }),
    ),
  arrays: () =>
    withStream((s) =>
      withMemory(256, (m) =>
        withArray((a) =>
          withArray((b) => {
            a.getDescriptor();
            a.getDescriptor3D();
            cuda.memcpyHtoA(a, 0, new Float32Array(16));
            cuda.memcpyAtoH(new Float32Array(16), a, 0);
            cuda.memcpyHtoAAsync(a, 0, new Float32Array(16), s);
            cuda.memcpyAtoHAsync(new Float32Array(16), a, 0, s);
            cuda.memcpyDtoA(a, 0, m, 64);
            cuda.memcpyAtoD(m, a, 0, 64);
            cuda.memcpyAtoA(b, 0, a, 0, 64);
          }),
        ),
      ),
    ),
  textureObjects: () =>
    withArray((a) => {
      const texture = new cuda.TextureObject(a);
      texture.destroy();
      const surface = new cuda.SurfaceObject(a);
      surface.destroy();
    }),
  pinned: () => {
    const array = cuda.pagelockedZeros(256, 'uint8', { mapped: true });
    const allocation = cuda.hostAllocationOf(array);
    allocation.getDevicePointer();
    allocation.getFlags();
    allocation.free();
  },
  registered: () => {
    const array = cuda.alignedEmpty(8192, 'uint8');
    const registered = cuda.hostAllocationOf(cuda.registerHostMemory(array, cuda.MemHostRegisterFlags.DEVICEMAP));
    registered.getDevicePointer();
    registered.unregister();
    cuda.hostAllocationOf(array).free();
  },
  managed: () =>
    withStream((s) => {
      const array = cuda.managedZeros(256, 'float32');
      const allocation = cuda.hostAllocationOf(array);
      allocation.attach(cuda.MemAttachFlags.SINGLE, s);
      allocation.free();
    }),
  pointerAttributes: () => {
    const array = cuda.managedZeros(256, 'float32');
    const allocation = cuda.hostAllocationOf(array);
    try {
      cuda.memcpyHtoD(allocation, new Float32Array(256));
      const holder = new (class extends cuda.PointerHolderBase {
        getPointer() {
          return allocation.getDevicePointer();
        }
      })();
      new Float32Array(holder.asBuffer(64, 64));
    } finally {
      allocation.free();
    }
  },
  ipc: () =>
    withMemory(256, (m) => {
      const handle = cuda.memGetIpcHandle(m);
      const opened = new cuda.IPCMemoryHandle(handle);
      opened.close();
    }),
  pools: () =>
    withStream(async (s) => {
      const pool = cuda.MemoryPool.getCurrent();
      cuda.MemoryPool.getDefault();
      pool.setAttribute(
        cuda.MemPoolAttribute.RELEASE_THRESHOLD,
        pool.getAttribute(cuda.MemPoolAttribute.RELEASE_THRESHOLD),
      );
      pool.trimTo(0);
      const a = cuda.memAllocAsync(256, s);
      a.free(s);
      const b = pool.allocate(256, s);
      b.free(s);
    }),
  madePools: () =>
    withStream(async (s) => {
      const pool = new cuda.MemoryPool({ handleType: 'posix-fd', maxSize: 1 << 16 });
      try {
        pool.setCurrent();
        cuda.MemoryPool.getDefault().setCurrent();
        pool.setAccess(0, 'readwrite');
        pool.getAccess(0);
        const memory = pool.allocate(256, s);
        try {
          cuda.pointerAttributes(memory);
          const data = pool.exportPointer(memory);
          const handle = pool.exportHandle();
          try {
            const imported = cuda.MemoryPool.importHandle(handle.fd);
            try {
              imported.importPointer(data, 256).free();
            } finally {
              imported.destroy();
            }
          } finally {
            handle.close();
          }
        } finally {
          memory.free(s);
        }
      } finally {
        pool.destroy();
      }
    }),
  placement: () =>
    withStream(async (s) => {
      const managed = cuda.managedZeros(256, 'uint8');
      try {
        cuda.memPrefetchAsync(managed, 0, s);
        cuda.memAdvise(managed, cuda.MemAdvise.SET_READ_MOSTLY);
        cuda.memRangeAttributes(managed);
        cuda.memPrefetchBatchAsync([{ memory: managed, location: 'host' }], s);
        cuda.memDiscardBatchAsync([{ memory: managed }], s);
        cuda.memDiscardAndPrefetchBatchAsync([{ memory: managed, location: 0 }], s);
        await withMemory(256, (m) => {
          cuda.memcpyBatchAsync([{ dest: m, src: managed }], s);
          const planar = new cuda.Memcpy2D();
          planar.setSrcDevice(m);
          planar.setDstHost(managed);
          Object.assign(planar, { srcPitch: 64, dstPitch: 64, widthInBytes: 64, height: 4 });
          cuda.memcpy3DBatchAsync([planar], s);
        });
      } finally {
        cuda.hostAllocationOf(managed).free();
      }
    }),
  virtualMemory: () => {
    const g = cuda.memGetAllocationGranularity();
    const made = [];
    const keep = (resource) => (made.push(resource), resource);
    try {
      const physical = keep(new cuda.PhysicalMemory(g, { handleType: 'posix-fd' }));
      const range = keep(new cuda.VirtualAddressRange(2 * g));
      range.map(0, physical);
      range.setAccess(0, g, 0);
      range.unmap(0, g);
      const handle = keep(physical.exportHandle());
      range.map(g, keep(cuda.PhysicalMemory.importHandle(handle.fd, g)));
      keep(new cuda.GrowableBuffer({ maxBytes: 2 * g, initialBytes: 1 })).grow(2 * g);
    } finally {
      for (const resource of made.reverse()) resource[Symbol.dispose]();
    }
  },
  streams: () =>
    withStream(async (s) => {
      const prioritized = new cuda.Stream(0, -1);
      prioritized.destroy();
      s.flags;
      s.priority;
      s.isDone();
      s.synchronizeSync();
      await s.synchronize();
      const event = new cuda.Event();
      try {
        event.record(s);
        s.waitForEvent(event);
      } finally {
        event.destroy();
      }
    }),
  hostFunc: () => withStream((s) => s.launchHostFunc(() => {})),
  keptAlive: () => withStream((s) => withMemory(256, (m) => cuda.memcpyHtoDAsync(m, new Uint8Array(256), s))),
  events: async () => {
    const a = new cuda.Event();
    const b = new cuda.Event();
    try {
      a.record();
      b.record();
      a.query();
      a.synchronizeSync();
      await a.synchronize();
      b.timeSince(a);
    } finally {
      a.destroy();
      b.destroy();
    }
  },
  ipcEvent: () => {
    const event = new cuda.Event(cuda.EventFlags.INTERPROCESS | cuda.EventFlags.DISABLE_TIMING);
    try {
      const opened = cuda.Event.fromIpcHandle(event.ipcHandle());
      opened.destroy();
    } finally {
      event.destroy();
    }
  },
  graphs: () =>
    withStream((s) => {
      s.beginCapture();
      const graph = s.endCapture();
      try {
        graph.nodeCount;
        const exec = graph.instantiate();
        try {
          exec.upload(s);
          exec.launch(s);
          exec.update(graph);
        } finally {
          exec.destroy();
        }
      } finally {
        graph.destroy();
      }
    }),
  builtGraphs: () =>
    withModule((module) =>
      withMemory(256, (m) =>
        withStream((s) => {
          const graph = new cuda.Graph();
          try {
            const set = graph.addMemset(m, 1, 32, { elementSize: 4 });
            const copy = graph.addMemcpy(m.slice(128), m, 64, { after: set });
            const kernel = graph.addKernel(module.getFunction('add'), m, m, cuda.int32(1), {
              block: 1,
              after: [set, copy],
            });
            const event = new cuda.Event();
            try {
              graph.addEventWait(event, { after: graph.addEventRecord(event, { after: copy }) });
            } finally {
              event.destroy();
            }
            const child = new cuda.Graph();
            try {
              child.addEmpty();
              child.addHostFunc(() => {});
              graph.addChildGraph(child, { after: kernel });
            } finally {
              child.destroy();
            }
            const pinned = cuda.pagelockedEmpty(16, 'uint8');
            graph.addMemcpy(pinned, m, 16, { after: copy });
            graph.addMemcpy(m, pinned.subarray(8), 8, { after: copy });
            const planar = new cuda.Memcpy2D();
            planar.setSrcHost(pinned);
            planar.setDstDevice(m);
            Object.assign(planar, { srcPitch: 8, dstPitch: 16, widthInBytes: 8, height: 2 });
            graph.addMemcpy(planar, { after: copy });
            const allocated = graph.addMemAlloc(64, { after: copy });
            graph.addMemFree(allocated.memory, { after: allocated.node });
            const cases = graph.addConditional(graph.conditionalHandle({ default: 1 }), 'switch', {
              size: 2,
              after: copy,
            });
            cases.bodies[1].addMemset(m, 2, 16);
            s.beginCapture(cuda.StreamCaptureMode.RELAXED, { into: graph, after: copy });
            s.captureInfo();
            s.isCapturing();
            s.endCapture();
            graph.nodes().map((node) => [node.type, node.params()]);
            graph.setKernelArgs(kernel, m, m, cuda.int32(3), { block: 1 });
            graph.setMemset(set, m, 2, 32, { elementSize: 4 });
            graph.setMemcpy(copy, m.slice(128), m, 32);
            graph.edges();
            graph.toDot();
            const exec = graph.instantiate({ upload: s });
            try {
              exec.setKernelArgs(kernel, m, m, cuda.int32(2), { block: 1 });
              exec.setMemset(set, m, 3, 32, { elementSize: 4 });
              exec.setMemcpy(copy, m.slice(128), m, 16);
              exec.setEnabled(kernel, false);
              exec.isEnabled(kernel);
              exec.launch(s);
            } finally {
              exec.destroy();
            }
          } finally {
            graph.destroy();
          }
        }),
      ),
    ),
  modules: () =>
    withModule((module) => {
      module.getGlobal('table');
      module.getSurfref('surf');
      const add = module.getFunction('add');
      add.paramInfo();
      add.getAttribute(cuda.FunctionAttribute.NUM_REGS);
      add.setAttribute(cuda.FunctionAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024);
      add.setCacheConfig(cuda.FuncCache.PREFER_L1);
      add.setSharedConfig(cuda.SharedConfig.DEFAULT_BANK_SIZE);
      add.maxActiveBlocksPerMultiprocessor(128, 0);
      add.maxPotentialBlockSize(0);
    }),
  moduleFile: (dir) => {
    const file = require('path').join(dir, 'module.txt');
    require('fs').writeFileSync(file, IMAGE);
    cuda.moduleFromFile(file).free();
  },
  launches: () =>
    withModule(async (module) => {
      const add = module.getFunction('add');
      add(cuda.pointer(0n), cuda.pointer(0n), cuda.int32(1), { block: 1 });
      add(cuda.pointer(0n), cuda.pointer(0n), cuda.int32(1), { block: 1, cluster: [1, 1, 1] });
      await add(cuda.pointer(0n), cuda.pointer(0n), cuda.int32(1), { block: 1, timeKernel: true });
    }),
  texrefs: () =>
    withModule((module) =>
      withMemory(4096, (m) =>
        withArray((a) => {
          const tex = module.getTexref('tex');
          tex.setFormat(cuda.ArrayFormat.FLOAT, 1);
          tex.getFormat();
          tex.setAddressMode(0, cuda.AddressMode.CLAMP);
          tex.getAddressMode(0);
          tex.setFilterMode(cuda.FilterMode.POINT);
          tex.getFilterMode();
          tex.setFlags(0);
          tex.getFlags();
          tex.setAddress(m, 256, true);
          tex.getAddress();
          tex.setAddress2D(m, { width: 4, height: 4, format: cuda.ArrayFormat.FLOAT, numChannels: 1 }, 64);
          tex.setArray(a);
          module.getSurfref('surf').setArray(a);
        }),
      ),
    ),
  libraries: (dir) =>
    withIt(
      () => cuda.libraryFromBuffer(IMAGE),
      async (library) => {
        library.getGlobal('table');
        library.getManaged('table');
        const add = library.getKernel('add');
        add.getAttribute(cuda.FunctionAttribute.NUM_REGS);
        await add(cuda.pointer(0n), cuda.pointer(0n), cuda.int32(1), { block: 1, timeKernel: true });
        const file = require('path').join(dir, 'library.txt');
        require('fs').writeFileSync(file, IMAGE);
        cuda.libraryFromFile(file).unload();
      },
      (library) => library.unload(),
    ),
  links: async () => {
    const { Linker } = require('../../../lib/compiler');
    cuda.moduleFromBuffer(new Linker().add(IMAGE, { kind: 'ptx' }).link()).free();
    cuda.moduleFromBuffer(await new Linker().add(IMAGE, { kind: 'ptx' }).linkAsync()).free();
  },
  profiler: () => {
    cuda.initializeProfiler('/dev/null', '/dev/null', cuda.ProfilerOutputMode.CSV);
    cuda.startProfiler();
    cuda.stopProfiler();
  },
  graphFromStream: () =>
    withStream((s) => {
      s.beginCapture();
      s.endCapture().destroy();
    }),
  hopper: () =>
    withModule((m) =>
      withMemory(4096, (memory) => {
        const add = m.getFunction('add');
        add.maxActiveClusters({ grid: 8, block: 32, cluster: 2 });
        add.maxPotentialClusterSize({ block: 32 });
        add.availableDynamicSharedMemoryPerBlock(2, 64);
        const map = cuda.TensorMap.tiled({ memory, dataType: 'float32', globalDim: [32, 32], boxDim: [8, 8] });
        map.replaceAddress(memory);
        const shape = { memory, dataType: 'uint8', globalDim: [16, 16, 16], channelsPerPixel: 16, pixelsPerColumn: 16 };
        cuda.TensorMap.im2col({ ...shape, pixelBoxLowerCorner: [0], pixelBoxUpperCorner: [1] });
        cuda.TensorMap.im2colWide({ ...shape, pixelBoxLowerCornerWidth: 0, pixelBoxUpperCornerWidth: 1 });
        const library = cuda.libraryFromBuffer(IMAGE);
        try {
          library.kernelNames();
        } finally {
          library.unload();
        }
        const [a, b] = [new cuda.Device(0), new cuda.Device(1)];
        a.p2pAttribute(b, cuda.P2PAttribute.ACCESS_SUPPORTED);
        b.setPrimaryContextFlags(0);
        b.resetPrimaryContext();
      }),
    ),
  greenContexts: () => {
    const device = new cuda.Device(0);
    const { groups } = device.smResource().split({ groups: 2, minCount: 8 });
    const green = device.makeGreenContext(groups[0]);
    try {
      green.smResource();
      green.makeStream().destroy();
      green.push();
      let event;
      try {
        event = new cuda.Event(cuda.EventFlags.DISABLE_TIMING);
      } finally {
        cuda.Context.pop();
      }
      try {
        green.recordEvent(event);
        green.waitEvent(event);
      } finally {
        event.destroy();
      }
    } finally {
      green.detach();
    }
  },
  dropped: async () => {
    // finalizers: what the garbage collector releases
    cuda.memAlloc(64);
    new cuda.Stream();
    new cuda.Event();
    new cuda.Module(IMAGE);
    cuda.libraryFromBuffer(IMAGE);
    array2D();
    global.gc();
    await settle();
    global.gc();
    await settle();
  },
};

module.exports = { OPERATIONS };
