/* The stand-in's stream-ordered memory pools: each device's own pool, pools made by
 * cuMemPoolCreate, and their IPC. A pool made for POSIX file descriptors keeps its bytes in a
 * shared memfd mapping that its allocations are carved from, so that another process importing
 * the pool (by the descriptor) and a pointer (by its export data) sees the very bytes: a
 * two-process test moves real data. Other pools allocate as cuMemAlloc does. */
#include "fake.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define IPC_POOL_BYTES ((size_t)64 << 20) /* a shareable pool's bytes when maxSize is 0 */
#define MOST_POOLS 4096

struct CUmemPoolHandle_st {
  cuuint64_t threshold, reserved, used;
  int reuse[3];
  bool made;             /* made or imported (else a device's own) */
  bool destroyed;        /* by cuMemPoolDestroy, with allocations still out */
  bool imported;         /* no allocation from it here */
  CUcontext ctx;         /* imported: the context current then, which it goes with */
  int device;            /* where its memory is: a device, or -1 the host */
  unsigned handle_types; /* CUmemAllocationHandleType bits */
  unsigned access[2];    /* CUmemAccess_flags of each device */
  int memfd;             /* a shareable pool's bytes, mapped at base; -1 otherwise */
  char *base;
  size_t capacity, next; /* carved from the front, from the start again once all is free */
  size_t out;            /* allocations not freed */
};

/* The addon's reaper frees pool memory on its own thread while the main thread makes and
 * destroys pools: every function here holds this lock (HOLD_POOLS) to its return. The object
 * table's lock (core.c) is only ever taken inside it. */
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
#define HOLD_POOLS() HOLD(&pools_lock)

static struct CUmemPoolHandle_st device_pools[2];
static CUmemoryPool current[2] = {&device_pools[0], &device_pools[1]};
static CUmemoryPool made[MOST_POOLS]; /* live and destroyed-but-used made pools */

static bool pool_ok(CUmemoryPool pool) {
  if (pool == &device_pools[0] || pool == &device_pools[1]) return true;
  if (obj_live((uintptr_t)pool, OBJ_POOL)) return true;
  count_stale("pool");
  return false;
}

EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev) {
  ENTER();
  HOLD_POOLS();
  if (dev < 0 || dev > 1) return CUDA_ERROR_INVALID_DEVICE;
  *pool = &device_pools[dev];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev) {
  ENTER();
  HOLD_POOLS();
  if (dev < 0 || dev > 1) return CUDA_ERROR_INVALID_DEVICE;
  *pool = current[dev];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  ENTER();
  HOLD_POOLS();
  if (dev < 0 || dev > 1) return CUDA_ERROR_INVALID_DEVICE;
  if (!pool_ok(pool)) return CUDA_ERROR_INVALID_HANDLE;
  if (pool->device != dev || pool->imported) return CUDA_ERROR_INVALID_VALUE;
  current[dev] = pool;
  return CUDA_SUCCESS;
}

/* A made pool whose last allocation went, or which went with none out: its bytes go. */
static void pool_release(CUmemoryPool pool) {
  for (int i = 0; i < MOST_POOLS; i++)
    if (made[i] == pool) made[i] = NULL;
  for (int d = 0; d < 2; d++)
    if (current[d] == pool) current[d] = &device_pools[d];
  if (pool->base) munmap(pool->base, pool->capacity);
  if (pool->memfd >= 0) close(pool->memfd);
  free(pool);
}

static CUresult pool_new(CUmemoryPool *out, int device, unsigned handle_types) {
  int slot = 0;
  while (slot < MOST_POOLS && made[slot]) slot++;
  CUmemoryPool pool = slot < MOST_POOLS ? calloc(1, sizeof *pool) : NULL;
  if (!pool) return CUDA_ERROR_OUT_OF_MEMORY;
  pool->made = true;
  pool->device = device;
  pool->handle_types = handle_types;
  pool->memfd = -1;
  if (device >= 0) pool->access[device] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUresult result = obj_add((uintptr_t)pool, OBJ_POOL, 0);
  if (result != CUDA_SUCCESS) return free(pool), result;
  made[slot] = pool;
  *out = pool;
  return CUDA_SUCCESS;
}

