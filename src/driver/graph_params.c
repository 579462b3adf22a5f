/* graph_params: what the driver holds for a node of a graph, read back: a kernel node's launch
 * shape and parameter bytes, a memset's or a copy's addresses and extent, a memory node's
 * allocation (cuGraph*NodeGetParams). */
#include <string.h>

#include "graph.h"

/* A kernel node's parameter bytes, where the node holds them as one buffer (cudadrv's nodes, and
 * launches captured from cudadrv, pass CU_LAUNCH_PARAM_BUFFER_POINTER); null where they are one
 * pointer per parameter, whose sizes the node does not say. */
static napi_value kernel_args(napi_env env, void **extra) {
  const void *buffer = NULL;
  size_t size = 0;
  for (int i = 0; extra && i < 8 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = extra[i + 1];
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) size = *(size_t *)extra[i + 1];
  }
  if (!buffer || size > 32768) return make_null(env); /* the driver allows 32,764 bytes */
  void *data;
  napi_value bytes, view;
  NAPI_CALL(env, napi_create_arraybuffer(env, size, &data, &bytes));
  if (size) memcpy(data, buffer, size);
  NAPI_CALL(env, napi_create_typedarray(env, napi_uint8_array, size, bytes, 0, &view));
  return view;
}

static napi_value dims(napi_env env, unsigned int x, unsigned int y, unsigned int z) {
  napi_value list;
  NAPI_CALL(env, napi_create_array_with_length(env, 3, &list));
  const unsigned int values[] = {x, y, z};
  for (uint32_t i = 0; i < 3; i++)
    NAPI_CALL(env, napi_set_element(env, list, i, make_uint(env, values[i])));
  return list;
}

static bool kernel_params(napi_env env, CUgraphNode node, napi_value out) {
  CUDA_KERNEL_NODE_PARAMS p;
  CUresult result = DRV(cuGraphKernelNodeGetParams, node, &p);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphKernelNodeGetParams"), false;
  return set_named(env, out, "grid", dims(env, p.gridDimX, p.gridDimY, p.gridDimZ)) &&
         set_named(env, out, "block", dims(env, p.blockDimX, p.blockDimY, p.blockDimZ)) &&
         set_named(env, out, "shared", make_uint(env, p.sharedMemBytes)) &&
         set_named(env, out, "args", kernel_args(env, p.kernelParams ? NULL : p.extra));
}

static bool memset_params(napi_env env, CUgraphNode node, napi_value out) {
  CUDA_MEMSET_NODE_PARAMS p;
  CUresult result = DRV(cuGraphMemsetNodeGetParams, node, &p);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphMemsetNodeGetParams"), false;
  return set_named(env, out, "dest", make_ptr(env, p.dst)) &&
         set_named(env, out, "value", make_uint(env, p.value)) &&
         set_named(env, out, "elementSize", make_uint(env, p.elementSize)) &&
         set_named(env, out, "width", make_uint(env, p.width)) &&
         set_named(env, out, "height", make_uint(env, p.height)) &&
         set_named(env, out, "pitch", make_uint(env, p.pitch));
}

/* A side of a copy: its device address, or null for host memory and arrays. */
static napi_value copy_side(napi_env env, CUmemorytype type, CUdeviceptr device) {
  return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED ? make_ptr(env, device)
                                                                       : make_null(env);
}

static bool memcpy_params(napi_env env, CUgraphNode node, napi_value out) {
  CUDA_MEMCPY3D p;
  CUresult result = DRV(cuGraphMemcpyNodeGetParams, node, &p);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphMemcpyNodeGetParams"), false;
  return set_named(env, out, "dest", copy_side(env, p.dstMemoryType, p.dstDevice)) &&
         set_named(env, out, "src", copy_side(env, p.srcMemoryType, p.srcDevice)) &&
         set_named(env, out, "width", make_uint(env, p.WidthInBytes)) &&
         set_named(env, out, "height", make_uint(env, p.Height)) &&
         set_named(env, out, "depth", make_uint(env, p.Depth));
}

static bool mem_alloc_params(napi_env env, CUgraphNode node, napi_value out) {
  CUDA_MEM_ALLOC_NODE_PARAMS p;
  CUresult result = DRV(cuGraphMemAllocNodeGetParams, node, &p);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphMemAllocNodeGetParams"), false;
  return set_named(env, out, "ptr", make_ptr(env, p.dptr)) &&
         set_named(env, out, "bytes", make_uint(env, p.bytesize));
}

static bool mem_free_params(napi_env env, CUgraphNode node, napi_value out) {
  CUdeviceptr ptr;
  CUresult result = DRV(cuGraphMemFreeNodeGetParams, node, &ptr);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphMemFreeNodeGetParams"), false;
  return set_named(env, out, "ptr", make_ptr(env, ptr));
}

/* graphNodeParams(graph, index): a plain object of what the driver holds for the node; null for a
 * node of another kind. */
static napi_value graph_node_params(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  graph_h *graph = graph_get(env, argv[0]);
  CUgraphNode node;
  if (!graph || !arg_node(env, argv[1], graph, &node)) return NULL;
  CUgraphNodeType type;
  CU_CALL(env, cuGraphNodeGetType, node, &type);
  bool (*read)(napi_env, CUgraphNode, napi_value) =
      type == CU_GRAPH_NODE_TYPE_KERNEL      ? kernel_params
      : type == CU_GRAPH_NODE_TYPE_MEMSET    ? memset_params
      : type == CU_GRAPH_NODE_TYPE_MEMCPY    ? memcpy_params
      : type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ? mem_alloc_params
      : type == CU_GRAPH_NODE_TYPE_MEM_FREE  ? mem_free_params
                                             : NULL;
  if (!read) return make_null(env);
  napi_value out;
  NAPI_CALL(env, napi_create_object(env, &out));
  return read(env, node, out) ? out : NULL;
}

bool graph_params_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"graphNodeParams", graph_node_params}};
  return EXPORTS(env, exports, fns);
}
