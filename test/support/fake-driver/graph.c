/* The stand-in's graphs: nodes made by cuGraphAdd*Node (empty, kernel, memset, copy, child graph)
 * with their dependencies, instantiated into a copy, and run at cuGraphLaunch in the order they
 * were added (which respects every dependency): memsets and copies move real bytes, kernels are
 * logged as launches are, each node run is logged as "graph node <index> <type>". A node turned off
 * in an exec is skipped. Event nodes record their event, or check it is alive; host nodes call
 * their function on the launching thread; memory nodes allocate and free graph memory (graphmem.c).
 * A graph owns user objects' references, which its copies take too (userobj.c).
 * cuGraphDebugDotPrint writes a small DOT file of nodes and edges. */
#include "fake.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CUgraphNode_st {
  CUgraphNodeType type;
  struct CUgraph_st *graph;
  CUcontext ctx; /* the context the node was made in, where it names one (what it uses is there) */
  CUgraphNode *deps;
  size_t dep_count;
  bool enabled;
  CUgraphNode source; /* in an exec's copy: the node of the graph it copies */
  CUDA_MEMSET_NODE_PARAMS memset;
  CUDA_MEMCPY3D copy;
  CUfunction func;
  CUlaunchConfig launch;
  unsigned char *params;
  size_t param_size;
  void *extra[5]; /* what cuGraphKernelNodeGetParams gives */
  CUgraph child;  /* a copy, owned */
  CUevent event;  /* an event record or wait node's */
  CUDA_HOST_NODE_PARAMS host;
  fake_graph_memory *memory; /* an allocation node's, held by each copy */
  CUdeviceptr freed;         /* a free node's address */
  /* a conditional node: its handle, kind, and bodies (owned, registered as graphs) */
  CUgraphConditionalHandle handle;
  CUgraphConditionalNodeType cond_type;
  CUgraph *bodies;
  unsigned int body_count;
  bool bodies_registered; /* a graph's (a user may add to them), not an exec's copy's */
};
struct CUgraph_st {
  CUgraphNode *nodes;
  size_t count;
  CUgraph parent; /* a conditional node's body: the graph of that node */
  struct graph_ref {
    CUuserObject object;
    unsigned int count;
  } * refs; /* the user objects' references it owns */
  size_t ref_count;
};
struct CUgraphExec_st {
  CUgraph copy;
  unsigned long long flags;
  CUgraph source; /* compared, never read: its conditional handles are reset at launches */
  int launches;
  struct ran_in {
    CUcontext ctx;
    unsigned long serial;
  } * ran_in; /* the contexts of the streams it was launched or uploaded on */
  size_t ran_in_count;
};

/* Conditional handles: 1 + their index here, free again once their graph is destroyed. Kernels
 * cannot set them on the stand-in; a launch sets those of its graph made with
 * CU_GRAPH_COND_ASSIGN_DEFAULT to their default. */
static struct {
  CUgraph graph; /* NULL: a free slot */
  unsigned int value, default_value, flags;
  bool used; /* by a conditional node: a handle serves one */
} handles[256];
static unsigned int handle_count; /* slots used so far */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

EXPORT CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle *out, CUgraph graph,
                                               CUcontext ctx, unsigned int value,
                                               unsigned int flags) {
  ENTER();
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH) || flags > CU_GRAPH_COND_ASSIGN_DEFAULT)
    return CUDA_ERROR_INVALID_VALUE;
  if (!live_context(ctx, true)) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&handles_lock);
  unsigned int slot = 0;
  while (slot < handle_count && handles[slot].graph) slot++;
  bool room = slot < sizeof handles / sizeof handles[0];
  if (room) {
    if (slot == handle_count) handle_count++;
    handles[slot].graph = graph;
    handles[slot].value = handles[slot].default_value = value;
    handles[slot].flags = flags;
    handles[slot].used = false;
    *out = slot + 1;
  }
  pthread_mutex_unlock(&handles_lock);
  return room ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUgraph graph_alloc(void) { return calloc(1, sizeof(struct CUgraph_st)); }

static void graph_free(CUgraph g) {
  pthread_mutex_lock(&handles_lock); /* its handles (a body's too) are free again */
  for (unsigned int h = 0; h < handle_count; h++)
    if (handles[h].graph == g) handles[h].graph = NULL;
  pthread_mutex_unlock(&handles_lock);
  for (size_t i = 0; i < g->count; i++) {
    CUgraphNode n = g->nodes[i];
    if (n->child) graph_free(n->child);
    for (unsigned int b = 0; b < n->body_count; b++) {
      if (n->bodies_registered) obj_remove((uintptr_t)n->bodies[b], OBJ_GRAPH);
      graph_free(n->bodies[b]);
    }
    free(n->bodies);
    free(n->deps);
    free(n->params);
    if (n->memory) fake_graph_memory_drop(n->memory);
    free(n);
  }
  for (size_t i = 0; i < g->ref_count; i++)
    fake_user_object_drop(g->refs[i].object, g->refs[i].count);
  free(g->refs);
  free(g->nodes);
  free(g);
}

/* A copy of g, each node's source being the node it copies; NULL when out of memory. */
static CUgraph graph_copy(CUgraph g);

