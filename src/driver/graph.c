/* graph: CUDA graphs, made empty (cuGraphCreate) and built node by node, or captured from a stream
 * (cuStreamBeginCapture, cuStreamEndCapture); the table of their nodes, which lib/ names by index;
 * their edges and DOT description; and the pins that keep what their nodes use loaded. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph.h"

bool pins_append(graph_pins *to, const graph_pins *from) {
  /* to == from: held already (a body holds its top graph's pins) */
  if (!from->count || to == from) return true;
  if (to->count + from->count > to->room) {
    uint32_t room = to->count + from->count;
    graph_pin *grown = realloc(to->at, room * sizeof *grown);
    if (!grown) return false;
    to->at = grown;
    to->room = room;
  }
  for (uint32_t i = 0; i < from->count; i++) {
    to->at[to->count] = from->at[i];
    to->at[to->count++].ops->retain(from->at[i].obj);
  }
  return true;
}

void pins_truncate(graph_pins *pins, uint32_t count) {
  pins->last_context = NULL;
  while (pins->count > count) {
    graph_pin *pin = &pins->at[--pins->count];
    pin->ops->release(pin->obj);
  }
}

void pins_release(graph_pins *pins) {
  for (uint32_t i = 0; i < pins->count; i++) pins->at[i].ops->release(pins->at[i].obj);
  free(pins->at);
  *pins = (graph_pins){0};
}

/* destroy() refuses a graph captured into; a collected one has its captures ended first, and is
 * left to the driver (a leak, not a crash) where one could not be. */
static CUresult destroy_graph(handle_base *base) {
  graph_h *graph = (graph_h *)base;
  bool ended = graph_end_captures(graph); /* which may lose it */
  return graph->body || !ended || graph->lost ? CUDA_SUCCESS : DRV(cuGraphDestroy, graph->handle);
}

static void dispose_graph(handle_base *base) {
  graph_h *graph = (graph_h *)base;
  free(graph->nodes);
  graph->nodes = NULL;
  graph->count = graph->room = 0;
  pins_release(&graph->pins);
  graph_family *family = graph->family;
  graph->family = NULL;
  if (family && !graph->body) family->alive = false; /* its bodies went with it */
  if (family && --family->refs == 0) free(family);
}

graph_pins *graph_pins_of(graph_h *graph) {
  return graph->body ? &graph->family->top->pins : &graph->pins;
}

graph_family *graph_family_of(graph_h *graph) {
  if (!graph->family && (graph->family = malloc(sizeof *graph->family)))
    *graph->family = (graph_family){.refs = 1, .alive = true, .top = graph};
  return graph->family;
}

void graph_lose(graph_h *graph) {
  graph_h *top = graph->body ? graph->family->top : graph; /* alive: a capture was into it */
  top->lost = true;
  if (top->family) top->family->lost = true;
}

static bool lost(const graph_h *graph) {
  return graph->lost || (graph->family && graph->family->lost);
}

bool graph_gone(const graph_h *graph) {
  return lost(graph) || (graph->family && !graph->family->alive);
}

graph_h *graph_get(napi_env env, napi_value v) {
  graph_h *graph = handle_get(env, v, &GRAPH_KIND);
  if (!graph || !graph_gone(graph)) return graph;
  throw_logic(env, lost(graph) ? "a capture into this Graph (or into a body of its conditional "
                                 "nodes) ended without a graph, and the driver freed the graph "
                                 "then; build a new Graph"
                               : "this Graph is a body of a conditional node of a Graph that has "
                                 "been destroyed; build the conditional node again");
  return NULL;
}

const handle_kind GRAPH_KIND = {
    .tag = {0x6364727667726631ULL, 0x4772617068303031ULL},
    .name = "Graph",
    .freed = "this Graph has been destroyed; make a new one (new Graph(), or a stream capture)",
    .destroy = destroy_graph, /* a graph belongs to no context */
    .dispose = dispose_graph};

/* Room for one more node; false after throwing. */
static bool node_room(napi_env env, graph_h *graph) {
  if (graph->count < graph->room) return true;
  uint32_t room = graph->room ? 2 * graph->room : 16;
  CUgraphNode *grown = room > graph->room ? realloc(graph->nodes, room * sizeof *grown) : NULL;
  if (!grown) return throw_oom(env), false;
  graph->nodes = grown;
  graph->room = room;
  return true;
}

