/* handles: driver objects live in C structs wrapped in their JS objects, known by their kind so
 * that one kind can never be taken for another, and marked freed once released. The objects are
 * also type-tagged, so that no object holds two handles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

/* Every wrapped handle's finalizer: out of the live set, then its kind's own finalizer. */
static void live_finalize(napi_env env, void *data, void *hint) {
  handle_base *base = data;
  live_handle_remove(base);
  base->finalize(env, data, hint);
}

bool handle_wrap(napi_env env, napi_value obj, handle_base *base, const handle_kind *kind,
                 napi_finalize finalize) {
  base->kind = kind;
  base->freed = false;
  base->finalize = finalize;
  napi_valuetype type;
  napi_status status = napi_typeof(env, obj, &type);
  if (status == napi_ok && type != napi_object) status = napi_object_expected;
  /* into the live set before the tag, which stays: the object of a failed call is tried again
   * (an out-of-memory error, after a collection) */
  if (status == napi_ok && !live_handle_add(base)) {
    throw_oom(env);
    return false;
  }
  if (status == napi_ok) {
    status = napi_type_tag_object(env, obj, &kind->tag);
    if (status == napi_ok) status = napi_wrap(env, obj, base, live_finalize, NULL, NULL);
    if (status != napi_ok) live_handle_remove(base);
  }
  if (status == napi_invalid_arg) { /* tagged or wrapped already, by cudadrv or another addon */
    char message[160];
    snprintf(message, sizeof message,
             "cudadrv: the object to hold the %s already holds a handle or another addon's object",
             kind->name);
    throw_type(env, message);
    return false;
  }
  if (status != napi_ok) {
    napi_fail(env, status);
    return false;
  }
  return true;
}

/* Where base keeps its context's reference, or NULL for kinds of no context. */
static ctx_rec **ctx_slot(handle_base *base) {
  return base->kind->ctx_offset ? (ctx_rec **)((char *)base + base->kind->ctx_offset) : NULL;
}

void handle_release(handle_base *base) {
  base->freed = true;
  ctx_rec **ctx = ctx_slot(base);
  if (!ctx) {
    stats_cleanup(base->kind->destroy(base));
  } else if (ctx_enter(*ctx)) {
    stats_cleanup(base->kind->destroy(base));
    ctx_leave();
  }
  if (base->kind->dispose) base->kind->dispose(base);
}

static void object_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  handle_base *base = data;
  if (!base->freed) handle_release(base);
  ctx_rec **ctx = ctx_slot(base);
  if (ctx) ctx_rec_release(*ctx);
  free(base);
}

bool handle_wrap_object(napi_env env, napi_value obj, handle_base *base, const handle_kind *kind) {
  if (handle_wrap(env, obj, base, kind, object_finalize)) return true;
  object_finalize(env, base, NULL);
  return false;
}

napi_value handle_destroy_call(napi_env env, napi_callback_info info, const handle_kind *kind) {
  ARGS(env, info, 1);
  handle_base *base = handle_get_any(env, argv[0], kind);
  if (base && !base->freed) handle_release(base);
  return NULL;
}

void *handle_get_any(napi_env env, napi_value value, const handle_kind *kind) {
  napi_valuetype type;
  napi_status status = napi_typeof(env, value, &type);
  if (status != napi_ok) return napi_fail(env, status);
  void *base = NULL;
  /* Another addon's wrapped pointer is not in the live set, and is never read; each kind is one
   * static struct, so its address tells it. */
  if (type != napi_object || napi_unwrap(env, value, &base) != napi_ok || !live_handle_has(base) ||
      ((handle_base *)base)->kind != kind) {
    char message[160];
    snprintf(message, sizeof message, "expected %s %s", strchr("AEIOU", kind->name[0]) ? "an" : "a",
             kind->name);
    throw_type(env, message);
    return NULL;
  }
  return base;
}

bool handle_alive(napi_env env, handle_base *base) {
  const handle_kind *kind = base->kind;
  if (base->freed) {
    throw_logic(env, kind->freed);
    return false;
  }
  ctx_rec **slot = ctx_slot(base);
  ctx_rec *ctx = slot ? *slot : kind->context ? kind->context(base) : NULL;
  if (ctx && atomic_load(&ctx->destroyed)) {
    char message[200];
    snprintf(message, sizeof message,
             "the Context of this %s has been detached, and the %s with it; make it again in a "
             "live context",
             kind->name, kind->name);
    throw_logic(env, message);
    return false;
  }
  return true;
}

