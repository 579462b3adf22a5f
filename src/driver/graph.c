/* graph: CUDA graphs captured from a stream (cuStreamBeginCapture, cuStreamEndCapture), their
 * executable instances (cuGraphInstantiateWithFlags), launches, uploads and updates. */
#include <stdlib.h>

#include "driver.h"

typedef struct graph_h {
  handle_base base;
  CUgraph handle; /* belongs to no context */
} graph_h;

typedef struct graph_exec_h {
  handle_base base;
  CUgraphExec handle;
  ctx_rec *ctx; /* the context it was instantiated in */
} graph_exec_h;

static CUresult destroy_graph(handle_base *base) {
  return DRV(cuGraphDestroy, ((graph_h *)base)->handle);
}

static CUresult destroy_exec(handle_base *base) {
  return DRV(cuGraphExecDestroy, ((graph_exec_h *)base)->handle);
}

static const handle_kind GRAPH_KIND = {
    .tag = {0x6364727667726631ULL, 0x4772617068303031ULL},
    .name = "Graph",
    .freed = "this Graph has been destroyed; capture a new one with stream.beginCapture() and "
             "stream.endCapture()",
    .destroy = destroy_graph /* a graph belongs to no context */};

static const handle_kind GRAPH_EXEC_KIND = {
    .tag = {0x6364727667657831ULL, 0x4772617068457831ULL},
    .name = "GraphExec",
    .freed = "this GraphExec has been destroyed; instantiate its Graph again with "
             "graph.instantiate()",
    .destroy = destroy_exec,
    .ctx_offset = offsetof(graph_exec_h, ctx)};

/* streamBeginCapture(stream, mode): later work on the stream is recorded, not run. */
static napi_value stream_begin_capture(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  stream_h *stream = handle_get(env, argv[0], &STREAM_KIND);
  uint32_t mode;
  if (!stream || !arg_uint32(env, argv[1], "mode", &mode)) return NULL;
  CU_CALL(env, cuStreamBeginCapture, stream->handle, (CUstreamCaptureMode)mode);
  return NULL;
}

/* streamEndCapture(stream, obj): ends the capture; the recorded work becomes a graph in obj. */
static napi_value stream_end_capture(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  stream_h *stream = handle_get(env, argv[0], &STREAM_KIND);
  if (!stream) return NULL;
  CUstreamCaptureStatus status;
  CU_CALL(env, cuStreamIsCapturing, stream->handle, &status);
  if (status == CU_STREAM_CAPTURE_STATUS_NONE)
    return throw_logic(env, "stream.endCapture(): the stream is not capturing; call "
                            "stream.beginCapture() first");
  CUgraph handle;
  CU_CALL(env, cuStreamEndCapture, stream->handle, &handle);
  graph_h *graph = calloc(1, sizeof *graph);
  if (!graph) {
    DRV(cuGraphDestroy, handle);
    return throw_oom(env);
  }
  graph->handle = handle;
  handle_wrap_object(env, argv[1], &graph->base, &GRAPH_KIND);
  return NULL;
}

static napi_value graph_destroy(napi_env env, napi_callback_info info) {
  return handle_destroy_call(env, info, &GRAPH_KIND);
}

/* graphNodeCount(graph): how many nodes the graph holds. */
static napi_value graph_node_count(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  graph_h *graph = handle_get(env, argv[0], &GRAPH_KIND);
  if (!graph) return NULL;
  size_t count = 0;
  CU_CALL(env, cuGraphGetNodes, graph->handle, NULL, &count);
  return make_uint(env, count);
}

/* graphInstantiate(graph, obj): an executable graph in the current context, wrapped in obj. */
static napi_value graph_instantiate(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  graph_h *graph = handle_get(env, argv[0], &GRAPH_KIND);
  if (!graph) return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUgraphExec handle;
  CUresult result = DRV(cuGraphInstantiateWithFlags, &handle, graph->handle, 0);
  graph_exec_h *exec = result == CUDA_SUCCESS ? calloc(1, sizeof *exec) : NULL;
  if (!exec) {
    if (result == CUDA_SUCCESS) DRV(cuGraphExecDestroy, handle);
    ctx_rec_release(ctx);
    return result == CUDA_SUCCESS ? throw_oom(env)
                                  : throw_cu(env, result, "cuGraphInstantiateWithFlags");
  }
  exec->handle = handle;
  exec->ctx = ctx;
  handle_wrap_object(env, argv[1], &exec->base, &GRAPH_EXEC_KIND);
  return NULL;
}

static napi_value graph_exec_destroy(napi_env env, napi_callback_info info) {
  return handle_destroy_call(env, info, &GRAPH_EXEC_KIND);
}

/* Reads the (exec, stream or null) arguments of a launch or an upload; NULL after throwing. */
static graph_exec_h *exec_on_stream(napi_env env, napi_callback_info info, CUstream *stream) {
  size_t argc = 2;
  napi_value argv[2];
  napi_status status = napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (status != napi_ok) {
    napi_fail(env, status);
    return NULL;
  }
  graph_exec_h *exec = handle_get(env, argv[0], &GRAPH_EXEC_KIND);
  return exec && arg_stream(env, argv[1], stream) ? exec : NULL;
}

/* graphExecLaunch(exec, stream or null): enqueues the whole graph; the hot path. */
static napi_value graph_exec_launch(napi_env env, napi_callback_info info) {
  CUstream stream;
  graph_exec_h *exec = exec_on_stream(env, info, &stream);
  if (exec) CU_CALL(env, cuGraphLaunch, exec->handle, stream);
  return NULL;
}

/* graphExecUpload(exec, stream or null): prepares the device for launches ahead of the first. */
static napi_value graph_exec_upload(napi_env env, napi_callback_info info) {
  CUstream stream;
  graph_exec_h *exec = exec_on_stream(env, info, &stream);
  if (exec) CU_CALL(env, cuGraphUpload, exec->handle, stream);
  return NULL;
}

/* graphExecUpdate(exec, graph): 0 once exec runs graph's parameters, else the
 * CUgraphExecUpdateResult saying why the driver refused (lib/ builds the error). */
static napi_value graph_exec_update(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  graph_exec_h *exec = handle_get(env, argv[0], &GRAPH_EXEC_KIND);
  graph_h *graph = exec ? handle_get(env, argv[1], &GRAPH_KIND) : NULL;
  if (!graph) return NULL;
  CUgraphExecUpdateResultInfo result_info = {0};
  CUresult result = DRV(cuGraphExecUpdate, exec->handle, graph->handle, &result_info);
  if (result == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    return make_int(env, result_info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS
                             ? CU_GRAPH_EXEC_UPDATE_ERROR
                             : result_info.result);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphExecUpdate");
  return make_int(env, CU_GRAPH_EXEC_UPDATE_SUCCESS);
}

bool graph_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"streamBeginCapture", stream_begin_capture},
      {"streamEndCapture", stream_end_capture},
      {"graphDestroy", graph_destroy},
      {"graphNodeCount", graph_node_count},
      {"graphInstantiate", graph_instantiate},
      {"graphExecDestroy", graph_exec_destroy},
      {"graphExecLaunch", graph_exec_launch},
      {"graphExecUpload", graph_exec_upload},
      {"graphExecUpdate", graph_exec_update},
  };
  return EXPORTS(env, exports, fns);
}