uint64_t graph_next_id(void) {
  static atomic_uint_fast64_t ids;
  return atomic_fetch_add(&ids, 1) + 1;
}

bool graph_wrap_body(napi_env env, napi_value obj, CUgraph body, graph_family *family) {
  graph_h *graph = calloc(1, sizeof *graph);
  if (!graph) return throw_oom(env), false;
  graph->handle = body;
  graph->body = true;
  graph->family = family;
  family->refs++;
  graph->id = graph_next_id();
  return handle_wrap_object(env, obj, &graph->base, &GRAPH_KIND);
}

napi_value graph_wrap(napi_env env, napi_value obj, CUgraph handle) {
  graph_h *graph = calloc(1, sizeof *graph);
  size_t count = 0;
  CUresult result = graph ? DRV(cuGraphGetNodes, handle, NULL, &count) : CUDA_SUCCESS;
  if (graph && result == CUDA_SUCCESS && count) {
    graph->nodes = count <= UINT32_MAX ? malloc(count * sizeof *graph->nodes) : NULL;
    if (graph->nodes) result = DRV(cuGraphGetNodes, handle, graph->nodes, &count);
    graph->count = graph->room = (uint32_t)count;
  }
  if (!graph || (count && !graph->nodes) || result != CUDA_SUCCESS) {
    DRV(cuGraphDestroy, handle);
    if (graph) free(graph->nodes);
    free(graph);
    return result != CUDA_SUCCESS ? throw_cu(env, result, "cuGraphGetNodes") : throw_oom(env);
  }
  graph->handle = handle;
  graph->id = graph_next_id();
  handle_wrap_object(env, obj, &graph->base, &GRAPH_KIND);
  return NULL;
}

/* graphCreate(obj): an empty graph in obj. */
static napi_value graph_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  if (!driver_ready(env)) return NULL;
  CUgraph handle;
  CU_CALL(env, cuGraphCreate, &handle, 0);
  return graph_wrap(env, argv[0], handle);
}

static napi_value graph_destroy(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  graph_h *graph = handle_get_any(env, argv[0], &GRAPH_KIND);
  if (!graph || graph->base.freed) return NULL;
  if (!graph_not_captured(env, graph, "graph.destroy()", "this graph")) return NULL;
  handle_release(&graph->base);
  return NULL;
}

/* graphNodeCount(graph): how many nodes the graph holds. */
static napi_value graph_node_count(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  graph_h *graph = graph_get(env, argv[0]);
  return graph ? make_uint(env, graph->count) : NULL;
}

bool arg_node(napi_env env, napi_value v, const graph_h *graph, CUgraphNode *node) {
  uint32_t index;
  if (!arg_uint32(env, v, "node", &index)) return false;
  if (index >= graph->count) return throw_range(env, "no such node in this graph"), false;
  *node = graph->nodes[index];
  return true;
}

bool graph_node_arg(napi_env env, napi_value graph_value, napi_value index, CUgraphNode *node) {
  graph_h *graph = graph_get(env, graph_value);
  return graph && arg_node(env, index, graph, node);
}

bool arg_nodes(napi_env env, napi_value v, const graph_h *graph, CUgraphNode **nodes,
               uint32_t *count) {
  /* a Uint32Array, whose reading runs no JS: a getter of an Array's element could destroy the
   * graph, or fill its node table, between this check and the use of what it checked */
  bool typed = false;
  napi_typedarray_type type = napi_int8_array;
  size_t length = 0;
  void *data = NULL;
  NAPI_CALL_BOOL(env, napi_is_typedarray(env, v, &typed));
  if (typed)
    NAPI_CALL_BOOL(env, napi_get_typedarray_info(env, v, &type, &length, &data, NULL, NULL));
  if (!typed || type != napi_uint32_array)
    return throw_type(env, "dependencies must be a Uint32Array of node indices"), false;
  if (length > graph->count)
    return throw_range(env, "more dependencies than the graph has nodes"), false;
  *count = (uint32_t)length;
  *nodes = length ? malloc(length * sizeof **nodes) : NULL;
  if (length && !*nodes) return throw_oom(env), false;
  const uint32_t *indices = data;
  for (uint32_t i = 0; i < length; i++) {
    if (indices[i] >= graph->count) {
      free(*nodes);
      return throw_range(env, "no such node in this graph"), false;
    }
    (*nodes)[i] = graph->nodes[indices[i]];
  }
  return true;
}

