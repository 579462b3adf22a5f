/* The stand-in's memory: device memory is malloc'd host memory, so copies move real bytes and
 * every device range is checked against what was handed out. Pinned, managed and registered host
 * memory, pointer attributes, memsets, linear copies and IPC handles (pools are pools.c's). */
#include "fake.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

CUresult fake_allocate(CUdeviceptr *ptr, size_t bytes, obj_kind kind) {
  return fake_allocate_in(ptr, bytes, kind, current_context());
}
CUresult fake_allocate_in(CUdeviceptr *ptr, size_t bytes, obj_kind kind, CUcontext owner) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > ((size_t)1 << 40)) return CUDA_ERROR_OUT_OF_MEMORY;
  void *memory = malloc(bytes);
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult result = obj_add_in((uintptr_t)memory, kind, bytes, owner);
  if (result != CUDA_SUCCESS) return free(memory), result;
  *ptr = (CUdeviceptr)(uintptr_t)memory;
  return CUDA_SUCCESS;
}
static CUresult release(CUdeviceptr ptr, obj_kind kind) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!obj_remove((uintptr_t)ptr, kind)) return CUDA_ERROR_INVALID_VALUE;
  free((void *)(uintptr_t)ptr);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc(CUdeviceptr *ptr, size_t bytes) {
  ENTER();
  return fake_allocate(ptr, bytes, OBJ_DEVICE_MEMORY);
}
/* Device and managed memory alike. */
CUresult fake_release_device(CUdeviceptr ptr) {
  obj o;
  if (fake_graph_memory_at(ptr)) { /* its graph keeps the bytes for the next launch */
    if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
    return fake_graph_memory_free(ptr);
  }
  bool found = obj_memory((uintptr_t)ptr, 0, &o) && o.key == ptr;
  if (found && o.kind == OBJ_POOL_MEMORY) return fake_pool_free(ptr);
  return release(ptr, found && o.kind == OBJ_MANAGED ? OBJ_MANAGED : OBJ_DEVICE_MEMORY);
}
EXPORT CUresult cuMemFree(CUdeviceptr ptr) {
  ENTER();
  return fake_release_device(ptr);
}
EXPORT CUresult cuMemAllocPitch(CUdeviceptr *ptr, size_t *pitch, size_t width, size_t height,
                                unsigned int element) {
  ENTER();
  if (element != 4 && element != 8 && element != 16) return CUDA_ERROR_INVALID_VALUE;
  if (!width || !height || width > ((size_t)1 << 30) || height > ((size_t)1 << 30))
    return CUDA_ERROR_INVALID_VALUE;
  *pitch = (width + 511) / 512 * 512;
  return fake_allocate(ptr, *pitch * height, OBJ_DEVICE_MEMORY);
}
EXPORT CUresult cuMemGetInfo(size_t *free_bytes, size_t *total) {
  ENTER();
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  *total = (size_t)80 << 30;
  *free_bytes = *total - ((size_t)1 << 30);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned int flags) {
  ENTER();
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
  CUresult result = fake_allocate(ptr, bytes, OBJ_MANAGED);
  if (result == CUDA_SUCCESS) fake_managed_made(*ptr);
  return result;
}

/* ---- host memory ---- */

