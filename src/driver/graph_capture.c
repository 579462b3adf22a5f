/* graph_capture: stream capture, into a graph of the driver's (cuStreamBeginCapture) or into a
 * Graph of the caller's after some of its nodes (cuStreamBeginCaptureToGraph, CUDA 12.3), and
 * what a capture under way says of itself (cuStreamGetCaptureInfo). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "graph.h"

/* Captures under way or beginning, process-wide, and whether the reaper is synchronizing: each
 * side sets its own, then reads the other's (sequentially consistent), so that no synchronization
 * runs beside a capture. */
static atomic_int captures;
static atomic_bool synchronizing;

/* This thread's streams capturing through cudadrv, into one of its Graphs where stream->into is
 * set: so that a graph is not destroyed under a capture (the driver would record into freed
 * memory), and that a context is not destroyed under its streams' captures (captures_end_in); few
 * at a time, the array freed when empty. Graphs and streams are used, and collected, on the thread
 * that made them. */
static _Thread_local stream_h **capturers;
static _Thread_local uint32_t capturer_count, capturer_room;

/* What captured work pins, by the driver's id of the capture it went into (capture_pin): handed to
 * the graph the capture makes, or let go where it makes none. This thread's, the array freed when
 * empty. */
typedef struct captured_pin {
  cuuint64_t id;
  graph_pin pin;
} captured_pin;
static _Thread_local captured_pin *captured;
static _Thread_local uint32_t captured_count, captured_room;

