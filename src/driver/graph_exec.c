/* graph_exec: executable graphs (cuGraphInstantiateWithParams), their launches, uploads and
 * updates, and their nodes turned off and on. A GraphExec pins what its graph's nodes use, as the
 * graph does, since it runs copies of them. */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"

/* Whether exec has nodes of another context destroyed since: the driver crashes launching it, and
 * hangs destroying it (driver 580). Scans only an exec of several contexts: one of its own context
 * alone goes with it. */
static bool nodes_gone(const graph_exec_h *exec) { return exec->foreign && pins_gone(&exec->pins); }

/* Whether exec was launched or uploaded in another context destroyed since: driver 580 keeps state
 * of that context with the exec, and crashes in cuGraphExecDestroy of one holding a user object (a
 * host node's function; an H200). A green context outlives its detach() while the exec holds it. */
static bool ran_in_gone(const graph_exec_h *exec) {
  for (uint32_t i = 0; i < exec->ran_in_count; i++)
    if (ctx_rec_gone(exec->ran_in[i])) return true;
  return false;
}

static bool foreign_gone(const graph_exec_h *exec) { return nodes_gone(exec) || ran_in_gone(exec); }

/* An exec foreign_gone() is left to the process. */
static CUresult destroy_exec(handle_base *base) {
  graph_exec_h *exec = (graph_exec_h *)base;
  if (foreign_gone(exec)) return CUDA_SUCCESS;
  return DRV(cuGraphExecDestroy, exec->handle);
}

/* Holds ctx among the contexts exec ran in, unless it is exec's own or held already; false after
 * throwing (out of memory). */
static bool exec_runs_in(napi_env env, graph_exec_h *exec, ctx_rec *ctx) {
  if (ctx == exec->ctx) return true;
  for (uint32_t i = 0; i < exec->ran_in_count; i++)
    if (exec->ran_in[i] == ctx) return true;
  ctx_rec **grown = realloc(exec->ran_in, (exec->ran_in_count + 1) * sizeof *grown);
  if (!grown) return throw_oom(env), false;
  exec->ran_in = grown;
  exec->ran_in[exec->ran_in_count++] = ctx_rec_retain(ctx);
  return true;
}

/* exec_runs_in() for work on stream, or on the default stream of the current context (NULL); the
 * hot path costs a comparison, and a cuCtxGetCurrent on the default stream. */
static bool exec_runs_on(napi_env env, graph_exec_h *exec, const stream_h *stream) {
  if (stream) return stream->ctx == exec->ctx || exec_runs_in(env, exec, stream->ctx);
  CUcontext current = NULL;
  if (DRV(cuCtxGetCurrent, &current) != CUDA_SUCCESS || !current || current == exec->ctx->handle)
    return true; /* no context: the launch fails with the driver's error */
  ctx_rec *ctx = ctx_rec_current(env);
  bool held = ctx && exec_runs_in(env, exec, ctx);
  ctx_rec_release(ctx);
  return held;
}

/* launch() and setStream(stream), bound in C to a GraphExec and to the stream its launches go to,
 * as a kernel's launcher is (kernel/launch.c): a launch is one call into C reading no JS value.
 * The exec and its launcher forget each other when either goes first. */
typedef struct exec_launcher {
  graph_exec_h *exec;  /* NULL once the exec is released (destroyed or collected) */
  stream_h *stream;    /* where launches go; NULL: the default stream */
  napi_ref stream_ref; /* its Stream object, kept alive while bound */
  int refs;            /* the functions bound to it */
} exec_launcher;

static void dispose_exec(handle_base *base) {
  graph_exec_h *exec = (graph_exec_h *)base;
  pins_release(&exec->pins);
  for (uint32_t i = 0; i < exec->ran_in_count; i++) ctx_rec_release(exec->ran_in[i]);
  free(exec->ran_in);
  exec->ran_in = NULL;
  exec->ran_in_count = 0;
  if (exec->launcher) exec->launcher->exec = NULL;
  exec->launcher = NULL;
}

static const char EXEC_NODES_GONE[] =
    "this GraphExec has nodes made in a context that has been destroyed (context.detach()), which "
    "the driver would read; instantiate a graph built again";
