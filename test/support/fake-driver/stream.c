/* The stand-in's streams, events and graphs. Work is done when it is queued, so streams are
 * always idle; a stream callback or host function is called before the call that queues it
 * returns. Capture records nothing: a captured graph has no nodes (graph.c). */
#include "fake.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct CUstream_st {
  int id;
  unsigned int flags;
  int priority;
  CUstreamCaptureStatus capture;
  cuuint64_t capture_id;
  CUgraph into;                /* cuStreamBeginCaptureToGraph's graph, or NULL */
  CUgraphNode capture_deps[8]; /* its dependencies, which a capture that records nothing keeps */
  size_t capture_dep_count;
  bool detached; /* its green context was destroyed (fake_streams_detach) */
};
struct CUevent_st {
  int id; /* fake_event_id */
  unsigned int flags;
  int recorded;
  CUcontext ctx; /* the context it was made in */
  uint64_t mark; /* the deferred copies queued before its last record (deferred.c) */
};

static bool is_pseudo(CUstream stream) {
  return !stream || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

bool stream_ok(CUstream stream) {
  if (is_pseudo(stream)) return true;
  if (!obj_live((uintptr_t)stream, OBJ_STREAM)) return false;
  if (stream->detached) count_stale("stream of a destroyed green context");
  return !stream->detached;
}

static void detach_stream(uintptr_t key) {
  CUstream stream = (CUstream)key;
  stream->detached = true;
  if (__atomic_load_n(&stream->capture, __ATOMIC_ACQUIRE) != CU_STREAM_CAPTURE_STATUS_NONE)
    __atomic_store_n(&stream->capture, CU_STREAM_CAPTURE_STATUS_INVALIDATED, __ATOMIC_RELEASE);
}

void fake_streams_detach(CUcontext ctx) { obj_disown(ctx, OBJ_STREAM, detach_stream); }
int stream_id(CUstream stream) { return is_pseudo(stream) ? 0 : stream->id; }
CUcontext fake_stream_context(CUstream stream) {
  return is_pseudo(stream) ? current_context() : obj_owner((uintptr_t)stream);
}

bool fake_stream_capturing(CUstream stream) {
  return !is_pseudo(stream) &&
         __atomic_load_n(&stream->capture, __ATOMIC_ACQUIRE) != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* The streams capturing, which a synchronization on any thread breaks (cuCtxSynchronize: the
 * addon's reaper calls it off the main thread). */
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUstream_st *capturing[64];
static int capturing_count;

static void capture_track(CUstream stream, bool on) {
  pthread_mutex_lock(&capture_lock);
  for (int i = 0; i < capturing_count; i++)
    if (capturing[i] == stream) capturing[i--] = capturing[--capturing_count];
  if (on && capturing_count < 64) capturing[capturing_count++] = stream;
  pthread_mutex_unlock(&capture_lock);
}

void fake_stream_forget(CUstream stream) { capture_track(stream, false); }

bool fake_capturing_into(CUgraph graph) {
  pthread_mutex_lock(&capture_lock);
  bool found = false;
  for (int i = 0; i < capturing_count && !found; i++) found = capturing[i]->into == graph;
  pthread_mutex_unlock(&capture_lock);
  return found;
}

bool fake_break_captures(void) {
  pthread_mutex_lock(&capture_lock);
  int count = capturing_count;
  for (int i = 0; i < count; i++)
    __atomic_store_n(&capturing[i]->capture, CU_STREAM_CAPTURE_STATUS_INVALIDATED,
                     __ATOMIC_RELEASE);
  pthread_mutex_unlock(&capture_lock);
  return count > 0;
}

CUresult fake_capture_error(CUstream stream) {
  bool broken = !is_pseudo(stream) && __atomic_load_n(&stream->capture, __ATOMIC_ACQUIRE) ==
                                          CU_STREAM_CAPTURE_STATUS_INVALIDATED;
  return broken ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
}

CUresult fake_stream_new(CUstream *stream, unsigned int flags, int priority) {
  static int streams;
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (flags & ~1u) return CUDA_ERROR_INVALID_VALUE;
  struct CUstream_st *s = calloc(1, sizeof *s);
  if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
  s->id = __atomic_add_fetch(&streams, 1, __ATOMIC_RELAXED);
  s->flags = flags;
  s->priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
  CUresult result = obj_add((uintptr_t)s, OBJ_STREAM, 0);
  if (result != CUDA_SUCCESS) return free(s), result;
  *stream = s;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
  ENTER();
  return fake_stream_new(stream, flags, 0);
}
EXPORT CUresult cuStreamCreateWithPriority(CUstream *stream, unsigned int flags, int priority) {
  ENTER();
  return fake_stream_new(stream, flags, priority);
}
EXPORT CUresult cuStreamDestroy(CUstream stream) {
  ENTER();
  /* cudadrv ends a capture before destroying its stream (capture_end_before_destroy) */
  if (!is_pseudo(stream) && obj_is((uintptr_t)stream, OBJ_STREAM) && /* obj_remove counts stale */
      __atomic_load_n(&stream->capture, __ATOMIC_ACQUIRE) != CU_STREAM_CAPTURE_STATUS_NONE) {
    log_line("stream destroyed mid-capture");
    if (stream->into) fake_graph_lose(stream->into);
  }
  if (!is_pseudo(stream) && obj_is((uintptr_t)stream, OBJ_STREAM) && stream->detached) {
    log_line("stream of a destroyed green context not destroyed");
    return CUDA_ERROR_CONTEXT_IS_DESTROYED; /* and it stays, as on driver 580 */
  }
  if (is_pseudo(stream) || !obj_remove((uintptr_t)stream, OBJ_STREAM))
    return CUDA_ERROR_INVALID_HANDLE;
  capture_track(stream, false);
  free(stream);
  return CUDA_SUCCESS;
}
/* A query or synchronization of a capturing stream is refused, and breaks its capture (driver 580:
 * the stream's capture status read INVALIDATED after a cuStreamQuery). */
static CUresult refuse_capturing(CUstream stream) {
  if (!fake_stream_capturing(stream)) return in_context();
  __atomic_store_n(&stream->capture, CU_STREAM_CAPTURE_STATUS_INVALIDATED, __ATOMIC_RELEASE);
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}
EXPORT CUresult cuStreamQuery(CUstream stream) {
  ENTER();
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  return refuse_capturing(stream);
}
EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  ENTER();
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  return refuse_capturing(stream);
}
EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  ENTER();
  if (!stream_ok(stream) || !obj_live((uintptr_t)event, OBJ_EVENT))
    return CUDA_ERROR_INVALID_HANDLE;
  fake_event_wait_check(event,
                        is_pseudo(stream) ? current_context() : obj_owner((uintptr_t)stream));
  return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetFlags(CUstream stream, unsigned int *flags) {
  ENTER();
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  *flags = is_pseudo(stream) ? 0 : stream->flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetPriority(CUstream stream, int *priority) {
  ENTER();
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  *priority = is_pseudo(stream) ? 0 : stream->priority;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamAddCallback(CUstream stream, CUstreamCallback callback, void *data,
                                    unsigned int flags) {
  ENTER();
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (flags || !callback) return CUDA_ERROR_INVALID_VALUE;
  if (fake_stream_capturing(stream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (!fake_defer_callback(stream, callback, data)) callback(stream, CUDA_SUCCESS, data);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn, void *data) {
  ENTER();
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  if (!fake_stream_capturing(stream)) fn(data);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamAttachMemAsync(CUstream stream, CUdeviceptr ptr, size_t bytes,
                                       unsigned int flags) {
  ENTER();
  obj o;
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (!obj_memory((uintptr_t)ptr, bytes, &o) || o.kind != OBJ_MANAGED ||
      (bytes && bytes != o.size) ||
      (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST &&
       flags != CU_MEM_ATTACH_SINGLE))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* ---- capture and graphs ---- */

EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
  ENTER();
  static _Thread_local CUstreamCaptureMode current = CU_STREAM_CAPTURE_MODE_GLOBAL;
  CUstreamCaptureMode old = current;
  if ((unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
  current = *mode;
  *mode = old;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode mode) {
  ENTER();
  if (is_pseudo(stream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
  if (fake_stream_capturing(stream)) return CUDA_ERROR_ILLEGAL_STATE;
  static cuuint64_t ids;
  __atomic_store_n(&stream->capture, CU_STREAM_CAPTURE_STATUS_ACTIVE, __ATOMIC_RELEASE);
  stream->capture_id = __atomic_add_fetch(&ids, 1, __ATOMIC_RELAXED);
  stream->into = NULL;
  stream->capture_dep_count = 0;
  capture_track(stream, true);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream stream, CUgraph graph, const CUgraphNode *deps,
                                            const CUgraphEdgeData *data, size_t count,
                                            CUstreamCaptureMode mode) {
  ENTER();
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH) || data || count > 8 || (count && !deps) ||
      !fake_graph_has(graph, deps, count))
    return CUDA_ERROR_INVALID_VALUE;
  if (fake_capturing_into(graph)) return CUDA_ERROR_ILLEGAL_STATE; /* one capture at a time */
  CUresult result = cuStreamBeginCapture(stream, mode);
  if (result != CUDA_SUCCESS) return result;
  stream->into = graph;
  stream->capture_dep_count = count;
  if (count) memcpy(stream->capture_deps, deps, count * sizeof *deps);
  return CUDA_SUCCESS;
}
/* The CUDA 11.3 ABI (cudadrv resolves it at that version): no edge data. */
EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream stream, CUstreamCaptureStatus *status,
                                          cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                                          size_t *count) {
  ENTER();
  if (!stream_ok(stream) || !status) return CUDA_ERROR_INVALID_VALUE;
  *status = is_pseudo(stream) ? CU_STREAM_CAPTURE_STATUS_NONE
                              : __atomic_load_n(&stream->capture, __ATOMIC_ACQUIRE);
  bool active = *status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
  if (id && active) *id = stream->capture_id;
  if (graph && active) *graph = stream->into;
  if (deps && active) *deps = stream->capture_deps;
  if (count && active) *count = stream->capture_dep_count;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  ENTER();
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (!fake_stream_capturing(stream)) return CUDA_ERROR_ILLEGAL_STATE;
  CUresult broken = fake_capture_error(stream); /* ends the capture all the same */
  capture_track(stream, false);
  __atomic_store_n(&stream->capture, CU_STREAM_CAPTURE_STATUS_NONE, __ATOMIC_RELEASE);
  if (broken != CUDA_SUCCESS) {
    if (stream->into) fake_graph_lose(stream->into);
    stream->into = NULL;
    return broken;
  }
  if (stream->into) { /* a capture into a graph records nothing here: the graph is as it was */
    *graph = stream->into;
    stream->into = NULL;
    return CUDA_SUCCESS;
  }
  return fake_graph_new(graph);
}
EXPORT CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status) {
  ENTER();
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  *status = is_pseudo(stream) ? CU_STREAM_CAPTURE_STATUS_NONE
                              : __atomic_load_n(&stream->capture, __ATOMIC_ACQUIRE);
  return CUDA_SUCCESS;
}
/* ---- events: IPC handles hold the process id and the event ---- */

static CUresult new_event(CUevent *event, unsigned int flags) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (flags & ~0xfu) return CUDA_ERROR_INVALID_VALUE;
  struct CUevent_st *e = calloc(1, sizeof *e);
  if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
  static int made;
  e->id = __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
  e->flags = flags;
  e->ctx = current_context();
  CUresult result = obj_add((uintptr_t)e, OBJ_EVENT, 0);
  if (result != CUDA_SUCCESS) return free(e), result;
  *event = e;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuEventCreate(CUevent *event, unsigned int flags) {
  ENTER();
  return new_event(event, flags);
}
EXPORT CUresult cuEventDestroy(CUevent event) {
  ENTER();
  if (!obj_remove((uintptr_t)event, OBJ_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
  free(event);
  return CUDA_SUCCESS;
}
CUresult fake_event_record(CUevent event, CUstream stream) {
  if (!obj_live((uintptr_t)event, OBJ_EVENT) || !stream_ok(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  event->recorded = 1;
  event->mark = fake_defer_mark();
  return CUDA_SUCCESS;
}
CUresult fake_event_record_by_launch(CUevent event, CUstream stream) {
  if (obj_live((uintptr_t)event, OBJ_EVENT) &&
      (!(event->flags & CU_EVENT_DISABLE_TIMING) || (event->flags & CU_EVENT_INTERPROCESS)))
    return CUDA_ERROR_INVALID_VALUE;
  return fake_event_record(event, stream);
}
int fake_event_id(CUevent event) { return event->id; }
void fake_event_wait_check(CUevent event, CUcontext waiter) {
  /* driver 580 crashes so (it survives it between a device's primary and green contexts only) */
  if ((event->flags & CU_EVENT_INTERPROCESS) && event->ctx != waiter)
    fake_crash("a wait for an interprocess event of another context");
}
CUcontext fake_event_context(CUevent event) { return event->ctx; }
EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  ENTER();
  /* as the driver documents: the event and the stream of one context */
  if (obj_is((uintptr_t)event, OBJ_EVENT) &&
      (is_pseudo(stream) ? current_context() : obj_owner((uintptr_t)stream)) != event->ctx)
    return CUDA_ERROR_INVALID_HANDLE;
  return fake_event_record(event, stream);
}
EXPORT CUresult cuEventQuery(CUevent event) {
  ENTER();
  if (!obj_live((uintptr_t)event, OBJ_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
  return fake_defer_done(event->mark) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
EXPORT CUresult cuEventSynchronize(CUevent event) {
  ENTER();
  if (!obj_live((uintptr_t)event, OBJ_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
  fake_defer_run(event->mark);
  return CUDA_SUCCESS;
}
static CUresult elapsed_time(float *ms, CUevent start, CUevent end) {
  if (!obj_live((uintptr_t)start, OBJ_EVENT) || !obj_live((uintptr_t)end, OBJ_EVENT))
    return CUDA_ERROR_INVALID_HANDLE;
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
  if (!start->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
  *ms = 1.5f;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  ENTER();
  return elapsed_time(ms, start, end);
}
/* The ABI before CUDA 12.8, under the plain name (cuda.h now maps that name to _v2). */
#undef cuEventElapsedTime
EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  ENTER();
  return elapsed_time(ms, start, end);
}
typedef struct {
  int pid;
  CUevent event;
} ipc_event;
EXPORT CUresult cuIpcGetEventHandle(CUipcEventHandle *handle, CUevent event) {
  ENTER();
  if (!obj_live((uintptr_t)event, OBJ_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
  if (!(event->flags & CU_EVENT_INTERPROCESS)) return CUDA_ERROR_INVALID_VALUE;
  /* driver 580 crashes where another context is current; the stand-in says so instead */
  if (current_context() != event->ctx) return CUDA_ERROR_INVALID_CONTEXT;
  ipc_event h = {getpid(), event};
  memset(handle, 0, sizeof *handle);
  memcpy(handle->reserved, &h, sizeof h);
  return CUDA_SUCCESS;
}
/* Another process's event cannot be shared here: opening gives a new event. */
EXPORT CUresult cuIpcOpenEventHandle(CUevent *event, CUipcEventHandle handle) {
  ENTER();
  ipc_event h;
  memcpy(&h, handle.reserved, sizeof h);
  if (!h.pid) return CUDA_ERROR_INVALID_VALUE;
  return new_event(event, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS);
}
