/* mempool: the driver's memory pools (CUmemoryPool), which stream-ordered allocations draw from:
 * a device's own pools, pools made with cuMemPoolCreate, and pools imported from another process
 * by a file descriptor; their access from devices and their IPC. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "memory.h"

/* A pool made or imported here is shared by every MemoryPool object on it, in any thread: the
 * object that made or imported it, and those getCurrent() gave while it was a device's current
 * pool. The driver's pool goes with the last of them, so that no object holds a destroyed handle
 * (the driver crashes on one); when the objects that made or imported it have all gone, it stops
 * being its device's current pool, as cuMemPoolDestroy would have made it. Every driver call that
 * makes, finds or destroys such a pool holds shares_lock, so that none finds a pool being
 * destroyed. */
struct pool_share {
  CUmemoryPool handle;
  int device;   /* the device it is made on, or -1 (the host, or imported) */
  ctx_rec *ctx; /* an imported pool's: the context current at import, which it goes with */
  unsigned holders, owners;
  pool_share *next;
};
static pool_share *shares;
static pthread_mutex_t shares_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether share is handle's. An imported pool's share whose context is gone names no pool: the
 * driver destroyed the pool with the context and may hand its handle to the next pool made or
 * imported, which would otherwise be taken for the dead one (refused, and never destroyed). */
static bool share_of(const pool_share *share, CUmemoryPool handle) {
  return share->handle == handle && !(share->ctx && ctx_rec_gone(share->ctx));
}

/* The share of handle with one more holder (an owner where owner), or a new one where owner and
 * there is none; NULL for a device's own pool or when out of memory (owner: handle destroyed). */
static pool_share *share_hold(CUmemoryPool handle, int device, bool owner) {
  pool_share *share = shares;
  while (share && !share_of(share, handle)) share = share->next;
  if (!share && owner) {
    share = calloc(1, sizeof *share);
    if (!share) {
      DRV(cuMemPoolDestroy, handle);
      return NULL;
    }
    *share = (pool_share){.handle = handle, .device = device, .next = shares};
    shares = share;
  }
  if (share) {
    share->holders++;
    share->owners += owner;
  }
  return share;
}

/* Its device's own pool becomes current again where share's pool is. */
static void share_uncurrent(const pool_share *share) {
  CUmemoryPool now, own;
  if (share->device >= 0 && DRV(cuDeviceGetMemPool, &now, share->device) == CUDA_SUCCESS &&
      now == share->handle && DRV(cuDeviceGetDefaultMemPool, &own, share->device) == CUDA_SUCCESS)
    DRV(cuDeviceSetMemPool, share->device, own);
}

static CUresult destroy_pool(handle_base *base) {
  pool_h *pool = (pool_h *)base;
  pool_share *share = pool->share;
  if (!share) return CUDA_SUCCESS;
  pool->share = NULL;
  CUresult result = CUDA_SUCCESS;
  pthread_mutex_lock(&shares_lock);
  share->owners -= pool->owned;
  if (--share->holders == 0) {
    pool_share **at = &shares;
    while (*at != share) at = &(*at)->next;
    *at = share->next;
    if (!share->ctx || !ctx_rec_gone(share->ctx)) result = DRV(cuMemPoolDestroy, share->handle);
    ctx_rec_release(share->ctx);
    free(share);
  } else if (pool->owned && share->owners == 0) {
    share_uncurrent(share);
  }
  pthread_mutex_unlock(&shares_lock);
  return result;
}

static ctx_rec *context_of_pool(const handle_base *base) {
  const pool_share *share = ((const pool_h *)base)->share;
  return share ? share->ctx : NULL;
}

/* An imported pool is refused once its context is detached: driver 580 destroys it with the
 * context it was imported in (a cuMemPoolDestroy after was an invalid value on an H200). */
const handle_kind POOL_KIND = {.tag = {0x63647276706f6f31ULL, 0x4d656d506f6f6c31ULL},
                               .name = "MemoryPool",
                               .freed = "this MemoryPool has been destroyed; make a new one",
                               .destroy = destroy_pool,
                               .context = context_of_pool};