static const char EXEC_RAN_IN_GONE[] =
    "this GraphExec was launched or uploaded in another context that has been destroyed since "
    "(context.detach()), whose state the driver would read; instantiate its graph again";

/* Throws the LogicError saying why exec is foreign_gone(); NULL. */
static napi_value throw_exec_gone(napi_env env, const graph_exec_h *exec) {
  return throw_logic(env, nodes_gone(exec) ? EXEC_NODES_GONE : EXEC_RAN_IN_GONE);
}

static const handle_kind GRAPH_EXEC_KIND = {
    .tag = {0x6364727667657831ULL, 0x4772617068457831ULL},
    .name = "GraphExec",
    .freed = "this GraphExec has been destroyed; instantiate its Graph again with "
             "graph.instantiate()",
    .destroy = destroy_exec,
    .ctx_offset = offsetof(graph_exec_h, ctx),
    .dispose = dispose_exec};

/* The GraphExec object v, or NULL after throwing: a TypeError for another object, a LogicError once
 * destroyed, once its context is, or once foreign_gone(). */
static graph_exec_h *exec_get(napi_env env, napi_value v) {
  graph_exec_h *exec = handle_get(env, v, &GRAPH_EXEC_KIND);
  if (!exec || !foreign_gone(exec)) return exec;
  throw_exec_gone(env, exec);
  return NULL;
}

/* Why instantiation failed, as CUgraphInstantiateResult says. */
static const char *instantiate_failure(CUgraphInstantiateResult result) {
  switch (result) {
  case CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE:
    return "the graph's structure is invalid (a cycle, or a node the instantiation cannot take)";
  case CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED:
    return "a node's operation is not supported with these flags";
  case CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED:
    return "a device launch cannot span several contexts";
  case CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED:
    return "a conditional handle is not used by any conditional node";
  default: return NULL;
  }
}

/* graphInstantiate(graph, obj, flags, uploadStream): an executable graph in the current context,
 * wrapped in obj. flags 0 and no stream: cuGraphInstantiateWithFlags (CUDA 11.4 on); else
 * cuGraphInstantiateWithParams (12.0 on), whose result says why it failed. */
static napi_value graph_instantiate(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  graph_h *graph = graph_get(env, argv[0]);
  uint32_t flags;
  stream_h *stream = NULL;
  if (!graph || !graph_live(env, graph) ||
      !graph_not_captured(env, graph, "graph.instantiate()", "this graph") ||
      !arg_uint32(env, argv[2], "flags", &flags) || !arg_stream_handle(env, argv[3], &stream))
    return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  graph_exec_h *exec = calloc(1, sizeof *exec);
  if (!exec || !pins_append(&exec->pins, graph_pins_of(graph))) {
    free(exec);
    ctx_rec_release(ctx);
    return throw_oom(env);
  }
  exec->ctx = ctx;
  if (stream && !exec_runs_on(env, exec, stream)) { /* uploaded there */
    dispose_exec(&exec->base);
    free(exec);
    ctx_rec_release(ctx);
    return NULL;
  }
  CUgraphExec handle;
  CUresult result;
  const char *api = "cuGraphInstantiateWithFlags";
  CUDA_GRAPH_INSTANTIATE_PARAMS params = {.flags = flags,
                                          .hUploadStream = stream ? stream->handle : NULL};
  if (!flags && !stream) {
    result = DRV(cuGraphInstantiateWithFlags, &handle, graph->handle, 0);
  } else {
    api = "cuGraphInstantiateWithParams";
    result = DRV(cuGraphInstantiateWithParams, &handle, graph->handle, &params);
  }
  if (result != CUDA_SUCCESS) {
    dispose_exec(&exec->base);
    free(exec);
    ctx_rec_release(ctx);
    const char *why = instantiate_failure(params.result_out);
    if (!why) return throw_cu(env, result, api);
    char message[256];
    snprintf(message, sizeof message, "graph.instantiate(): %s", why);
    return throw_logic(env, message);
  }
  exec->handle = handle;
  exec->foreign = pins_foreign(&exec->pins, ctx);
  exec->graph_id = graph->id;
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
  graph_exec_h *exec = exec_get(env, argv[0]);
  stream_h *s;
  return exec && arg_stream_and_handle(env, argv[1], stream, &s) && exec_runs_on(env, exec, s)
             ? exec
             : NULL;
}