static CUgraphNode node_copy(CUgraph into, CUgraphNode n) {
  CUgraphNode c = malloc(sizeof *c);
  if (!c) return NULL;
  *c = *n;
  c->graph = into;
  c->source = n;
  c->deps = n->dep_count ? malloc(n->dep_count * sizeof *c->deps) : NULL;
  c->params = n->param_size ? malloc(n->param_size) : NULL;
  c->child = n->child ? graph_copy(n->child) : NULL;
  if (n->memory) fake_graph_memory_hold(n->memory);
  c->bodies = n->body_count ? calloc(n->body_count, sizeof *c->bodies) : NULL;
  c->bodies_registered = false;
  bool copied = !n->body_count || c->bodies;
  for (unsigned int b = 0; copied && b < n->body_count; b++) /* an exec's bodies: unregistered */
    copied = (c->bodies[b] = graph_copy(n->bodies[b])) != NULL;
  if ((n->dep_count && !c->deps) || (n->param_size && !c->params) || (n->child && !c->child) ||
      !copied) {
    free(c->deps);
    free(c->params);
    if (c->child) graph_free(c->child);
    for (unsigned int b = 0; c->bodies && b < n->body_count; b++)
      if (c->bodies[b]) graph_free(c->bodies[b]);
    free(c->bodies);
    free(c);
    return NULL;
  }
  if (n->param_size) memcpy(c->params, n->params, n->param_size);
  for (size_t i = 0; i < n->dep_count; i++) /* the copy's node at the same index */
    for (size_t j = 0; j < n->graph->count; j++)
      if (n->graph->nodes[j] == n->deps[i]) c->deps[i] = into->nodes[j];
  return c;
}

static CUgraph graph_copy(CUgraph g) {
  CUgraph c = graph_alloc();
  if (!c) return NULL;
  c->refs = g->ref_count ? malloc(g->ref_count * sizeof *c->refs) : NULL;
  if (g->ref_count && !c->refs) return free(c), NULL;
  for (; c->ref_count < g->ref_count; c->ref_count++) { /* a copy takes the same references */
    c->refs[c->ref_count] = g->refs[c->ref_count];
    fake_user_object_take(c->refs[c->ref_count].object, c->refs[c->ref_count].count);
  }
  c->nodes = g->count ? malloc(g->count * sizeof *c->nodes) : NULL;
  if (g->count && !c->nodes) return free(c), NULL;
  for (; c->count < g->count; c->count++) {
    c->nodes[c->count] = node_copy(c, g->nodes[c->count]);
    if (!c->nodes[c->count]) return graph_free(c), NULL;
  }
  return c;
}

CUresult fake_graph_new(CUgraph *graph) {
  CUgraph g = graph_alloc();
  if (!g) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult result = obj_add((uintptr_t)g, OBJ_GRAPH, 0);
  if (result != CUDA_SUCCESS) return free(g), result;
  *graph = g;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphCreate(CUgraph *graph, unsigned int flags) {
  ENTER();
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  return fake_graph_new(graph);
}

/* Whether a stream is capturing into g or into a body of its conditional nodes. */
static bool captured_into(CUgraph g) {
  if (fake_capturing_into(g)) return true;
  for (size_t i = 0; i < g->count; i++)
    for (unsigned int b = 0; b < g->nodes[i]->body_count; b++)
      if (g->nodes[i]->bodies_registered && captured_into(g->nodes[i]->bodies[b])) return true;
  return false;
}

EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  ENTER();
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH)) return CUDA_ERROR_INVALID_VALUE;
  if (captured_into(graph)) fake_crash("cuGraphDestroy of a graph a stream is capturing into");
  obj_remove((uintptr_t)graph, OBJ_GRAPH);
  graph_free(graph);
  return CUDA_SUCCESS;
}

void fake_graph_lose(CUgraph graph) {
  while (graph->parent) graph = graph->parent;
  log_line("graph freed by a failed capture into it");
  obj_remove((uintptr_t)graph, OBJ_GRAPH);
  graph_free(graph);
}

static bool node_of(CUgraph g, CUgraphNode n) {
  for (size_t i = 0; i < g->count; i++)
    if (g->nodes[i] == n) return true;
  return false;
}

bool fake_graph_has(CUgraph graph, const CUgraphNode *nodes, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (!node_of(graph, nodes[i])) return false;
  return true;
}

/* A new node of type in graph after deps (each a node of graph, none twice), filled by the
 * caller from the returned node. */
static CUresult add_node(CUgraph graph, const CUgraphNode *deps, size_t count, CUgraphNodeType type,
                         CUgraphNode *out) {
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH) || (count && !deps)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++) {
    if (!node_of(graph, deps[i])) return CUDA_ERROR_INVALID_VALUE;
    for (size_t j = 0; j < i; j++)
      if (deps[j] == deps[i]) return CUDA_ERROR_INVALID_VALUE;
  }
  CUgraphNode n = calloc(1, sizeof *n);
  CUgraphNode *grown = realloc(graph->nodes, (graph->count + 1) * sizeof *grown);
  if (grown) graph->nodes = grown;
  if (!n || !grown || (count && !(n->deps = malloc(count * sizeof *n->deps)))) {
    free(n);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (count) memcpy(n->deps, deps, count * sizeof *deps);
  n->dep_count = count;
  n->type = type;
  n->graph = graph;
  n->enabled = true;
  graph->nodes[graph->count++] = n;
  *out = n;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                        unsigned int flags) {
  ENTER();
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH) || !obj_live((uintptr_t)object, OBJ_USER_OBJECT) ||
      !count || count > INT_MAX || flags > CU_GRAPH_USER_OBJECT_MOVE)
    return CUDA_ERROR_INVALID_VALUE;
  struct graph_ref *grown = realloc(graph->refs, (graph->ref_count + 1) * sizeof *grown);
  if (!grown) return CUDA_ERROR_OUT_OF_MEMORY;
  graph->refs = grown;
  /* MOVE: the caller's references become the graph's */
  if (!(flags & CU_GRAPH_USER_OBJECT_MOVE)) fake_user_object_take(object, count);
  graph->refs[graph->ref_count++] = (struct graph_ref){object, count};
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphAddHostNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                   size_t count, const CUDA_HOST_NODE_PARAMS *p) {
  ENTER();
  if (!p || !p->fn) return CUDA_ERROR_INVALID_VALUE;
  CUresult result = add_node(graph, deps, count, CU_GRAPH_NODE_TYPE_HOST, node);
  if (result == CUDA_SUCCESS) (*node)->host = *p;
  return result;
}

EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                       size_t count, CUDA_MEM_ALLOC_NODE_PARAMS *p) {
  ENTER();
  if (!p || !p->bytesize || p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      !fake_is_device(p->poolProps.location.id) || p->accessDescCount)
    return CUDA_ERROR_INVALID_VALUE;
  if (p->bytesize > ((size_t)1 << 40)) return CUDA_ERROR_OUT_OF_MEMORY;
  fake_graph_memory *memory = fake_graph_memory_new(p->bytesize);
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult result = add_node(graph, deps, count, CU_GRAPH_NODE_TYPE_MEM_ALLOC, node);
  if (result != CUDA_SUCCESS) return fake_graph_memory_drop(memory), result;
  (*node)->memory = memory;
  p->dptr = fake_graph_memory_address(memory);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                      size_t count, CUdeviceptr dptr) {
  ENTER();
  if (!fake_graph_memory_at(dptr)) return CUDA_ERROR_INVALID_VALUE; /* no allocation node's */
  CUresult result = add_node(graph, deps, count, CU_GRAPH_NODE_TYPE_MEM_FREE, node);
  if (result == CUDA_SUCCESS) (*node)->freed = dptr;
  return result;
}

EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                    size_t count) {
  ENTER();
  return add_node(graph, deps, count, CU_GRAPH_NODE_TYPE_EMPTY, node);
}

/* Whether a node may name bytes at ptr: device memory, or graph memory, allocated or not. */
static bool node_range(CUdeviceptr ptr, size_t bytes) {
  return device_range(ptr, bytes) == CUDA_SUCCESS || fake_graph_memory_holds(ptr, bytes);
}

static bool memset_ok(const CUDA_MEMSET_NODE_PARAMS *p) {
  unsigned int e = p->elementSize;
  return (e == 1 || e == 2 || e == 4) && p->width && p->height && !(p->dst % e) &&
         (p->height == 1 || p->pitch >= p->width * e) &&
         node_range(p->dst, (p->height - 1) * p->pitch + p->width * e);
}

EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                     size_t count, const CUDA_MEMSET_NODE_PARAMS *p,
                                     CUcontext ctx) {
  ENTER();
  if (!live_context(ctx, true)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!memset_ok(p)) return CUDA_ERROR_INVALID_VALUE;
  CUresult result = add_node(graph, deps, count, CU_GRAPH_NODE_TYPE_MEMSET, node);
  if (result == CUDA_SUCCESS) (*node)->memset = *p, (*node)->ctx = ctx;
  return result;
}

/* A side of a copy node, live now: device (or graph) memory, page-locked or managed host memory,
 * or an array; bytes from the side's start (its whole extent for a 1D copy; the launch checks the
 * rest, as fake_copy_3d does). */
static bool copy_side_ok(CUmemorytype type, CUdeviceptr device, const void *host, CUarray array,
                         size_t bytes) {
  obj o;
  if (type == CU_MEMORYTYPE_DEVICE) return node_range(device, bytes);
  if (type == CU_MEMORYTYPE_ARRAY) return obj_live((uintptr_t)array, OBJ_ARRAY);
  if (type == CU_MEMORYTYPE_UNIFIED)
    return obj_memory((uintptr_t)device, bytes, &o) && o.kind == OBJ_MANAGED;
  return type == CU_MEMORYTYPE_HOST && obj_memory((uintptr_t)host, bytes, &o) &&
         (o.kind == OBJ_HOST_MEMORY || o.kind == OBJ_MANAGED);
}

/* The bytes a side of copy c is checked for: from its start to its end in a 1D copy, else one. */
static size_t side_bytes(const CUDA_MEMCPY3D *c, size_t x) {
  return c->Height == 1 && c->Depth == 1 ? x + c->WidthInBytes : 1;
}

/* What cudadrv makes: any shape, never host to host. */
static bool copy_ok(const CUDA_MEMCPY3D *p) {
  return p->WidthInBytes && p->Height && p->Depth &&
         copy_side_ok(p->srcMemoryType, p->srcDevice, p->srcHost, p->srcArray,
                      side_bytes(p, p->srcXInBytes)) &&
         copy_side_ok(p->dstMemoryType, p->dstDevice, p->dstHost, p->dstArray,
                      side_bytes(p, p->dstXInBytes)) &&
         !(p->srcMemoryType == CU_MEMORYTYPE_HOST && p->dstMemoryType == CU_MEMORYTYPE_HOST);
}

EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                     size_t count, const CUDA_MEMCPY3D *p, CUcontext ctx) {
  ENTER();
  if (!live_context(ctx, true)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!copy_ok(p)) return CUDA_ERROR_INVALID_VALUE;
  CUresult result = add_node(graph, deps, count, CU_GRAPH_NODE_TYPE_MEMCPY, node);
  if (result == CUDA_SUCCESS) (*node)->copy = *p, (*node)->ctx = ctx;
  return result;
}

size_t function_params(CUfunction f, const char **name);

