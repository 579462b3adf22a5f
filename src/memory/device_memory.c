/* device_memory: device memory (cuMemAlloc, pitched, stream-ordered, opened IPC handles), owned
 * by lib/'s DeviceAllocation objects, and host views of host-accessible device addresses. */
#include <stdlib.h>
#include <string.h>

#include "memory.h"

/* Device memory, owned by an object of lib/ (a DeviceAllocation), which names it by an id: its
 * slot in the environment's table, checked on every use, so that a wrong or stale id finds
 * nothing. A finalizer added to the object releases what is not freed before the object dies;
 * free() deletes the finalizer's reference with the memory, so that freed memory costs the
 * garbage collector nothing. (A type tag, a wrap and an unwrap cost several times as much: see
 * bench/overhead.js.) */

typedef enum { DEV_ALLOC, DEV_ORDERED, DEV_IPC } dev_origin;

typedef struct devmem {
  tracked node; /* while the memory is held; node.owner: napi_add_finalizer's weak reference */
  CUdeviceptr ptr;
  size_t size;
  ctx_rec *ctx;
  dev_origin origin;
  uint32_t slot;
} devmem;

static devmem *devmem_of(tracked *node) {
  return (devmem *)((char *)node - offsetof(devmem, node));
}

static const release_op DEV_RELEASE[] = {RELEASE_MEM_FREE, RELEASE_MEM_FREE_ORDERED,
                                         RELEASE_IPC_CLOSE};

/* What adopt_devmem writes to the Float64Array lib/ passes (made), by slot. */
enum { MADE_ID, MADE_CONTEXT, MADE_ADDRESS, MADE_COUNT };
static const layout_field MADE_LAYOUT[] = {
    {"id", MADE_ID}, {"context", MADE_CONTEXT}, {"address", MADE_ADDRESS}, {"count", MADE_COUNT}};

/* Stops holding dev's memory: out of the table and the list. */
static void devmem_forget(napi_env env, devmem *dev) {
  memory_slot_drop(dev->node.state, dev->slot);
  memory_unlink(env, &dev->node);
}

/* Its owner died: the memory goes through the reaper; the finalizer frees the struct. */
static void devmem_reclaim(napi_env env, tracked *node) {
  devmem *dev = devmem_of(node);
  release_later(node, DEV_RELEASE[dev->origin], dev->ptr, dev->ctx);
  devmem_forget(env, dev);
}

static void devmem_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  devmem *dev = data;
  if (dev->node.state) devmem_reclaim(env, &dev->node);
  NAPI_UNTHROWN(napi_delete_reference(env, dev->node.owner));
  ctx_rec_release(dev->ctx);
  free(dev);
}

/* Hands memory just obtained in ctx (whose reference it takes) to obj, and writes its id, its
 * context's handle and its address as a number (-1 past 2^53) to made; returns the address,
 * or NULL after releasing the memory and throwing. */
static napi_value adopt_devmem(napi_env env, napi_value obj, double *made, CUdeviceptr ptr,
                               size_t size, ctx_rec *ctx, dev_origin origin) {
  memory_state *state = state_of(env)->memory;
  devmem *dev = malloc(sizeof *dev);
  napi_ref owner;
  napi_status status = napi_generic_failure;
  if (dev && memory_slot_take(state, &dev->node, &dev->slot)) {
    status = napi_add_finalizer(env, obj, dev, devmem_finalize, NULL, &owner);
    if (status != napi_ok) memory_slot_drop(state, dev->slot);
  }
  if (status != napi_ok) {
    bool out_of_memory = !dev;
    release_now(DEV_RELEASE[origin], ptr, ctx);
    ctx_rec_release(ctx);
    free(dev);
    return out_of_memory ? throw_oom(env) : napi_fail(env, status);
  }
  dev->ptr = ptr;
  dev->size = size;
  dev->ctx = ctx;
  dev->origin = origin;
  memory_link(env, state, &dev->node, owner, origin == DEV_IPC ? 0 : size, devmem_reclaim);
  made[MADE_ID] = memory_slot_id(state, dev->slot);
  made[MADE_CONTEXT] = (double)(uintptr_t)ctx->handle;
  made[MADE_ADDRESS] = ptr < ((CUdeviceptr)1 << 53) ? (double)ptr : -1; /* a safe integer, or -1 */
  return make_ptr(env, ptr);
}

