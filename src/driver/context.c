/* context: contexts made, retained or found current, the records that resources keep of them,
 * and the context-wide calls (synchronize, peers); its settings are context_settings.c's. */
#include <pthread.h>
#include <stdlib.h>

#include "driver.h"

/* ---- the records of known contexts, one per CUcontext, shared by every addon instance ---- */

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static ctx_rec *known;

static void known_remove_locked(ctx_rec *rec) {
  for (ctx_rec **p = &known; *p; p = &(*p)->next)
    if (*p == rec) {
      *p = rec->next;
      return;
    }
}

bool primary_in_use(CUcontext primary, CUdevice device) {
  pthread_mutex_lock(&known_lock);
  ctx_rec *rec = known;
  while (rec && !(rec->green ? rec->device == device
                             : rec->handle == primary && !atomic_load(&rec->destroyed)))
    rec = rec->next;
  pthread_mutex_unlock(&known_lock);
  return rec != NULL;
}

/* The record of handle (a new reference), made on first sight; NULL when out of memory. device:
 * the context's device where the caller made or retained the context (a primary context is
 * released on it), else -1 (a borrowed context, never released here). An owner (a Context that
 * made or retained the context) counts itself in, and never joins a destroyed record, which stays
 * listed while a wait is blocked in it: the context the driver just gave is another one. */
static ctx_rec *ctx_rec_of(CUcontext handle, CUdevice device, bool owner) {
  pthread_mutex_lock(&known_lock);
  ctx_rec *rec = known;
  while (rec && (rec->handle != handle || (owner && atomic_load(&rec->destroyed)))) rec = rec->next;
  if (rec) {
    atomic_fetch_add(&rec->refs, 1);
    if (device >= 0) rec->device = device; /* first seen borrowed, now retained */
  } else if ((rec = calloc(1, sizeof *rec))) {
    rec->handle = handle;
    atomic_init(&rec->refs, 1);
    atomic_flag_clear(&rec->destroy_claimed);
    rec->device = device;
    rec->next = known;
    known = rec;
  }
  if (rec && owner) rec->owners++;
  pthread_mutex_unlock(&known_lock);
  return rec;
}

/* An owner lets go of rec; true for the last, which marks it destroyed (under the lock, so that no
 * owner joins it after). */
static bool ctx_rec_disown(ctx_rec *rec) {
  pthread_mutex_lock(&known_lock);
  bool last = --rec->owners == 0;
  if (last) atomic_store(&rec->destroyed, true);
  pthread_mutex_unlock(&known_lock);
  return last;
}

ctx_rec *ctx_rec_retain(ctx_rec *rec) {
  atomic_fetch_add(&rec->refs, 1);
  return rec;
}

void ctx_rec_release(ctx_rec *rec) {
  if (!rec) return;
  pthread_mutex_lock(&known_lock);
  bool last = atomic_fetch_sub(&rec->refs, 1) == 1;
  if (last) known_remove_locked(rec);
  pthread_mutex_unlock(&known_lock);
  if (!last) return;
  if (rec->green) DRV(cuGreenCtxDestroy, rec->green); /* detached, and nothing made in it is left */
  free(rec);
}

ctx_rec *ctx_rec_current(napi_env env) {
  if (!driver_ready(env)) return NULL;
  CUcontext current = NULL;
  CUresult result = DRV(cuCtxGetCurrent, &current);
  if (result != CUDA_SUCCESS) {
    throw_cu(env, result, "cuCtxGetCurrent");
    return NULL;
  }
  if (!current) {
    throw_logic(env, "no CUDA context is current on this thread: make one first with "
                     "new cuda.Device(0).makeContext(), or require('cudadrv/autoprimaryctx')");
    return NULL;
  }
  ctx_rec *rec = ctx_rec_of(current, -1, false);
  if (!rec) throw_oom(env);
  return rec;
}

bool ctx_enter(ctx_rec *rec) {
  return rec && !ctx_rec_gone(rec) && DRV(cuCtxPushCurrent, rec->handle) == CUDA_SUCCESS;
}

void ctx_leave(void) {
  CUcontext popped;
  DRV(cuCtxPopCurrent, &popped);
}

