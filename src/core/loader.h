/* loader: opens libcuda.so.1 at run time and resolves every driver entry point once, through
 * cuGetProcAddress with the CUDA version whose ABI this code was written for. */
#ifndef CUDADRV_LOADER_H
#define CUDADRV_LOADER_H

#define CUDA_ENABLE_DEPRECATED /* the deprecated calls are part of PyCUDA's API; no warnings */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cudaProfiler.h>
#include <cudaProfilerTypedefs.h>

/* CUDA 12 dropped cuProfilerInitialize from the header; driver 580 still exports it. */
typedef CUresult(CUDAAPI *PFN_cuProfilerInitialize_v4000)(const char *configFile,
                                                          const char *outputFile,
                                                          CUoutput_mode outputMode);

/* Kept as written: several calls of one family a line, not one call a line. */
// clang-format off
/* X(name, version): the driver call and the ABI version it is resolved at. The type of each
 * entry is the header's PFN_<name>_v<version>, checked in loader.c against the prototype that
 * cuda.h declares today. */
#define CU_FUNCTIONS(X) \
  X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuGetErrorName, 6000) X(cuGetErrorString, 6000) \
  X(cuDeviceGet, 2000) X(cuDeviceGetCount, 2000) X(cuDeviceGetName, 2000) \
  X(cuDeviceGetAttribute, 2000) X(cuDeviceTotalMem, 3020) X(cuDeviceGetPCIBusId, 4010) \
  X(cuDeviceGetByPCIBusId, 4010) X(cuDeviceCanAccessPeer, 4000) X(cuDeviceGetUuid, 11040) \
  X(cuDevicePrimaryCtxRetain, 7000) X(cuDevicePrimaryCtxRelease, 11000) \
  X(cuDevicePrimaryCtxGetState, 7000) X(cuDevicePrimaryCtxSetFlags, 11000) \
  X(cuDevicePrimaryCtxReset, 11000) X(cuDeviceGetP2PAttribute, 8000) \
  X(cuDeviceGetDevResource, 12040) X(cuDevSmResourceSplitByCount, 12040) \
  X(cuDevResourceGenerateDesc, 12040) X(cuGreenCtxCreate, 12040) X(cuGreenCtxDestroy, 12040) \
  X(cuCtxFromGreenCtx, 12040) X(cuGreenCtxGetDevResource, 12040) \
  X(cuGreenCtxRecordEvent, 12040) X(cuGreenCtxWaitEvent, 12040) X(cuGreenCtxStreamCreate, 12050) \
  X(cuDeviceGetDefaultMemPool, 11020) \
  X(cuDeviceGetMemPool, 11020) \
  X(cuCtxDestroy, 4000) X(cuCtxPushCurrent, 4000) X(cuCtxPopCurrent, 4000) \
  X(cuCtxSetCurrent, 4000) X(cuCtxGetCurrent, 4000) X(cuCtxGetDevice, 2000) \
  X(cuCtxSynchronize, 2000) X(cuCtxSetLimit, 3010) X(cuCtxGetLimit, 3010) \
  X(cuCtxSetCacheConfig, 3020) X(cuCtxGetCacheConfig, 3020) X(cuCtxSetSharedMemConfig, 4020) \
  X(cuCtxGetSharedMemConfig, 4020) X(cuCtxGetApiVersion, 3020) X(cuCtxEnablePeerAccess, 4000) \
  X(cuCtxDisablePeerAccess, 4000) X(cuCtxGetFlags, 7000) X(cuCtxGetStreamPriorityRange, 5050) \
  X(cuStreamCreate, 2000) X(cuStreamCreateWithPriority, 5050) X(cuStreamDestroy, 4000) \
  X(cuStreamQuery, 2000) X(cuStreamSynchronize, 2000) X(cuStreamWaitEvent, 3020) \
  X(cuStreamGetFlags, 5050) X(cuStreamGetPriority, 5050) X(cuStreamAddCallback, 5000) \
  X(cuLaunchHostFunc, 10000) X(cuStreamBeginCapture, 10010) X(cuStreamEndCapture, 10000) \
  X(cuStreamIsCapturing, 10000) \
  X(cuEventCreate, 2000) X(cuEventDestroy, 4000) X(cuEventRecord, 2000) X(cuEventQuery, 2000) \
  X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 2000) X(cuIpcGetEventHandle, 4010) \
  X(cuIpcOpenEventHandle, 4010) \
  X(cuMemAlloc, 3020) X(cuMemFree, 3020) X(cuMemAllocPitch, 3020) X(cuMemGetInfo, 3020) \
  X(cuMemFreeHost, 2000) X(cuMemHostAlloc, 2020) \
  X(cuMemHostGetDevicePointer, 3020) X(cuMemHostGetFlags, 2030) X(cuMemHostRegister, 6050) \
  X(cuMemHostUnregister, 4000) X(cuMemAllocManaged, 6000) X(cuStreamAttachMemAsync, 6000) \
  X(cuPointerGetAttribute, 4000) X(cuMemGetAddressRange, 3020) \
  X(cuMemsetD8, 3020) X(cuMemsetD16, 3020) X(cuMemsetD32, 3020) X(cuMemsetD2D8, 3020) \
  X(cuMemsetD2D16, 3020) X(cuMemsetD2D32, 3020) X(cuMemsetD8Async, 3020) \
  X(cuMemsetD16Async, 3020) X(cuMemsetD32Async, 3020) X(cuMemsetD2D8Async, 3020) \
  X(cuMemsetD2D16Async, 3020) X(cuMemsetD2D32Async, 3020) \
  X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020) \
  X(cuMemcpyDtoD, 3020) X(cuMemcpyHtoDAsync, 3020) X(cuMemcpyDtoHAsync, 3020) \
  X(cuMemcpyDtoDAsync, 3020) X(cuMemcpyPeer, 4000) X(cuMemcpyPeerAsync, 4000) \
  X(cuMemcpy2D, 3020) X(cuMemcpy2DUnaligned, 3020) X(cuMemcpy2DAsync, 3020) X(cuMemcpy3D, 3020) \
  X(cuMemcpy3DAsync, 3020) X(cuMemcpy3DPeer, 4000) X(cuMemcpy3DPeerAsync, 4000) \
  X(cuMemcpyDtoA, 3020) X(cuMemcpyAtoD, 3020) X(cuMemcpyHtoA, 3020) X(cuMemcpyAtoH, 3020) \
  X(cuMemcpyAtoA, 3020) X(cuMemcpyHtoAAsync, 3020) X(cuMemcpyAtoHAsync, 3020) \
  X(cuIpcGetMemHandle, 4010) X(cuIpcOpenMemHandle, 11000) X(cuIpcCloseMemHandle, 4010) \
  X(cuMemAllocAsync, 11020) X(cuMemFreeAsync, 11020) X(cuMemAllocFromPoolAsync, 11020) \
  X(cuMemPoolGetAttribute, 11020) X(cuMemPoolSetAttribute, 11020) X(cuMemPoolTrimTo, 11020) \
  X(cuMemPoolCreate, 11020) X(cuMemPoolDestroy, 11020) X(cuDeviceSetMemPool, 11020) \
  X(cuMemPoolSetAccess, 11020) X(cuMemPoolGetAccess, 11020) \
  X(cuMemPoolExportToShareableHandle, 11020) X(cuMemPoolImportFromShareableHandle, 11020) \
  X(cuMemPoolExportPointer, 11020) X(cuMemPoolImportPointer, 11020) \
  X(cuPointerGetAttributes, 7000) X(cuMemPrefetchAsync, 12020) X(cuMemAdvise, 12020) \
  X(cuMemRangeGetAttribute, 8000) X(cuMemPrefetchBatchAsync, 13000) \
  X(cuMemDiscardBatchAsync, 13000) X(cuMemDiscardAndPrefetchBatchAsync, 13000) \
  X(cuMemcpyBatchAsync, 13000) X(cuMemcpy3DBatchAsync, 13000) \
  X(cuMemGetAllocationGranularity, 10020) X(cuMemCreate, 10020) X(cuMemRelease, 10020) \
  X(cuMemExportToShareableHandle, 10020) X(cuMemImportFromShareableHandle, 10020) \
  X(cuMemAddressReserve, 10020) X(cuMemAddressFree, 10020) X(cuMemMap, 10020) \
  X(cuMemUnmap, 10020) X(cuMemSetAccess, 10020) \
  X(cuThreadExchangeStreamCaptureMode, 10010) \
  X(cuModuleLoad, 2000) X(cuModuleLoadDataEx, 2010) \
  X(cuModuleUnload, 2000) X(cuModuleGetFunction, 2000) \
  X(cuModuleGetGlobal, 3020) X(cuModuleGetTexRef, 2000) X(cuModuleGetSurfRef, 3000) \
  X(cuLinkCreate, 6050) X(cuLinkAddData, 6050) X(cuLinkComplete, 5050) X(cuLinkDestroy, 5050) \
  X(cuLibraryLoadData, 12000) X(cuLibraryLoadFromFile, 12000) X(cuLibraryUnload, 12000) \
  X(cuLibraryGetKernel, 12000) X(cuKernelGetFunction, 12000) X(cuLibraryGetGlobal, 12000) \
  X(cuLibraryGetManaged, 12000) \
  X(cuLibraryGetKernelCount, 12040) X(cuLibraryEnumerateKernels, 12040) X(cuKernelGetName, 12030) \
  X(cuLaunchKernel, 4000) X(cuLaunchKernelEx, 11060) \
  X(cuFuncGetAttribute, 2020) X(cuFuncSetAttribute, 9000) X(cuFuncSetCacheConfig, 3000) \
  X(cuFuncSetSharedMemConfig, 4020) X(cuFuncGetParamInfo, 12040) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000) \
  X(cuOccupancyMaxPotentialBlockSizeWithFlags, 7000) \
  X(cuOccupancyMaxActiveClusters, 11070) X(cuOccupancyMaxPotentialClusterSize, 11070) \
  X(cuOccupancyAvailableDynamicSMemPerBlock, 10020) \
  X(cuTensorMapEncodeTiled, 12000) X(cuTensorMapEncodeIm2col, 12000) \
  X(cuTensorMapEncodeIm2colWide, 12080) \
  X(cuTexRefSetArray, 2000) X(cuTexRefSetAddress, 3020) X(cuTexRefSetAddress2D, 4010) \
  X(cuTexRefSetFormat, 2000) X(cuTexRefSetAddressMode, 2000) X(cuTexRefSetFilterMode, 2000) \
  X(cuTexRefSetFlags, 2000) X(cuTexRefGetAddress, 3020) \
  X(cuTexRefGetAddressMode, 2000) X(cuTexRefGetFilterMode, 2000) X(cuTexRefGetFormat, 2000) \
  X(cuTexRefGetFlags, 2000) X(cuSurfRefSetArray, 3000) \
  X(cuTexObjectCreate, 5000) X(cuTexObjectDestroy, 5000) X(cuSurfObjectCreate, 5000) \
  X(cuSurfObjectDestroy, 5000) \
  X(cuArray3DCreate, 3020) X(cuArrayDestroy, 2000) \
  X(cuArray3DGetDescriptor, 3020) \
  X(cuGraphInstantiateWithFlags, 11040) X(cuGraphLaunch, 10000) X(cuGraphDestroy, 10000) \
  X(cuGraphExecDestroy, 10000) X(cuGraphExecUpdate, 12000) X(cuGraphGetNodes, 10000) \
  X(cuGraphUpload, 11010) X(cuGraphCreate, 10000) X(cuGraphAddEmptyNode, 10000) \
  X(cuGraphAddKernelNode, 12000) X(cuGraphAddMemsetNode, 10000) X(cuGraphAddMemcpyNode, 10000) \
  X(cuGraphAddChildGraphNode, 10000) X(cuGraphNodeGetType, 10000) X(cuGraphGetEdges, 12030) \
  X(cuGraphDebugDotPrint, 11030) X(cuGraphInstantiateWithParams, 12000) \
  X(cuGraphNodeSetEnabled, 11060) X(cuGraphNodeGetEnabled, 11060) \
  X(cuStreamBeginCaptureToGraph, 12030) X(cuGraphKernelNodeGetParams, 12000) \
  X(cuGraphExecKernelNodeSetParams, 12000) X(cuGraphConditionalHandleCreate, 12030) \
  X(cuGraphAddNode, 12030) X(cuGraphAddEventRecordNode, 11010) X(cuGraphAddEventWaitNode, 11010) \
  X(cuGraphAddHostNode, 10000) X(cuUserObjectCreate, 11030) X(cuUserObjectRelease, 11030) \
  X(cuGraphRetainUserObject, 11030) X(cuGraphAddMemAllocNode, 11040) \
  X(cuGraphAddMemFreeNode, 11040) X(cuGraphKernelNodeSetParams, 12000) \
  X(cuGraphMemsetNodeGetParams, 10000) X(cuGraphMemcpyNodeGetParams, 10000) \
  X(cuGraphMemAllocNodeGetParams, 11040) X(cuGraphMemFreeNodeGetParams, 11040) \
  X(cuGraphMemsetNodeSetParams, 10000) X(cuGraphMemcpyNodeSetParams, 10000) \
  X(cuGraphExecMemsetNodeSetParams, 10020) X(cuGraphExecMemcpyNodeSetParams, 10020) \
  X(cuProfilerStart, 4000) X(cuProfilerStop, 4000) X(cuProfilerInitialize, 4000)