/* Wraps handle, held by share (or a device's own where share is NULL), in obj; owned: made or
 * imported through obj. False after throwing (share's hold let go of then). */
static bool adopt_pool(napi_env env, napi_value obj, CUmemoryPool handle, pool_share *share,
                       bool owned) {
  pool_h *pool = calloc(1, sizeof *pool);
  if (!pool) {
    pool_h held = {.handle = handle, .share = share, .owned = owned};
    destroy_pool(&held.base);
    throw_oom(env);
    return false;
  }
  *pool = (pool_h){.handle = handle, .share = share, .owned = owned};
  return handle_wrap_object(env, obj, &pool->base, &POOL_KIND);
}

/* obj's pool after a driver call that made, imported (owned) or found it (got: its result; share:
 * what share_hold gave under shares_lock, held across the call); NULL, after throwing, on
 * failure. */
static napi_value adopt_result(napi_env env, napi_value obj, CUresult got, const char *call,
                               CUmemoryPool handle, pool_share *share, bool owned) {
  if (got != CUDA_SUCCESS) return throw_cu(env, got, call);
  if (owned && !share) return throw_oom(env); /* share_hold destroyed the pool */
  adopt_pool(env, obj, handle, share, owned);
  return NULL;
}

/* memPoolGetDefault(obj, device) / memPoolGetCurrent(obj, device): the pool wrapped in obj. */
static napi_value wrap_pool(napi_env env, napi_callback_info info, bool current) {
  ARGS(env, info, 2);
  int32_t device;
  if (!arg_int32(env, argv[1], "device", &device) || !driver_ready(env)) return NULL;
  CUmemoryPool handle = NULL;
  pthread_mutex_lock(&shares_lock);
  CUresult got = current ? DRV(cuDeviceGetMemPool, &handle, (CUdevice)device)
                         : DRV(cuDeviceGetDefaultMemPool, &handle, (CUdevice)device);
  pool_share *share = got == CUDA_SUCCESS ? share_hold(handle, device, false) : NULL;
  pthread_mutex_unlock(&shares_lock);
  return adopt_result(env, argv[0], got,
                      current ? "cuDeviceGetMemPool" : "cuDeviceGetDefaultMemPool", handle, share,
                      false);
}

static napi_value mem_pool_get_default(napi_env env, napi_callback_info info) {
  return wrap_pool(env, info, false);
}

static napi_value mem_pool_get_current(napi_env env, napi_callback_info info) {
  return wrap_pool(env, info, true);
}