/* Maps size bytes of fd at the pool's base: false where it cannot. */
static bool pool_map(CUmemoryPool pool, int fd, size_t size) {
  void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return false;
  pool->memfd = fd;
  pool->base = base;
  pool->capacity = size;
  return true;
}

EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props) {
  ENTER();
  HOLD_POOLS();
  if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
    return CUDA_ERROR_INVALID_VALUE;
  int device;
  switch (props->location.type) {
  case CU_MEM_LOCATION_TYPE_DEVICE:
    if (!fake_is_device(props->location.id)) return CUDA_ERROR_INVALID_DEVICE;
    device = props->location.id;
    break;
  case CU_MEM_LOCATION_TYPE_HOST: /* host pools are not IPC capable */
    if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE) return CUDA_ERROR_NOT_SUPPORTED;
    device = -1;
    break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (props->handleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return CUDA_ERROR_NOT_SUPPORTED;
  CUmemoryPool made_pool;
  CUresult result = pool_new(&made_pool, device, props->handleTypes);
  if (result != CUDA_SUCCESS) return result;
  if (props->handleTypes) {
    size_t size = props->maxSize ? props->maxSize : IPC_POOL_BYTES;
    int fd = memfd_create("fake-cuda-pool", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0 || !pool_map(made_pool, fd, size)) {
      if (fd >= 0) close(fd);
      obj_remove((uintptr_t)made_pool, OBJ_POOL);
      pool_release(made_pool);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  *pool = made_pool;
  return CUDA_SUCCESS;
}

void fake_pools_context_gone(CUcontext ctx, CUcontext heir) {
  HOLD_POOLS();
  for (int i = 0; i < MOST_POOLS; i++) {
    CUmemoryPool pool = made[i];
    if (!pool || !pool->imported || pool->destroyed || pool->ctx != ctx) continue;
    if (heir) {
      pool->ctx = heir;
      continue;
    }
    obj_remove((uintptr_t)pool, OBJ_POOL);
    pool->destroyed = true;
    if (!pool->out) pool_release(pool);
  }
}

EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  ENTER();
  HOLD_POOLS();
  if (!pool_ok(pool)) return CUDA_ERROR_INVALID_HANDLE;
  if (!pool->made) return CUDA_ERROR_INVALID_VALUE; /* a device's own */
  obj_remove((uintptr_t)pool, OBJ_POOL);
  pool->destroyed = true;
  for (int d = 0; d < 2; d++) /* at once, as the driver does, whatever is still allocated */
    if (current[d] == pool) current[d] = &device_pools[d];
  if (!pool->out) pool_release(pool); /* else when its last allocation is freed */
  return CUDA_SUCCESS;
}

/* The made pool whose bytes hold ptr, or NULL. */
static CUmemoryPool pool_holding(CUdeviceptr ptr) {
  for (int i = 0; i < MOST_POOLS; i++) {
    CUmemoryPool pool = made[i];
    if (pool && pool->base && (char *)(uintptr_t)ptr >= pool->base &&
        (char *)(uintptr_t)ptr < pool->base + pool->capacity)
      return pool;
  }
  return NULL;
}

CUresult fake_pool_free(CUdeviceptr ptr) {
  HOLD_POOLS();
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  CUmemoryPool pool = pool_holding(ptr);
  if (!pool || !obj_remove((uintptr_t)ptr, OBJ_POOL_MEMORY)) return CUDA_ERROR_INVALID_VALUE;
  if (--pool->out) return CUDA_SUCCESS;
  if (pool->destroyed)
    pool_release(pool);
  else
    pool->next = 0; /* all of it free again: carved anew from the front */
  return CUDA_SUCCESS;
}

CUmemoryPool fake_pool_of(CUdeviceptr ptr) {
  HOLD_POOLS();
  return pool_holding(ptr);
}

/* bytes from pool for stream's work: carved from a shareable pool's mapping, else allocated as
 * cuMemAlloc does; in the stream's context (the driver's, whatever is current), gone with it. */
static CUresult pool_allocate(CUdeviceptr *ptr, size_t bytes, CUmemoryPool pool, CUstream stream) {
  if (pool->imported) return CUDA_ERROR_INVALID_VALUE;
  CUcontext owner = fake_stream_context(stream);
  if (!pool->base) return fake_allocate_in(ptr, bytes, OBJ_DEVICE_MEMORY, owner);
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  size_t rounded = (bytes + 255) / 256 * 256;
  if (!bytes || rounded > pool->capacity - pool->next) return CUDA_ERROR_OUT_OF_MEMORY;
  CUdeviceptr at = (CUdeviceptr)(uintptr_t)(pool->base + pool->next);
  CUresult result = obj_add_in((uintptr_t)at, OBJ_POOL_MEMORY, bytes, owner);
  if (result != CUDA_SUCCESS) return result;
  pool->next += rounded;
  pool->out++;
  *ptr = at;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream stream) {
  ENTER();
  HOLD_POOLS();
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  return pool_allocate(ptr, bytes, current[fake_current_device()], stream);
}
EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *ptr, size_t bytes, CUmemoryPool pool,
                                        CUstream stream) {
  ENTER();
  HOLD_POOLS();
  if (!pool_ok(pool) || !stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  return pool_allocate(ptr, bytes, pool, stream);
}
EXPORT CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  ENTER(); /* no HOLD_POOLS: fake_pool_free takes it */
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  return fake_release_device(ptr);
}

/* ---- attributes and access ---- */

/* The pool's setting for one of the three reuse attributes, or NULL for another attribute. */
static int *reuse_of(CUmemoryPool pool, CUmemPool_attribute attribute) {
  unsigned i = (unsigned)attribute - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES;
  return i < 3 ? &pool->reuse[i] : NULL;
}
EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute,
                                      void *value) {
  ENTER();
  HOLD_POOLS();
  if (!pool_ok(pool)) return CUDA_ERROR_INVALID_HANDLE;
  int *reuse = reuse_of(pool, attribute);
  if (reuse) return *(int *)value = *reuse, CUDA_SUCCESS;
  switch (attribute) {
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
    *(cuuint64_t *)value = pool->threshold;
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    *(cuuint64_t *)value = pool->base ? pool->capacity : pool->reserved;
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    *(cuuint64_t *)value = pool->base ? pool->next : pool->used;
    return CUDA_SUCCESS;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}
EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute,
                                      void *value) {
  ENTER();
  HOLD_POOLS();
  if (!pool_ok(pool)) return CUDA_ERROR_INVALID_HANDLE;
  int *reuse = reuse_of(pool, attribute);
  if (reuse) return *reuse = *(int *)value, CUDA_SUCCESS;
  switch (attribute) {
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
    pool->threshold = *(cuuint64_t *)value;
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    if (*(cuuint64_t *)value) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}
EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
  ENTER();
  HOLD_POOLS();
  (void)keep;
  return pool_ok(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count) {
  ENTER();
  HOLD_POOLS();
  if (!pool_ok(pool)) return CUDA_ERROR_INVALID_HANDLE;
  for (size_t i = 0; i < count; i++) {
    const CUmemAccessDesc *d = &map[i];
    if (d->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !fake_is_device(d->location.id) ||
        (d->flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && d->flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
         d->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
      return CUDA_ERROR_INVALID_VALUE;
    /* the pool's own device keeps read and write */
    if (d->location.id == pool->device && d->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_DEVICE;
  }
  for (size_t i = 0; i < count; i++) pool->access[map[i].location.id] = map[i].flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool,
                                   CUmemLocation *location) {
  ENTER();
  HOLD_POOLS();
  if (!pool_ok(pool)) return CUDA_ERROR_INVALID_HANDLE;
  if (!location || location->type != CU_MEM_LOCATION_TYPE_DEVICE || !fake_is_device(location->id))
    return CUDA_ERROR_INVALID_VALUE;
  *flags = (CUmemAccess_flags)pool->access[location->id];
  return CUDA_SUCCESS;
}

/* ---- IPC: a descriptor for the pool; a pointer by its offset in the pool's file ---- */

typedef struct {
  uint64_t magic, inode, offset, size;
} pointer_export;
#define EXPORT_MAGIC 0x66616b65706f6f6cULL

static uint64_t inode_of(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

EXPORT CUresult cuMemPoolExportToShareableHandle(void *handle, CUmemoryPool pool,
                                                 CUmemAllocationHandleType type,
                                                 unsigned long long flags) {
  ENTER();
  HOLD_POOLS();
  if (!pool_ok(pool)) return CUDA_ERROR_INVALID_HANDLE;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags || !pool->base || pool->imported)
    return CUDA_ERROR_INVALID_VALUE;
  int fd = dup(pool->memfd);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *(int *)handle = fd;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool, void *handle,
                                                   CUmemAllocationHandleType type,
                                                   unsigned long long flags) {
  ENTER();
  HOLD_POOLS();
  int fd = (int)(intptr_t)handle;
  struct stat st;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags || fstat(fd, &st) != 0 ||
      !S_ISREG(st.st_mode) || !st.st_size)
    return CUDA_ERROR_INVALID_VALUE;
  int own = dup(fd); /* the caller keeps and closes fd */
  CUmemoryPool imported;
  CUresult result = own < 0 ? CUDA_ERROR_OUT_OF_MEMORY : pool_new(&imported, 0, type);
  if (result != CUDA_SUCCESS) {
    if (own >= 0) close(own);
    return result;
  }
  imported->imported = true;
  imported->ctx = current_context();
  if (!pool_map(imported, own, (size_t)st.st_size)) {
    close(own);
    obj_remove((uintptr_t)imported, OBJ_POOL);
    pool_release(imported);
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pool = imported;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *data, CUdeviceptr ptr) {
  ENTER();
  HOLD_POOLS();
  obj o;
  CUmemoryPool pool = pool_holding(ptr);
  if (!pool || pool->imported || !obj_memory((uintptr_t)ptr, 0, &o) || o.key != ptr ||
      o.kind != OBJ_POOL_MEMORY)
    return CUDA_ERROR_INVALID_VALUE;
  pointer_export e = {EXPORT_MAGIC, inode_of(pool->memfd),
                      (uint64_t)((char *)(uintptr_t)ptr - pool->base), o.size};
  memset(data, 0, sizeof *data);
  memcpy(data->reserved, &e, sizeof e);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr *ptr, CUmemoryPool pool,
                                       CUmemPoolPtrExportData *data) {
  ENTER();
  HOLD_POOLS();
  if (!pool_ok(pool)) return CUDA_ERROR_INVALID_HANDLE;
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  pointer_export e;
  memcpy(&e, data->reserved, sizeof e);
  if (!pool->imported || e.magic != EXPORT_MAGIC || e.inode != inode_of(pool->memfd) ||
      e.offset > pool->capacity || e.size > pool->capacity - e.offset || !e.size)
    return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr at = (CUdeviceptr)(uintptr_t)(pool->base + e.offset);
  CUresult result = obj_add((uintptr_t)at, OBJ_POOL_MEMORY, (size_t)e.size);
  if (result != CUDA_SUCCESS) return result;
  pool->out++;
  *ptr = at;
  return CUDA_SUCCESS;
}