/* Calls resolved at an older ABI than the one cuda.h now declares under their name, because that
 * one serves the call as cudadrv makes it on every driver from CUDA 12.0: their type is
 * cudaTypedefs.h's PFN_<name>_v<version>, and their call sites use that prototype. */
#define CU_LEGACY_FUNCTIONS(X) \
  X(cuCtxCreate, 3020) X(cuStreamGetCaptureInfo, 11030)
// clang-format on

#define CU_TABLE_ENTRY(name, version) PFN_##name##_v##version name;
typedef struct cu_table {
  CU_FUNCTIONS(CU_TABLE_ENTRY)
  CU_LEGACY_FUNCTIONS(CU_TABLE_ENTRY)
} cu_table;
#undef CU_TABLE_ENTRY

/* The table, filled once by loader_load(); an entry is NULL where the driver lacks the call. */
extern cu_table cu;

/* A CUresult no driver returns: the loaded driver does not provide the entry point called. */
#define CUDADRV_ERROR_MISSING ((CUresult)0x7fff0001)
/* The one path of every driver call: cu.fn(...) where the driver provides fn, else
 * CUDADRV_ERROR_MISSING, which throw_cu() turns into a RuntimeError naming fn and the driver it
 * needs. Never call through the table directly. */
#define DRV(fn, ...) (cu.fn ? cu.fn(__VA_ARGS__) : CUDADRV_ERROR_MISSING)
/* The CUDA version (12050 for 12.5) whose ABI an entry point is resolved at; 0 if unknown. */
int loader_entry_version(const char *name);
/* Calls fn(name, version, data) for each entry point the loaded driver lacks. */
void loader_each_missing(void (*fn)(const char *name, int version, void *data), void *data);

/* Opens the driver (once per process) and runs cuInit(0). Returns CUDA_SUCCESS, the CUresult of
 * cuInit, or CUDA_ERROR_SHARED_OBJECT_INIT_FAILED with loader_error() saying why. */
CUresult loader_load(void);
const char *loader_error(void);
/* 1 when libcuda.so.1 was opened (whatever cuInit said). */
int loader_opened(void);

#endif