/* Destroys (or releases, for a primary context) rec's context once: after detach() and after the
 * last thread blocked in it has returned, whichever comes last (a green one: ctx_rec_release). */
static void ctx_destroy_once(ctx_rec *rec) {
  if (rec->green || atomic_flag_test_and_set(&rec->destroy_claimed)) return;
  pthread_mutex_lock(&known_lock);
  known_remove_locked(rec); /* the driver may hand the same address to a new context */
  pthread_mutex_unlock(&known_lock);
  if (rec->primary)
    DRV(cuDevicePrimaryCtxRelease, rec->device);
  else
    DRV(cuCtxDestroy, rec->handle);
}

void ctx_rec_wait_begin(ctx_rec *rec) {
  ctx_rec_retain(rec);
  atomic_fetch_add(&rec->pending, 1);
}

void ctx_rec_wait_end(ctx_rec *rec) {
  if (atomic_fetch_sub(&rec->pending, 1) == 1 && atomic_load(&rec->destroy_requested))
    ctx_destroy_once(rec);
  ctx_rec_release(rec);
}

static void ctx_request_destroy(ctx_rec *rec, bool primary) {
  rec->primary = primary;
  atomic_store(&rec->destroyed, true);
  atomic_store(&rec->destroy_requested, true);
  if (atomic_load(&rec->pending) == 0) ctx_destroy_once(rec);
}

/* ---- the Context objects of lib/ ---- */

typedef enum { CTX_CREATED, CTX_PRIMARY, CTX_BORROWED } ctx_origin;

typedef struct ctx_holder {
  handle_base base;
  ctx_rec *rec;
  ctx_origin origin;
} ctx_holder;

static const handle_kind CONTEXT_KIND = {
    .tag = {0x6364727663747831ULL, 0x436f6e7465787431ULL},
    .name = "Context",
    .freed = "this Context has been detached; make or retain a new one"};

/* Takes ctx off this thread's context stack wherever it lies, as often as it was pushed: the
 * contexts above it are popped and pushed back in their order. cuCtxDestroy pops a context only
 * where it is on top, and releasing a primary context pops nothing: one left below would become
 * current again on a later pop, destroyed, and the driver does not survive calls into it. The
 * whole stack is searched, however deep (one that stopped 64 deep left the driver's heap corrupt
 * on an H200). Returns the first failure to push a context back, or to find room for those above.
 */
static CUresult unstack(CUcontext ctx) {
  CUcontext *above = NULL, current = NULL, popped;
  size_t n = 0, room = 0;
  CUresult first = CUDA_SUCCESS;
  while (DRV(cuCtxGetCurrent, &current) == CUDA_SUCCESS && current) {
    CUcontext *grown = n < room ? above : realloc(above, (room = room * 2 + 64) * sizeof *above);
    if (!grown) { /* what lies deeper stays; the stack above is pushed back as it was */
      first = CUDA_ERROR_OUT_OF_MEMORY;
      break;
    }
    above = grown;
    if (DRV(cuCtxPopCurrent, &popped) != CUDA_SUCCESS) break;
    if (popped != ctx) above[n++] = popped;
  }
  while (n > 0) {
    CUresult result = DRV(cuCtxPushCurrent, above[--n]);
    if (first == CUDA_SUCCESS) first = result;
  }
  free(above);
  return first;
}

/* Releases what this holder owns. The last owner takes the context off this thread's stack and
 * destroys or releases it; another owner releases only its retain of the primary context, which
 * lives on for the others: it leaves every stack alone, since the other owners' pushes of the same
 * context are indistinguishable from its own. Returns the result of putting back the contexts that
 * were above it. */
static CUresult holder_release(napi_env env, ctx_holder *holder) {
  holder->base.freed = true;
  if (holder->origin == CTX_BORROWED) return CUDA_SUCCESS;
  ctx_rec *rec = holder->rec;
  if (!ctx_rec_disown(rec)) {
    DRV(cuDevicePrimaryCtxRelease, rec->device);
    return CUDA_SUCCESS;
  }
  addon_state *state = state_of(env);
  if (state->context_detached) state->context_detached(env, rec);
  captures_end_in(rec);
  CUresult result = unstack(rec->handle);
  ctx_request_destroy(rec, holder->origin == CTX_PRIMARY);
  if (rec->green) { /* destroyed at the record's last reference: this holder's goes now */
    holder->rec = NULL;
    ctx_rec_release(rec);
  }
  return result;
}

