/* graph_host: host-function nodes, which call a JS function on the main thread each time a launch
 * reaches them. The node's function, which the driver calls on a thread of its own, only posts
 * the call to the main thread: the GPU never waits for JS (the main thread may be waiting for the
 * GPU). The JS function is held by a CUDA user object that the graph owns: the driver copies the
 * reference into each GraphExec and child copy of the graph, and releases the object once no
 * graph, GraphExec or launch in flight can reach the node any more. */
#include <stdlib.h>

#include "graph.h"

typedef struct host_fn {
  wait_channel *channel;
  napi_ref fn;     /* main thread only */
  atomic_int refs; /* the user object's, and one per call posted */
} host_fn;

/* Any thread (env NULL: the instance is gone, and the reference with it). */
static void host_fn_unref(napi_env env, host_fn *h) {
  if (atomic_fetch_sub(&h->refs, 1) != 1) return;
  if (env) NAPI_UNTHROWN(napi_delete_reference(env, h->fn));
  channel_drop(h->channel);
  free(h);
}

/* Main thread: calls the function; what it throws is an uncaught exception, as an event
 * listener's would be. */
static void host_fn_call(napi_env env, void *arg) {
  host_fn *h = arg;
  napi_value fn = NULL, global, ignored;
  if (env && napi_get_reference_value(env, h->fn, &fn) == napi_ok && fn &&
      napi_get_global(env, &global) == napi_ok &&
      napi_call_function(env, global, fn, 0, NULL, &ignored) == napi_pending_exception) {
    napi_value error;
    if (napi_get_and_clear_last_exception(env, &error) == napi_ok)
      NAPI_UNTHROWN(napi_fatal_exception(env, error));
  }
  host_fn_unref(env, h);
}

static void host_fn_drop(napi_env env, void *arg) { host_fn_unref(env, arg); }

/* The driver's thread: a launch reached the node. */
static void CUDA_CB host_fn_reached(void *data) {
  host_fn *h = data;
  atomic_fetch_add(&h->refs, 1);
  channel_post(h->channel, host_fn_call, h);
}

/* Any thread: the driver let go of the user object. */
static void CUDA_CB host_fn_released(void *data) {
  channel_post(((host_fn *)data)->channel, host_fn_drop, data);
}

static CUresult make_host(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                          CUgraphNode *node) {
  CUDA_HOST_NODE_PARAMS params = {.fn = host_fn_reached, .userData = arg};
  return DRV(cuGraphAddHostNode, node, graph, deps, count, &params);
}

/* graphAddHost(graph, deps, fn): a node calling fn at each launch (CUDA 11.3 for user objects). */
static napi_value graph_add_host(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  graph_h *graph = graph_get(env, argv[0]);
  napi_valuetype type;
  if (!graph) return NULL;
  NAPI_CALL(env, napi_typeof(env, argv[2], &type));
  if (type != napi_function) return throw_type(env, "fn must be a function");
  if (!driver_ready(env)) return NULL;
  host_fn *h = calloc(1, sizeof *h);
  if (!h) return throw_oom(env);
  napi_status status = napi_create_reference(env, argv[2], 1, &h->fn);
  if (status != napi_ok) return free(h), napi_fail(env, status);
  h->channel = channel_hold(env);
  atomic_init(&h->refs, 1);
  CUuserObject object;
  CUresult result =
      DRV(cuUserObjectCreate, &object, h, host_fn_released, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
  if (result != CUDA_SUCCESS) {
    host_fn_unref(env, h);
    return throw_cu(env, result, "cuUserObjectCreate");
  }
  /* a body's nodes run in its graph's GraphExecs, which take that graph's references. Where the
   * node is not made after this, the graph keeps the function until it is destroyed: harmless. */
  CUgraph owner = graph->body ? graph->family->top->handle : graph->handle;
  result = DRV(cuGraphRetainUserObject, owner, object, 1, CU_GRAPH_USER_OBJECT_MOVE);
  if (result != CUDA_SUCCESS) {
    DRV(cuUserObjectRelease, object, 1); /* the destructor lets go of h */
    return throw_cu(env, result, "cuGraphRetainUserObject");
  }
  return graph_add_node(env, argv[0], argv[1], make_host, h, "cuGraphAddHostNode", NULL, NULL);
}

bool graph_host_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"graphAddHost", graph_add_host}};
  return EXPORTS(env, exports, fns);
}
