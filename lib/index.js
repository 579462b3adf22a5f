'use strict';
/**
 * cudadrv: the CUDA Driver API for Node.js, in the shape of PyCUDA's pycuda.driver.
 * `const cuda = require('cudadrv')`. What is public is listed here, by the module defining it.
 */
const binding = require('./internal/binding');
const { VERSION, VERSION_STATUS, VERSION_TEXT, getVersion, getDriverVersion } = require('./driver/version');
const errors = require('./driver/errors');
const constants = require('./driver/constants');
const { initializeProfiler, startProfiler, stopProfiler } = require('./driver/profiler');
const { Device } = require('./driver/device');
const { Context } = require('./driver/context');
const { Stream } = require('./driver/stream');
const { Event } = require('./driver/event');
const { SmResource, GreenContext } = require('./driver/green-context');
const { Graph, GraphExec, GraphNode, ConditionalHandle, GraphMemory } = require('./driver/graph');
const deviceMemory = require('./memory/device-memory');
const copies = require('./memory/copies');
const { MemoryPool, ShareableHandle, memAllocAsync } = require('./memory/memory-pool');
const managed = require('./memory/managed');
const { pointerAttributes } = require('./memory/pointer-attributes');
const { memcpyBatchAsync } = require('./memory/batch-copies');
const { pageableStaging } = require('./memory/staging');
const virtualMemory = require('./memory/virtual-memory');
const hostMemory = require('./memory/host-memory');
const array = require('./memory/array');
const { TextureObject, SurfaceObject } = require('./memory/texture-object');
const { matrixToArray, toArray, deviceToArray, makeMultichannel2DArray } = require('./memory/matrix');
const { Module, moduleFromFile, moduleFromBuffer, TextureReference, SurfaceReference } = require('./kernel/module');
const { Library, libraryFromBuffer, libraryFromFile } = require('./kernel/library');
const { TensorMap } = require('./kernel/tensor-map');
const kernel = require('./kernel/kernel');
const { nvrtcVersion } = require('./compiler/nvrtc');

/** true when the CUDA driver loads and initialises here; never throws. */
function isAvailable() {
  return binding.isAvailable();
}

/** cuInit(flags). Optional: the first call that needs the driver initialises it. */
function init(flags = 0) {
  binding.init(flags);
}

/** Counters of what finalizers could not do: { cleanupsFailed, cleanupsSkipped }, of Node-API
 * calls that failed where nothing could be thrown (nodeApiFailures; 0 unless Node is shutting
 * down), the stream captures under way in the process (capturesUnderWay), and the driver objects
 * held by this thread's JS objects that the collector has not finalized (liveHandles). */
function stats() {
  return binding.stats();
}