/* Checks a kernel node's parameters as cudadrv makes them (a buffer through extra) and sets
 * n's kernel, shape and a copy of the bytes. */
static CUresult kernel_params(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p) {
  if (!obj_live((uintptr_t)p->func, OBJ_FUNCTION)) return CUDA_ERROR_INVALID_HANDLE;
  if (p->kernelParams || p->kern) return CUDA_ERROR_INVALID_VALUE; /* cudadrv packs a buffer */
  const unsigned char *buffer = NULL;
  size_t size = 0;
  for (int i = 0; p->extra && p->extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (p->extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
      buffer = p->extra[i + 1];
    else if (p->extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
      size = *(size_t *)p->extra[i + 1];
    else
      return CUDA_ERROR_INVALID_VALUE;
  }
  const char *name;
  if (size != function_params(p->func, &name) || (size && !buffer)) return CUDA_ERROR_INVALID_VALUE;
  unsigned char *copy = size ? malloc(size) : NULL;
  if (size && !copy) return CUDA_ERROR_OUT_OF_MEMORY;
  if (size) memcpy(copy, buffer, size); /* the driver copies the parameters now */
  free(n->params);
  n->func = p->func;
  n->launch =
      (CUlaunchConfig){p->gridDimX,  p->gridDimY,       p->gridDimZ, p->blockDimX, p->blockDimY,
                       p->blockDimZ, p->sharedMemBytes, NULL,        NULL,         0};
  n->params = copy;
  n->param_size = size;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                     size_t count, const CUDA_KERNEL_NODE_PARAMS *p) {
  ENTER();
  struct CUgraphNode_st checked = {0};
  CUresult result = kernel_params(&checked, p);
  if (result != CUDA_SUCCESS) return result;
  result = add_node(graph, deps, count, CU_GRAPH_NODE_TYPE_KERNEL, node);
  if (result != CUDA_SUCCESS) return free(checked.params), result;
  (*node)->func = checked.func;
  (*node)->ctx = obj_owner((uintptr_t)checked.func);
  (*node)->launch = checked.launch;
  (*node)->params = checked.params;
  (*node)->param_size = checked.param_size;
  return CUDA_SUCCESS;
}

/* Whether node is a node of a live graph, of that type. */
static bool typed_node(CUgraphNode node, CUgraphNodeType type) {
  return node && obj_is((uintptr_t)node->graph, OBJ_GRAPH) && node_of(node->graph, node) &&
         node->type == type;
}

/* The parameters come back as the driver's do: extra, owned by the node, over its own copy. */
EXPORT CUresult cuGraphKernelNodeGetParams(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *p) {
  ENTER();
  if (!typed_node(node, CU_GRAPH_NODE_TYPE_KERNEL)) return CUDA_ERROR_INVALID_VALUE;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, node->params, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &node->param_size, CU_LAUNCH_PARAM_END};
  memcpy(node->extra, extra, sizeof extra);
  *p = (CUDA_KERNEL_NODE_PARAMS){.func = node->func,
                                 .gridDimX = node->launch.gridDimX,
                                 .gridDimY = node->launch.gridDimY,
                                 .gridDimZ = node->launch.gridDimZ,
                                 .blockDimX = node->launch.blockDimX,
                                 .blockDimY = node->launch.blockDimY,
                                 .blockDimZ = node->launch.blockDimZ,
                                 .sharedMemBytes = node->launch.sharedMemBytes,
                                 .extra = node->param_size ? node->extra : NULL};
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphKernelNodeSetParams(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p) {
  ENTER();
  if (!typed_node(node, CU_GRAPH_NODE_TYPE_KERNEL) || !p) return CUDA_ERROR_INVALID_VALUE;
  return kernel_params(node, p);
}
EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS *p) {
  ENTER();
  if (!typed_node(node, CU_GRAPH_NODE_TYPE_MEMSET) || !p) return CUDA_ERROR_INVALID_VALUE;
  *p = node->memset;
  return CUDA_SUCCESS;
}
/* Whether n copies to or from an array destroyed since (driver 580 crashes on it, see gone_array).
 */
static bool copies_gone_array(CUgraphNode n) {
  const CUDA_MEMCPY3D *c = &n->copy;
  return n->type == CU_GRAPH_NODE_TYPE_MEMCPY &&
         ((c->srcMemoryType == CU_MEMORYTYPE_ARRAY && !fake_array_element(c->srcArray)) ||
          (c->dstMemoryType == CU_MEMORYTYPE_ARRAY && !fake_array_element(c->dstArray)));
}
EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode node, CUDA_MEMCPY3D *p) {
  ENTER();
  if (!typed_node(node, CU_GRAPH_NODE_TYPE_MEMCPY) || !p) return CUDA_ERROR_INVALID_VALUE;
  if (copies_gone_array(node)) fake_crash("cuGraphMemcpyNodeGetParams of a destroyed array's copy");
  *p = node->copy;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode node, CUDA_MEM_ALLOC_NODE_PARAMS *p) {
  ENTER();
  if (!typed_node(node, CU_GRAPH_NODE_TYPE_MEM_ALLOC) || !p) return CUDA_ERROR_INVALID_VALUE;
  *p = (CUDA_MEM_ALLOC_NODE_PARAMS){
      .poolProps = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                    .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}},
      .bytesize = fake_graph_memory_size(node->memory),
      .dptr = fake_graph_memory_address(node->memory)};
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode node, CUdeviceptr *ptr) {
  ENTER();
  if (!typed_node(node, CU_GRAPH_NODE_TYPE_MEM_FREE) || !ptr) return CUDA_ERROR_INVALID_VALUE;
  *ptr = node->freed;
  return CUDA_SUCCESS;
}