/* The ArrayBuffer of MADE_COUNT doubles at least that lib/ passes for adopt_devmem to write to
 * (cheaper to read than a typed array). */
static bool arg_made(napi_env env, napi_value v, double **made) {
  size_t length;
  void *data;
  if (napi_get_arraybuffer_info(env, v, &data, &length) != napi_ok ||
      length < MADE_COUNT * sizeof(double) || (uintptr_t)data % sizeof(double)) {
    throw_type(env, "expected an ArrayBuffer of layouts.made.count doubles");
    return false;
  }
  *made = data;
  return true;
}

/* memAlloc(obj, bytes, made): device memory in the current context, owned by obj; its address. */
static napi_value mem_alloc(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  size_t bytes;
  double *made;
  if (!arg_size(env, argv[1], "bytes", &bytes) || !arg_made(env, argv[2], &made)) return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUdeviceptr ptr;
  CUresult result = DRV(cuMemAlloc, &ptr, bytes);
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu_about(env, result, "cuMemAlloc", "%zu bytes asked for", bytes);
  }
  return adopt_devmem(env, argv[0], made, ptr, bytes, ctx, DEV_ALLOC);
}

/* memAllocPitch(obj, widthInBytes, height, elementSize, made): [address, pitch]. */
static napi_value mem_alloc_pitch(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  size_t width, height;
  uint32_t element;
  double *made;
  if (!arg_size(env, argv[1], "width", &width) || !arg_size(env, argv[2], "height", &height) ||
      !arg_uint32(env, argv[3], "accessSize", &element) || !arg_made(env, argv[4], &made))
    return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUdeviceptr ptr;
  size_t pitch;
  CUresult result = DRV(cuMemAllocPitch, &ptr, &pitch, width, height, element);
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu_about(env, result, "cuMemAllocPitch", "%zu rows of %zu bytes asked for", height,
                          width);
  }
  napi_value address = adopt_devmem(env, argv[0], made, ptr, pitch * height, ctx, DEV_ALLOC);
  return make_pair(env, address, make_uint(env, pitch));
}

static CUresult alloc_async(CUdeviceptr *ptr, size_t bytes, const pool_h *pool, CUstream stream) {
  return pool ? DRV(cuMemAllocFromPoolAsync, ptr, bytes, pool->handle, stream)
              : DRV(cuMemAllocAsync, ptr, bytes, stream);
}

/* memAllocAsync(obj, bytes, stream or null, pool or null, made): stream-ordered memory from pool
 * (the device's current pool when null); its address. The driver takes the context from the
 * stream: the stream's is made current only where the call fails without. */
static napi_value mem_alloc_async(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  size_t bytes;
  stream_h *s;
  double *made;
  if (!arg_size(env, argv[1], "bytes", &bytes)) return NULL;
  pool_h *pool = NULL;
  napi_valuetype type;
  NAPI_CALL(env, napi_typeof(env, argv[3], &type));
  if (type != napi_null && !(pool = handle_get(env, argv[3], &POOL_KIND))) return NULL;
  const char *api = pool ? "cuMemAllocFromPoolAsync" : "cuMemAllocAsync";
  if (!arg_stream_handle(env, argv[2], &s) || !arg_made(env, argv[4], &made)) return NULL;
  ctx_rec *ctx = s ? ctx_rec_retain(s->ctx) : ctx_rec_current(env);
  if (!ctx) return NULL;
  CUstream stream = s ? s->handle : NULL;
  CUdeviceptr ptr = 0;
  CUresult result = alloc_async(&ptr, bytes, pool, stream);
  if (result != CUDA_SUCCESS && s && ctx_enter(ctx)) {
    result = alloc_async(&ptr, bytes, pool, stream);
    ctx_leave();
  }
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu(env, result, api);
  }
  return adopt_devmem(env, argv[0], made, ptr, bytes, ctx, DEV_ORDERED);
}

static CUresult free_call(dev_origin origin, CUdeviceptr ptr, CUstream stream) {
  return origin == DEV_ORDERED ? DRV(cuMemFreeAsync, ptr, stream) : DRV(cuMemFree, ptr);
}

