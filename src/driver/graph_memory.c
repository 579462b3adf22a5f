/* graph_memory: memory nodes. An allocation node allocates its bytes each time a launch reaches it,
 * at an address fixed when the node is made; a free node (of this graph or another) frees them,
 * or graphMemoryFree outside any graph. Like the other nodes' device addresses, a free node's is
 * the driver's to check: it refuses one that no allocation node gave. graphMemoryFree frees only
 * the address of an allocation node that a Graph or GraphExec still holds (the address is graph
 * memory for sure only while one does). */
#include <pthread.h>
#include <stdlib.h>

#include "graph.h"

/* The address of an allocation node, pinned by the Graphs and GraphExecs holding the node; listed
 * while any is (every environment's, hence the lock). */
typedef struct graph_alloc {
  CUdeviceptr ptr;
  int pins;
  struct graph_alloc *next;
} graph_alloc;
static graph_alloc *allocs;
static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;

static void alloc_pin(void *obj) {
  pthread_mutex_lock(&allocs_lock);
  ((graph_alloc *)obj)->pins++;
  pthread_mutex_unlock(&allocs_lock);
}

static void alloc_unpin(void *obj) {
  graph_alloc *a = obj;
  pthread_mutex_lock(&allocs_lock);
  bool last = --a->pins == 0;
  if (last)
    for (graph_alloc **at = &allocs; *at; at = &(*at)->next)
      if (*at == a) {
        *at = a->next;
        break;
      }
  pthread_mutex_unlock(&allocs_lock);
  if (last) free(a);
}

/* Graph memory is a device's, of no context. */
static const graph_pin_ops ALLOC_PINS = {alloc_pin, alloc_unpin, NULL};

static CUresult make_alloc(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                           CUgraphNode *node) {
  return DRV(cuGraphAddMemAllocNode, node, graph, deps, count, arg);
}

/* graphAddMemAlloc(graph, deps, bytes): [node index, address] of an allocation of bytes on the
 * current context's device. */
static napi_value graph_add_mem_alloc(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  size_t bytes;
  if (!arg_size(env, argv[2], "bytes", &bytes)) return NULL;
  if (!bytes) return throw_range(env, "an allocation node allocates at least one byte");
  if (!driver_ready(env)) return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  ctx_rec_release(ctx);
  CUdevice device;
  CU_CALL(env, cuCtxGetDevice, &device);
  CUDA_MEM_ALLOC_NODE_PARAMS params = {.bytesize = bytes};
  params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  params.poolProps.location = (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device};
  graph_alloc *a = calloc(1, sizeof *a);
  if (!a) return throw_oom(env);
  napi_value index = graph_add_node(env, argv[0], argv[1], make_alloc, &params,
                                    "cuGraphAddMemAllocNode", a, &ALLOC_PINS);
  if (!index) return free(a), NULL; /* never pinned */
  pthread_mutex_lock(&allocs_lock);
  a->ptr = params.dptr;
  a->next = allocs;
  allocs = a;
  pthread_mutex_unlock(&allocs_lock);
  return make_pair(env, index, make_ptr(env, params.dptr));
}

static CUresult make_free(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                          CUgraphNode *node) {
  return DRV(cuGraphAddMemFreeNode, node, graph, deps, count, *(CUdeviceptr *)arg);
}

/* graphAddMemFree(graph, deps, address): a node freeing an allocation node's memory. */
static napi_value graph_add_mem_free(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  CUdeviceptr ptr;
  if (!arg_ptr(env, argv[2], "address", &ptr) || !driver_ready(env)) return NULL;
  return graph_add_node(env, argv[0], argv[1], make_free, &ptr, "cuGraphAddMemFreeNode", NULL,
                        NULL);
}

/* graphMemoryFree(address, stream or null): frees an allocation node's memory, which a launch
 * allocated, on stream (cuMemFreeAsync); a LogicError where no Graph or GraphExec holds the node
 * any more. */
static napi_value graph_memory_free(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  CUdeviceptr ptr;
  CUstream stream;
  if (!arg_ptr(env, argv[0], "address", &ptr) || !arg_stream(env, argv[1], &stream) ||
      !driver_ready(env))
    return NULL;
  pthread_mutex_lock(&allocs_lock);
  graph_alloc *a = allocs;
  while (a && a->ptr != ptr) a = a->next;
  pthread_mutex_unlock(&allocs_lock);
  if (!a)
    return throw_logic(env, "memory.free(): no Graph or GraphExec with this memory's allocation "
                            "node is left, so its address may be another allocation's; free "
                            "graph memory before destroying its graphs");
  CU_CALL(env, cuMemFreeAsync, ptr, stream);
  return NULL;
}

bool graph_memory_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"graphAddMemAlloc", graph_add_mem_alloc},
      {"graphAddMemFree", graph_add_mem_free},
      {"graphMemoryFree", graph_memory_free},
  };
  return EXPORTS(env, exports, fns);
}