void *handle_get(napi_env env, napi_value value, const handle_kind *kind) {
  handle_base *base = handle_get_any(env, value, kind);
  return base && handle_alive(env, base) ? base : NULL;
}

bool handle_bind(napi_env env, napi_value v, const handle_kind *kind, void **handle,
                 napi_ref *ref) {
  napi_valuetype type;
  NAPI_CALL_BOOL(env, napi_typeof(env, v, &type));
  void *bound = NULL;
  napi_ref made = NULL;
  if (type != napi_undefined && type != napi_null) {
    bound = handle_get(env, v, kind);
    if (!bound) return false;
    NAPI_CALL_BOOL(env, napi_create_reference(env, v, 1, &made));
  }
  if (*ref) NAPI_UNTHROWN(napi_delete_reference(env, *ref));
  *handle = bound;
  *ref = made;
  return true;
}

static atomic_uint_fast64_t cleanups_failed, cleanups_skipped, napi_failures;

void napi_unthrown(napi_status status) {
  if (status != napi_ok) atomic_fetch_add(&napi_failures, 1);
}

void stats_cleanup(CUresult result) {
  if (result == CUDA_ERROR_DEINITIALIZED || result == CUDA_ERROR_CONTEXT_IS_DESTROYED ||
      result == CUDA_ERROR_INVALID_CONTEXT)
    atomic_fetch_add(&cleanups_skipped, 1);
  else if (result != CUDA_SUCCESS)
    atomic_fetch_add(&cleanups_failed, 1);
}

/* stats(): { cleanupsFailed, cleanupsSkipped } counted by finalizers, and nodeApiFailures, since
 * the process began; capturesUnderWay and this thread's liveHandles now. */
static napi_value stats(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  NAPI_CALL(env, napi_create_object(env, &result));
  NAPI_CALL(env, napi_set_named_property(env, result, "cleanupsFailed",
                                         make_uint(env, atomic_load(&cleanups_failed))));
  NAPI_CALL(env, napi_set_named_property(env, result, "cleanupsSkipped",
                                         make_uint(env, atomic_load(&cleanups_skipped))));
  NAPI_CALL(env, napi_set_named_property(env, result, "nodeApiFailures",
                                         make_uint(env, atomic_load(&napi_failures))));
  NAPI_CALL(env, napi_set_named_property(env, result, "capturesUnderWay",
                                         make_uint(env, (uint64_t)captures_under_way())));
  NAPI_CALL(env, napi_set_named_property(env, result, "liveHandles",
                                         make_uint(env, (uint64_t)live_handle_count())));
  return result;
}

bool handles_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"stats", stats}};
  return EXPORTS(env, exports, fns);
}

bool export_functions(napi_env env, napi_value exports, const export_fn *fns, size_t count) {
  for (size_t i = 0; i < count; i++) {
    napi_value fn;
    NAPI_CALL_BOOL(env,
                   napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &fn));
    NAPI_CALL_BOOL(env, napi_set_named_property(env, exports, fns[i].name, fn));
  }
  return true;
}

napi_status bind_functions(napi_env env, const export_fn *fns, size_t count, void *data, int *refs,
                           napi_finalize finalize, napi_value *out) {
  napi_status status = napi_ok;
  for (size_t i = 0; status == napi_ok && i < count; i++) {
    status = napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, data, &out[i]);
    if (status == napi_ok) {
      ++*refs;
      status = napi_add_finalizer(env, out[i], data, finalize, NULL, NULL);
      if (status != napi_ok) --*refs; /* no finalizer will run for it */
    }
  }
  return status;
}

bool export_layout(napi_env env, napi_value exports, const char *name, const layout_field *fields,
                   size_t count) {
  napi_value layouts, layout;
  bool has;
  NAPI_CALL_BOOL(env, napi_has_named_property(env, exports, "layouts", &has));
  if (has) {
    NAPI_CALL_BOOL(env, napi_get_named_property(env, exports, "layouts", &layouts));
  } else {
    NAPI_CALL_BOOL(env, napi_create_object(env, &layouts));
    NAPI_CALL_BOOL(env, napi_set_named_property(env, exports, "layouts", layouts));
  }
  NAPI_CALL_BOOL(env, napi_create_object(env, &layout));
  for (size_t i = 0; i < count; i++)
    if (!set_named(env, layout, fields[i].name, make_uint(env, fields[i].value))) return false;
  NAPI_CALL_BOOL(env, napi_object_freeze(env, layout));
  NAPI_CALL_BOOL(env, napi_set_named_property(env, layouts, name, layout));
  return true;
}
