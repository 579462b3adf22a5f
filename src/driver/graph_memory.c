/* graph_memory: memory nodes. An allocation node allocates its bytes each time a launch reaches it,
 * at an address fixed when the node is made; a free node (of this graph or another) frees them.
 * Like the other nodes' device addresses, a free node's is the driver's to check: it refuses one
 * that no allocation node gave. */
#include "graph.h"

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
  napi_value index = graph_add_node(env, argv[0], argv[1], make_alloc, &params,
                                    "cuGraphAddMemAllocNode", NULL, NULL);
  return index ? make_pair(env, index, make_ptr(env, params.dptr)) : NULL;
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

bool graph_memory_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"graphAddMemAlloc", graph_add_mem_alloc},
      {"graphAddMemFree", graph_add_mem_free},
  };
  return EXPORTS(env, exports, fns);
}