/* Room for extra more pins; false after throwing. */
static bool pin_room(napi_env env, graph_pins *pins, uint32_t extra) {
  if (extra <= pins->room - pins->count) return true;
  uint32_t room = pins->room ? 2 * pins->room : 4;
  while (room - pins->count < extra) room *= 2;
  graph_pin *grown = realloc(pins->at, room * sizeof *grown);
  if (!grown) return throw_oom(env), false;
  pins->at = grown;
  pins->room = room;
  return true;
}

static ctx_rec *ctx_pin_context(void *obj) { return obj; }
static void ctx_pin_retain(void *obj) { ctx_rec_retain(obj); }
static void ctx_pin_release(void *obj) { ctx_rec_release(obj); }
const graph_pin_ops CTX_PINS = {ctx_pin_retain, ctx_pin_release, ctx_pin_context};

static void use_release(void *obj) {
  node_use *use = obj;
  if (--use->refs > 0) return;
  if (ctx_enter(use->ctx)) { /* else it went with its context */
    stats_cleanup(use->destroy(use->object));
    ctx_leave();
  }
  ctx_rec_release(use->ctx);
  free(use);
}
static void use_retain(void *obj) { ((node_use *)obj)->refs++; }
static ctx_rec *use_context(void *obj) { return ((node_use *)obj)->ctx; }
const graph_pin_ops USE_PINS = {use_retain, use_release, use_context};

node_use *node_use_of(node_use **slot, void *object, CUresult (*destroy)(void *object),
                      ctx_rec *ctx) {
  if (!*slot && (*slot = malloc(sizeof **slot)))
    **slot = (node_use){object, destroy, ctx_rec_retain(ctx), 1};
  return *slot;
}

void node_use_drop(node_use **slot) {
  if (*slot) use_release(*slot);
  *slot = NULL;
}

/* The context pin names what lives in, or NULL. */
static const ctx_rec *pin_context(const graph_pin *pin) {
  return pin->ops->context ? pin->ops->context(pin->obj) : NULL;
}

bool pins_gone(const graph_pins *pins) {
  for (uint32_t i = 0; i < pins->count; i++) {
    const ctx_rec *ctx = pin_context(&pins->at[i]);
    if (ctx && ctx_rec_gone(ctx)) return true;
  }
  return false;
}

bool pins_foreign(const graph_pins *pins, const ctx_rec *ctx) {
  for (uint32_t i = 0; i < pins->count; i++) {
    const ctx_rec *other = pin_context(&pins->at[i]);
    if (other && other != ctx) return true;
  }
  return false;
}

graph_h *graph_live(napi_env env, graph_h *graph) {
  if (!pins_gone(graph_pins_of(graph))) return graph;
  throw_logic(env, "this Graph has nodes made in a context that has been destroyed "
                   "(context.detach()), which the driver would read; build the graph again");
  return NULL;
}

bool graph_pin_current(napi_env env, napi_value graph_value) {
  ctx_rec *rec = ctx_rec_current(env);
  if (!rec) return false;
  bool pinned = graph_pin_use(env, graph_value, rec, &CTX_PINS);
  ctx_rec_release(rec);
  return pinned;
}

bool pins_add(napi_env env, graph_pins *pins, void *obj, const graph_pin_ops *ops) {
  if (ops == &CTX_PINS && pins->last_context == obj) return true;
  if (!pin_room(env, pins, 1)) return false;
  pins->at[pins->count++] = (graph_pin){obj, ops};
  ops->retain(obj);
  if (ops == &CTX_PINS) pins->last_context = obj;
  return true;
}

bool graph_pin_use(napi_env env, napi_value graph_value, void *obj, const graph_pin_ops *ops) {
  graph_h *graph = graph_get(env, graph_value);
  return graph && pins_add(env, graph_pins_of(graph), obj, ops);
}

