/* graph_nodes: nodes of a graph that need only the driver: empty nodes (joins), memsets and child
 * graphs (copied into the node). Kernel nodes are kernel/'s (graph_kernel.c), which packs their
 * arguments as for a launch; copy nodes memory/'s (graph_copy.c), which pins host memory. Like the
 * copies and memsets of memory/, device addresses are lib/'s to check against the allocations they
 * name: a wrong one is the driver's error, in device memory, never a host write. */
#include <string.h>

#include "graph.h"

/* graphAddEmpty(graph, deps) */
static CUresult make_empty(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                           CUgraphNode *node) {
  (void)arg;
  return DRV(cuGraphAddEmptyNode, node, graph, deps, count);
}

static napi_value graph_add_empty(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  return graph_add_node(env, argv[0], argv[1], make_empty, NULL, "cuGraphAddEmptyNode", NULL, NULL);
}

/* A memset node runs in the context current when it is made. */
typedef struct in_context {
  CUcontext ctx;
  CUDA_MEMSET_NODE_PARAMS memset;
} in_context;

static CUresult make_memset(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                            CUgraphNode *node) {
  in_context *p = arg;
  return DRV(cuGraphAddMemsetNode, node, graph, deps, count, &p->memset, p->ctx);
}

/* The current context's handle; false after throwing. */
static bool current(napi_env env, CUcontext *ctx) {
  ctx_rec *rec = ctx_rec_current(env);
  if (!rec) return false;
  *ctx = rec->handle;
  ctx_rec_release(rec);
  return true;
}

/* The memset of the arguments (dest, pitch, value, elementSize, width, height) at argv: height rows
 * of width elements of elementSize bytes (1, 2 or 4), pitch bytes apart, set to value; in the
 * current context. false after throwing. */
static bool read_memset(napi_env env, const napi_value *argv, in_context *p) {
  CUDA_MEMSET_NODE_PARAMS *m = &p->memset;
  uint32_t element;
  size_t width, height;
  if (!arg_ptr(env, argv[0], "dest", &m->dst) || !arg_size(env, argv[1], "pitch", &m->pitch) ||
      !arg_uint32(env, argv[2], "value", &m->value) ||
      !arg_uint32(env, argv[3], "elementSize", &element) ||
      !arg_size(env, argv[4], "width", &width) || !arg_size(env, argv[5], "height", &height))
    return false;
  if (element != 1 && element != 2 && element != 4)
    return throw_range(env, "elementSize must be 1, 2 or 4"), false;
  if (!width || !height) return throw_range(env, "a memset node sets at least one element"), false;
  m->elementSize = element;
  m->width = width;
  m->height = height;
  return driver_ready(env) && current(env, &p->ctx);
}

/* graphAddMemset(graph, deps, dest, pitch, value, elementSize, width, height). */
static napi_value graph_add_memset(napi_env env, napi_callback_info info) {
  ARGS(env, info, 8);
  in_context p = {0};
  if (!read_memset(env, argv + 2, &p)) return NULL;
  napi_value index =
      graph_add_node(env, argv[0], argv[1], make_memset, &p, "cuGraphAddMemsetNode", NULL, NULL);
  return index && graph_pin_current(env, argv[0]) ? index : NULL;
}

/* graphSetMemset(exec or null, graph, node, dest, pitch, value, elementSize, width, height): the
 * memset node sets that from now on, in exec or (null) in graph. */
static napi_value graph_set_memset(napi_env env, napi_callback_info info) {
  ARGS(env, info, 9);
  in_context p = {0};
  CUgraphExec exec;
  CUgraphNode node;
  if (!graph_node_target(env, argv, &exec, &node) || !read_memset(env, argv + 3, &p)) return NULL;
  if (exec)
    CU_CALL(env, cuGraphExecMemsetNodeSetParams, exec, node, &p.memset, p.ctx);
  else
    CU_CALL(env, cuGraphMemsetNodeSetParams, node, &p.memset);
  return NULL;
}

static CUresult make_child(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                           CUgraphNode *node) {
  return DRV(cuGraphAddChildGraphNode, node, graph, deps, count, *(CUgraph *)arg);
}

/* graphAddChild(graph, deps, child): a node that runs a copy of child (made now). */
static napi_value graph_add_child(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  graph_h *child = graph_get(env, argv[2]);
  if (!child || !graph_not_captured(env, child, "graph.addChildGraph(child)", "child")) return NULL;
  graph_h *graph = graph_get(env, argv[0]);
  if (!graph) return NULL;
  if (child->handle == graph->handle) /* the driver crashes on it (driver 580) */
    return throw_logic(env, "graph.addChildGraph(child): child is this graph, which cannot hold "
                            "itself; build the child as another Graph");
  /* the copy's kernels keep their modules loaded as the child's do */
  graph_pins *pins = graph_pins_of(graph);
  uint32_t held = pins->count;
  if (!pins_append(pins, graph_pins_of(child))) return throw_oom(env);
  napi_value index = graph_add_node(env, argv[0], argv[1], make_child, &child->handle,
                                    "cuGraphAddChildGraphNode", NULL, NULL);
  if (!index) pins_truncate(pins, held); /* refused: no copy holds them */
  return index;
}