static void holder_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  ctx_holder *holder = data;
  if (!holder->base.freed) stats_cleanup(holder_release(env, holder));
  ctx_rec_release(holder->rec);
  free(holder);
}

static napi_value wrap_holder(napi_env env, napi_value obj, ctx_rec *rec, ctx_origin origin) {
  ctx_holder *holder = calloc(1, sizeof *holder);
  if (!holder) {
    ctx_rec_release(rec);
    throw_oom(env);
    return NULL;
  }
  holder->rec = rec;
  holder->origin = origin;
  if (!handle_wrap(env, obj, &holder->base, &CONTEXT_KIND, holder_finalize)) {
    ctx_rec_release(rec);
    free(holder);
    return NULL;
  }
  return make_ptr(env, (CUdeviceptr)(uintptr_t)rec->handle);
}

static ctx_holder *get_holder(napi_env env, napi_value v) {
  return handle_get(env, v, &CONTEXT_KIND);
}

ctx_rec *ctx_rec_of_context(napi_env env, napi_value context) {
  ctx_holder *holder = get_holder(env, context);
  return holder ? holder->rec : NULL;
}

/* ctxCreate(obj, flags, device): makes a context, current on this thread; returns its address. */
static napi_value ctx_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  uint32_t flags;
  int32_t device;
  if (!arg_uint32(env, argv[1], "flags", &flags) || !arg_int32(env, argv[2], "device", &device) ||
      !driver_ready(env))
    return NULL;
  CUcontext handle;
  CU_CALL(env, cuCtxCreate, &handle, flags, (CUdevice)device); /* the 12.0 ABI (loader.h) */
  ctx_rec *rec = ctx_rec_of(handle, (CUdevice)device, true);
  if (!rec) { /* no memory for its record: nothing may hold it */
    DRV(cuCtxDestroy, handle);
    return throw_oom(env);
  }
  return wrap_holder(env, argv[0], rec, CTX_CREATED);
}

napi_value ctx_adopt_green(napi_env env, napi_value obj, CUgreenCtx green, CUdevice device) {
  CUcontext handle;
  CUresult result = DRV(cuCtxFromGreenCtx, &handle, green);
  ctx_rec *rec = result == CUDA_SUCCESS ? ctx_rec_of(handle, device, true) : NULL;
  if (!rec) {
    DRV(cuGreenCtxDestroy, green);
    return result == CUDA_SUCCESS ? throw_oom(env) : throw_cu(env, result, "cuCtxFromGreenCtx");
  }
  rec->green = green;
  return wrap_holder(env, obj, rec, CTX_CREATED);
}

/* ctxRetainPrimary(obj, device): retains the device's primary context (not made current). */
static napi_value ctx_retain_primary(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  int32_t device;
  if (!arg_int32(env, argv[1], "device", &device) || !driver_ready(env)) return NULL;
  CUcontext handle;
  CU_CALL(env, cuDevicePrimaryCtxRetain, &handle, (CUdevice)device);
  ctx_rec *rec = ctx_rec_of(handle, (CUdevice)device, true);
  if (!rec) {
    DRV(cuDevicePrimaryCtxRelease, (CUdevice)device);
    return throw_oom(env);
  }
  return wrap_holder(env, argv[0], rec, CTX_PRIMARY);
}

/* ctxWrapCurrent(obj): wraps the current context, which cudadrv did not make, without owning it. */
static napi_value ctx_wrap_current(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  ctx_rec *rec = ctx_rec_current(env);
  return rec ? wrap_holder(env, argv[0], rec, CTX_BORROWED) : NULL;
}

/* ctxGetCurrent(): the current context's address as a bigint, or null. */
static napi_value ctx_get_current(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  CUcontext current;
  CU_CALL(env, cuCtxGetCurrent, &current);
  if (!current) return make_null(env);
  return make_ptr(env, (CUdeviceptr)(uintptr_t)current);
}