static CUresult event_node(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t count,
                           CUevent event, CUgraphNodeType type) {
  if (!obj_live((uintptr_t)event, OBJ_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
  CUresult result = add_node(graph, deps, count, type, node);
  if (result == CUDA_SUCCESS) (*node)->event = event, (*node)->ctx = fake_event_context(event);
  return result;
}
EXPORT CUresult cuGraphAddEventRecordNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                          size_t count, CUevent event) {
  ENTER();
  return event_node(node, graph, deps, count, event, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}
EXPORT CUresult cuGraphAddEventWaitNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                        size_t count, CUevent event) {
  ENTER();
  return event_node(node, graph, deps, count, event, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}

/* The graph at the top of g's bodies (g itself, unless g is a conditional node's body). */
static CUgraph family_of(CUgraph g) {
  while (g->parent) g = g->parent;
  return g;
}

/* Conditional nodes only: cudadrv makes the other kinds with their own calls. A handle serves
 * one node, of the graph it was made for or of a graph of the same family. */
EXPORT CUresult cuGraphAddNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                               const CUgraphEdgeData *data, size_t count, CUgraphNodeParams *p) {
  ENTER();
  if (data || p->type != CU_GRAPH_NODE_TYPE_CONDITIONAL) return CUDA_ERROR_NOT_SUPPORTED;
  CUDA_CONDITIONAL_NODE_PARAMS *c = &p->conditional;
  if (!c->handle || c->handle > handle_count || !handles[c->handle - 1].graph ||
      handles[c->handle - 1].used || family_of(handles[c->handle - 1].graph) != family_of(graph) ||
      !c->size || (c->type == CU_GRAPH_COND_TYPE_WHILE && c->size != 1) ||
      (c->type == CU_GRAPH_COND_TYPE_IF && c->size > 2) || c->type > CU_GRAPH_COND_TYPE_SWITCH)
    return CUDA_ERROR_INVALID_VALUE;
  if (!live_context(c->ctx, true)) return CUDA_ERROR_INVALID_CONTEXT;
  CUgraph *bodies = calloc(c->size, sizeof *bodies);
  if (!bodies) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult result = CUDA_SUCCESS;
  unsigned int made = 0;
  for (; made < c->size && result == CUDA_SUCCESS; made++) result = fake_graph_new(&bodies[made]);
  if (result == CUDA_SUCCESS)
    result = add_node(graph, deps, count, CU_GRAPH_NODE_TYPE_CONDITIONAL, node);
  if (result != CUDA_SUCCESS) {
    for (unsigned int b = 0; b < made; b++)
      if (bodies[b] && obj_remove((uintptr_t)bodies[b], OBJ_GRAPH)) graph_free(bodies[b]);
    free(bodies);
    return result;
  }
  CUgraphNode n = *node;
  n->ctx = c->ctx;
  n->handle = c->handle;
  n->cond_type = c->type;
  n->bodies = bodies;
  n->body_count = c->size;
  n->bodies_registered = true;
  for (unsigned int b = 0; b < c->size; b++) bodies[b]->parent = graph;
  handles[c->handle - 1].used = true;
  c->phGraph_out = bodies; /* the driver's own array, valid while the node is */
  return CUDA_SUCCESS;
}

/* What the driver takes as a child graph: no body of a conditional node, and no conditional or
 * memory nodes (CUDA_ERROR_NOT_SUPPORTED otherwise, as driver 580 says). */
static bool child_ok(CUgraph child) {
  if (child->parent) return false;
  for (size_t i = 0; i < child->count; i++) {
    CUgraphNodeType type = child->nodes[i]->type;
    if (type == CU_GRAPH_NODE_TYPE_CONDITIONAL || type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ||
        type == CU_GRAPH_NODE_TYPE_MEM_FREE)
      return false;
  }
  return true;
}

EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                         size_t count, CUgraph child) {
  ENTER();
  if (!obj_live((uintptr_t)child, OBJ_GRAPH) || !obj_live((uintptr_t)graph, OBJ_GRAPH))
    return CUDA_ERROR_INVALID_VALUE;
  if (child == graph) fake_crash("cuGraphAddChildGraphNode of a graph into itself");
  if (!child_ok(child)) return CUDA_ERROR_NOT_SUPPORTED;
  CUgraph copy = graph_copy(child);
  if (!copy) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult result = add_node(graph, deps, count, CU_GRAPH_NODE_TYPE_GRAPH, node);
  if (result != CUDA_SUCCESS) return graph_free(copy), result;
  (*node)->child = copy;
  return CUDA_SUCCESS;
}

/* Whether n is a live graph's node (a node of a destroyed graph is stale). */
static bool live_node(CUgraphNode n) {
  return n && obj_is((uintptr_t)n->graph, OBJ_GRAPH) && node_of(n->graph, n);
}

EXPORT CUresult cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType *type) {
  ENTER();
  if (!live_node(node)) return CUDA_ERROR_INVALID_VALUE;
  *type = node->type;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphGetNodes(CUgraph graph, CUgraphNode *nodes, size_t *count) {
  ENTER();
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH)) return CUDA_ERROR_INVALID_VALUE;
  if (nodes)
    for (size_t i = 0; i < *count && i < graph->count; i++) nodes[i] = graph->nodes[i];
  *count = graph->count;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphGetEdges(CUgraph graph, CUgraphNode *from, CUgraphNode *to,
                                CUgraphEdgeData *data, size_t *count) {
  ENTER();
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH) || (!from != !to)) return CUDA_ERROR_INVALID_VALUE;
  if (from && *count == 0) return CUDA_ERROR_INVALID_VALUE; /* arrays for no edges, as driver 580 */
  size_t edges = 0;
  for (size_t i = 0; i < graph->count; i++) {
    CUgraphNode n = graph->nodes[i];
    for (size_t d = 0; d < n->dep_count; d++, edges++) {
      if (!from || edges >= *count) continue;
      from[edges] = n->deps[d];
      to[edges] = n;
      if (data) memset(&data[edges], 0, sizeof *data);
    }
  }
  *count = edges;
  return CUDA_SUCCESS;
}

