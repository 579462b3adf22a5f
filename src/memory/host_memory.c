/* host_memory: host memory handed to JS as ArrayBuffers: pinned (cuMemHostAlloc), aligned
 * (posix_memalign, no driver), managed (cuMemAllocManaged), and registrations of memory that JS
 * already has (cuMemHostRegister).
 *
 * An allocation is an external ArrayBuffer whose finalizer releases the memory; the JS object of
 * the allocation (PagelockedHostAllocation...) wraps the same struct, which lives until both are
 * finalized. Where external ArrayBuffers are refused (napi_no_external_buffers_allowed, as in
 * Electron's memory cage) or lib/ asks so, the memory is a V8-owned ArrayBuffer instead, a page
 * larger than asked, whose page-aligned part is registered with cuMemHostRegister (pinned) or
 * handed out at the alignment asked (aligned). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_memory.h"

static const handle_kind HOST_KIND = {.tag = {0x6364727668737431ULL, 0x486f73744d656d31ULL},
                                      .name = "host allocation",
                                      .freed =
                                          "this host memory has been freed; allocate new memory"};

static const char *const RELEASE_API[] = {
    [RELEASE_MEM_FREE] = "cuMemFree",
    [RELEASE_HOST_FREE] = "cuMemFreeHost",
    [RELEASE_HOST_UNREGISTER] = "cuMemHostUnregister",
    [RELEASE_ALIGNED_FREE] = "free",
};

/* Whether V8 frees h's memory (aligned memory in a V8-owned buffer): nothing to release. */
static bool v8_frees(const host_mem *h) { return h->origin == HOST_ALIGNED && h->v8_owned; }

/* What releases h's memory where V8 does not. */
static release_op host_release_op(const host_mem *h) {
  switch (h->origin) {
  case HOST_ALIGNED: return RELEASE_ALIGNED_FREE;
  case HOST_PINNED: return h->v8_owned ? RELEASE_HOST_UNREGISTER : RELEASE_HOST_FREE;
  case HOST_MANAGED: return RELEASE_MEM_FREE;
  default: return RELEASE_HOST_UNREGISTER;
  }
}

/* Releases h's memory, now (explicit free(): may wait for the device) or through the reaper: no
 * release that garbage collection causes runs on the main thread, where it could wait for a kernel
 * (cuMemFree of managed memory, and even free(), which unmaps pages the GPU may map). */
static CUresult host_release(host_mem *h, bool now) {
  h->base.freed = true;
  if (v8_frees(h)) return CUDA_SUCCESS;
  release_op op = host_release_op(h);
  if (now) return release_now(op, (uintptr_t)h->data, h->ctx);
  release_later(&h->node, op, (uintptr_t)h->data, h->ctx);
  return CUDA_SUCCESS;
}

static void host_unref(napi_env env, host_mem *h) {
  if (--h->refs > 0) return;
  host_drop_views(env, h, false); /* none alive: each kept the memory's owner alive */
  ctx_rec_release(h->ctx);
  free(h);
}

static void host_pin(void *obj) {
  host_mem *h = obj;
  h->pins++;
  h->refs++;
}

static void host_unpin(void *obj) {
  host_mem *h = obj;
  h->pins--;
  host_unref(h->env, h);
}

/* Aligned memory has no context; an allocation goes with its context. */
static ctx_rec *host_context(void *obj) { return ((host_mem *)obj)->ctx; }

const graph_pin_ops HOST_PINS = {host_pin, host_unpin, host_context};

void host_reclaim(napi_env env, tracked *node) {
  host_mem *h = host_of(node);
  host_release(h, false);
  memory_untrack(env, node);
}

/* ctx is being detached; if it is h's, the driver frees the memory with it: the ArrayBuffer is
 * detached, so that no view reads or writes freed memory. */
static void host_context_gone(napi_env env, tracked *node, ctx_rec *ctx) {
  host_mem *h = host_of(node);
  if (h->ctx != ctx) return;
  host_drop_views(env, h, true);
  detach_referenced(env, node->owner);
  h->base.freed = true;
  memory_untrack(env, node);
}