bool capture_recording(CUstream stream, cuuint64_t *id) {
  if (atomic_load(&captures) == 0) return false; /* no capture of cudadrv's: one load */
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return DRV(cuStreamGetCaptureInfo, stream, &status, id, NULL, NULL, NULL) == CUDA_SUCCESS &&
         status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

bool capture_pin(napi_env env, CUstream stream, void *obj, const graph_pin_ops *ops) {
  cuuint64_t id;
  return !capture_recording(stream, &id) || capture_pin_id(env, id, obj, ops);
}

bool capture_pin_id(napi_env env, cuuint64_t id, void *obj, const graph_pin_ops *ops) {
  const captured_pin *last = captured_count ? &captured[captured_count - 1] : NULL;
  if (last && last->id == id && last->pin.obj == obj) return true; /* a loop's copies: once */
  if (captured_count == captured_room) {
    uint32_t room = captured_room ? 2 * captured_room : 8;
    captured_pin *grown = realloc(captured, room * sizeof *grown);
    if (!grown) return throw_oom(env), false;
    captured = grown;
    captured_room = room;
  }
  ops->retain(obj);
  captured[captured_count++] = (captured_pin){id, {obj, ops}};
  return true;
}

/* Hands the pins of capture id to the Graph object graph, or (graph NULL) lets them go. */
static void captured_end(napi_env env, cuuint64_t id, napi_value graph) {
  for (uint32_t i = 0; i < captured_count;) {
    if (captured[i].id != id) {
      i++;
      continue;
    }
    graph_pin pin = captured[i].pin;
    captured[i] = captured[--captured_count];
    if (graph) graph_pin_use(env, graph, pin.obj, pin.ops);
    pin.ops->release(pin.obj);
  }
  if (captured_count == 0 && captured) {
    free(captured);
    captured = NULL;
    captured_room = 0;
  }
}

/* Hands the pins of capture id to pins (a Graph's, which the capture added nodes to), without
 * throwing: where memory runs out, a pin stays held for good rather than be let go under a node. */
static void captured_hand(cuuint64_t id, graph_pins *pins) {
  for (uint32_t i = 0; i < captured_count;) {
    graph_pins one = {.at = &captured[i].pin, .count = 1, .room = 1};
    if (captured[i].id != id || pins_append(pins, &one))
      i++;
    else
      captured[i] = captured[--captured_count]; /* its retain is never let go */
  }
}

/* Room for one more; false when out of memory. */
static bool capturer_reserve(void) {
  if (capturer_count < capturer_room) return true;
  uint32_t room = capturer_room ? 2 * capturer_room : 4;
  stream_h **grown = realloc(capturers, room * sizeof *grown);
  if (!grown) return false;
  capturers = grown;
  capturer_room = room;
  return true;
}

static void capturer_forget(stream_h *stream) {
  stream->into = NULL;
  for (uint32_t i = 0; i < capturer_count;) {
    if (capturers[i] == stream)
      capturers[i] = capturers[--capturer_count];
    else
      i++;
  }
  if (capturer_count == 0 && capturers) {
    free(capturers);
    capturers = NULL;
    capturer_room = 0;
  }
}

/* Whether a capture into target records into graph or into what goes with it (a top graph's
 * bodies). */
static bool goes_with(const graph_h *target, const graph_h *graph) {
  return target &&
         (target == graph || (!graph->body && graph->family && target->family == graph->family));
}

/* Whether a stream is capturing into graph, or (graph being a family's top) into a body of its:
 * the driver would go on writing into memory freed with it. */
static bool graph_captured_into(const graph_h *graph) {
  for (uint32_t i = 0; i < capturer_count; i++)
    if (goes_with(capturers[i]->into, graph)) return true;
  return false;
}

bool graph_not_captured(napi_env env, const graph_h *graph, const char *call, const char *name) {
  if (!graph_captured_into(graph)) return true;
  char message[256];
  snprintf(message, sizeof message,
           "%s: a stream is capturing into %s or into a body of its conditional nodes; end that "
           "capture first (stream.endCapture())",
           call, name);
  return throw_logic(env, message), false;
}

/* Ends stream's capture, its context current: the graph a plain capture made is destroyed; a Graph
 * of the caller's captured into keeps the nodes the capture added, learns them and takes what they
 * use (their pins, which capture_track then lets go of for the capture), or is lost where the
 * capture failed (graph_lose). A capture broken by an unsafe call beside it ends with
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, which is no failure. */
static void end_now(stream_h *stream) {
  CUgraph made = NULL;
  CUresult result = DRV(cuStreamEndCapture, stream->handle, &made);
  if (result != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) stats_cleanup(result);
  if (result == CUDA_SUCCESS && stream->into) {
    captured_hand(stream->capture_id, graph_pins_of(stream->into));
    stats_cleanup(graph_learn_nodes(stream->into));
  } else if (stream->into) {
    graph_lose(stream->into); /* ended or not: the stream goes next, and the capture with it */
  } else if (made) {
    stats_cleanup(DRV(cuGraphDestroy, made));
  }
}

/* Ends stream's capture where entered (its context pushed, popped here), else leaves it running;
 * the stream leaves the array (capturers) either way. */
static bool end_listed(stream_h *stream, bool entered) {
  if (entered) {
    end_now(stream);
    ctx_leave();
  }
  capture_track(stream, false);
  return entered;
}

bool graph_end_captures(const graph_h *graph) {
  bool ended = true;
  for (uint32_t i = 0; i < capturer_count;) {
    stream_h *stream = capturers[i];
    if (goes_with(stream->into, graph)) /* a context detached: left running, and ended = false */
      ended = end_listed(stream, ctx_enter(stream->ctx)) && ended; /* i names the next one now */
    else
      i++;
  }
  return ended;
}

/* rec is marked destroyed (ctx_enter refuses it), but it is this thread that destroys it, after. */
void captures_end_in(const ctx_rec *rec) {
  for (uint32_t i = 0; i < capturer_count;) {
    stream_h *stream = capturers[i];
    if (stream->ctx == rec)
      end_listed(stream, DRV(cuCtxPushCurrent, rec->handle) == CUDA_SUCCESS);
    else
      i++;
  }
}

void capture_end_before_destroy(stream_h *stream) {
  if (stream->capturing) end_now(stream); /* one that joined another's capture is left to it */
}

/* capture_track, the capture's pins let go where it ends, unless keep_pins: the caller hands them
 * to the graph it made (captured_end). */
static void track(stream_h *stream, bool on, bool keep_pins) {
  if (!on) capturer_forget(stream);
  if (stream->capturing == on) return;
  if (!on && !keep_pins) captured_end(NULL, stream->capture_id, NULL);
  stream->capturing = on;
  atomic_fetch_add(&captures, on ? 1 : -1);
  while (on && atomic_load(&synchronizing)) usleep(100);
}

void capture_track(stream_h *stream, bool on) { track(stream, on, false); }

int captures_under_way(void) { return atomic_load(&captures); }

void synchronize_unless_capturing(void) {
  atomic_store(&synchronizing, true);
  if (atomic_load(&captures) == 0) DRV(cuCtxSynchronize, );
  atomic_store(&synchronizing, false);
}

/* stream, unless a capture of cudadrv's is under way on it already (the driver refuses a second,
 * and the first would then be counted as ended); NULL after throwing. */
static stream_h *idle_stream(napi_env env, napi_value v) {
  stream_h *stream = handle_get(env, v, &STREAM_KIND);
  if (!stream || !stream->capturing) return stream;
  throw_logic(env, "stream.beginCapture(): the stream is capturing already; end that capture "
                   "first (stream.endCapture())");
  return NULL;
}

/* A capture began on stream: its id, which its pins go by (at worst an old one's, where the driver
 * does not say, whose pins are let go already). */
static napi_value capture_begun(stream_h *stream) {
  CUstreamCaptureStatus status;
  DRV(cuStreamGetCaptureInfo, stream->handle, &status, &stream->capture_id, NULL, NULL, NULL);
  return NULL;
}

/* streamBeginCapture(stream, mode): later work on the stream is recorded, not run. */
static napi_value stream_begin_capture(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  stream_h *stream = idle_stream(env, argv[0]);
  uint32_t mode;
  if (!stream || !arg_uint32(env, argv[1], "mode", &mode)) return NULL;
  if (!capturer_reserve()) return throw_oom(env);
  capture_track(stream, true);
  CUresult result = DRV(cuStreamBeginCapture, stream->handle, (CUstreamCaptureMode)mode);
  if (result == CUDA_SUCCESS) {
    capturers[capturer_count++] = stream;
    return capture_begun(stream);
  }
  capture_track(stream, false);
  return throw_cu(env, result, "cuStreamBeginCapture");
}

/* streamBeginCaptureToGraph(stream, graph, deps, mode): later work on the stream is recorded
 * into graph, after the nodes deps names. */
static napi_value stream_begin_capture_to_graph(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  stream_h *stream = idle_stream(env, argv[0]);
  graph_h *graph = stream ? graph_get(env, argv[1]) : NULL;
  uint32_t mode, count;
  CUgraphNode *deps;
  if (!graph || !graph_live(env, graph) || !arg_uint32(env, argv[3], "mode", &mode)) return NULL;
  for (uint32_t i = 0; i < capturer_count; i++)
    if (capturers[i]->into == graph)
      return throw_logic(env, "stream.beginCapture(): another stream is capturing into this graph; "
                              "end that capture first (stream.endCapture())");
  if (!capturer_reserve()) return throw_oom(env);
  if (!arg_nodes(env, argv[2], graph, &deps, &count)) return NULL;
  capture_track(stream, true);
  CUresult result = DRV(cuStreamBeginCaptureToGraph, stream->handle, graph->handle, deps, NULL,
                        count, (CUstreamCaptureMode)mode);
  free(deps);
  if (result == CUDA_SUCCESS) {
    stream->into = graph;
    capturers[capturer_count++] = stream;
    return capture_begun(stream);
  }
  capture_track(stream, false);
  return throw_cu(env, result, "cuStreamBeginCaptureToGraph");
}

/* Whether the driver still has a capture under way on stream (one it refused to end goes on). */
static bool capturing(stream_h *stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  DRV(cuStreamGetCaptureInfo, stream->handle, &status, NULL, NULL, NULL, NULL);
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Ends stream's capture into *handle, its pins let go where that fails, else kept under *id for
 * the caller to hand to the graph or let go (captured_end); false after throwing (a LogicError
 * where the stream is not capturing). A Graph captured into is lost where the capture ended without
 * a graph (graph_lose). */
static bool end_capture(napi_env env, stream_h *stream, CUgraph *handle, cuuint64_t *id) {
  CUstreamCaptureStatus status;
  *id = stream->capture_id;
  CUresult result = DRV(cuStreamGetCaptureInfo, stream->handle, &status, id, NULL, NULL, NULL);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuStreamGetCaptureInfo"), false;
  if (status == CU_STREAM_CAPTURE_STATUS_NONE)
    return throw_logic(env, "stream.endCapture(): the stream is not capturing; call "
                            "stream.beginCapture() first"),
           false;
  result = DRV(cuStreamEndCapture, stream->handle, handle);
  if (result == CUDA_SUCCESS) return track(stream, false, true), true; /* the caller hands pins */
  bool ended = !capturing(stream), lost = ended && stream->into;       /* ended without a graph */
  if (lost) graph_lose(stream->into);
  if (ended) track(stream, false, false);
  if (result != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    return throw_cu(env, result, "cuStreamEndCapture"), false;
  return throw_cu_about(env, result, "cuStreamEndCapture",
                        "a call beside the capture broke it, such as a synchronization of its "
                        "context or a query of its stream%s",
                        lost ? "; the driver freed the Graph it recorded into: build a new Graph"
                             : ""),
         false;
}

/* streamEndCapture(stream, obj): ends the capture; the recorded work becomes a graph in obj. */
static napi_value stream_end_capture(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  stream_h *stream = handle_get(env, argv[0], &STREAM_KIND);
  CUgraph handle;
  cuuint64_t id;
  if (stream && stream->into) /* the graph is its owner's: a second object on it would destroy it */
    return throw_logic(env, "stream.endCapture(): the stream is capturing into a Graph of yours; "
                            "end that capture with the Graph (streamEndCaptureInto)");
  if (!stream || !end_capture(env, stream, &handle, &id)) return NULL;
  graph_wrap(env, argv[1], handle);
  bool failed = true;
  NAPI_UNTHROWN(napi_is_exception_pending(env, &failed));
  captured_end(env, id, failed ? NULL : argv[1]);
  if (!failed) graph_pin_use(env, argv[1], stream->ctx, &CTX_PINS); /* the work runs in it */
  return NULL;
}

/* streamEndCaptureInto(stream, graph): ends a capture into graph, whose table learns the nodes the
 * capture added. */
static napi_value stream_end_capture_into(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  stream_h *stream = handle_get(env, argv[0], &STREAM_KIND);
  /* lost or not (graph_lose), the capture ends */
  graph_h *graph = stream ? handle_get(env, argv[1], &GRAPH_KIND) : NULL;
  CUgraph handle;
  cuuint64_t id;
  if (graph && stream->into != graph) /* checked first: the capture goes on */
    return throw_logic(env, "stream.endCapture(): the stream is not capturing into this graph");
  if (!graph || !end_capture(env, stream, &handle, &id)) return NULL;
  captured_end(env, id, argv[1]);
  /* graph_get: a LogicError where a capture into another body of its family lost it meanwhile */
  if (graph_learn(env, graph) && graph_get(env, argv[1]))
    graph_pin_use(env, argv[1], stream->ctx, &CTX_PINS);
  return NULL;
}

/* streamCaptureInfo(stream, graph or undefined): [status, id, dependencies], the dependencies (the
 * nodes the next captured work will follow) as indices of graph where the capture is into it (and
 * it is not graph_gone), else their count. */
static napi_value stream_capture_info(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  stream_h *stream = handle_get(env, argv[0], &STREAM_KIND);
  graph_h *graph = NULL;
  if (!stream || (!is_undefined(env, argv[1]) && !(graph = handle_get(env, argv[1], &GRAPH_KIND))))
    return NULL;
  if (graph && graph_gone(graph)) graph = NULL; /* a count then */
  CUstreamCaptureStatus status;
  cuuint64_t id = 0;
  CUgraph into = NULL;
  const CUgraphNode *deps = NULL;
  size_t count = 0;
  CU_CALL(env, cuStreamGetCaptureInfo, stream->handle, &status, &id, &into, &deps, &count);
  napi_value result, list;
  NAPI_CALL(env, napi_create_array_with_length(env, 3, &result));
  NAPI_CALL(env, napi_set_element(env, result, 0, make_int(env, status)));
  NAPI_CALL(env, napi_set_element(env, result, 1, make_ptr(env, id)));
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || !graph || into != graph->handle) {
    NAPI_CALL(env, napi_set_element(env, result, 2, make_uint(env, count)));
    return result;
  }
  if (!graph_learn(env, graph)) return NULL; /* the nodes captured so far */
  NAPI_CALL(env, napi_create_array_with_length(env, count, &list));
  for (size_t i = 0; i < count; i++) {
    int64_t index = -1;
    for (uint32_t j = 0; j < graph->count && index < 0; j++)
      if (graph->nodes[j] == deps[i]) index = j;
    NAPI_CALL(env, napi_set_element(env, list, (uint32_t)i, make_int(env, index)));
  }
  NAPI_CALL(env, napi_set_element(env, result, 2, list));
  return result;
}

/* streamIsCapturing(stream): the CUstreamCaptureStatus of the stream (0: not capturing). */
static napi_value stream_is_capturing(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUstream stream;
  if (!arg_stream(env, argv[0], &stream) || !driver_ready(env)) return NULL;
  CUstreamCaptureStatus status;
  CU_CALL(env, cuStreamIsCapturing, stream, &status);
  return make_int(env, status);
}

bool graph_capture_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"streamBeginCapture", stream_begin_capture},
      {"streamBeginCaptureToGraph", stream_begin_capture_to_graph},
      {"streamEndCapture", stream_end_capture},
      {"streamEndCaptureInto", stream_end_capture_into},
      {"streamCaptureInfo", stream_capture_info},
      {"streamIsCapturing", stream_is_capturing},
  };
  return EXPORTS(env, exports, fns);
}