/* memFree(id, stream or null): frees now (cuMemFree, cuIpcCloseMemHandle), or, for stream-ordered
 * memory, once the stream gets there (cuMemFreeAsync; null: the default stream of the memory's
 * context). An id that names no memory (freed already) does nothing. The driver finds memory by
 * its address: the memory's context is made current only where the call fails without, and for
 * the default stream, which is the current context's. */
static napi_value mem_free(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  double id;
  stream_h *s;
  if (napi_get_value_double(env, argv[0], &id) != napi_ok)
    return throw_type(env, "expected a memory id");
  tracked *node = memory_slot_find(env, id);
  devmem *dev = node ? devmem_of(node) : NULL;
  if (!dev || !arg_stream_handle(env, argv[1], &s)) return NULL;
  CUdeviceptr ptr = dev->ptr;
  ctx_rec *ctx = dev->ctx;
  dev_origin origin = dev->origin;
  CUstream stream = s ? s->handle : NULL;
  devmem_forget(env, dev);
  NAPI_UNTHROWN(napi_delete_reference(env, dev->node.owner)); /* its finalizer will not run */
  free(dev);
  CUresult result = CUDA_SUCCESS;
  if (origin == DEV_IPC) {
    result = release_now(RELEASE_IPC_CLOSE, ptr, ctx);
  } else if (!ctx_rec_gone(ctx)) { /* else the memory went with its context */
    bool direct = origin == DEV_ALLOC || s;
    if (direct) result = free_call(origin, ptr, stream);
    if ((!direct || result != CUDA_SUCCESS) && ctx_enter(ctx)) {
      result = free_call(origin, ptr, stream);
      ctx_leave();
    }
  }
  ctx_rec_release(ctx);
  if (result != CUDA_SUCCESS)
    return throw_cu(env, result,
                    origin == DEV_ALLOC ? "cuMemFree"
                    : origin == DEV_IPC ? "cuIpcCloseMemHandle"
                                        : "cuMemFreeAsync");
  return NULL;
}

/* memGetInfo(): { free, total } bytes of the current context's device. */
static napi_value mem_get_info(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  size_t free_bytes, total;
  CU_CALL(env, cuMemGetInfo, &free_bytes, &total);
  napi_value result;
  NAPI_CALL(env, napi_create_object(env, &result));
  NAPI_CALL(env, napi_set_named_property(env, result, "free", make_uint(env, free_bytes)));
  NAPI_CALL(env, napi_set_named_property(env, result, "total", make_uint(env, total)));
  return result;
}

/* memReclaim(collect): with collect, forces a full garbage collection first (V8 collects at once
 * when told of a vast amount of external memory, which is taken back straight after); then
 * releases the memory of every allocation found dead. Returns the bytes released. */
static napi_value mem_reclaim(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  bool collect;
  if (!arg_bool(env, argv[0], &collect)) return NULL;
  if (collect) {
    const int64_t vast = (int64_t)1 << 42;
    int64_t total;
    NAPI_CALL(env, napi_adjust_external_memory(env, vast, &total));
    NAPI_CALL(env, napi_adjust_external_memory(env, -vast, &total));
  }
  return make_uint(env, memory_reclaim(env));
}

/* ---- IPC ---- */

/* ipcGetMemHandle(address): the CUipcMemHandle bytes as a Buffer. */
static napi_value ipc_get_mem_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUdeviceptr ptr;
  if (!arg_ptr(env, argv[0], "pointer", &ptr) || !driver_ready(env)) return NULL;
  CUipcMemHandle handle;
  CU_CALL(env, cuIpcGetMemHandle, &handle, ptr);
  napi_value result;
  NAPI_CALL(env,
            napi_create_buffer_copy(env, sizeof handle.reserved, handle.reserved, NULL, &result));
  return result;
}

/* ipcOpenMemHandle(obj, handle bytes, flags, made): another process's memory, opened in the
 * current context and owned by obj; [address, size]. */