module.exports = {
  // versions and the driver
  VERSION,
  VERSION_STATUS,
  VERSION_TEXT,
  getVersion,
  getDriverVersion,
  isAvailable,
  init,
  stats,
  nvrtcVersion,
  // errors
  CudaError: errors.CudaError,
  MemoryError: errors.MemoryError,
  LogicError: errors.LogicError,
  LaunchError: errors.LaunchError,
  RuntimeError: errors.RuntimeError,
  CompileError: errors.CompileError,
  LinkError: errors.LinkError,
  AbortError: errors.AbortError,
  // constants: the enums of cuda.h the addon was built against
  CudaResult: constants.CudaResult,
  CtxFlags: constants.CtxFlags,
  EventFlags: constants.EventFlags,
  StreamFlags: constants.StreamFlags,
  DeviceAttribute: constants.DeviceAttribute,
  PointerAttribute: constants.PointerAttribute,
  ProfilerOutputMode: constants.ProfilerOutputMode,
  FunctionAttribute: constants.FunctionAttribute,
  FuncCache: constants.FuncCache,
  SharedConfig: constants.SharedConfig,
  ArrayFormat: constants.ArrayFormat,
  Array3DFlags: constants.Array3DFlags,
  AddressMode: constants.AddressMode,
  FilterMode: constants.FilterMode,
  MemoryType: constants.MemoryType,
  ComputeMode: constants.ComputeMode,
  JitOption: constants.JitOption,
  JitTarget: constants.JitTarget,
  JitFallback: constants.JitFallback,
  JitInputType: constants.JitInputType,
  HostAllocFlags: constants.HostAllocFlags,
  MemAttachFlags: constants.MemAttachFlags,
  MemHostRegisterFlags: constants.MemHostRegisterFlags,
  Limit: constants.Limit,
  IpcMemFlags: constants.IpcMemFlags,
  GraphicsRegisterFlags: constants.GraphicsRegisterFlags,
  ArrayCubemapFace: constants.ArrayCubemapFace,
  MemPoolAttribute: constants.MemPoolAttribute,
  MemAdvise: constants.MemAdvise,
  P2PAttribute: constants.P2PAttribute,
  TensorMapDataType: constants.TensorMapDataType,
  TensorMapInterleave: constants.TensorMapInterleave,
  TensorMapSwizzle: constants.TensorMapSwizzle,
  TensorMapL2Promotion: constants.TensorMapL2Promotion,
  TensorMapFloatOOBFill: constants.TensorMapFloatOOBFill,
  TensorMapIm2ColWideMode: constants.TensorMapIm2ColWideMode,
  MemLocationType: constants.MemLocationType,
  MemAllocationHandleType: constants.MemAllocationHandleType,
  MemAccessFlags: constants.MemAccessFlags,
  MemcpyFlags: constants.MemcpyFlags,
  StreamCaptureMode: constants.StreamCaptureMode,
  GraphNodeType: constants.GraphNodeType,
  GraphInstantiateFlags: constants.GraphInstantiateFlags,
  GraphDebugDotFlags: constants.GraphDebugDotFlags,
  TextureFlags: constants.TextureFlags,
  TextureArrayFlags: constants.TextureArrayFlags,
  TRSA_OVERRIDE_FORMAT: constants.TRSA_OVERRIDE_FORMAT,
  TRSF_READ_AS_INTEGER: constants.TRSF_READ_AS_INTEGER,
  TRSF_NORMALIZED_COORDINATES: constants.TRSF_NORMALIZED_COORDINATES,
  TR_DEFAULT: constants.TR_DEFAULT,
  // devices, contexts, streams, events, graphs, the profiler
  Device,
  Context,
  GreenContext,
  SmResource,
  Stream,
  Event,
  Graph,
  GraphExec,
  GraphNode,
  ConditionalHandle,
  GraphMemory,
  initializeProfiler,
  startProfiler,
  stopProfiler,
  // device memory
  PointerHolderBase: deviceMemory.PointerHolderBase,
  DeviceAllocation: deviceMemory.DeviceAllocation,
  IPCMemoryHandle: deviceMemory.IPCMemoryHandle,
  MemoryPool,
  ShareableHandle,
  pointerAttributes,
  // virtual memory
  memGetAllocationGranularity: virtualMemory.memGetAllocationGranularity,
  PhysicalMemory: virtualMemory.PhysicalMemory,
  VirtualAddressRange: virtualMemory.VirtualAddressRange,
  GrowableBuffer: virtualMemory.GrowableBuffer,
  memGetInfo: deviceMemory.memGetInfo,
  memAlloc: deviceMemory.memAlloc,
  memAllocPitch: deviceMemory.memAllocPitch,
  memAllocAsync,
  memGetIpcHandle: deviceMemory.memGetIpcHandle,
  toDevice: deviceMemory.toDevice,
  fromDevice: deviceMemory.fromDevice,
  fromDeviceLike: deviceMemory.fromDeviceLike,
  // managed memory's placement
  memPrefetchAsync: managed.memPrefetchAsync,
  memAdvise: managed.memAdvise,
  memRangeAttributes: managed.memRangeAttributes,
  memPrefetchBatchAsync: managed.memPrefetchBatchAsync,
  memDiscardBatchAsync: managed.memDiscardBatchAsync,
  memDiscardAndPrefetchBatchAsync: managed.memDiscardAndPrefetchBatchAsync,
  // copies and memsets
  memcpyBatchAsync,
  memcpy3DBatchAsync: copies.memcpy3DBatchAsync,
  memcpyHtoD: copies.memcpyHtoD,
  memcpyDtoH: copies.memcpyDtoH,
  memcpyHtoDAsync: copies.memcpyHtoDAsync,
  memcpyDtoHAsync: copies.memcpyDtoHAsync,
  memcpyDtoD: copies.memcpyDtoD,
  memcpyDtoDAsync: copies.memcpyDtoDAsync,
  memcpyPeer: copies.memcpyPeer,
  memcpyPeerAsync: copies.memcpyPeerAsync,
  memsetD8: copies.memsetD8,
  memsetD16: copies.memsetD16,
  memsetD32: copies.memsetD32,
  memsetD8Async: copies.memsetD8Async,
  memsetD16Async: copies.memsetD16Async,
  memsetD32Async: copies.memsetD32Async,
  memsetD2D8: copies.memsetD2D8,
  memsetD2D16: copies.memsetD2D16,
  memsetD2D32: copies.memsetD2D32,
  memsetD2D8Async: copies.memsetD2D8Async,
  memsetD2D16Async: copies.memsetD2D16Async,
  memsetD2D32Async: copies.memsetD2D32Async,
  Memcpy2D: copies.Memcpy2D,
  Memcpy3D: copies.Memcpy3D,
  Memcpy3DPeer: copies.Memcpy3DPeer,
  pageableStaging,
  // host memory
  HostPointer: hostMemory.HostPointer,
  PagelockedHostAllocation: hostMemory.PagelockedHostAllocation,
  HostAllocation: hostMemory.HostAllocation,
  AlignedHostAllocation: hostMemory.AlignedHostAllocation,
  ManagedAllocation: hostMemory.ManagedAllocation,
  RegisteredHostMemory: hostMemory.RegisteredHostMemory,
  pagelockedEmpty: hostMemory.pagelockedEmpty,
  pagelockedZeros: hostMemory.pagelockedZeros,
  pagelockedEmptyLike: hostMemory.pagelockedEmptyLike,
  pagelockedZerosLike: hostMemory.pagelockedZerosLike,
  alignedEmpty: hostMemory.alignedEmpty,
  alignedZeros: hostMemory.alignedZeros,
  alignedEmptyLike: hostMemory.alignedEmptyLike,
  alignedZerosLike: hostMemory.alignedZerosLike,
  managedEmpty: hostMemory.managedEmpty,
  managedZeros: hostMemory.managedZeros,
  managedEmptyLike: hostMemory.managedEmptyLike,
  managedZerosLike: hostMemory.managedZerosLike,
  registerHostMemory: hostMemory.registerHostMemory,
  hostAllocationOf: hostMemory.hostAllocationOf,
  // CUDA arrays, texture and surface objects
  ArrayDescriptor: array.ArrayDescriptor,
  ArrayDescriptor3D: array.ArrayDescriptor3D,
  CudaArray: array.CudaArray,
  memcpyHtoA: array.memcpyHtoA,
  memcpyAtoH: array.memcpyAtoH,
  memcpyHtoAAsync: array.memcpyHtoAAsync,
  memcpyAtoHAsync: array.memcpyAtoHAsync,
  memcpyDtoA: array.memcpyDtoA,
  memcpyAtoD: array.memcpyAtoD,
  memcpyAtoA: array.memcpyAtoA,
  TextureObject,
  SurfaceObject,
  matrixToArray,
  toArray,
  deviceToArray,
  makeMultichannel2DArray,
  // modules, kernels and their arguments, texture references
  Module,
  moduleFromFile,
  moduleFromBuffer,
  Library,
  TensorMap,
  libraryFromBuffer,
  libraryFromFile,
  TextureReference,
  SurfaceReference,
  Kernel: kernel.Kernel,
  TypedScalar: kernel.TypedScalar,
  int8: kernel.int8,
  uint8: kernel.uint8,
  int16: kernel.int16,
  uint16: kernel.uint16,
  int32: kernel.int32,
  uint32: kernel.uint32,
  int64: kernel.int64,
  uint64: kernel.uint64,
  float16: kernel.float16,
  float32: kernel.float32,
  float64: kernel.float64,
  bool: kernel.bool,
  pointer: kernel.pointer,
  ArgumentHandler: kernel.ArgumentHandler,
  In: kernel.In,
  Out: kernel.Out,
  InOut: kernel.InOut,
  packArguments: kernel.packArguments,
};

// Subpaths reachable from the namespace too, loaded on first use.
for (const name of ['compiler', 'tools']) {
  Object.defineProperty(module.exports, name, {
    get: () => require(`./${name}/index.js`),
    enumerable: true,
  });
}
