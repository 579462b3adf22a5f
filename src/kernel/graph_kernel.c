/* graph_kernel: kernel nodes of graphs, made and changed from a launcher's buffer, which a call's
 * arguments were packed into as for a launch: the header's grid, block and shared bytes, then the
 * parameters, which the driver copies. */
#include <stdio.h>
#include <string.h>

#include "launcher.h"

static CUresult make_kernel_node(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                                 CUgraphNode *node) {
  return DRV(cuGraphAddKernelNode, node, graph, deps, count, arg);
}

/* The kernel node parameters the header h and the parameter bytes after it describe; extra must
 * outlive them. NULL after throwing: a graph's kernel node takes no launch attributes. */
static const CUDA_KERNEL_NODE_PARAMS *node_params(napi_env env, const launcher *l,
                                                  const uint32_t *h, void **extra, size_t *size,
                                                  CUDA_KERNEL_NODE_PARAMS *params) {
  if (h[ATTRIBUTES]) {
    throw_range(env, "a graph's kernel node takes no cluster or cooperative launch yet; capture "
                     "such a launch from a stream instead");
    return NULL;
  }
  *size = l->size;
  void *buffer[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (char *)h + HEADER_BYTES,
                    CU_LAUNCH_PARAM_BUFFER_SIZE, size, CU_LAUNCH_PARAM_END};
  memcpy(extra, buffer, sizeof buffer);
  *params = (CUDA_KERNEL_NODE_PARAMS){.func = l->fn->handle,
                                      .gridDimX = h[DIMS],
                                      .gridDimY = h[DIMS + 1],
                                      .gridDimZ = h[DIMS + 2],
                                      .blockDimX = h[DIMS + 3],
                                      .blockDimY = h[DIMS + 4],
                                      .blockDimZ = h[DIMS + 5],
                                      .sharedMemBytes = h[SHARED],
                                      .extra = l->size ? extra : NULL};
  return params;
}

/* The launcher a bound function was called with, its kernel usable and its buffer's header; NULL
 * after throwing. */
static const uint32_t *launcher_of_call(napi_env env, napi_callback_info info, size_t count,
                                        napi_value *argv, launcher **l) {
  size_t argc = count;
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, (void **)l));
  const char *gone = module_gone((*l)->fn->module);
  if (gone) {
    throw_logic(env, gone);
    return NULL;
  }
  if (!handle_alive(env, &(*l)->fn->base)) return NULL;
  return launcher_header(env, *l);
}

/* Whether node runs l's kernel; false after throwing a LogicError (a node's kernel cannot change:
 * what its graph pins stays the same). */
static bool same_kernel(napi_env env, const launcher *l, CUgraphNode node, const char *method) {
  CUDA_KERNEL_NODE_PARAMS now;
  CUresult result = DRV(cuGraphKernelNodeGetParams, node, &now);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuGraphKernelNodeGetParams"), false;
  if (now.func == l->fn->handle) return true;
  char message[160];
  snprintf(message, sizeof message,
           "%s: the node runs another kernel; a node's kernel cannot change", method);
  return throw_logic(env, message), false;
}

/* setInGraphExec(exec, graph, node): the kernel node of exec launches as the buffer says now; it
 * must run this kernel already. */
napi_value launcher_set_in_graph_exec(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  launcher *l;
  const uint32_t *h = launcher_of_call(env, info, 3, argv, &l);
  CUgraphExec exec;
  CUgraphNode node;
  if (!h || !graph_exec_node(env, argv, &exec, &node) ||
      !same_kernel(env, l, node, "exec.setKernelArgs()"))
    return NULL;
  void *extra[5];
  size_t size;
  CUDA_KERNEL_NODE_PARAMS params;
  if (!node_params(env, l, h, extra, &size, &params)) return NULL;
  CU_CALL(env, cuGraphExecKernelNodeSetParams, exec, node, &params);
  return NULL;
}

/* setInGraph(graph, node): the kernel node of graph launches as the buffer says now (in the
 * GraphExecs instantiated from then on); it must run this kernel already. */
napi_value launcher_set_in_graph(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  launcher *l;
  const uint32_t *h = launcher_of_call(env, info, 2, argv, &l);
  CUgraphNode node;
  if (!h || !graph_node_arg(env, argv[0], argv[1], &node) ||
      !same_kernel(env, l, node, "graph.setKernelArgs()"))
    return NULL;
  void *extra[5];
  size_t size;
  CUDA_KERNEL_NODE_PARAMS params;
  if (!node_params(env, l, h, extra, &size, &params)) return NULL;
  CU_CALL(env, cuGraphKernelNodeSetParams, node, &params);
  return NULL;
}

/* addToGraph(graph, deps): a kernel node of graph, after the nodes deps names, launching as the
 * buffer says now (the driver copies the parameters); its module stays loaded while the graph or
 * a GraphExec of it lives. The node's index. */
napi_value launcher_add_to_graph(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  launcher *l;
  const uint32_t *h = launcher_of_call(env, info, 2, argv, &l);
  void *extra[5];
  size_t size;
  CUDA_KERNEL_NODE_PARAMS params;
  if (!h || !node_params(env, l, h, extra, &size, &params)) return NULL;
  return graph_add_node(env, argv[0], argv[1], make_kernel_node, &params, "cuGraphAddKernelNode",
                        l->fn->module, &MODULE_PINS);
}