static napi_value ctx_detach(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  ctx_holder *holder = handle_get_any(env, argv[0], &CONTEXT_KIND);
  if (!holder || holder->base.freed) return NULL;
  CUresult result = holder_release(env, holder); /* detached even where this failed */
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuCtxPushCurrent");
  return NULL;
}

static napi_value ctx_push(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  ctx_holder *holder = get_holder(env, argv[0]);
  if (!holder) return NULL;
  CU_CALL(env, cuCtxPushCurrent, holder->rec->handle);
  return NULL;
}

/* ctxPop(): pops the current context; returns its address, or null on an empty stack. */
static napi_value ctx_pop(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  CUcontext current = NULL;
  CU_CALL(env, cuCtxGetCurrent, &current);
  if (!current) return make_null(env);
  CUcontext popped;
  CU_CALL(env, cuCtxPopCurrent, &popped);
  return make_ptr(env, (CUdeviceptr)(uintptr_t)popped);
}

static napi_value ctx_set_current(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  napi_valuetype type;
  NAPI_CALL(env, napi_typeof(env, argv[0], &type));
  if (type == napi_null || type == napi_undefined) {
    if (!driver_ready(env)) return NULL;
    CU_CALL(env, cuCtxSetCurrent, NULL);
    return NULL;
  }
  ctx_holder *holder = get_holder(env, argv[0]);
  if (!holder) return NULL;
  CU_CALL(env, cuCtxSetCurrent, holder->rec->handle);
  return NULL;
}

static napi_value ctx_get_api_version(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  ctx_holder *holder = get_holder(env, argv[0]);
  if (!holder) return NULL;
  unsigned int version;
  CU_CALL(env, cuCtxGetApiVersion, holder->rec->handle, &version);
  return make_int(env, version);
}

static CUresult synchronize_current(void *arg) {
  (void)arg;
  return DRV(cuCtxSynchronize, );
}

/* ctxSynchronize(): a Promise of the current context's completion, waited on a thread of its own.
 */
static napi_value ctx_synchronize(napi_env env, napi_callback_info info) {
  (void)info;
  ctx_rec *rec = ctx_rec_current(env);
  if (!rec) return NULL;
  napi_value promise =
      wait_on_thread(env, rec, synchronize_current, NULL, NULL, "cuCtxSynchronize", NULL);
  ctx_rec_release(rec);
  return promise;
}

static napi_value ctx_synchronize_sync(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  CU_CALL(env, cuCtxSynchronize);
  return NULL;
}

static napi_value ctx_enable_peer_access(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  ctx_holder *peer = get_holder(env, argv[0]);
  uint32_t flags;
  if (!peer || !arg_uint32(env, argv[1], "flags", &flags)) return NULL;
  CU_CALL(env, cuCtxEnablePeerAccess, peer->rec->handle, flags);
  return NULL;
}

static napi_value ctx_disable_peer_access(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  ctx_holder *peer = get_holder(env, argv[0]);
  if (!peer) return NULL;
  CU_CALL(env, cuCtxDisablePeerAccess, peer->rec->handle);
  return NULL;
}

void context_on_detach(napi_env env, void (*hook)(napi_env env, ctx_rec *rec)) {
  state_of(env)->context_detached = hook;
}

bool context_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"ctxCreate", ctx_create},
      {"ctxRetainPrimary", ctx_retain_primary},
      {"ctxWrapCurrent", ctx_wrap_current},
      {"ctxGetCurrent", ctx_get_current},
      {"ctxDetach", ctx_detach},
      {"ctxPush", ctx_push},
      {"ctxPop", ctx_pop},
      {"ctxSetCurrent", ctx_set_current},
      {"ctxGetApiVersion", ctx_get_api_version},
      {"ctxSynchronize", ctx_synchronize},
      {"ctxSynchronizeSync", ctx_synchronize_sync},
      {"ctxEnablePeerAccess", ctx_enable_peer_access},
      {"ctxDisablePeerAccess", ctx_disable_peer_access},
  };
  return EXPORTS(env, exports, fns);
}