/* The attributes that are ints; the others are cuuint64_t. */
static bool pool_attribute_is_int(uint32_t attribute) {
  return attribute == CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
         attribute == CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC ||
         attribute == CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

/* memPoolGetAttribute(pool, attribute): a number. */
static napi_value mem_pool_get_attribute(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  uint32_t attribute;
  if (!pool || !arg_uint32(env, argv[1], "attribute", &attribute)) return NULL;
  int small = 0;
  cuuint64_t large = 0;
  void *value = pool_attribute_is_int(attribute) ? (void *)&small : (void *)&large;
  CU_CALL(env, cuMemPoolGetAttribute, pool->handle, (CUmemPool_attribute)attribute, value);
  return pool_attribute_is_int(attribute) ? make_int(env, small) : make_uint(env, large);
}

/* memPoolSetAttribute(pool, attribute, value). */
static napi_value mem_pool_set_attribute(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  uint32_t attribute;
  size_t number;
  if (!pool || !arg_uint32(env, argv[1], "attribute", &attribute) ||
      !arg_size(env, argv[2], "value", &number))
    return NULL;
  int small = (int)(number != 0);
  cuuint64_t large = number;
  void *value = pool_attribute_is_int(attribute) ? (void *)&small : (void *)&large;
  CU_CALL(env, cuMemPoolSetAttribute, pool->handle, (CUmemPool_attribute)attribute, value);
  return NULL;
}

/* memPoolTrimTo(pool, minBytesToKeep). */
static napi_value mem_pool_trim_to(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  size_t keep;
  if (!pool || !arg_size(env, argv[1], "minBytesToKeep", &keep)) return NULL;
  CU_CALL(env, cuMemPoolTrimTo, pool->handle, keep);
  return NULL;
}

bool arg_location(napi_env env, napi_value type, napi_value id, CUmemLocation *location) {
  uint32_t kind;
  int32_t ordinal;
  if (!arg_uint32(env, type, "location type", &kind) ||
      !arg_int32(env, id, "location id", &ordinal))
    return false;
  location->type = (CUmemLocationType)kind;
  location->id = ordinal;
  return true;
}

bool arg_fd(napi_env env, napi_value v, int *fd) {
  int32_t value;
  if (!arg_int32(env, v, "fd", &value)) return false;
  if (value < 0) {
    throw_range(env, "fd must be an open file descriptor (0 or more)");
    return false;
  }
  *fd = value;
  return true;
}

/* memPoolCreate(obj, locationType, locationId, handleTypes, maxSize): a new pool in obj. */
static napi_value mem_pool_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  CUmemPoolProps props = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED};
  uint32_t handle_types;
  if (!arg_location(env, argv[1], argv[2], &props.location) ||
      !arg_uint32(env, argv[3], "handleTypes", &handle_types) ||
      !arg_size(env, argv[4], "maxSize", &props.maxSize) || !driver_ready(env))
    return NULL;
  props.handleTypes = (CUmemAllocationHandleType)handle_types;
  int device = props.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? props.location.id : -1;
  CUmemoryPool handle = NULL;
  pthread_mutex_lock(&shares_lock);
  CUresult got = DRV(cuMemPoolCreate, &handle, &props);
  pool_share *share = got == CUDA_SUCCESS ? share_hold(handle, device, true) : NULL;
  pthread_mutex_unlock(&shares_lock);
  return adopt_result(env, argv[0], got, "cuMemPoolCreate", handle, share, true);
}

/* memPoolDestroy(pool): a made or imported pool's destroy(); a device's own is refused. */
static napi_value mem_pool_destroy(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  pool_h *pool = handle_get_any(env, argv[0], &POOL_KIND);
  if (!pool) return NULL;
  if (!pool->owned)
    return throw_logic(env, "destroy(): this MemoryPool came from getDefault() or getCurrent(); "
                            "destroy a pool through the object new MemoryPool() or importHandle() "
                            "gave");
  if (!pool->base.freed) handle_release(&pool->base);
  return NULL;
}

/* memPoolSetCurrent(pool, device): memAllocAsync's pool on device from now on. */
static napi_value mem_pool_set_current(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  int32_t device;
  if (!pool || !arg_int32(env, argv[1], "device", &device)) return NULL;
  CU_CALL(env, cuDeviceSetMemPool, (CUdevice)device, pool->handle);
  return NULL;
}

/* memPoolSetAccess(pool, locationType, locationId, flags). */
static napi_value mem_pool_set_access(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  CUmemAccessDesc access;
  uint32_t flags;
  if (!pool || !arg_location(env, argv[1], argv[2], &access.location) ||
      !arg_uint32(env, argv[3], "flags", &flags))
    return NULL;
  access.flags = (CUmemAccess_flags)flags;
  CU_CALL(env, cuMemPoolSetAccess, pool->handle, &access, 1);
  return NULL;
}

/* memPoolGetAccess(pool, locationType, locationId): the CUmemAccess_flags. */
static napi_value mem_pool_get_access(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  CUmemLocation location;
  if (!pool || !arg_location(env, argv[1], argv[2], &location)) return NULL;
  CUmemAccess_flags flags;
  CU_CALL(env, cuMemPoolGetAccess, &flags, pool->handle, &location);
  return make_int(env, (int64_t)flags);
}

/* A file descriptor an export made, owned by a ShareableHandle: closed by close() or at garbage
 * collection. C closes no descriptor but its own. */
typedef struct fd_h {
  handle_base base;
  int fd;
} fd_h;

