// ESM entry: `import cuda from 'cudadrv'` or `import { Device } from 'cudadrv'`.
import cuda from './index.js';

export default cuda;
export const {
  VERSION, VERSION_STATUS, VERSION_TEXT, getVersion, getDriverVersion, isAvailable, init, stats,
  CudaError, MemoryError, LogicError, LaunchError, RuntimeError, CompileError, AbortError,
  Device, Context, Stream, Event, initializeProfiler, startProfiler, stopProfiler,
  CudaResult, CtxFlags, EventFlags, StreamFlags, DeviceAttribute, PointerAttribute,
  ProfilerOutputMode, FunctionAttribute, FuncCache, SharedConfig, ArrayFormat, Array3DFlags,
  AddressMode, FilterMode, MemoryType, ComputeMode, JitOption, JitTarget, JitFallback,
  JitInputType, HostAllocFlags, MemAttachFlags, MemHostRegisterFlags, Limit, IpcMemFlags,
  GraphicsRegisterFlags, ArrayCubemapFace, MemPoolAttribute, StreamCaptureMode, TextureFlags,
  TextureArrayFlags, TRSA_OVERRIDE_FORMAT, TRSF_READ_AS_INTEGER, TRSF_NORMALIZED_COORDINATES,
  TR_DEFAULT,
} = cuda;

// memory (device memory, copies, memsets)
export const {
  PointerHolderBase, DeviceAllocation, IPCMemoryHandle, MemoryPool, memGetInfo, memAlloc,
  memAllocPitch, memAllocAsync, memGetIpcHandle, toDevice, fromDevice, fromDeviceLike, memcpyHtoD,
  memcpyDtoH, memcpyHtoDAsync, memcpyDtoHAsync, memcpyDtoD, memcpyDtoDAsync, memcpyPeer,
  memcpyPeerAsync, memsetD8, memsetD16, memsetD32, memsetD8Async, memsetD16Async, memsetD32Async,
  memsetD2D8, memsetD2D16, memsetD2D32, memsetD2D8Async, memsetD2D16Async, memsetD2D32Async,
  Memcpy2D, Memcpy3D, Memcpy3DPeer,
} = cuda;

// arrays, textures and surfaces
export const {
  ArrayDescriptor, ArrayDescriptor3D, CudaArray, TextureObject, SurfaceObject, memcpyHtoA, memcpyAtoH,
  memcpyHtoAAsync, memcpyAtoHAsync, memcpyDtoA, memcpyAtoD, memcpyAtoA, matrixToArray, toArray,
  deviceToArray, makeMultichannel2DArray,
} = cuda;

// host memory (pinned, aligned, managed, registered)
export const {
  HostPointer, PagelockedHostAllocation, HostAllocation, AlignedHostAllocation, ManagedAllocation,
  RegisteredHostMemory, pagelockedEmpty, pagelockedZeros, pagelockedEmptyLike, pagelockedZerosLike,
  alignedEmpty, alignedZeros, alignedEmptyLike, alignedZerosLike, managedEmpty, managedZeros,
  managedEmptyLike, managedZerosLike, registerHostMemory, hostAllocationOf,
} = cuda;

// modules and kernels
export const { Module } = cuda;
export const {
  moduleFromFile, moduleFromBuffer, TextureReference, SurfaceReference, Kernel, TypedScalar, int8,
  uint8, int16, uint16, int32, uint32, int64, uint64, float16, float32, float64, bool, pointer,
  ArgumentHandler, In, Out, InOut, packArguments,
} = cuda;


// compiler names at the top level (nvrtcVersion)
export const { nvrtcVersion } = cuda;


// graphs
export const { Graph, GraphExec } = cuda;


// the subpaths' namespaces (loaded here at import; require('cudadrv') loads them on first use)
export const { compiler, tools } = cuda;