/* Driver 580 keeps state of each context an exec runs in (on a stream of its), which its
 * cuGraphExecDestroy reads where the exec holds a user object: a crash once that context is gone
 * (an H200). */
static void note_ran_in(CUgraphExec exec, CUstream stream) {
  CUcontext ctx = fake_stream_context(stream);
  unsigned long serial = fake_context_serial(ctx);
  if (!serial) return;
  for (size_t i = 0; i < exec->ran_in_count; i++)
    if (exec->ran_in[i].ctx == ctx && exec->ran_in[i].serial == serial) return;
  struct ran_in *grown = realloc(exec->ran_in, (exec->ran_in_count + 1) * sizeof *grown);
  if (!grown) return;
  exec->ran_in = grown;
  exec->ran_in[exec->ran_in_count++] = (struct ran_in){ctx, serial};
}

static bool ran_in_gone(CUgraphExec exec) {
  for (size_t i = 0; i < exec->ran_in_count; i++)
    if (fake_context_serial(exec->ran_in[i].ctx) != exec->ran_in[i].serial) return true;
  return false;
}

static bool holds_user_object(CUgraph g) {
  if (g->ref_count) return true;
  for (size_t i = 0; i < g->count; i++) {
    CUgraphNode n = g->nodes[i];
    if (n->child && holds_user_object(n->child)) return true;
    for (unsigned int b = 0; b < n->body_count; b++)
      if (holds_user_object(n->bodies[b])) return true;
  }
  return false;
}

static bool dead_context(CUgraph g);
static bool gone_array(CUgraph g);

EXPORT CUresult cuGraphDebugDotPrint(CUgraph graph, const char *path, unsigned int flags) {
  ENTER();
  (void)flags;
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH) || !path) return CUDA_ERROR_INVALID_VALUE;
  if (dead_context(graph))
    fake_crash("cuGraphDebugDotPrint of a graph with a node of a destroyed context");
  if (gone_array(graph)) fake_crash("cuGraphDebugDotPrint of a graph copying a destroyed array");
  FILE *f = fopen(path, "w");
  if (!f) return CUDA_ERROR_OPERATING_SYSTEM;
  fprintf(f, "digraph standin {\n");
  for (size_t i = 0; i < graph->count; i++) {
    CUgraphNode n = graph->nodes[i];
    fprintf(f, "  n%zu [label=\"%d\"];\n", i, (int)n->type);
    for (size_t d = 0; d < n->dep_count; d++)
      for (size_t j = 0; j < graph->count; j++)
        if (graph->nodes[j] == n->deps[d]) fprintf(f, "  n%zu -> n%zu;\n", j, i);
  }
  fprintf(f, "}\n");
  fclose(f);
  return CUDA_SUCCESS;
}

/* Whether a node of g, of its children or bodies, was made in a context destroyed since: driver 580
 * crashes instantiating, printing or launching such a graph. */
static bool dead_context(CUgraph g) {
  for (size_t i = 0; i < g->count; i++) {
    CUgraphNode n = g->nodes[i];
    if ((n->ctx && !live_context(n->ctx, false)) || (n->child && dead_context(n->child)))
      return true;
    for (unsigned int b = 0; b < n->body_count; b++)
      if (dead_context(n->bodies[b])) return true;
  }
  return false;
}

/* Whether a copy node of g, of its children or bodies, names an array destroyed since: driver 580
 * crashes instantiating, printing, launching or reading such a graph (not destroying it). */
static bool gone_array(CUgraph g) {
  for (size_t i = 0; i < g->count; i++) {
    CUgraphNode n = g->nodes[i];
    if (copies_gone_array(n) || (n->child && gone_array(n->child))) return true;
    for (unsigned int b = 0; b < n->body_count; b++)
      if (gone_array(n->bodies[b])) return true;
  }
  return false;
}

static CUresult instantiate(CUgraphExec *exec, CUgraph graph, unsigned long long flags) {
  if (dead_context(graph)) fake_crash("instantiating a graph with a node of a destroyed context");
  if (gone_array(graph)) fake_crash("instantiating a graph copying a destroyed array");
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  struct CUgraphExec_st *e = calloc(1, sizeof *e);
  if (!e || !(e->copy = graph_copy(graph))) return free(e), CUDA_ERROR_OUT_OF_MEMORY;
  CUresult result = obj_add((uintptr_t)e, OBJ_GRAPH_EXEC, 0);
  if (result != CUDA_SUCCESS) return graph_free(e->copy), free(e), result;
  e->source = graph;
  e->flags = flags;
  *exec = e;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                            unsigned long long flags) {
  ENTER();
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH) || flags > 15) return CUDA_ERROR_INVALID_VALUE;
  return instantiate(exec, graph, flags);
}

EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *exec, CUgraph graph,
                                             CUDA_GRAPH_INSTANTIATE_PARAMS *p) {
  ENTER();
  if (!obj_live((uintptr_t)graph, OBJ_GRAPH) || p->flags > 15) return CUDA_ERROR_INVALID_VALUE;
  bool upload = p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
  if (upload != (p->hUploadStream != NULL) || (upload && !stream_ok(p->hUploadStream)))
    return CUDA_ERROR_INVALID_VALUE;
  p->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  if (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) /* kernels, memsets and copies only */
    for (size_t i = 0; i < graph->count; i++)
      if (graph->nodes[i]->type != CU_GRAPH_NODE_TYPE_KERNEL &&
          graph->nodes[i]->type != CU_GRAPH_NODE_TYPE_MEMSET &&
          graph->nodes[i]->type != CU_GRAPH_NODE_TYPE_MEMCPY) {
        p->result_out = CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED;
        p->hErrNode_out = graph->nodes[i];
        return CUDA_ERROR_INVALID_VALUE;
      }
  CUresult result = instantiate(exec, graph, p->flags);
  if (result == CUDA_SUCCESS && upload) {
    note_ran_in(*exec, p->hUploadStream);
    log_line("graph upload stream=%d", stream_id(p->hUploadStream));
  }
  return result;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  ENTER();
  if (!obj_live((uintptr_t)exec, OBJ_GRAPH_EXEC)) return CUDA_ERROR_INVALID_VALUE;
  if (dead_context(exec->copy))
    fake_crash(
        "cuGraphExecDestroy of a graph with a node of a destroyed context (driver 580 hangs)");
  if (holds_user_object(exec->copy) && ran_in_gone(exec))
    fake_crash("cuGraphExecDestroy of a graph holding a user object, launched in a context "
               "destroyed since (driver 580 crashes)");
  obj_remove((uintptr_t)exec, OBJ_GRAPH_EXEC);
  graph_free(exec->copy);
  free(exec->ran_in);
  free(exec);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecUpdate(CUgraphExec exec, CUgraph graph,
                                  CUgraphExecUpdateResultInfo *info) {
  ENTER();
  if (!obj_live((uintptr_t)exec, OBJ_GRAPH_EXEC) || !obj_live((uintptr_t)graph, OBJ_GRAPH))
    return CUDA_ERROR_INVALID_VALUE;
  if (dead_context(graph))
    fake_crash("cuGraphExecUpdate to a graph with a node of a destroyed context");
  if (gone_array(graph)) fake_crash("cuGraphExecUpdate to a graph copying a destroyed array");
  memset(info, 0, sizeof *info);
  CUgraph old = exec->copy;
  if (old->count != graph->count) {
    info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  for (size_t i = 0; i < graph->count; i++)
    if (old->nodes[i]->type != graph->nodes[i]->type) {
      info->result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
      info->errorNode = graph->nodes[i];
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
  CUgraph copy = graph_copy(graph);
  if (!copy) return CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < copy->count; i++) { /* nodes keep their on/off, and what they copy */
    copy->nodes[i]->enabled = old->nodes[i]->enabled;
    copy->nodes[i]->source = old->nodes[i]->source;
  }
  graph_free(old);
  exec->copy = copy;
  info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  return CUDA_SUCCESS;
}

/* The node of a live exec's copy that copies node, where it is one that can be turned off and on
 * (a kernel, memset or copy); else NULL. */
static CUgraphNode switchable(CUgraphExec exec, CUgraphNode node) {
  if (!obj_live((uintptr_t)exec, OBJ_GRAPH_EXEC)) return NULL;
  for (size_t i = 0; i < exec->copy->count; i++) {
    CUgraphNode n = exec->copy->nodes[i];
    if (n->source == node)
      return n->type == CU_GRAPH_NODE_TYPE_KERNEL || n->type == CU_GRAPH_NODE_TYPE_MEMSET ||
                     n->type == CU_GRAPH_NODE_TYPE_MEMCPY
                 ? n
                 : NULL;
  }
  return NULL;
}

EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec exec, CUgraphNode node, unsigned int on) {
  ENTER();
  CUgraphNode n = switchable(exec, node);
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  n->enabled = on != 0;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphNodeGetEnabled(CUgraphExec exec, CUgraphNode node, unsigned int *on) {
  ENTER();
  CUgraphNode n = switchable(exec, node);
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  *on = n->enabled;
  return CUDA_SUCCESS;
}

/* A graph's memset or copy node takes new parameters of any shape; an exec's, 1D ones for a 1D
 * node, in the node's context (as the driver's rules are). */
EXPORT CUresult cuGraphMemsetNodeSetParams(CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *p) {
  ENTER();
  if (!typed_node(node, CU_GRAPH_NODE_TYPE_MEMSET) || !p || !memset_ok(p))
    return CUDA_ERROR_INVALID_VALUE;
  node->memset = *p;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphMemcpyNodeSetParams(CUgraphNode node, const CUDA_MEMCPY3D *p) {
  ENTER();
  if (!typed_node(node, CU_GRAPH_NODE_TYPE_MEMCPY) || !p || !copy_ok(p))
    return CUDA_ERROR_INVALID_VALUE;
  node->copy = *p;
  return CUDA_SUCCESS;
}
/* The copy in exec of node, a 1D node of type, for new parameters in ctx; NULL where refused. */
static CUgraphNode exec_1d_node(CUgraphExec exec, CUgraphNode node, CUgraphNodeType type,
                                CUcontext ctx) {
  CUgraphNode n = switchable(exec, node);
  if (!n || n->type != type || !live_context(ctx, true)) return NULL;
  bool planar = type == CU_GRAPH_NODE_TYPE_MEMSET ? n->memset.height == 1
                                                  : n->copy.Height == 1 && n->copy.Depth == 1;
  return planar ? n : NULL;
}
EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                               const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx) {
  ENTER();
  CUgraphNode n = exec_1d_node(exec, node, CU_GRAPH_NODE_TYPE_MEMSET, ctx);
  if (!n || !p || !memset_ok(p) || p->height != 1) return CUDA_ERROR_INVALID_VALUE;
  n->memset = *p;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                               const CUDA_MEMCPY3D *p, CUcontext ctx) {
  ENTER();
  CUgraphNode n = exec_1d_node(exec, node, CU_GRAPH_NODE_TYPE_MEMCPY, ctx);
  if (!n || !p || !copy_ok(p) || p->Height != 1 || p->Depth != 1) return CUDA_ERROR_INVALID_VALUE;
  n->copy = *p;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                               const CUDA_KERNEL_NODE_PARAMS *p) {
  ENTER();
  CUgraphNode n = switchable(exec, node);
  if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL || n->func != p->func)
    return CUDA_ERROR_INVALID_VALUE;
  return kernel_params(n, p);
}

static CUresult run(CUgraph g, CUstream stream, const char *prefix) {
  for (size_t i = 0; i < g->count; i++) {
    CUgraphNode n = g->nodes[i];
    if (!n->enabled) continue;
    log_line("graph node %s%zu %d", prefix, i, (int)n->type);
    CUresult result = CUDA_SUCCESS;
    const CUDA_MEMSET_NODE_PARAMS *m = &n->memset;
    if (n->type == CU_GRAPH_NODE_TYPE_MEMSET) {
      result =
          fake_memset_2d(m->dst, m->pitch, m->value, m->elementSize, m->width, m->height, stream);
    } else if (n->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
      const CUDA_MEMCPY3D *c = &n->copy; /* a real driver would touch freed host memory here */
      bool host_gone = (c->srcMemoryType == CU_MEMORYTYPE_HOST &&
                        !copy_side_ok(c->srcMemoryType, 0, c->srcHost, NULL, 1)) ||
                       (c->dstMemoryType == CU_MEMORYTYPE_HOST &&
                        !copy_side_ok(c->dstMemoryType, 0, c->dstHost, NULL, 1));
      result = host_gone ? CUDA_ERROR_ILLEGAL_ADDRESS : fake_copy_3d(&n->copy, stream);
    } else if (n->type == CU_GRAPH_NODE_TYPE_KERNEL) {
      size_t size = n->param_size;
      void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, n->params, CU_LAUNCH_PARAM_BUFFER_SIZE,
                       &size, CU_LAUNCH_PARAM_END};
      CUlaunchConfig config = n->launch;
      config.hStream = stream;
      result = fake_launch(n->func, &config, NULL, size ? extra : NULL, NULL);
    } else if (n->type == CU_GRAPH_NODE_TYPE_GRAPH) {
      char inner[64];
      snprintf(inner, sizeof inner, "%s%zu.", prefix, i);
      result = run(n->child, stream, inner);
    } else if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
      result = fake_graph_memory_alloc(n->memory); /* allocated still: freed by nothing since */
    } else if (n->type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
      result = fake_graph_memory_free(n->freed);
    } else if (n->type == CU_GRAPH_NODE_TYPE_HOST) {
      n->host.fn(n->host.userData);
    } else if (n->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
      result = fake_event_record(n->event, stream); /* a destroyed event: stale, an error */
    } else if (n->type == CU_GRAPH_NODE_TYPE_WAIT_EVENT) {
      result = obj_live((uintptr_t)n->event, OBJ_EVENT) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    } else if (n->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
      unsigned int value = handles[n->handle - 1].value, body = n->body_count;
      if (n->cond_type == CU_GRAPH_COND_TYPE_SWITCH) body = value; /* none past the last */
      if (n->cond_type == CU_GRAPH_COND_TYPE_IF) body = value ? 0 : 1;
      if (n->cond_type == CU_GRAPH_COND_TYPE_WHILE)
        body = value ? 0 : 1; /* once: nothing clears it */
      if (body < n->body_count) {
        char inner[64];
        snprintf(inner, sizeof inner, "%s%zu.%u.", prefix, i, body);
        result = run(n->bodies[body], stream, inner);
      }
    }
    if (result != CUDA_SUCCESS) return result;
  }
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  ENTER();
  if (!obj_live((uintptr_t)exec, OBJ_GRAPH_EXEC) || !stream_ok(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  if (dead_context(exec->copy))
    fake_crash("cuGraphLaunch of a graph with a node of a destroyed context");
  if (gone_array(exec->copy)) fake_crash("cuGraphLaunch of a graph copying a destroyed array");
  exec->launches++;
  note_ran_in(exec, stream);
  log_line("graph launch stream=%d", stream_id(stream));
  for (size_t i = 0; i < exec->copy->count; i++) { /* what the last launch left allocated */
    fake_graph_memory *m = exec->copy->nodes[i]->memory;
    if (m && fake_graph_memory_live(m) &&
        exec->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
      fake_graph_memory_free(fake_graph_memory_address(m));
  }
  for (unsigned int h = 0; h < handle_count; h++)
    if (handles[h].graph == exec->source && handles[h].flags & CU_GRAPH_COND_ASSIGN_DEFAULT)
      handles[h].value = handles[h].default_value;
  return run(exec->copy, stream, "");
}

EXPORT CUresult cuGraphUpload(CUgraphExec exec, CUstream stream) {
  ENTER();
  if (!obj_live((uintptr_t)exec, OBJ_GRAPH_EXEC) || !stream_ok(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  note_ran_in(exec, stream);
  log_line("graph upload stream=%d", stream_id(stream));
  return CUDA_SUCCESS;
}