static CUresult close_handle(handle_base *base) {
  close(((fd_h *)base)->fd);
  return CUDA_SUCCESS;
}

static const handle_kind FD_KIND = {.tag = {0x6364727673686e31ULL, 0x5368617265486e31ULL},
                                    .name = "ShareableHandle",
                                    .freed = "this ShareableHandle has been closed",
                                    .destroy = close_handle};

bool shareable_handle_wrap(napi_env env, napi_value obj, int fd) {
  fd_h *handle = calloc(1, sizeof *handle);
  if (!handle) {
    close(fd);
    throw_oom(env);
    return false;
  }
  handle->fd = fd;
  return handle_wrap_object(env, obj, &handle->base, &FD_KIND);
}

/* memPoolExportHandle(pool, obj): a new file descriptor for the pool, owned by obj. */
static napi_value mem_pool_export_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  if (!pool) return NULL;
  int fd = -1;
  CU_CALL(env, cuMemPoolExportToShareableHandle, &fd, pool->handle,
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  shareable_handle_wrap(env, argv[1], fd);
  return NULL;
}

/* shareableHandleFd(obj): its descriptor (a LogicError once closed). */
static napi_value shareable_handle_fd(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  fd_h *handle = handle_get(env, argv[0], &FD_KIND);
  return handle ? make_int(env, handle->fd) : NULL;
}

/* shareableHandleClose(obj): closes its descriptor; again does nothing. */
static napi_value shareable_handle_close(napi_env env, napi_callback_info info) {
  return handle_destroy_call(env, info, &FD_KIND);
}

/* memPoolImportHandle(obj, fd): the pool another process exported as fd, in obj (fd stays the
 * caller's: the driver duplicates what it needs), of the current context, which it goes with. */
static napi_value mem_pool_import_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  int fd;
  if (!arg_fd(env, argv[1], &fd)) return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUmemoryPool handle = NULL;
  pthread_mutex_lock(&shares_lock);
  CUresult got = DRV(cuMemPoolImportFromShareableHandle, &handle, (void *)(intptr_t)fd,
                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  pool_share *share = got == CUDA_SUCCESS ? share_hold(handle, -1, true) : NULL;
  if (share && !share->ctx) share->ctx = ctx_rec_retain(ctx);
  pthread_mutex_unlock(&shares_lock);
  ctx_rec_release(ctx);
  return adopt_result(env, argv[0], got, "cuMemPoolImportFromShareableHandle", handle, share, true);
}

/* memPoolExportPointer(address): the 64 bytes another process imports it by, as a Buffer. */
static napi_value mem_pool_export_pointer(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUdeviceptr ptr;
  if (!arg_ptr(env, argv[0], "pointer", &ptr) || !driver_ready(env)) return NULL;
  CUmemPoolPtrExportData data;
  CU_CALL(env, cuMemPoolExportPointer, &data, ptr);
  napi_value result;
  NAPI_CALL(env, napi_create_buffer_copy(env, sizeof data.reserved, data.reserved, NULL, &result));
  return result;
}

bool mempool_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"memPoolCreate", mem_pool_create},
      {"memPoolDestroy", mem_pool_destroy},
      {"memPoolSetCurrent", mem_pool_set_current},
      {"memPoolSetAccess", mem_pool_set_access},
      {"memPoolGetAccess", mem_pool_get_access},
      {"memPoolExportHandle", mem_pool_export_handle},
      {"memPoolImportHandle", mem_pool_import_handle},
      {"shareableHandleFd", shareable_handle_fd},
      {"shareableHandleClose", shareable_handle_close},
      {"memPoolExportPointer", mem_pool_export_pointer},
      {"memPoolGetDefault", mem_pool_get_default},
      {"memPoolGetCurrent", mem_pool_get_current},
      {"memPoolGetAttribute", mem_pool_get_attribute},
      {"memPoolSetAttribute", mem_pool_set_attribute},
      {"memPoolTrimTo", mem_pool_trim_to},
  };
  return EXPORTS(env, exports, fns);
}