/* The owner is gone (hint is the struct). */
static void host_owner_finalize(napi_env env, void *data, void *hint) {
  (void)data;
  host_mem *h = hint;
  if (!h->base.freed) host_reclaim(env, &h->node);
  memory_untrack(env, &h->node);
  host_unref(env, h);
}

static void host_wrapper_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  host_unref(env, data);
}

static void host_registration_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  host_owner_finalize(env, NULL, data);
}

/* Frees a struct that never reached JS. */
static void host_discard(host_mem *h) {
  ctx_rec_release(h->ctx);
  free(h);
}

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static size_t round_up(size_t value, size_t unit) { return (value + unit - 1) / unit * unit; }

/* cuMemHostRegister; memory registered before and freed since (its owner dead, its release still
 * pending) is reclaimed first and the registration tried again. */
static CUresult register_host(napi_env env, void *data, size_t size, unsigned int flags) {
  CUresult result = DRV(cuMemHostRegister, data, size, flags);
  if (result == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
    memory_reclaim(env);
    result = DRV(cuMemHostRegister, data, size, flags);
  }
  return result;
}

/* An external ArrayBuffer over h's memory, whose finalizer releases it; *refused when the runtime
 * refuses external ArrayBuffers (h is then untouched). */
static bool external_buffer(napi_env env, host_mem *h, napi_value *buffer, bool *refused) {
  return external_arraybuffer(env, h->data, h->size, host_owner_finalize, h, buffer, refused);
}

/* A V8-owned ArrayBuffer of size bytes at least, whose part at the returned offset is aligned to
 * alignment; its finalizer lets h go. */
static bool owned_buffer(napi_env env, host_mem *h, size_t size, size_t alignment,
                         napi_value *buffer, size_t *offset) {
  void *base;
  if (size > SIZE_MAX - alignment) {
    throw_range(env, "the allocation is too large");
    return false;
  }
  NAPI_CALL_BOOL(env, napi_create_arraybuffer(env, size + alignment, &base, buffer));
  *offset = round_up((uintptr_t)base, alignment) - (uintptr_t)base;
  h->data = (char *)base + *offset;
  h->v8_owned = true;
  return true;
}

/* Hands h (whose buffer's finalizer is in place) to JS: wraps obj, tracks the buffer, and returns
 * a Uint8Array over the memory. */
static napi_value expose(napi_env env, napi_value obj, host_mem *h, napi_value buffer,
                         size_t offset) {
  h->refs = 1;
  if (!handle_wrap(env, obj, &h->base, &HOST_KIND, host_wrapper_finalize)) return NULL;
  h->refs = 2;
  if (!memory_track(env, &h->node, buffer, h->v8_owned ? 0 : h->size, host_reclaim)) return NULL;
  if (!h->v8_owned && (h->origin == HOST_PINNED || h->origin == HOST_MANAGED))
    h->node.context_gone = host_context_gone;
  napi_value view;
  NAPI_CALL(env, napi_create_typedarray(env, napi_uint8_array, h->size, buffer, offset, &view));
  return view;
}

/* Adds the finalizer that a V8-owned buffer needs to let h go; false after undoing h. */
static bool owned_finalizer(napi_env env, host_mem *h, napi_value buffer) {
  napi_status status = napi_add_finalizer(env, buffer, h, host_owner_finalize, h, NULL);
  if (status == napi_ok) return true;
  if (!v8_frees(h)) release_now(host_release_op(h), (uintptr_t)h->data, h->ctx);
  host_discard(h);
  napi_fail(env, status);
  return false;
}

static host_mem *host_new(napi_env env, host_origin origin, size_t size, unsigned int flags,
                          ctx_rec *ctx) {
  host_mem *h = calloc(1, sizeof *h);
  if (!h) {
    ctx_rec_release(ctx);
    throw_oom(env);
    return NULL;
  }
  h->env = env;
  h->origin = origin;
  h->size = size;
  h->flags = flags;
  h->ctx = ctx;
  return h;
}