static napi_value ipc_open_mem_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  CUipcMemHandle handle;
  uint32_t flags;
  double *made;
  if (!arg_ipc_handle(env, argv[1], handle.reserved) ||
      !arg_uint32(env, argv[2], "flags", &flags) || !arg_made(env, argv[3], &made))
    return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUdeviceptr ptr, base;
  size_t size = 0;
  CUresult result = DRV(cuIpcOpenMemHandle, &ptr, handle, flags);
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu(env, result, "cuIpcOpenMemHandle");
  }
  if (DRV(cuMemGetAddressRange, &base, &size, ptr) != CUDA_SUCCESS) size = 0;
  napi_value address = adopt_devmem(env, argv[0], made, ptr, size, ctx, DEV_IPC);
  return make_pair(env, address, make_uint(env, size));
}

/* memPoolImportPointer(obj, pool, data, made): memory another process allocated from the pool it
 * exported (data: cuMemPoolExportPointer's 64 bytes), owned by obj, freed here before there;
 * [address, size]. */
static napi_value mem_pool_import_pointer(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  pool_h *pool = handle_get(env, argv[1], &POOL_KIND);
  CUmemPoolPtrExportData data;
  double *made;
  if (!pool || !arg_ipc_handle(env, argv[2], (char *)data.reserved) ||
      !arg_made(env, argv[3], &made))
    return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUdeviceptr ptr, base;
  size_t size = 0;
  CUresult result = DRV(cuMemPoolImportPointer, &ptr, pool->handle, &data);
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu(env, result, "cuMemPoolImportPointer");
  }
  if (DRV(cuMemGetAddressRange, &base, &size, ptr) != CUDA_SUCCESS) size = 0;
  napi_value address = adopt_devmem(env, argv[0], made, ptr, size, ctx, DEV_ORDERED);
  return make_pair(env, address, make_uint(env, size));
}

/* ---- host views of host-accessible device addresses (asBuffer) ---- */

/* memHostView(address, size, external): an ArrayBuffer over size bytes at address, which must be
 * host-accessible (managed or mapped host memory) and lie within one host allocation of cudadrv's;
 * that allocation keeps a list of its views and detaches them when it is freed, and each view
 * keeps it alive. null where external ArrayBuffers are refused (or external is false). */
static napi_value mem_host_view(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  CUdeviceptr ptr;
  size_t size;
  bool external;
  if (!arg_ptr(env, argv[0], "pointer", &ptr) || !arg_size(env, argv[1], "size", &size) ||
      !arg_bool(env, argv[2], &external) || !driver_ready(env))
    return NULL;
  unsigned int managed = 0;
  void *host = NULL;
  CU_CALL(env, cuPointerGetAttribute, &managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr);
  if (managed)
    host = (void *)(uintptr_t)ptr;
  else if (DRV(cuPointerGetAttribute, &host, CU_POINTER_ATTRIBUTE_HOST_POINTER, ptr) !=
               CUDA_SUCCESS ||
           !host)
    return throw_logic(env, "asBuffer(): this memory is not host-accessible (it is device memory); "
                            "copy it to the host with memcpyDtoH() or fromDevice()");
  CUdeviceptr start = 0;
  size_t range = 0;
  if (DRV(cuPointerGetAttribute, &start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, ptr) !=
          CUDA_SUCCESS ||
      DRV(cuPointerGetAttribute, &range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr) != CUDA_SUCCESS)
    CU_CALL(env, cuMemGetAddressRange, &start, &range, ptr);
  if (size > range || ptr < start || ptr - start > range - size)
    return throw_range(env, "asBuffer(): size and offset reach past the end of the allocation");
  if (!external) return make_null(env);
  return host_view(env, host, size);
}

bool device_memory_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"memAlloc", mem_alloc},
      {"memAllocPitch", mem_alloc_pitch},
      {"memAllocAsync", mem_alloc_async},
      {"memFree", mem_free},
      {"memGetInfo", mem_get_info},
      {"memReclaim", mem_reclaim},
      {"ipcGetMemHandle", ipc_get_mem_handle},
      {"ipcOpenMemHandle", ipc_open_mem_handle},
      {"memPoolImportPointer", mem_pool_import_pointer},
      {"memHostView", mem_host_view},
  };
  return EXPORTS(env, exports, fns) && EXPORT_LAYOUT(env, exports, "made", MADE_LAYOUT);
}
