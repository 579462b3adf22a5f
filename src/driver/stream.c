/* stream: CUstream objects, their waits and host functions. */
#include <stdlib.h>
#include <unistd.h>

#include "driver.h"

bool arg_stream_handle(napi_env env, napi_value v, stream_h **out) {
  addon_state *state = state_of(env);
  napi_value last;
  bool same = false;
  if (state->last_stream && napi_get_reference_value(env, state->last_stream, &last) == napi_ok &&
      last && napi_strict_equals(env, last, v, &same) == napi_ok && same) {
    *out = state->last_stream_h; /* alive while the reference reads the object */
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

bool arg_stream_and_handle(napi_env env, napi_value v, CUstream *out, stream_h **s) {
  if (!arg_stream_handle(env, v, s)) return false;
  *out = *s ? (*s)->handle : NULL;
  return true;
}

bool arg_stream(napi_env env, napi_value v, CUstream *out) {
  stream_h *s;
  return arg_stream_and_handle(env, v, out, &s);
}

/* Its keep-alives not yet handed to the driver go on the stream first, and a capture under way
 * ends (the context is current). */
static CUresult destroy_stream(handle_base *base) {
  stream_h *stream = (stream_h *)base;
  keeper_flush(stream->keeper);
  capture_end_before_destroy(stream);
  return DRV(cuStreamDestroy, stream->handle);
}

static void dispose_stream(handle_base *base) {
  stream_h *stream = (stream_h *)base;
  keeper_detach(stream->keeper);
  stream->keeper = NULL;
  capture_track(stream, false); /* its capture ended before (capture_end_before_destroy) */
}

const handle_kind STREAM_KIND = {.tag = {0x6364727673747231ULL, 0x53747265616d3031ULL},
                                 .name = "Stream",
                                 .freed = "this Stream has been destroyed; create a new Stream",
                                 .destroy = destroy_stream,
                                 .ctx_offset = offsetof(stream_h, ctx),
                                 .dispose = dispose_stream};

/* streamCreate(obj, flags, priority): a stream in the current context, wrapped in obj. */
static napi_value stream_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  uint32_t flags;
  int32_t priority;
  if (!arg_uint32(env, argv[1], "flags", &flags) || !arg_int32(env, argv[2], "priority", &priority))
    return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUstream handle;
  CUresult result = DRV(cuStreamCreateWithPriority, &handle, flags, priority);
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu(env, result, "cuStreamCreateWithPriority");
  }
  stream_adopt(env, argv[0], handle, ctx);
  return NULL;
}

bool stream_adopt(napi_env env, napi_value obj, CUstream handle, ctx_rec *ctx) {
  stream_h *stream = calloc(1, sizeof *stream);
  if (!stream) {
    DRV(cuStreamDestroy, handle);
    ctx_rec_release(ctx);
    throw_oom(env);
    return false;
  }
  stream->handle = handle;
  stream->ctx = ctx;
  return handle_wrap_object(env, obj, &stream->base, &STREAM_KIND);
}

static napi_value stream_destroy(napi_env env, napi_callback_info info) {
  return handle_destroy_call(env, info, &STREAM_KIND);
}

static stream_h *get_stream(napi_env env, napi_value v) { return handle_get(env, v, &STREAM_KIND); }

/* streamQuery(obj): true once the stream has finished everything enqueued. */
static napi_value stream_query(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  stream_h *stream = get_stream(env, argv[0]);
  if (!stream) return NULL;
  CUresult result = DRV(cuStreamQuery, stream->handle);
  if (result == CUDA_ERROR_NOT_READY) return make_bool(env, false);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuStreamQuery");
  return make_bool(env, true);
}

/* streamSynchronize(obj): a Promise of obj once the stream is done, or true where it was
 * (wait_done). */
static napi_value stream_synchronize(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  stream_h *stream = get_stream(env, argv[0]);
  return stream ? wait_stream(env, stream->handle, argv[0], "cuStreamSynchronize") : NULL;
}

static napi_value stream_synchronize_sync(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  stream_h *stream = get_stream(env, argv[0]);
  if (!stream) return NULL;
  CU_CALL(env, cuStreamSynchronize, stream->handle);
  return NULL;
}

/* streamWaitEvent(obj, event): later work on the stream waits for the event. */
static napi_value stream_wait_event(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  stream_h *stream;
  if (!arg_stream_handle(env, argv[0], &stream)) return NULL;
  event_h *event = handle_get(env, argv[1], &EVENT_KIND);
  if (!event) return NULL;
  CUcontext waiter = stream ? stream->ctx->handle : NULL;
  if (!stream && event->interprocess)
    CU_CALL(env, cuCtxGetCurrent, &waiter); /* the null stream's */
  if (!event_waitable(env, event, waiter, "stream.waitForEvent()")) return NULL;
  CU_CALL(env, cuStreamWaitEvent, stream ? stream->handle : NULL, event->handle, 0);
  return NULL;
}

static napi_value stream_get_flags(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  stream_h *stream = get_stream(env, argv[0]);
  if (!stream) return NULL;
  unsigned int flags;
  CU_CALL(env, cuStreamGetFlags, stream->handle, &flags);
  return make_int(env, flags);
}

static napi_value stream_get_priority(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  stream_h *stream = get_stream(env, argv[0]);
  if (!stream) return NULL;
  int priority;
  CU_CALL(env, cuStreamGetPriority, stream->handle, &priority);
  return make_int(env, priority);
}

/* streamLaunchHostFunc(obj or null): a Promise settled when the stream reaches this point. */
static napi_value stream_launch_host_func(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUstream handle;
  if (!arg_stream(env, argv[0], &handle) || (!handle && !driver_ready(env))) return NULL;
  return wait_host_func(env, handle, NULL);
}

static void CUDA_CB sleep_on_stream(void *data) { usleep((useconds_t)(uintptr_t)data * 1000); }

/* streamEnqueueSleep(obj or null, ms): occupies the stream for ms milliseconds (a host function
 * that sleeps), so that tests and benchmarks have long-running work without kernels. At most
 * SLEEP_LIMIT_MS: a longer one held every later wait of the context, and the exit that waits for
 * the frees queued behind it (the fuzzer's 65,536 ms stalled its process past its hang limit). */
enum { SLEEP_LIMIT_MS = 10000 };
static napi_value stream_enqueue_sleep(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  CUstream handle;
  uint32_t ms;
  if (!arg_stream(env, argv[0], &handle) || !arg_uint32(env, argv[1], "ms", &ms)) return NULL;
  if (ms > SLEEP_LIMIT_MS) return throw_range(env, "ms must be at most 10000 (a test's sleep)");
  if (!handle && !driver_ready(env)) return NULL;
  CU_CALL(env, cuLaunchHostFunc, handle, sleep_on_stream, (void *)(uintptr_t)ms);
  return NULL;
}

bool stream_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"streamCreate", stream_create},
      {"streamDestroy", stream_destroy},
      {"streamQuery", stream_query},
      {"streamSynchronize", stream_synchronize},
      {"streamSynchronizeSync", stream_synchronize_sync},
      {"streamWaitEvent", stream_wait_event},
      {"streamGetFlags", stream_get_flags},
      {"streamGetPriority", stream_get_priority},
      {"streamLaunchHostFunc", stream_launch_host_func},
      {"streamEnqueueSleep", stream_enqueue_sleep},
  };
  return EXPORTS(env, exports, fns);
}
