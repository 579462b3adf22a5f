/* memory: device memory (cuMemAlloc, pitched, stream-ordered, opened IPC handles), the driver's
 * memory pools, copies and memsets; and, for host_memory.c too, the reaper that frees what
 * garbage collection dropped and the reclaimer that an allocation short of memory calls
 * (memory.h says why both exist). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memory.h"

/* ---- the reaper: one thread that releases memory off the main thread ---- */

typedef struct release_job {
  struct release_job *next;
  release_op op;
  uint64_t address;
  ctx_rec *ctx;
} release_job;

static pthread_mutex_t reaper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reaper_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t reaper_idle = PTHREAD_COND_INITIALIZER;
static release_job *reaper_head, **reaper_tail = &reaper_head;
static size_t reaper_outstanding; /* queued or being released */
static bool reaper_running;

CUresult release_now(release_op op, uint64_t address, ctx_rec *ctx) {
  if (!ctx_enter(ctx)) return CUDA_SUCCESS;
  CUresult result;
  switch (op) {
  case RELEASE_MEM_FREE: /* waits for the device itself */
    result = DRV(cuMemFree, (CUdeviceptr)address);
    break;
  case RELEASE_MEM_FREE_ORDERED: /* cuMemFree does not wait for pool memory: wait first */
    DRV(cuCtxSynchronize, );
    result = DRV(cuMemFree, (CUdeviceptr)address);
    break;
  case RELEASE_IPC_CLOSE:
    DRV(cuCtxSynchronize, );
    result = DRV(cuIpcCloseMemHandle, (CUdeviceptr)address);
    break;
  case RELEASE_HOST_FREE: /* queued copies may still read or write it */
    DRV(cuCtxSynchronize, );
    result = DRV(cuMemFreeHost, (void *)(uintptr_t)address);
    break;
  default: /* RELEASE_HOST_UNREGISTER */
    DRV(cuCtxSynchronize, );
    result = DRV(cuMemHostUnregister, (void *)(uintptr_t)address);
    break;
  }
  ctx_leave();
  return result;
}

/* A stream capture under way (in global mode, on any thread) refuses frees, which may wait for
 * the device: the reaper does not take part in captures (relaxed mode), and tries again for up to
 * ten seconds while one refuses it. */