EXPORT CUresult cuMemHostAlloc(void **host, size_t bytes, unsigned int flags) {
  ENTER();
  if (flags & ~0xfu) return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr ptr;
  CUresult result = fake_allocate(&ptr, bytes, OBJ_HOST_MEMORY);
  if (result == CUDA_SUCCESS) *host = (void *)(uintptr_t)ptr;
  return result;
}
EXPORT CUresult cuMemFreeHost(void *host) {
  ENTER();
  return release((CUdeviceptr)(uintptr_t)host, OBJ_HOST_MEMORY);
}
EXPORT CUresult cuMemHostGetDevicePointer(CUdeviceptr *ptr, void *host, unsigned int flags) {
  ENTER();
  obj o;
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!obj_memory((uintptr_t)host, 0, &o) ||
      (o.kind != OBJ_HOST_MEMORY && o.kind != OBJ_REGISTERED))
    return CUDA_ERROR_INVALID_VALUE;
  *ptr = (CUdeviceptr)(uintptr_t)host;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemHostGetFlags(unsigned int *flags, void *host) {
  ENTER();
  obj o;
  if (!obj_memory((uintptr_t)host, 0, &o) || o.kind != OBJ_HOST_MEMORY)
    return CUDA_ERROR_INVALID_VALUE;
  *flags = 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemHostRegister(void *host, size_t bytes, unsigned int flags) {
  ENTER();
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!host || !bytes || (flags & ~0xfu)) return CUDA_ERROR_INVALID_VALUE;
  if (obj_memory((uintptr_t)host, 0, NULL)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  /* the memory is the caller's: touch every page, as pinning it would */
  volatile unsigned char *bytes_ = host;
  long page = sysconf(_SC_PAGESIZE);
  for (size_t at = 0; at < bytes; at += (size_t)page) (void)bytes_[at];
  (void)bytes_[bytes - 1];
  return obj_add((uintptr_t)host, OBJ_REGISTERED, bytes);
}
EXPORT CUresult cuMemHostUnregister(void *host) {
  ENTER();
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  return obj_remove((uintptr_t)host, OBJ_REGISTERED) ? CUDA_SUCCESS
                                                     : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

/* One attribute of the memory o that holds ptr. */
static CUresult attribute_of(void *data, CUpointer_attribute attribute, CUdeviceptr ptr,
                             const obj *o) {
  bool host = o->kind == OBJ_HOST_MEMORY || o->kind == OBJ_REGISTERED || o->kind == OBJ_MANAGED;
  CUmemoryPool pool = o->kind == OBJ_POOL_MEMORY ? fake_pool_of(ptr) : NULL;
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = o->owner; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    *(unsigned int *)data = o->kind == OBJ_HOST_MEMORY || o->kind == OBJ_REGISTERED
                                ? CU_MEMORYTYPE_HOST
                                : CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    if (!host) return CUDA_ERROR_INVALID_VALUE;
    *(void **)data = (void *)(uintptr_t)ptr;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data = o->kind == OBJ_MANAGED; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
  case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: *(CUdeviceptr *)data = o->key; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
  case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: *(size_t *)data = o->size; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = 0; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_BUFFER_ID:
  case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
    *(unsigned long long *)data = o->key; /* unique while the memory lives */
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = 1; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
  case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: *(int *)data = 0; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    *(int *)data = o->kind == OBJ_DEVICE_MEMORY;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
    *(int *)data = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(CUmemoryPool *)data = pool; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    *(unsigned long long *)data = pool ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : 0;
    return CUDA_SUCCESS;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  ENTER();
  obj o;
  if (!obj_memory((uintptr_t)ptr, 0, &o)) return CUDA_ERROR_INVALID_VALUE;
  return attribute_of(data, attribute, ptr, &o);
}

/* The bytes the driver writes for an attribute: pointers, sizes and ids 8, the others 4. */
static size_t attribute_size(CUpointer_attribute attribute) {
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
  case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
  case CU_POINTER_ATTRIBUTE_IS_MANAGED:
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
  case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
  case CU_POINTER_ATTRIBUTE_MAPPED:
  case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
  case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: return 4;
  default: return 8;
  }
}

/* Several at once; memory the driver does not know gets zeros, as the driver's own call does. */
EXPORT CUresult cuPointerGetAttributes(unsigned int count, CUpointer_attribute *attributes,
                                       void **data, CUdeviceptr ptr) {
  ENTER();
  obj o;
  bool known = obj_memory((uintptr_t)ptr, 0, &o);
  for (unsigned i = 0; i < count; i++) {
    if (attributes[i] < CU_POINTER_ATTRIBUTE_CONTEXT ||
        attributes[i] > CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID ||
        attributes[i] == CU_POINTER_ATTRIBUTE_P2P_TOKENS)
      return CUDA_ERROR_INVALID_VALUE;
    memset(data[i], 0, attribute_size(attributes[i]));
    if (known)
      attribute_of(data[i], attributes[i], ptr, &o); /* a host pointer of device memory stays 0 */
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr ptr) {
  ENTER();
  obj o;
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!obj_memory((uintptr_t)ptr, 0, &o) || ptr == o.key + o.size) return CUDA_ERROR_NOT_FOUND;
  if (base) *base = o.key;
  if (size) *size = o.size;
  return CUDA_SUCCESS;
}

/* ---- memsets: rows of count elements of width bytes, pitch apart ---- */

CUresult fake_memset_2d(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width,
                        size_t count, size_t rows, CUstream stream) {
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (!count || !rows) return in_context();
  if (dst % width || (rows > 1 && pitch < count * width)) return CUDA_ERROR_INVALID_VALUE;
  if (count > (SIZE_MAX / width) || (rows > 1 && pitch > SIZE_MAX / rows))
    return CUDA_ERROR_INVALID_VALUE;
  CUresult result = device_range(dst, (rows - 1) * pitch + count * width);
  if (result != CUDA_SUCCESS) return result;
  for (size_t r = 0; r < rows; r++) {
    unsigned char *row = (unsigned char *)(uintptr_t)dst + r * pitch;
    for (size_t i = 0; i < count; i++) memcpy(row + i * width, &value, width); /* little-endian */
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) {
  ENTER();
  return fake_memset_2d(d, 0, v, 1, n, 1, 0);
}
EXPORT CUresult cuMemsetD16(CUdeviceptr d, unsigned short v, size_t n) {
  ENTER();
  return fake_memset_2d(d, 0, v, 2, n, 1, 0);
}
EXPORT CUresult cuMemsetD32(CUdeviceptr d, unsigned int v, size_t n) {
  ENTER();
  return fake_memset_2d(d, 0, v, 4, n, 1, 0);
}
EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  ENTER();
  return fake_memset_2d(d, 0, v, 1, n, 1, s);
}
EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
  ENTER();
  return fake_memset_2d(d, 0, v, 2, n, 1, s);
}
EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  ENTER();
  return fake_memset_2d(d, 0, v, 4, n, 1, s);
}
EXPORT CUresult cuMemsetD2D8(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h) {
  ENTER();
  return fake_memset_2d(d, p, v, 1, w, h, 0);
}
EXPORT CUresult cuMemsetD2D16(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h) {
  ENTER();
  return fake_memset_2d(d, p, v, 2, w, h, 0);
}
EXPORT CUresult cuMemsetD2D32(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h) {
  ENTER();
  return fake_memset_2d(d, p, v, 4, w, h, 0);
}
EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h,
                                  CUstream s) {
  ENTER();
  return fake_memset_2d(d, p, v, 1, w, h, s);
}
EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h,
                                   CUstream s) {
  ENTER();
  return fake_memset_2d(d, p, v, 2, w, h, s);
}
EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h,
                                   CUstream s) {
  ENTER();
  return fake_memset_2d(d, p, v, 4, w, h, s);
}