napi_value graph_add_node_pins(napi_env env, napi_value graph_value, napi_value deps_value,
                               node_maker make, void *arg, const char *api,
                               const graph_pin *pin_list, uint32_t pin_count) {
  graph_h *graph = graph_get(env, graph_value);
  if (!graph || !node_room(env, graph)) return NULL;
  graph_pins *pins = graph_pins_of(graph);
  if (!pin_room(env, pins, pin_count)) return NULL;
  CUgraphNode *deps;
  uint32_t count;
  if (!arg_nodes(env, deps_value, graph, &deps, &count)) return NULL;
  CUgraphNode node;
  CUresult result = make(arg, graph->handle, deps, count, &node);
  free(deps);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, api);
  for (uint32_t i = 0; i < pin_count; i++) {
    pins->at[pins->count++] = pin_list[i];
    pin_list[i].ops->retain(pin_list[i].obj);
  }
  graph->nodes[graph->count] = node;
  return make_uint(env, graph->count++);
}

napi_value graph_add_node(napi_env env, napi_value graph_value, napi_value deps_value,
                          node_maker make, void *arg, const char *api, void *obj,
                          const graph_pin_ops *ops) {
  graph_pin pin = {obj, ops};
  return graph_add_node_pins(env, graph_value, deps_value, make, arg, api, &pin, ops ? 1 : 0);
}

/* graphNodeTypes(graph): each node's CUgraphNodeType, in index order. */
static napi_value graph_node_types(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  graph_h *graph = graph_get(env, argv[0]);
  napi_value types;
  if (!graph) return NULL;
  NAPI_CALL(env, napi_create_array_with_length(env, graph->count, &types));
  for (uint32_t i = 0; i < graph->count; i++) {
    CUgraphNodeType type;
    CU_CALL(env, cuGraphNodeGetType, graph->nodes[i], &type);
    NAPI_CALL(env, napi_set_element(env, types, i, make_int(env, type)));
  }
  return types;
}

/* A node and its index, sorted by node to find indices of the driver's edges. */
typedef struct indexed_node {
  CUgraphNode node;
  uint32_t index;
} indexed_node;

static int by_node(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const indexed_node *)a)->node;
  uintptr_t y = (uintptr_t)((const indexed_node *)b)->node;
  return x < y ? -1 : x > y;
}

/* The index of node, or -1 (a node the table does not know). */
static int64_t index_of(const indexed_node *sorted, uint32_t count, CUgraphNode node) {
  indexed_node key = {node, 0};
  const indexed_node *found = bsearch(&key, sorted, count, sizeof key, by_node);
  return found ? (int64_t)found->index : -1;
}

CUresult graph_learn_nodes(graph_h *graph) {
  size_t count = 0;
  if (graph_gone(graph)) return CUDA_SUCCESS; /* not the driver's to read (another body lost it) */
  CUresult result = DRV(cuGraphGetNodes, graph->handle, NULL, &count);
  if (result != CUDA_SUCCESS || count <= graph->count) return result;
  if (count > UINT32_MAX) return CUDA_ERROR_OUT_OF_MEMORY;
  CUgraphNode *all = malloc(count * sizeof *all);
  indexed_node *known = malloc((graph->count ? graph->count : 1) * sizeof *known);
  CUgraphNode *grown = all && known ? realloc(graph->nodes, count * sizeof *grown) : NULL;
  if (grown) {
    graph->nodes = grown;
    graph->room = (uint32_t)count;
  }
  result = grown ? DRV(cuGraphGetNodes, graph->handle, all, &count) : CUDA_ERROR_OUT_OF_MEMORY;
  if (result == CUDA_SUCCESS) {
    uint32_t known_count = graph->count;
    for (uint32_t i = 0; i < known_count; i++) known[i] = (indexed_node){graph->nodes[i], i};
    qsort(known, known_count, sizeof *known, by_node);
    for (size_t i = 0; i < count && graph->count < graph->room; i++)
      if (index_of(known, known_count, all[i]) < 0) graph->nodes[graph->count++] = all[i];
  }
  free(all);
  free(known);
  return result;
}

bool graph_learn(napi_env env, graph_h *graph) {
  CUresult result = graph_learn_nodes(graph);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) return throw_oom(env), false;
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphGetNodes"), false;
  return true;
}