static CUresult release_outside_captures(const release_job *job) {
  CUresult result = release_now(job->op, job->address, job->ctx);
  for (int tries = 0; tries < 1000 && (result == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ||
                                       result == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
       tries++) {
    usleep(10000);
    result = release_now(job->op, job->address, job->ctx);
  }
  return result;
}

static void *reaper_main(void *unused) {
  (void)unused;
  CUstreamCaptureMode relaxed = CU_STREAM_CAPTURE_MODE_RELAXED;
  DRV(cuThreadExchangeStreamCaptureMode, &relaxed); /* optional: an old driver has no captures */
  pthread_mutex_lock(&reaper_lock);
  for (;;) {
    while (!reaper_head) pthread_cond_wait(&reaper_wake, &reaper_lock);
    release_job *job = reaper_head;
    if (!(reaper_head = job->next)) reaper_tail = &reaper_head;
    pthread_mutex_unlock(&reaper_lock);
    stats_cleanup(release_outside_captures(job));
    ctx_rec_wait_end(job->ctx); /* may destroy a context detached meanwhile */
    free(job);
    pthread_mutex_lock(&reaper_lock);
    if (--reaper_outstanding == 0) pthread_cond_broadcast(&reaper_idle);
  }
  return NULL;
}

/* Called with reaper_lock held. */
static bool reaper_start_locked(void) {
  if (!reaper_running) reaper_running = thread_start_service(reaper_main, reaper_drain);
  return reaper_running;
}

void reaper_drain(void) {
  pthread_mutex_lock(&reaper_lock);
  while (reaper_outstanding) pthread_cond_wait(&reaper_idle, &reaper_lock);
  pthread_mutex_unlock(&reaper_lock);
}

/* ---- per-environment state: the live allocations, for reclaiming and for lib/ to name ---- */

typedef struct devmem devmem;

/* A slot of the table of live device allocations; lib/ names an allocation by its id: the slot
 * plus SLOT_COUNT times the slot's generation, a double (exact below 2^53). */
#define SLOT_BITS 24
#define SLOT_COUNT ((uint32_t)1 << SLOT_BITS)
#define GENERATIONS ((uint32_t)1 << (53 - SLOT_BITS))
#define NO_SLOT UINT32_MAX
typedef struct slot {
  devmem *dev;          /* NULL while vacant */
  uint32_t generation;  /* counts the slot's uses, so that a stale id finds nothing */
  uint32_t next_vacant; /* while vacant: the next vacant slot, or NO_SLOT */
} slot;

struct memory_state {
  tracked head; /* sentinel of a circular list */
  bool tearing_down;
  int refs; /* the environment's, plus one per tracked allocation (main thread only) */
  slot *slots;
  uint32_t used, capacity; /* slots ever used, and allocated */
  uint32_t vacant;         /* the first vacant slot below used, or NO_SLOT */
  napi_ref last_stream;    /* weak: the last Stream argument, whose struct is last_stream_h */
  stream_h *last_stream_h;
  int64_t external; /* tracked bytes not yet reported to V8 (negative: released) */
};

static void state_release(memory_state *state) {
  if (--state->refs > 0) return;
  free(state->slots);
  free(state);
}

void release_later(const tracked *node, release_op op, uint64_t address, ctx_rec *ctx) {
  if (!ctx || atomic_load(&ctx->destroyed)) return; /* the memory went with its context */
  release_job *job = node->state && !node->state->tearing_down ? malloc(sizeof *job) : NULL;
  if (job) {
    job->op = op;
    job->address = address;
    job->ctx = ctx;
    ctx_rec_wait_begin(ctx); /* a detach() meanwhile leaves destroying the context to the reaper */
    pthread_mutex_lock(&reaper_lock);
    if (reaper_start_locked()) {
      job->next = NULL;
      *reaper_tail = job;
      reaper_tail = &job->next;
      reaper_outstanding++;
      pthread_cond_signal(&reaper_wake);
      pthread_mutex_unlock(&reaper_lock);
      return;
    }
    pthread_mutex_unlock(&reaper_lock);
    ctx_rec_wait_end(ctx);
    free(job);
  }
  stats_cleanup(release_now(op, address, ctx));
}

/* V8 is told of the bytes tracked in steps of EXTERNAL_STEP at least: it only needs the count to
 * collect in time, and each telling is a call. What it has been told is never below zero: after
 * each telling it is the exact count. */
#define EXTERNAL_STEP ((int64_t)8 << 20)

static void count_external(napi_env env, memory_state *state, int64_t change) {
  state->external += change;
  if (state->external >= EXTERNAL_STEP || state->external <= -EXTERNAL_STEP) {
    int64_t total;
    NAPI_UNTHROWN(napi_adjust_external_memory(env, state->external, &total));
    state->external = 0;
  }
}

/* Links node, whose owner is the weak reference owner, into state's list. */
static void link_node(napi_env env, memory_state *state, tracked *node, napi_ref owner,
                      size_t bytes, reclaim_fn reclaim) {
  node->owner = owner;
  node->state = state;
  node->reclaim = reclaim;
  node->context_gone = NULL; /* the owner sets it where its memory goes with its context */
  node->bytes = bytes;
  node->prev = &state->head;
  node->next = state->head.next;
  state->head.next->prev = node;
  state->head.next = node;
  state->refs++;
  count_external(env, state, (int64_t)bytes);
}

/* Unlinks node (linked); leaves its owner reference alone. */
static void unlink_node(napi_env env, tracked *node) {
  memory_state *state = node->state;
  node->prev->next = node->next;
  node->next->prev = node->prev;
  node->state = NULL;
  count_external(env, state, -(int64_t)node->bytes);
  state_release(state);
}

bool memory_track(napi_env env, tracked *node, napi_value owner, size_t bytes, reclaim_fn reclaim) {
  napi_ref ref;
  NAPI_CALL_BOOL(env, napi_create_reference(env, owner, 0, &ref));
  link_node(env, state_of(env)->memory, node, ref, bytes, reclaim);
  return true;
}

void memory_untrack(napi_env env, tracked *node) {
  if (!node->state) return;
  NAPI_UNTHROWN(napi_delete_reference(env, node->owner));
  unlink_node(env, node);
}

size_t memory_reclaim(napi_env env) {
  memory_state *state = state_of(env)->memory;
  size_t bytes = 0;
  for (tracked *node = state->head.next, *next; node != &state->head; node = next) {
    next = node->next;
    napi_value owner = NULL;
    if (napi_get_reference_value(env, node->owner, &owner) == napi_ok && !owner) {
      bytes += node->bytes;
      node->reclaim(env, node);
    }
  }
  reaper_drain();
  return bytes;
}

tracked *memory_find(napi_env env, bool (*match)(const tracked *node, const void *arg),
                     const void *arg) {
  memory_state *state = state_of(env)->memory;
  if (!state) return NULL;
  for (tracked *node = state->head.next; node != &state->head; node = node->next)
    if (match(node, arg)) return node;
  return NULL;
}

void memory_context_detached(napi_env env, ctx_rec *ctx) {
  memory_state *state = state_of(env)->memory;
  if (!state) return; /* the environment is going, and every ArrayBuffer with it */
  for (tracked *node = state->head.next, *next; node != &state->head; node = next) {
    next = node->next;
    if (node->context_gone) node->context_gone(env, node, ctx);
  }
}

/* Runs before Node finalizes the environment's objects: their finalizers see no state here. */
static void memory_teardown(void *data) {
  addon_state *addon = data;
  memory_state *state = addon->memory;
  addon->memory = NULL;
  state->tearing_down = true; /* finalizers from now on release at once */
  reaper_drain();
  state_release(state);
}

/* ---- arguments ---- */

bool arg_bool(napi_env env, napi_value v, bool *out) {
  if (napi_get_value_bool(env, v, out) == napi_ok) return true;
  throw_type(env, "expected a boolean");
  return false;
}

/* A stream argument: a Stream (*out its struct), or undefined/null for the default stream (*out
 * NULL). The environment remembers the last Stream it was given, weakly: the same one again costs
 * a reference read and a comparison instead of handle_get's type-tag check and unwrap. While the
 * reference reads the object, the object is alive, so its struct is too. */
static bool arg_stream_h(napi_env env, napi_value v, stream_h **out) {
  memory_state *state = state_of(env)->memory;
  napi_value last;
  bool same = false;
  if (state->last_stream && napi_get_reference_value(env, state->last_stream, &last) == napi_ok &&
      last && napi_strict_equals(env, last, v, &same) == napi_ok && same) {
    *out = state->last_stream_h;
    return handle_alive(env, &(*out)->base);
  }
  napi_valuetype type;
  if (!arg_type(env, v, &type)) return false;
  if (type == napi_undefined || type == napi_null) {
    *out = NULL;
    return true;
  }
  if (!(*out = handle_get(env, v, &STREAM_KIND))) return false;
  napi_ref ref;
  if (napi_create_reference(env, v, 0, &ref) == napi_ok) {
    if (state->last_stream) NAPI_UNTHROWN(napi_delete_reference(env, state->last_stream));
    state->last_stream = ref;
    state->last_stream_h = *out;
  }
  return true;
}

/* A stream argument as its handle (NULL: the default stream). */
static bool arg_stream_cached(napi_env env, napi_value v, CUstream *stream) {
  stream_h *s;
  if (!arg_stream_h(env, v, &s)) return false;
  *stream = s ? s->handle : NULL;
  return true;
}

/* Lets value (an object, or undefined for nothing) go once stream has passed the work just
 * enqueued. */
static napi_value keep_until_done(napi_env env, CUstream stream, napi_value value) {
  if (!is_undefined(env, value)) wait_keep_alive(env, stream, value);
  return NULL;
}

/* ---- device memory ---- */

/* Device memory, owned by an object of lib/ (a DeviceAllocation), which names it by an id: its
 * slot in the environment's table, checked on every use, so that a wrong or stale id finds
 * nothing. A finalizer added to the object releases what is not freed before the object dies;
 * free() deletes the finalizer's reference with the memory, so that freed memory costs the
 * garbage collector nothing. (A type tag, a wrap and an unwrap cost several times as much: see
 * bench/overhead.js.) */

typedef enum { DEV_ALLOC, DEV_ORDERED, DEV_IPC } dev_origin;

struct devmem {
  tracked node; /* while the memory is held; node.owner: napi_add_finalizer's weak reference */
  CUdeviceptr ptr;
  size_t size;
  ctx_rec *ctx;
  dev_origin origin;
  uint32_t slot;
};

static const release_op DEV_RELEASE[] = {RELEASE_MEM_FREE, RELEASE_MEM_FREE_ORDERED,
                                         RELEASE_IPC_CLOSE};

/* Puts dev in a vacant slot; false when the table cannot grow. */
static bool slot_take(memory_state *state, devmem *dev) {
  uint32_t i = state->vacant;
  if (i != NO_SLOT) {
    state->vacant = state->slots[i].next_vacant;
  } else {
    if (state->used == state->capacity) {
      uint32_t capacity = state->capacity ? 2 * state->capacity : 64;
      slot *grown = capacity <= SLOT_COUNT ? realloc(state->slots, capacity * sizeof *grown) : NULL;
      if (!grown) return false;
      state->slots = grown;
      state->capacity = capacity;
    }
    i = state->used++;
    state->slots[i].generation = 0;
  }
  state->slots[i].dev = dev;
  dev->slot = i;
  return true;
}

static void slot_drop(memory_state *state, devmem *dev) {
  slot *s = &state->slots[dev->slot];
  s->dev = NULL;
  s->generation = (s->generation + 1) % GENERATIONS;
  s->next_vacant = state->vacant;
  state->vacant = dev->slot;
}

static double slot_id(const memory_state *state, const devmem *dev) {
  return (double)dev->slot + (double)SLOT_COUNT * state->slots[dev->slot].generation;
}

/* The allocation that id names, or NULL. */
static devmem *slot_find(const memory_state *state, double id) {
  if (!(id >= 0 && id < (double)SLOT_COUNT * GENERATIONS) || id != (double)(uint64_t)id)
    return NULL;
  uint64_t n = (uint64_t)id;
  uint32_t i = (uint32_t)(n % SLOT_COUNT);
  if (i >= state->used || state->slots[i].generation != n / SLOT_COUNT) return NULL;
  return state->slots[i].dev;
}

/* Stops holding dev's memory: out of the table and the list. */
static void devmem_forget(napi_env env, devmem *dev) {
  slot_drop(dev->node.state, dev);
  unlink_node(env, &dev->node);
}

/* Its owner died: the memory goes through the reaper; the finalizer frees the struct. */
static void devmem_reclaim(napi_env env, tracked *node) {
  devmem *dev = (devmem *)((char *)node - offsetof(devmem, node));
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
 * context's handle and its address as a number (-1 past 2^53) to made[0..2]; returns the address,
 * or NULL after releasing the memory and throwing. */
static napi_value adopt_devmem(napi_env env, napi_value obj, double *made, CUdeviceptr ptr,
                               size_t size, ctx_rec *ctx, dev_origin origin) {
  memory_state *state = state_of(env)->memory;
  devmem *dev = malloc(sizeof *dev);
  napi_ref owner;
  napi_status status = napi_generic_failure;
  if (dev && slot_take(state, dev)) {
    status = napi_add_finalizer(env, obj, dev, devmem_finalize, NULL, &owner);
    if (status != napi_ok) slot_drop(state, dev);
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
  link_node(env, state, &dev->node, owner, origin == DEV_IPC ? 0 : size, devmem_reclaim);
  made[0] = slot_id(state, dev);
  made[1] = (double)(uintptr_t)ctx->handle;
  made[2] = ptr < ((CUdeviceptr)1 << 53) ? (double)ptr : -1; /* a safe integer, or -1 */
  return make_ptr(env, ptr);
}

/* The ArrayBuffer of 3 doubles at least that lib/ passes for adopt_devmem to write to (cheaper to
 * read than a typed array). */
static bool arg_made(napi_env env, napi_value v, double **made) {
  size_t length;
  void *data;
  if (napi_get_arraybuffer_info(env, v, &data, &length) != napi_ok || length < 3 * sizeof(double) ||
      (uintptr_t)data % sizeof(double)) {
    throw_type(env, "expected an ArrayBuffer of 3 doubles");
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
    return throw_cu(env, result, "cuMemAlloc");
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
    return throw_cu(env, result, "cuMemAllocPitch");
  }
  napi_value address = adopt_devmem(env, argv[0], made, ptr, pitch * height, ctx, DEV_ALLOC);
  return make_pair(env, address, make_uint(env, pitch));
}

typedef struct pool_h {
  handle_base base;
  CUmemoryPool handle;
} pool_h;

static const handle_kind POOL_KIND = {.tag = {0x63647276706f6f31ULL, 0x4d656d506f6f6c31ULL},
                                      .name = "MemoryPool",
                                      .freed = "this MemoryPool is gone"};

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
  if (!arg_stream_h(env, argv[2], &s) || !arg_made(env, argv[4], &made)) return NULL;
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
  devmem *dev = slot_find(state_of(env)->memory, id);
  if (!dev || !arg_stream_h(env, argv[1], &s)) return NULL;
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
  } else if (!atomic_load(&ctx->destroyed)) { /* else the memory went with its context */
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
  void *data;
  size_t length;
  uint32_t flags;
  double *made;
  if (!arg_host(env, argv[1], "handle", &data, &length) ||
      !arg_uint32(env, argv[2], "flags", &flags) || !arg_made(env, argv[3], &made))
    return NULL;
  if (length != sizeof handle.reserved) return throw_range(env, "handle must be 64 bytes long");
  memcpy(handle.reserved, data, sizeof handle.reserved);
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

/* ---- copies and memsets ---- */

/* The copies between host and device, with the driver's argument order: memcpyHtoD(dest, src)
 * copies all of src, memcpyDtoH(dest, src) fills all of dest; their Async forms take (..., stream,
 * keep), keep (or undefined) staying alive until the stream has passed the copy. */
static napi_value copy_host_device(napi_env env, napi_callback_info info, bool to_device,
                                   bool async) {
  ARGS(env, info, 4);
  CUdeviceptr device;
  void *host;
  size_t bytes;
  CUstream stream = NULL;
  if (!arg_ptr(env, argv[to_device ? 0 : 1], to_device ? "dest" : "src", &device) ||
      !arg_host(env, argv[to_device ? 1 : 0], to_device ? "src" : "dest", &host, &bytes) ||
      (async && !arg_stream_cached(env, argv[2], &stream)) || !driver_ready(env))
    return NULL;
  if (!bytes) return NULL;
  if (to_device && async)
    CU_CALL(env, cuMemcpyHtoDAsync, device, host, bytes, stream);
  else if (to_device)
    CU_CALL(env, cuMemcpyHtoD, device, host, bytes);
  else if (async)
    CU_CALL(env, cuMemcpyDtoHAsync, host, device, bytes, stream);
  else
    CU_CALL(env, cuMemcpyDtoH, host, device, bytes);
  return async ? keep_until_done(env, stream, argv[3]) : NULL;
}

static napi_value memcpy_htod(napi_env env, napi_callback_info info) {
  return copy_host_device(env, info, true, false);
}

static napi_value memcpy_dtoh(napi_env env, napi_callback_info info) {
  return copy_host_device(env, info, false, false);
}

static napi_value memcpy_htod_async(napi_env env, napi_callback_info info) {
  return copy_host_device(env, info, true, true);
}

static napi_value memcpy_dtoh_async(napi_env env, napi_callback_info info) {
  return copy_host_device(env, info, false, true);
}

/* memcpyDtoD(dest, src, bytes, stream): cuMemcpyDtoD when stream is undefined, else
 * cuMemcpyDtoDAsync. */
static napi_value memcpy_dtod(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  CUdeviceptr dst, src;
  size_t bytes;
  CUstream stream = NULL;
  bool sync = is_undefined(env, argv[3]);
  if (!arg_ptr(env, argv[0], "dest", &dst) || !arg_ptr(env, argv[1], "src", &src) ||
      !arg_size(env, argv[2], "size", &bytes) ||
      (!sync && !arg_stream_cached(env, argv[3], &stream)) || !driver_ready(env))
    return NULL;
  if (bytes && sync)
    CU_CALL(env, cuMemcpyDtoD, dst, src, bytes);
  else if (bytes)
    CU_CALL(env, cuMemcpyDtoDAsync, dst, src, bytes, stream);
  return NULL;
}

/* memcpyPeer(dest, destContext, src, srcContext, bytes, stream): cuMemcpyPeer when stream is
 * undefined, else cuMemcpyPeerAsync. */
static napi_value memcpy_peer(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  CUdeviceptr dst, src;
  size_t bytes;
  CUstream stream = NULL;
  ctx_rec *dst_ctx, *src_ctx;
  bool sync = is_undefined(env, argv[5]);
  if (!arg_ptr(env, argv[0], "dest", &dst) || !(dst_ctx = ctx_rec_of_context(env, argv[1])) ||
      !arg_ptr(env, argv[2], "src", &src) || !(src_ctx = ctx_rec_of_context(env, argv[3])) ||
      !arg_size(env, argv[4], "size", &bytes) ||
      (!sync && !arg_stream_cached(env, argv[5], &stream)))
    return NULL;
  if (!bytes) return NULL;
  if (sync)
    CU_CALL(env, cuMemcpyPeer, dst, dst_ctx->handle, src, src_ctx->handle, bytes);
  else
    CU_CALL(env, cuMemcpyPeerAsync, dst, dst_ctx->handle, src, src_ctx->handle, bytes, stream);
  return NULL;
}

/* memsetD(width, dest, value, count, stream): count elements of width bytes (1, 2 or 4) set to
 * value; cuMemsetD8/16/32 when stream is undefined, else their Async forms. */
static napi_value memset_d(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  uint32_t width, value;
  CUdeviceptr dst;
  size_t count;
  CUstream stream = NULL;
  bool sync = is_undefined(env, argv[4]);
  if (!arg_uint32(env, argv[0], "width", &width) || !arg_ptr(env, argv[1], "dest", &dst) ||
      !arg_uint32(env, argv[2], "value", &value) || !arg_size(env, argv[3], "count", &count) ||
      (!sync && !arg_stream_cached(env, argv[4], &stream)) || !driver_ready(env))
    return NULL;
  if (!count) return NULL;
  if (width == 1 && sync)
    CU_CALL(env, cuMemsetD8, dst, (unsigned char)value, count);
  else if (width == 1)
    CU_CALL(env, cuMemsetD8Async, dst, (unsigned char)value, count, stream);
  else if (width == 2 && sync)
    CU_CALL(env, cuMemsetD16, dst, (unsigned short)value, count);
  else if (width == 2)
    CU_CALL(env, cuMemsetD16Async, dst, (unsigned short)value, count, stream);
  else if (width == 4 && sync)
    CU_CALL(env, cuMemsetD32, dst, value, count);
  else if (width == 4)
    CU_CALL(env, cuMemsetD32Async, dst, value, count, stream);
  else
    return throw_range(env, "width must be 1, 2 or 4");
  return NULL;
}

/* memsetD2D(width, dest, pitch, value, columns, rows, stream): the 2D forms. */
static napi_value memset_d2d(napi_env env, napi_callback_info info) {
  ARGS(env, info, 7);
  uint32_t width, value;
  CUdeviceptr dst;
  size_t pitch, w, h;
  CUstream stream = NULL;
  bool sync = is_undefined(env, argv[6]);
  if (!arg_uint32(env, argv[0], "width", &width) || !arg_ptr(env, argv[1], "dest", &dst) ||
      !arg_size(env, argv[2], "pitch", &pitch) || !arg_uint32(env, argv[3], "value", &value) ||
      !arg_size(env, argv[4], "width", &w) || !arg_size(env, argv[5], "height", &h) ||
      (!sync && !arg_stream_cached(env, argv[6], &stream)) || !driver_ready(env))
    return NULL;
  if (!w || !h) return NULL;
  if (width == 1 && sync)
    CU_CALL(env, cuMemsetD2D8, dst, pitch, (unsigned char)value, w, h);
  else if (width == 1)
    CU_CALL(env, cuMemsetD2D8Async, dst, pitch, (unsigned char)value, w, h, stream);
  else if (width == 2 && sync)
    CU_CALL(env, cuMemsetD2D16, dst, pitch, (unsigned short)value, w, h);
  else if (width == 2)
    CU_CALL(env, cuMemsetD2D16Async, dst, pitch, (unsigned short)value, w, h, stream);
  else if (width == 4 && sync)
    CU_CALL(env, cuMemsetD2D32, dst, pitch, value, w, h);
  else if (width == 4)
    CU_CALL(env, cuMemsetD2D32Async, dst, pitch, value, w, h, stream);
  else
    return throw_range(env, "width must be 1, 2 or 4");
  return NULL;
}

/* ---- 2D and 3D copies ---- */

/* The fields lib/ passes, as a BigUint64Array, per side then for the extent. */
enum {
  F_X,
  F_Y,
  F_Z,
  F_LOD,
  F_TYPE,
  F_DEVICE,
  F_PITCH,
  F_HEIGHT, /* src at 0, dst at F_SIDE */
  F_SIDE,
  F_WIDTH = 2 * F_SIDE,
  F_ROWS,
  F_DEPTH,
  F_COUNT
};

/* One side of a copy into the CUDA_MEMCPY3D_PEER fields; a host side (or a unified one given as a
 * host buffer) is checked to hold every byte the copy touches; an array side comes as its CudaArray
 * in host's place (the driver checks extents within arrays). */
static bool read_side(napi_env env, const uint64_t *f, const uint64_t *extent, napi_value host,
                      const char *name, size_t *x, size_t *y, size_t *z, size_t *lod,
                      CUmemorytype *type, const void **host_ptr, CUdeviceptr *device,
                      CUarray *array, size_t *pitch, size_t *height) {
  char message[160];
  *x = f[F_X], *y = f[F_Y], *z = f[F_Z], *lod = f[F_LOD], *pitch = f[F_PITCH],
  *height = f[F_HEIGHT];
  *type = (CUmemorytype)f[F_TYPE];
  *device = (CUdeviceptr)f[F_DEVICE];
  if (*type == CU_MEMORYTYPE_ARRAY) {
    array_h *a = handle_get(env, host, &ARRAY_KIND);
    if (a) *array = a->handle;
    return a != NULL;
  }
  if (*type != CU_MEMORYTYPE_HOST && *type != CU_MEMORYTYPE_DEVICE &&
      *type != CU_MEMORYTYPE_UNIFIED) {
    snprintf(message, sizeof message, "%s memory type must be host, device, array or unified",
             name);
    throw_range(env, message);
    return false;
  }
  if (*type == CU_MEMORYTYPE_DEVICE || (*type == CU_MEMORYTYPE_UNIFIED && is_undefined(env, host)))
    return true;
  void *data;
  size_t length;
  if (!arg_host(env, host, name, &data, &length)) return false;
  if (*type == CU_MEMORYTYPE_HOST)
    *host_ptr = data;
  else
    *device = (CUdeviceptr)(uintptr_t)data;
  /* one past the last byte touched: x + ((z + depth - 1) * height + y + rows - 1) * pitch + width
   */
  uint64_t slice, row, rows, end = 0, tail;
  bool overflow = false;
  if (extent[0] && extent[1] && extent[2]) {
    overflow = __builtin_add_overflow(f[F_Z], extent[2] - 1, &slice) ||
               __builtin_mul_overflow(slice, f[F_HEIGHT], &rows) ||
               __builtin_add_overflow(f[F_Y], extent[1] - 1, &row) ||
               __builtin_add_overflow(rows, row, &rows) ||
               __builtin_mul_overflow(rows, f[F_PITCH], &end) ||
               __builtin_add_overflow(f[F_X], extent[0], &tail) ||
               __builtin_add_overflow(end, tail, &end);
  }
  if (overflow || end > length) {
    snprintf(message, sizeof message, "%s: the copy reaches past the end of the host buffer", name);
    throw_range(env, message);
    return false;
  }
  return true;
}

/* Reads fields (BigUint64Array of F_COUNT), srcHost and dstHost into c. */
static bool read_copy(napi_env env, napi_value fields, napi_value src_host, napi_value dst_host,
                      CUDA_MEMCPY3D_PEER *c) {
  napi_typedarray_type type;
  size_t count;
  void *data;
  bool is = false;
  if (napi_is_typedarray(env, fields, &is) != napi_ok || !is ||
      napi_get_typedarray_info(env, fields, &type, &count, &data, NULL, NULL) != napi_ok ||
      type != napi_biguint64_array || count != F_COUNT) {
    throw_type(env, "fields must be a BigUint64Array of the copy's parameters");
    return false;
  }
  const uint64_t *f = data;
  memset(c, 0, sizeof *c);
  c->WidthInBytes = f[F_WIDTH];
  c->Height = f[F_ROWS];
  c->Depth = f[F_DEPTH];
  return read_side(env, f, f + F_WIDTH, src_host, "src", &c->srcXInBytes, &c->srcY, &c->srcZ,
                   &c->srcLOD, &c->srcMemoryType, &c->srcHost, &c->srcDevice, &c->srcArray,
                   &c->srcPitch, &c->srcHeight) &&
         read_side(env, f + F_SIDE, f + F_WIDTH, dst_host, "dest", &c->dstXInBytes, &c->dstY,
                   &c->dstZ, &c->dstLOD, &c->dstMemoryType, (const void **)&c->dstHost,
                   &c->dstDevice, &c->dstArray, &c->dstPitch, &c->dstHeight);
}

/* memcpy2D(fields, srcHost, dstHost, aligned, stream, keep): cuMemcpy2D (aligned) or
 * cuMemcpy2DUnaligned when stream is undefined, else cuMemcpy2DAsync keeping keep alive. */
static napi_value memcpy_2d(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  CUDA_MEMCPY3D_PEER c;
  bool aligned, sync = is_undefined(env, argv[4]);
  CUstream stream = NULL;
  if (!read_copy(env, argv[0], argv[1], argv[2], &c) || !arg_bool(env, argv[3], &aligned) ||
      (!sync && !arg_stream_cached(env, argv[4], &stream)) || !driver_ready(env))
    return NULL;
  CUDA_MEMCPY2D p = {.srcXInBytes = c.srcXInBytes,
                     .srcY = c.srcY,
                     .srcMemoryType = c.srcMemoryType,
                     .srcHost = c.srcHost,
                     .srcDevice = c.srcDevice,
                     .srcArray = c.srcArray,
                     .srcPitch = c.srcPitch,
                     .dstXInBytes = c.dstXInBytes,
                     .dstY = c.dstY,
                     .dstMemoryType = c.dstMemoryType,
                     .dstHost = c.dstHost,
                     .dstDevice = c.dstDevice,
                     .dstArray = c.dstArray,
                     .dstPitch = c.dstPitch,
                     .WidthInBytes = c.WidthInBytes,
                     .Height = c.Height};
  if (!p.WidthInBytes || !p.Height) return NULL;
  if (!sync) {
    CU_CALL(env, cuMemcpy2DAsync, &p, stream);
    return keep_until_done(env, stream, argv[5]);
  }
  if (aligned)
    CU_CALL(env, cuMemcpy2D, &p);
  else
    CU_CALL(env, cuMemcpy2DUnaligned, &p);
  return NULL;
}

/* memcpy3D(fields, srcHost, dstHost, stream, keep): cuMemcpy3D, or cuMemcpy3DAsync. */
static napi_value memcpy_3d(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  CUDA_MEMCPY3D_PEER c;
  bool sync = is_undefined(env, argv[3]);
  CUstream stream = NULL;
  if (!read_copy(env, argv[0], argv[1], argv[2], &c) ||
      (!sync && !arg_stream_cached(env, argv[3], &stream)) || !driver_ready(env))
    return NULL;
  CUDA_MEMCPY3D p = {.srcXInBytes = c.srcXInBytes,
                     .srcY = c.srcY,
                     .srcZ = c.srcZ,
                     .srcLOD = c.srcLOD,
                     .srcMemoryType = c.srcMemoryType,
                     .srcHost = c.srcHost,
                     .srcDevice = c.srcDevice,
                     .srcArray = c.srcArray,
                     .srcPitch = c.srcPitch,
                     .srcHeight = c.srcHeight,
                     .dstXInBytes = c.dstXInBytes,
                     .dstY = c.dstY,
                     .dstZ = c.dstZ,
                     .dstLOD = c.dstLOD,
                     .dstMemoryType = c.dstMemoryType,
                     .dstHost = c.dstHost,
                     .dstDevice = c.dstDevice,
                     .dstArray = c.dstArray,
                     .dstPitch = c.dstPitch,
                     .dstHeight = c.dstHeight,
                     .WidthInBytes = c.WidthInBytes,
                     .Height = c.Height,
                     .Depth = c.Depth};
  if (!p.WidthInBytes || !p.Height || !p.Depth) return NULL;
  if (sync) {
    CU_CALL(env, cuMemcpy3D, &p);
    return NULL;
  }
  CU_CALL(env, cuMemcpy3DAsync, &p, stream);
  return keep_until_done(env, stream, argv[4]);
}

/* memcpy3DPeer(fields, srcHost, dstHost, srcContext, dstContext, stream, keep). */
static napi_value memcpy_3d_peer(napi_env env, napi_callback_info info) {
  ARGS(env, info, 7);
  CUDA_MEMCPY3D_PEER c;
  bool sync = is_undefined(env, argv[5]);
  CUstream stream = NULL;
  ctx_rec *src_ctx, *dst_ctx;
  if (!read_copy(env, argv[0], argv[1], argv[2], &c) ||
      !(src_ctx = ctx_rec_of_context(env, argv[3])) ||
      !(dst_ctx = ctx_rec_of_context(env, argv[4])) ||
      (!sync && !arg_stream_cached(env, argv[5], &stream)))
    return NULL;
  c.srcContext = src_ctx->handle;
  c.dstContext = dst_ctx->handle;
  if (!c.WidthInBytes || !c.Height || !c.Depth) return NULL;
  if (sync) {
    CU_CALL(env, cuMemcpy3DPeer, &c);
    return NULL;
  }
  CU_CALL(env, cuMemcpy3DPeerAsync, &c, stream);
  return keep_until_done(env, stream, argv[6]);
}

/* ---- the driver's memory pools ---- */

static void pool_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data); /* the device owns its pools */
}

/* memPoolGetDefault(obj, device) / memPoolGetCurrent(obj, device): the pool wrapped in obj. */
static napi_value wrap_pool(napi_env env, napi_callback_info info, bool current) {
  ARGS(env, info, 2);
  int32_t device;
  if (!arg_int32(env, argv[1], "device", &device) || !driver_ready(env)) return NULL;
  CUmemoryPool handle;
  if (current)
    CU_CALL(env, cuDeviceGetMemPool, &handle, (CUdevice)device);
  else
    CU_CALL(env, cuDeviceGetDefaultMemPool, &handle, (CUdevice)device);
  pool_h *pool = calloc(1, sizeof *pool);
  if (!pool) return throw_oom(env);
  pool->handle = handle;
  if (!handle_wrap(env, argv[0], &pool->base, &POOL_KIND, pool_finalize)) free(pool);
  return NULL;
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

bool memory_init(napi_env env, napi_value exports) {
  memory_state *state = calloc(1, sizeof *state);
  if (!state) {
    throw_oom(env);
    return false;
  }
  state->head.prev = state->head.next = &state->head;
  state->refs = 1;
  state->vacant = NO_SLOT;
  state_of(env)->memory = state;
  NAPI_CALL_BOOL(env, napi_add_env_cleanup_hook(env, memory_teardown, state_of(env)));
  static const export_fn fns[] = {
      {"memAlloc", mem_alloc},
      {"memAllocPitch", mem_alloc_pitch},
      {"memAllocAsync", mem_alloc_async},
      {"memFree", mem_free},
      {"memGetInfo", mem_get_info},
      {"memReclaim", mem_reclaim},
      {"ipcGetMemHandle", ipc_get_mem_handle},
      {"ipcOpenMemHandle", ipc_open_mem_handle},
      {"memHostView", mem_host_view},
      {"memcpyHtoD", memcpy_htod},
      {"memcpyDtoH", memcpy_dtoh},
      {"memcpyHtoDAsync", memcpy_htod_async},
      {"memcpyDtoHAsync", memcpy_dtoh_async},
      {"memcpyDtoD", memcpy_dtod},
      {"memcpyPeer", memcpy_peer},
      {"memsetD", memset_d},
      {"memsetD2D", memset_d2d},
      {"memcpy2D", memcpy_2d},
      {"memcpy3D", memcpy_3d},
      {"memcpy3DPeer", memcpy_3d_peer},
      {"memPoolGetDefault", mem_pool_get_default},
      {"memPoolGetCurrent", mem_pool_get_current},
      {"memPoolGetAttribute", mem_pool_get_attribute},
      {"memPoolSetAttribute", mem_pool_set_attribute},
      {"memPoolTrimTo", mem_pool_trim_to},
  };
  return EXPORTS(env, exports, fns);
}