/* graphExecLaunch(exec, stream or null): enqueues the whole graph; the hot path. */
static napi_value graph_exec_launch(napi_env env, napi_callback_info info) {
  CUstream stream;
  graph_exec_h *exec = exec_on_stream(env, info, &stream);
  if (exec) CU_CALL(env, cuGraphLaunch, exec->handle, stream);
  return NULL;
}

static void exec_launcher_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  exec_launcher *l = data;
  if (--l->refs > 0) return;
  if (l->exec) l->exec->launcher = NULL;
  if (l->stream_ref) NAPI_UNTHROWN(napi_delete_reference(env, l->stream_ref));
  free(l);
}

/* launch(), bound to a launcher: the whole graph on the bound stream. */
static napi_value exec_launcher_launch(napi_env env, napi_callback_info info) {
  exec_launcher *l;
  NAPI_CALL(env, napi_get_cb_info(env, info, NULL, NULL, NULL, (void **)&l));
  if (!l->exec) return throw_logic(env, GRAPH_EXEC_KIND.freed);
  if (!handle_alive(env, &l->exec->base)) return NULL;
  if (foreign_gone(l->exec)) return throw_exec_gone(env, l->exec);
  CUstream stream = NULL;
  if (l->stream) {
    if (!handle_alive(env, &l->stream->base)) return NULL;
    stream = l->stream->handle;
  }
  if (!exec_runs_on(env, l->exec, l->stream)) return NULL;
  CU_CALL(env, cuGraphLaunch, l->exec->handle, stream);
  return NULL;
}

/* setStream(stream or null), bound to a launcher: where the next launches go. */
static napi_value exec_launcher_set_stream(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  exec_launcher *l;
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, (void **)&l));
  handle_bind(env, arg, &STREAM_KIND, (void **)&l->stream, &l->stream_ref);
  return NULL;
}

/* graphExecLauncher(exec): [launch, setStream] bound to exec, launching on the default stream
 * until setStream says otherwise; one launcher an exec (a LogicError for a second). */
static napi_value graph_exec_launcher(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  graph_exec_h *exec = exec_get(env, argv[0]);
  if (!exec) return NULL;
  if (exec->launcher) return throw_logic(env, "this GraphExec has its launcher already");
  exec_launcher *l = calloc(1, sizeof *l);
  if (!l) return throw_oom(env);
  l->exec = exec;
  exec->launcher = l;
  l->refs = 1; /* ours until the functions hold it */
  static const export_fn bound[] = {{"launch", exec_launcher_launch},
                                    {"setStream", exec_launcher_set_stream}};
  napi_value functions[2], result;
  napi_status status =
      bind_functions(env, bound, 2, l, &l->refs, exec_launcher_finalize, functions);
  exec_launcher_finalize(env, l, NULL); /* lets go of ours: freed here where no function holds it */
  if (status != napi_ok) return napi_fail(env, status);
  NAPI_CALL(env, napi_create_array_with_length(env, 2, &result));
  NAPI_CALL(env, napi_set_element(env, result, 0, functions[0]));
  NAPI_CALL(env, napi_set_element(env, result, 1, functions[1]));
  return result;
}

/* graphExecUpload(exec, stream or null): prepares the device for launches ahead of the first. */
static napi_value graph_exec_upload(napi_env env, napi_callback_info info) {
  CUstream stream;
  graph_exec_h *exec = exec_on_stream(env, info, &stream);
  if (exec) CU_CALL(env, cuGraphUpload, exec->handle, stream);
  return NULL;
}

/* graphExecHandle(exec): the CUgraphExec, for device code to launch (cudaGraphLaunch). */
static napi_value graph_exec_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  graph_exec_h *exec = exec_get(env, argv[0]);
  return exec ? make_ptr(env, (CUdeviceptr)(uintptr_t)exec->handle) : NULL;
}

/* graphExecUpdate(exec, graph): 0 once exec runs graph's parameters, else the
 * CUgraphExecUpdateResult saying why the driver refused (lib/ builds the error). */