static CUresult make_event_record(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                                  CUgraphNode *node) {
  return DRV(cuGraphAddEventRecordNode, node, graph, deps, count, ((event_h *)arg)->handle);
}

static CUresult make_event_wait(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                                CUgraphNode *node) {
  return DRV(cuGraphAddEventWaitNode, node, graph, deps, count, ((event_h *)arg)->handle);
}

/* graphAddEvent(graph, deps, event, wait): a node that records event (wait false), or that the
 * nodes after it wait on (wait true). The event's CUevent lives as long as the graph or a GraphExec
 * of it, whatever becomes of the Event. */
static napi_value graph_add_event(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  event_h *event = handle_get(env, argv[2], &EVENT_KIND);
  bool wait;
  if (!event || !arg_bool(env, argv[3], &wait)) return NULL;
  node_use *pin = event_use_of(event);
  if (!pin) return throw_oom(env);
  return graph_add_node(env, argv[0], argv[1], wait ? make_event_wait : make_event_record, event,
                        wait ? "cuGraphAddEventWaitNode" : "cuGraphAddEventRecordNode", pin,
                        &USE_PINS);
}

/* graphConditionalHandle(graph, defaultValue, flags): a handle (bigint) for conditional nodes of
 * graph, in the current context; flags CU_GRAPH_COND_ASSIGN_DEFAULT: defaultValue is set at each
 * launch. */
static napi_value graph_conditional_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  graph_h *graph = graph_get(env, argv[0]);
  uint32_t value, flags;
  CUcontext ctx;
  if (!graph || !arg_uint32(env, argv[1], "defaultValue", &value) ||
      !arg_uint32(env, argv[2], "flags", &flags) || !current(env, &ctx))
    return NULL;
  CUgraphConditionalHandle handle;
  CU_CALL(env, cuGraphConditionalHandleCreate, &handle, graph->handle, ctx, value, flags);
  return make_ptr(env, handle);
}

enum { MOST_BODIES = 256 }; /* a SWITCH's cases */

static CUresult make_conditional(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                                 CUgraphNode *node) {
  return DRV(cuGraphAddNode, node, graph, deps, NULL, count, arg);
}

/* graphAddConditional(graph, deps, handle, type, bodies): a conditional node (CUgraphConditional-
 * NodeType type) of handle, its bodies' graphs wrapped in the objects of the array bodies (1 for
 * WHILE, 1 or 2 for IF, up to 256 for SWITCH). */
static napi_value graph_add_conditional(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  /* the body objects first: reading an Array's elements may run JS (a getter), which must find
   * nothing checked yet */
  uint32_t size;
  bool is_array = false;
  napi_value objects[MOST_BODIES];
  NAPI_CALL(env, napi_is_array(env, argv[4], &is_array));
  if (!is_array) return throw_type(env, "bodies must be an array of objects");
  NAPI_CALL(env, napi_get_array_length(env, argv[4], &size));
  if (!size || size > MOST_BODIES)
    return throw_range(env, "a conditional node has 1 to 256 bodies");
  for (uint32_t i = 0; i < size; i++)
    NAPI_CALL(env, napi_get_element(env, argv[4], i, &objects[i]));
  graph_h *graph = graph_get(env, argv[0]);
  CUdeviceptr handle;
  uint32_t type;
  if (!graph || !arg_ptr(env, argv[2], "handle", &handle) ||
      !arg_uint32(env, argv[3], "type", &type))
    return NULL;
  graph_family *family = graph_family_of(graph);
  if (!family) return throw_oom(env);
  /* the driver points phGraph_out at an array of its own, filled with the bodies */
  CUgraphNodeParams params = {.type = CU_GRAPH_NODE_TYPE_CONDITIONAL};
  params.conditional = (CUDA_CONDITIONAL_NODE_PARAMS){
      .handle = handle, .type = (CUgraphConditionalNodeType)type, .size = size};
  if (!current(env, &params.conditional.ctx)) return NULL;
  napi_value index = graph_add_node(env, argv[0], argv[1], make_conditional, &params,
                                    "cuGraphAddNode", NULL, NULL);
  if (index && !params.conditional.phGraph_out)
    return throw_runtime(env, CUDA_ERROR_UNKNOWN, "cuGraphAddNode",
                         "cuGraphAddNode made a conditional node without bodies");
  for (uint32_t i = 0; index && i < size; i++)
    if (!graph_wrap_body(env, objects[i], params.conditional.phGraph_out[i], family)) index = NULL;
  return index && graph_pin_current(env, argv[0]) ? index : NULL;
}

bool graph_nodes_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"graphAddEmpty", graph_add_empty},
      {"graphAddMemset", graph_add_memset},
      {"graphSetMemset", graph_set_memset},
      {"graphAddChild", graph_add_child},
      {"graphAddEvent", graph_add_event},
      {"graphConditionalHandle", graph_conditional_handle},
      {"graphAddConditional", graph_add_conditional},
  };
  return EXPORTS(env, exports, fns);
}