/* graphEdges(graph): [from, to, from, to...], node indices, one pair per dependency. Not during
 * a capture into the graph: its captured nodes have no index until the capture ends. */
static napi_value graph_edges(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  graph_h *graph = graph_get(env, argv[0]);
  if (!graph) return NULL;
  if (!graph_not_captured(env, graph, "graph.edges()", "this graph")) return NULL;
  size_t count = 0;
  CU_CALL(env, cuGraphGetEdges, graph->handle, NULL, NULL, NULL, &count);
  napi_value edges = NULL;
  if (count == 0) { /* the driver refuses arrays for no edges */
    NAPI_CALL(env, napi_create_array(env, &edges));
    return edges;
  }
  CUgraphNode *from = malloc(count * sizeof *from);
  CUgraphNode *to = malloc(count * sizeof *to);
  indexed_node *sorted = malloc((graph->count ? graph->count : 1) * sizeof *sorted);
  if (!from || !to || !sorted) {
    free(from);
    free(to);
    free(sorted);
    return throw_oom(env);
  }
  CUresult result = DRV(cuGraphGetEdges, graph->handle, from, to, NULL, &count);
  if (result == CUDA_SUCCESS) {
    for (uint32_t i = 0; i < graph->count; i++) sorted[i] = (indexed_node){graph->nodes[i], i};
    qsort(sorted, graph->count, sizeof *sorted, by_node);
    napi_status status = napi_create_array_with_length(env, 2 * count, &edges);
    for (size_t i = 0; status == napi_ok && i < count; i++) {
      status = napi_set_element(env, edges, (uint32_t)(2 * i),
                                make_int(env, index_of(sorted, graph->count, from[i])));
      if (status == napi_ok)
        status = napi_set_element(env, edges, (uint32_t)(2 * i + 1),
                                  make_int(env, index_of(sorted, graph->count, to[i])));
    }
    if (status != napi_ok) edges = napi_fail(env, status);
  }
  free(from);
  free(to);
  free(sorted);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphGetEdges");
  return edges;
}

/* graphDebugDotPrint(graph, flags): the graph's DOT description, in a Buffer. The driver writes
 * it to a file of the addon's own, made fresh in the temporary directory and removed once read: no
 * path comes from JS, so that no call has the driver open a FIFO (a hang) or write over a file. */
static napi_value graph_debug_dot_print(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  graph_h *graph = graph_get(env, argv[0]);
  uint32_t flags;
  if (!graph || !graph_live(env, graph) || !arg_uint32(env, argv[1], "flags", &flags)) return NULL;
  const char *dir = getenv("TMPDIR");
  char path[PATH_MAX];
  int length = snprintf(path, sizeof path, "%s/cudadrv-dot-XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = length > 0 && (size_t)length < sizeof path ? mkstemp(path) : -1;
  if (fd < 0) {
    char message[PATH_MAX + 64];
    snprintf(message, sizeof message, "%s, making '%s'",
             strerror(length > 0 && (size_t)length < sizeof path ? errno : ENAMETOOLONG), path);
    return throw_runtime(env, CUDA_ERROR_UNKNOWN, "cuGraphDebugDotPrint", message);
  }
  close(fd);
  CUresult result = DRV(cuGraphDebugDotPrint, graph->handle, path, flags);
  size_t size;
  int file = result == CUDA_SUCCESS ? open_regular(path, false, &size) : OPEN_NOTHING;
  napi_value text = NULL;
  napi_status status = file >= 0 ? read_whole(env, file, size, &text) : napi_ok;
  if (file >= 0) close(file);
  unlink(path);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphDebugDotPrint");
  if (status != napi_ok) return napi_fail(env, status);
  if (!text)
    return throw_runtime(env, CUDA_ERROR_UNKNOWN, "cuGraphDebugDotPrint",
                         "the file the driver wrote the graph's description to could not be read");
  return text;
}

bool graph_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"graphCreate", graph_create},        {"graphDestroy", graph_destroy},
      {"graphNodeCount", graph_node_count}, {"graphNodeTypes", graph_node_types},
      {"graphEdges", graph_edges},          {"graphDebugDotPrint", graph_debug_dot_print},
  };
  return EXPORTS(env, exports, fns);
}