static napi_value graph_exec_update(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  graph_exec_h *exec = exec_get(env, argv[0]);
  graph_h *graph = exec ? graph_get(env, argv[1]) : NULL;
  if (!graph || !graph_live(env, graph) ||
      !graph_not_captured(env, graph, "exec.update(graph)", "graph"))
    return NULL;
  graph_pins pins = {0};
  if (!pins_append(&pins, graph_pins_of(graph))) return throw_oom(env);
  CUgraphExecUpdateResultInfo result_info = {0};
  CUresult result = DRV(cuGraphExecUpdate, exec->handle, graph->handle, &result_info);
  if (result != CUDA_SUCCESS) pins_release(&pins);
  if (result == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    return make_int(env, result_info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS
                             ? CU_GRAPH_EXEC_UPDATE_ERROR
                             : result_info.result);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphExecUpdate");
  /* it runs graph's nodes now: what they use stays loaded, as what the old ones used did */
  graph_pins old = exec->pins;
  exec->pins = pins;
  exec->foreign = pins_foreign(&pins, exec->ctx);
  pins_release(&old);
  return make_int(env, CU_GRAPH_EXEC_UPDATE_SUCCESS);
}

/* The (exec, graph, node) arguments of a call on one node of an executable graph: node must be a
 * node of the graph exec was instantiated from. NULL after throwing. */
static graph_exec_h *exec_node(napi_env env, const napi_value *argv, CUgraphNode *node) {
  graph_exec_h *exec = exec_get(env, argv[0]);
  graph_h *graph = exec ? graph_get(env, argv[1]) : NULL;
  if (!graph || !arg_node(env, argv[2], graph, node)) return NULL;
  if (graph->id != exec->graph_id) {
    throw_logic(env, "this node is not of the Graph this GraphExec was instantiated from");
    return NULL;
  }
  return exec;
}

bool graph_exec_node(napi_env env, const napi_value *argv, CUgraphExec *exec, CUgraphNode *node) {
  graph_exec_h *h = exec_node(env, argv, node);
  if (h) *exec = h->handle;
  return h != NULL;
}

bool graph_node_target(napi_env env, const napi_value *argv, CUgraphExec *exec, CUgraphNode *node) {
  *exec = NULL;
  napi_valuetype type;
  NAPI_CALL_BOOL(env, napi_typeof(env, argv[0], &type));
  if (type == napi_null) return graph_node_arg(env, argv[1], argv[2], node);
  return graph_exec_node(env, argv, exec, node);
}

bool graph_target_pin(napi_env env, const napi_value *argv, void *obj, const graph_pin_ops *ops) {
  napi_valuetype type;
  NAPI_CALL_BOOL(env, napi_typeof(env, argv[0], &type));
  if (type == napi_null) return graph_pin_use(env, argv[1], obj, ops);
  graph_exec_h *exec = exec_get(env, argv[0]);
  return exec && pins_add(env, &exec->pins, obj, ops);
}

/* graphExecSetEnabled(exec, graph, node, enabled): turns a kernel, memset or copy node of exec
 * off (it does nothing at launches) or on again. */
static napi_value graph_exec_set_enabled(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  CUgraphNode node;
  bool enabled;
  graph_exec_h *exec = exec_node(env, argv, &node);
  if (!exec || !arg_bool(env, argv[3], &enabled)) return NULL;
  CU_CALL(env, cuGraphNodeSetEnabled, exec->handle, node, enabled);
  return NULL;
}

/* graphExecGetEnabled(exec, graph, node): whether the node runs at exec's launches. */
static napi_value graph_exec_get_enabled(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  CUgraphNode node;
  unsigned int enabled;
  graph_exec_h *exec = exec_node(env, argv, &node);
  if (!exec) return NULL;
  CU_CALL(env, cuGraphNodeGetEnabled, exec->handle, node, &enabled);
  return make_bool(env, enabled != 0);
}

bool graph_exec_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"graphInstantiate", graph_instantiate},
      {"graphExecDestroy", graph_exec_destroy},
      {"graphExecLaunch", graph_exec_launch},
      {"graphExecLauncher", graph_exec_launcher},
      {"graphExecUpload", graph_exec_upload},
      {"graphExecHandle", graph_exec_handle},
      {"graphExecUpdate", graph_exec_update},
      {"graphExecSetEnabled", graph_exec_set_enabled},
      {"graphExecGetEnabled", graph_exec_get_enabled},
  };
  return EXPORTS(env, exports, fns);
}
