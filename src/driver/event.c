/* event: CUevent objects; recording, queries, timing, waits and IPC handles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static CUresult destroy_event_object(void *object) { return DRV(cuEventDestroy, object); }

node_use *event_use_of(event_h *event) {
  return node_use_of(&event->use, event->handle, destroy_event_object, event->ctx);
}

static CUresult destroy_event(handle_base *base) {
  event_h *event = (event_h *)base;
  return event->use ? CUDA_SUCCESS : DRV(cuEventDestroy, event->handle); /* the use's to do */
}

static void dispose_event(handle_base *base) { node_use_drop(&((event_h *)base)->use); }

const handle_kind EVENT_KIND = {.tag = {0x6364727665767431ULL, 0x4576656e74303031ULL},
                                .name = "Event",
                                .freed = "this Event has been destroyed; create a new Event",
                                .destroy = destroy_event,
                                .ctx_offset = offsetof(event_h, ctx),
                                .dispose = dispose_event};

static napi_value wrap_event(napi_env env, napi_value obj, CUevent handle, ctx_rec *ctx,
                             bool interprocess) {
  event_h *event = calloc(1, sizeof *event);
  if (!event) {
    DRV(cuEventDestroy, handle);
    ctx_rec_release(ctx);
    return throw_oom(env);
  }
  event->handle = handle;
  event->ctx = ctx;
  event->interprocess = interprocess;
  handle_wrap_object(env, obj, &event->base, &EVENT_KIND);
  return NULL;
}

/* eventCreate(obj, flags): an event in the current context, wrapped in obj. */
static napi_value event_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  uint32_t flags;
  if (!arg_uint32(env, argv[1], "flags", &flags)) return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUevent handle;
  CUresult result = DRV(cuEventCreate, &handle, flags);
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu(env, result, "cuEventCreate");
  }
  return wrap_event(env, argv[0], handle, ctx, flags & CU_EVENT_INTERPROCESS);
}

/* Driver 580 crashes (SIGSEGV) in cuStreamWaitEvent and cuGreenCtxWaitEvent of an interprocess
 * event, made or opened, by a stream or green context of another context: it survives only
 * between a device's primary context and its green contexts, which is refused too, for one rule
 * a user can keep. The event's own context can wait for it and record a plain event for others. */
bool event_waitable(napi_env env, const event_h *event, CUcontext waiter, const char *method) {
  if (!event->interprocess || waiter == event->ctx->handle) return true;
  char message[400];
  snprintf(message, sizeof message,
           "%s: the event is interprocess (EventFlags.INTERPROCESS, or opened from another "
           "process) and of another context, a wait the driver crashes on; wait for it on a stream "
           "of the event's context, record a plain Event there, and wait for that one",
           method);
  throw_logic(env, message);
  return false;
}

static napi_value event_destroy(napi_env env, napi_callback_info info) {
  return handle_destroy_call(env, info, &EVENT_KIND);
}

static event_h *get_event(napi_env env, napi_value v) { return handle_get(env, v, &EVENT_KIND); }

/* eventRecord(obj, stream or null). */
static napi_value event_record(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  event_h *event = get_event(env, argv[0]);
  CUstream stream;
  if (!event || !arg_stream(env, argv[1], &stream)) return NULL;
  CU_CALL(env, cuEventRecord, event->handle, stream);
  return NULL;
}

/* eventQuery(obj): true once the work before the recorded point is done (or never recorded). */
static napi_value event_query(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  event_h *event = get_event(env, argv[0]);
  if (!event) return NULL;
  CUresult result = DRV(cuEventQuery, event->handle);
  if (result == CUDA_ERROR_NOT_READY) return make_bool(env, false);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuEventQuery");
  return make_bool(env, true);
}

/* eventSynchronize(obj): a Promise of obj once the event has completed, or true where it had
 * (wait_done). Not yet complete, the wait goes through a short-lived stream that waits for the
 * event, then calls back. */
static napi_value event_synchronize(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  event_h *event = get_event(env, argv[0]);
  if (!event) return NULL;
  CUresult result = DRV(cuEventQuery, event->handle);
  if (result == CUDA_SUCCESS) return wait_done(env, argv[0], "cuEventSynchronize");
  if (result != CUDA_ERROR_NOT_READY) return promise_rejected(env, result, "cuEventSynchronize");
  if (!ctx_enter(event->ctx)) return throw_logic(env, "the Event's context has been detached");
  CUstream waiter;
  napi_value promise = NULL;
  result = DRV(cuStreamCreate, &waiter, CU_STREAM_NON_BLOCKING);
  if (result == CUDA_SUCCESS) {
    result = DRV(cuStreamWaitEvent, waiter, event->handle, 0);
    if (result == CUDA_SUCCESS) promise = wait_enqueue(env, waiter, argv[0], "cuEventSynchronize");
    DRV(cuStreamDestroy, waiter); /* released by the driver once its work is done */
  }
  ctx_leave();
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuStreamWaitEvent");
  return promise;
}

static napi_value event_synchronize_sync(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  event_h *event = get_event(env, argv[0]);
  if (!event) return NULL;
  CU_CALL(env, cuEventSynchronize, event->handle);
  return NULL;
}

/* eventElapsedTime(start, end): milliseconds from start to end. */
static napi_value event_elapsed_time(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  event_h *start = get_event(env, argv[0]);
  event_h *end = start ? get_event(env, argv[1]) : NULL;
  if (!end) return NULL;
  float ms;
  CU_CALL(env, cuEventElapsedTime, &ms, start->handle, end->handle);
  napi_value result;
  NAPI_CALL(env, napi_create_double(env, ms, &result));
  return result;
}

/* eventIpcHandle(obj): the CUipcEventHandle bytes as a Buffer. */
static napi_value event_ipc_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  event_h *event = get_event(env, argv[0]);
  if (!event) return NULL;
  CUipcEventHandle handle;
  /* in the event's context: driver 580 crashes where another one is current */
  if (!ctx_enter(event->ctx)) return throw_cu(env, CUDA_ERROR_INVALID_CONTEXT, "cuCtxPushCurrent");
  CUresult got = DRV(cuIpcGetEventHandle, &handle, event->handle);
  ctx_leave();
  if (got != CUDA_SUCCESS) return throw_cu(env, got, "cuIpcGetEventHandle");
  napi_value result;
  NAPI_CALL(env,
            napi_create_buffer_copy(env, sizeof handle.reserved, handle.reserved, NULL, &result));
  return result;
}

/* eventFromIpcHandle(obj, bytes): opens another process's event in the current context. */
static napi_value event_from_ipc_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  CUipcEventHandle handle;
  if (!arg_ipc_handle(env, argv[1], handle.reserved)) return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUevent event;
  CUresult result = DRV(cuIpcOpenEventHandle, &event, handle);
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu(env, result, "cuIpcOpenEventHandle");
  }
  return wrap_event(env, argv[0], event, ctx, true);
}

bool event_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"eventCreate", event_create},
      {"eventDestroy", event_destroy},
      {"eventRecord", event_record},
      {"eventQuery", event_query},
      {"eventSynchronize", event_synchronize},
      {"eventSynchronizeSync", event_synchronize_sync},
      {"eventElapsedTime", event_elapsed_time},
      {"eventIpcHandle", event_ipc_handle},
      {"eventFromIpcHandle", event_from_ipc_handle},
  };
  return EXPORTS(env, exports, fns);
}