/* hostAlloc(obj, bytes, flags, zero, external): pinned memory in the current context, wrapped in
 * obj; a Uint8Array over it. */
static napi_value host_alloc(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  size_t bytes;
  uint32_t flags;
  bool zero, external, refused = true;
  if (!arg_size(env, argv[1], "bytes", &bytes) || !arg_uint32(env, argv[2], "flags", &flags) ||
      !arg_bool(env, argv[3], &zero) || !arg_bool(env, argv[4], &external))
    return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  host_mem *h = ctx ? host_new(env, HOST_PINNED, bytes, flags, ctx) : NULL;
  if (!h) return NULL;
  napi_value buffer;
  size_t offset = 0;
  if (external) {
    CUresult result = DRV(cuMemHostAlloc, &h->data, bytes ? bytes : 1, flags);
    if (result != CUDA_SUCCESS) {
      host_discard(h);
      return throw_cu_about(env, result, "cuMemHostAlloc", "%zu bytes asked for", bytes);
    }
    if (zero) memset(h->data, 0, bytes);
    if (!external_buffer(env, h, &buffer, &refused)) {
      DRV(cuMemFreeHost, h->data);
      if (!refused) {
        host_discard(h);
        return NULL;
      }
    }
  }
  if (refused) { /* V8-owned (and zeroed) memory, registered */
    size_t page = page_size(), span = round_up(bytes ? bytes : 1, page);
    if (!owned_buffer(env, h, span, page, &buffer, &offset)) {
      host_discard(h);
      return NULL;
    }
    CUresult result = register_host(
        env, h->data, span, flags & (CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
    if (result != CUDA_SUCCESS) {
      host_discard(h);
      return throw_cu(env, result, "cuMemHostRegister");
    }
    if (!owned_finalizer(env, h, buffer)) return NULL;
  }
  return expose(env, argv[0], h, buffer, offset);
}

/* alignedAlloc(obj, bytes, alignment, zero, external): memory at a multiple of alignment (a power
 * of two), wrapped in obj; a Uint8Array over it. Needs no driver. */
static napi_value aligned_alloc_host(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  size_t bytes, alignment;
  bool zero, external, refused = true;
  if (!arg_size(env, argv[1], "bytes", &bytes) ||
      !arg_size(env, argv[2], "alignment", &alignment) || !arg_bool(env, argv[3], &zero) ||
      !arg_bool(env, argv[4], &external))
    return NULL;
  if (!alignment || (alignment & (alignment - 1)))
    return throw_range(env, "alignment must be a power of two");
  host_mem *h = host_new(env, HOST_ALIGNED, bytes, 0, NULL);
  if (!h) return NULL;
  napi_value buffer;
  size_t offset = 0;
  if (external) {
    if (posix_memalign(&h->data, alignment < sizeof(void *) ? sizeof(void *) : alignment,
                       bytes ? bytes : 1)) {
      host_discard(h);
      return throw_oom(env);
    }
    if (zero) memset(h->data, 0, bytes);
    if (!external_buffer(env, h, &buffer, &refused)) {
      free(h->data);
      if (!refused) {
        host_discard(h);
        return NULL;
      }
    }
  }
  if (refused) {
    if (!owned_buffer(env, h, bytes, alignment, &buffer, &offset)) {
      host_discard(h);
      return NULL;
    }
    if (!owned_finalizer(env, h, buffer)) return NULL;
  }
  return expose(env, argv[0], h, buffer, offset);
}

/* managedAlloc(obj, bytes, flags, zero): managed memory in the current context, wrapped in obj; a
 * Uint8Array over it, or null where external ArrayBuffers are refused. */
static napi_value managed_alloc(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  size_t bytes;
  uint32_t flags;
  bool zero, refused;
  if (!arg_size(env, argv[1], "bytes", &bytes) || !arg_uint32(env, argv[2], "flags", &flags) ||
      !arg_bool(env, argv[3], &zero))
    return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  host_mem *h = ctx ? host_new(env, HOST_MANAGED, bytes, flags, ctx) : NULL;
  if (!h) return NULL;
  CUdeviceptr ptr;
  const char *api = "cuMemAllocManaged";
  CUresult result = DRV(cuMemAllocManaged, &ptr, bytes ? bytes : 1, flags);
  if (result == CUDA_SUCCESS && zero && bytes && (result = DRV(cuMemsetD8, ptr, 0, bytes))) {
    api = "cuMemsetD8";
    DRV(cuMemFree, ptr);
  }
  if (result != CUDA_SUCCESS) {
    host_discard(h);
    return throw_cu_about(env, result, api, "%zu bytes", bytes);
  }
  h->data = (void *)(uintptr_t)ptr;
  napi_value buffer;
  if (!external_buffer(env, h, &buffer, &refused)) {
    DRV(cuMemFree, ptr);
    host_discard(h);
    return refused ? make_null(env) : NULL;
  }
  return expose(env, argv[0], h, buffer, 0);
}

/* Ties the ArrayBuffer (or SharedArrayBuffer) of array, a TypedArray or DataView, to obj's life:
 * a property of obj under a symbol of its own, which JS may read but neither change nor delete.
 * (A reference of the addon's would keep the buffer a collection longer than obj.) */
static bool keep_buffer(napi_env env, napi_value obj, napi_value array) {
  napi_valuetype type;
  NAPI_CALL_BOOL(env, napi_typeof(env, obj, &type));
  if (type != napi_object) return throw_type(env, "expected a RegisteredHostMemory"), false;
  napi_property_descriptor keep = {.attributes = napi_default};
  bool typed;
  NAPI_CALL_BOOL(env, napi_is_typedarray(env, array, &typed));
  if (typed) {
    NAPI_CALL_BOOL(env, napi_get_typedarray_info(env, array, NULL, NULL, NULL, &keep.value, NULL));
  } else {
    NAPI_CALL_BOOL(env, napi_get_dataview_info(env, array, NULL, NULL, &keep.value, NULL));
  }
  NAPI_CALL_BOOL(env, napi_create_symbol(env, NULL, &keep.name));
  NAPI_CALL_BOOL(env, napi_define_properties(env, obj, 1, &keep));
  return true;
}

/* hostRegister(obj, array, flags): registers the memory of array (page-aligned) in the current
 * context, the registration wrapped in obj, which keeps array's buffer alive: the driver, and
 * kernels through the registration's device address, use its bytes while it is registered. */
static napi_value host_register(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  void *data;
  size_t length;
  uint32_t flags;
  if (!arg_host(env, argv[1], "array", &data, &length) ||
      !arg_uint32(env, argv[2], "flags", &flags))
    return NULL;
  if (!length) return throw_range(env, "registerHostMemory(): the array is empty");
  if ((uintptr_t)data % page_size()) {
    char message[256];
    snprintf(message, sizeof message,
             "registerHostMemory(): the array must start at a page boundary (a multiple of %zu "
             "bytes); allocate it with alignedEmpty(shape, dtype, { alignment: %zu })",
             page_size(), page_size());
    return throw_range(env, message);
  }
  if (!keep_buffer(env, argv[0], argv[1])) return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  host_mem *h = ctx ? host_new(env, HOST_REGISTERED, length, flags, ctx) : NULL;
  if (!h) return NULL;
  h->data = data;
  h->v8_owned = true;
  CUresult result = register_host(env, data, length, flags);
  if (result != CUDA_SUCCESS) {
    host_discard(h);
    return throw_cu(env, result, "cuMemHostRegister");
  }
  h->refs = 1;
  if (!handle_wrap(env, argv[0], &h->base, &HOST_KIND, host_registration_finalize)) {
    release_now(RELEASE_HOST_UNREGISTER, (uintptr_t)data, ctx);
    host_discard(h);
    return NULL;
  }
  memory_track(env, &h->node, argv[0], 0, host_reclaim);
  return NULL;
}

/* Whether a live registration pins part of h's memory (aligned memory registered). */
static bool pins_part(const tracked *node, const void *arg) {
  const host_mem *h = arg;
  if (node->reclaim != host_reclaim) return false;
  const host_mem *r = host_of(node);
  uintptr_t start = (uintptr_t)h->data, at = (uintptr_t)r->data;
  return r->origin == HOST_REGISTERED && !r->base.freed && at < start + h->size &&
         start < at + r->size;
}

/* hostFree(obj): releases now (free(), cuMemFreeHost, cuMemFree, unregister()). Memory cudadrv
 * allocated is detached from JS, its ArrayBuffer and views, so that none reads or writes it once
 * freed; a registration's memory stays the caller's and usable. Freed twice: nothing. */
static napi_value host_free(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  host_mem *h = handle_get_any(env, argv[0], &HOST_KIND);
  if (!h || h->base.freed) return NULL;
  if (h->pins)
    return throw_logic(env, "free(): a Graph or GraphExec, or a capture under way, has copies of "
                            "this memory; destroy them first");
  if (h->origin == HOST_ALIGNED && memory_find(env, pins_part, h))
    return throw_logic(env, "free(): this memory is registered with the driver; call unregister() "
                            "on its RegisteredHostMemory first");
  napi_value buffer = NULL;
  if (h->origin != HOST_REGISTERED && h->node.state)
    NAPI_CALL(env, napi_get_reference_value(env, h->node.owner, &buffer));
  /* V8 may free its bytes once detached: unregister first; our own bytes: detach first */
  if (buffer && !h->v8_owned) NAPI_CALL(env, napi_detach_arraybuffer(env, buffer));
  host_drop_views(env, h, true);
  CUresult result = host_release(h, true);
  memory_untrack(env, &h->node);
  if (buffer && h->v8_owned) NAPI_CALL(env, napi_detach_arraybuffer(env, buffer));
  if (result != CUDA_SUCCESS) return throw_cu(env, result, RELEASE_API[host_release_op(h)]);
  return NULL;
}

/* hostGetFlags(obj): the flags the memory was allocated or registered with. */
static napi_value host_get_flags(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  host_mem *h = handle_get(env, argv[0], &HOST_KIND);
  if (!h) return NULL;
  unsigned int flags = h->flags;
  if (h->origin == HOST_PINNED && !h->v8_owned) CU_CALL(env, cuMemHostGetFlags, &flags, h->data);
  return make_int(env, flags);
}

/* hostGetDevicePointer(obj): the device address of the memory's first byte. */
static napi_value host_get_device_pointer(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  host_mem *h = handle_get(env, argv[0], &HOST_KIND);
  if (!h) return NULL;
  if (h->origin == HOST_MANAGED) return make_ptr(env, (CUdeviceptr)(uintptr_t)h->data);
  if (!h->ctx) return throw_logic(env, "aligned memory has no device address: register it first");
  if (!ctx_enter(h->ctx)) return throw_logic(env, "the memory's context has been detached");
  CUdeviceptr ptr;
  CUresult result = DRV(cuMemHostGetDevicePointer, &ptr, h->data, 0);
  ctx_leave();
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuMemHostGetDevicePointer");
  return make_ptr(env, ptr);
}

/* managedAttach(obj, flags, stream or null): cuStreamAttachMemAsync over the whole allocation. */
static napi_value managed_attach(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  host_mem *h = handle_get(env, argv[0], &HOST_KIND);
  uint32_t flags;
  CUstream stream;
  if (!h || !arg_uint32(env, argv[1], "flags", &flags) || !arg_stream(env, argv[2], &stream))
    return NULL;
  if (h->origin != HOST_MANAGED) return throw_type(env, "expected a ManagedAllocation");
  CU_CALL(env, cuStreamAttachMemAsync, stream, (CUdeviceptr)(uintptr_t)h->data, 0, flags);
  return NULL;
}

bool host_memory_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"hostAlloc", host_alloc},
      {"alignedAlloc", aligned_alloc_host},
      {"managedAlloc", managed_alloc},
      {"hostRegister", host_register},
      {"hostFree", host_free},
      {"hostGetFlags", host_get_flags},
      {"hostGetDevicePointer", host_get_device_pointer},
      {"managedAttach", managed_attach},
  };
  return EXPORTS(env, exports, fns);
}