/* ---- linear copies: device sides checked; host sides are the caller's to get right ---- */

static CUresult copy(void *dst, bool dst_device, const void *src, bool src_device, size_t bytes,
                     CUstream stream, bool async) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (!bytes) return CUDA_SUCCESS;
  if ((dst_device && device_range((CUdeviceptr)(uintptr_t)dst, bytes)) ||
      (src_device && device_range((CUdeviceptr)(uintptr_t)src, bytes)))
    return CUDA_ERROR_INVALID_VALUE;
  if (async && fake_defer_wanted(dst, src, stream) && fake_defer(dst, src, bytes, 1, 1, 0, 0, 0, 0))
    return CUDA_SUCCESS;
  if (async) fake_defer_run(UINT64_MAX); /* after the copies queued before it */
  memmove(dst, src, bytes);
  return CUDA_SUCCESS;
}
CUresult fake_copy(void *dst, bool dst_device, const void *src, bool src_device, size_t bytes,
                   CUstream stream, bool async) {
  return copy(dst, dst_device, src, src_device, bytes, stream, async);
}
#define DEV(p) ((void *)(uintptr_t)(p))
EXPORT CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) {
  ENTER();
  return fake_copy(DEV(d), true, s, false, n, 0, false);
}
EXPORT CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) {
  ENTER();
  return fake_copy(d, false, DEV(s), true, n, 0, false);
}
EXPORT CUresult cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) {
  ENTER();
  return fake_copy(DEV(d), true, DEV(s), true, n, 0, false);
}
EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream st) {
  ENTER();
  return copy(DEV(d), true, s, false, n, st, true);
}
EXPORT CUresult cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream st) {
  ENTER();
  return copy(d, false, DEV(s), true, n, st, true);
}
EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  ENTER();
  return fake_copy(DEV(d), true, DEV(s), true, n, st, false);
}
/* Peer copies name both contexts, which must be live. */
EXPORT CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) {
  ENTER();
  if (!live_context(dc, true) || !live_context(sc, true)) return CUDA_ERROR_INVALID_CONTEXT;
  return fake_copy(DEV(d), true, DEV(s), true, n, 0, false);
}
EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc,
                                  size_t n, CUstream st) {
  ENTER();
  if (!live_context(dc, true) || !live_context(sc, true)) return CUDA_ERROR_INVALID_CONTEXT;
  return fake_copy(DEV(d), true, DEV(s), true, n, st, false);
}

/* ---- IPC: a handle holds the process id, the address and the size ---- */

typedef struct {
  int pid;
  CUdeviceptr ptr;
  size_t size;
} ipc_handle;

EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr ptr) {
  ENTER();
  obj o;
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!obj_memory((uintptr_t)ptr, 0, &o) || o.kind != OBJ_DEVICE_MEMORY || o.key != ptr)
    return CUDA_ERROR_INVALID_VALUE;
  ipc_handle h = {getpid(), ptr, o.size};
  memset(handle, 0, sizeof *handle);
  memcpy(handle->reserved, &h, sizeof h);
  return CUDA_SUCCESS;
}
/* Memory of another process cannot be shared here: opening gives zeroed memory of its size. */
EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *ptr, CUipcMemHandle handle, unsigned int flags) {
  ENTER();
  ipc_handle h;
  memcpy(&h, handle.reserved, sizeof h);
  if (flags & ~1u || !h.pid || !h.size) return CUDA_ERROR_INVALID_VALUE;
  CUresult result = fake_allocate(ptr, h.size, OBJ_IPC_MEMORY);
  if (result == CUDA_SUCCESS) memset(DEV(*ptr), 0, h.size);
  return result;
}
EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr ptr) {
  ENTER();
  return release(ptr, OBJ_IPC_MEMORY);
}
