/* graph_copy: copy nodes of graphs, 1D between device memory and device or page-locked host
 * memory, 2D and 3D as a Memcpy2D or Memcpy3D describes (device, host, unified memory, arrays).
 * A host side must lie in a live page-locked (or managed) allocation of cudadrv's, which the node
 * pins, as it pins a CudaArray side: their free() is refused while a Graph or GraphExec may copy
 * to or from them (lib/ keeps them with the graph, and an array collected meanwhile leaves its
 * CUarray to the last pin). Device addresses are lib/'s to check against the allocations they
 * name: a wrong one is the driver's error, in device memory. */
#include <stdio.h>

#include "host_memory.h"

typedef struct copy_node {
  CUcontext ctx; /* a copy node runs in the context current when it is made */
  CUDA_MEMCPY3D copy;
} copy_node;

static CUresult make_copy(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                          CUgraphNode *node) {
  copy_node *c = arg;
  return DRV(cuGraphAddMemcpyNode, node, graph, deps, count, &c->copy, c->ctx);
}

/* Whether node is a live page-locked or managed allocation holding the bytes range = {address,
 * size}. */
static bool pinned_holds(const tracked *node, const void *arg) {
  const uintptr_t *range = arg;
  if (node->reclaim != host_reclaim) return false;
  const host_mem *h = host_of(node);
  uintptr_t start = (uintptr_t)h->data;
  return (h->origin == HOST_PINNED || h->origin == HOST_MANAGED) && !h->base.freed &&
         range[0] >= start && range[0] - start <= h->size &&
         range[1] <= h->size - (range[0] - start);
}

/* The allocation holding the bytes of host array v (bytes of them at least, where not 0), or NULL
 * after throwing: a TypeError where v is not in page-locked or managed memory of cudadrv's. */
static host_mem *pinned_array(napi_env env, napi_value v, const char *name, size_t bytes,
                              void **data) {
  size_t length;
  if (!arg_host(env, v, name, data, &length)) return NULL;
  char message[320];
  if (length < bytes) {
    snprintf(message, sizeof message, "%s holds %zu bytes, fewer than the %zu to copy", name,
             length, bytes);
    return throw_range(env, message), NULL;
  }
  uintptr_t range[2] = {(uintptr_t)*data, length};
  tracked *node = memory_find(env, pinned_holds, range);
  if (node) return host_of(node);
  snprintf(message, sizeof message,
           "%s must be device memory or an array of page-locked memory (pagelockedEmpty()): "
           "a graph copies at every launch, into or out of memory that must stay where it is",
           name);
  return throw_type(env, message), NULL;
}

bool capture_pin_host(napi_env env, CUstream stream, void *data, size_t bytes) {
  cuuint64_t id;
  if (!capture_recording(stream, &id)) return true;
  uintptr_t range[2] = {(uintptr_t)data, bytes};
  tracked *node = memory_find(env, pinned_holds, range);
  if (!node)
    return throw_logic(env, "a capture records a copy of host memory for its graph to make at "
                            "every launch: give it page-locked or managed memory of cudadrv's "
                            "(pagelockedEmpty(), managedEmpty()), which the graph keeps, not "
                            "ordinary memory that JavaScript may free or move meanwhile"),
           false;
  return capture_pin_id(env, id, host_of(node), &HOST_PINS);
}

/* capture_pin_sides for one side. */
static bool capture_pin_side(napi_env env, CUstream stream, CUmemorytype type, napi_value v) {
  void *data;
  size_t bytes;
  if (type == CU_MEMORYTYPE_ARRAY) return capture_pin_array(env, stream, v);
  return is_undefined(env, v) ||
         (arg_host(env, v, "host", &data, &bytes) && capture_pin_host(env, stream, data, bytes));
}

bool capture_pin_sides(napi_env env, CUstream stream, CUmemorytype src_type, napi_value src,
                       CUmemorytype dst_type, napi_value dst) {
  if (!captures_under_way()) return true; /* one load */
  return capture_pin_side(env, stream, src_type, src) &&
         capture_pin_side(env, stream, dst_type, dst);
}

/* One side of a copy of bytes bytes: a device address (a bigint or number), or a host array in
 * page-locked memory, whose allocation is *pinned. false after throwing. */
static bool copy_side(napi_env env, napi_value v, const char *name, size_t bytes,
                      CUmemorytype *type, CUdeviceptr *device, const void **host,
                      host_mem **pinned) {
  napi_valuetype kind;
  NAPI_CALL_BOOL(env, napi_typeof(env, v, &kind));
  if (kind == napi_bigint || kind == napi_number) {
    *type = CU_MEMORYTYPE_DEVICE;
    return arg_ptr(env, v, name, device);
  }
  void *data;
  if (!(*pinned = pinned_array(env, v, name, bytes, &data))) return false;
  *type = CU_MEMORYTYPE_HOST;
  *host = data;
  return true;
}

/* The current context's handle into c; false after throwing. */
static bool in_current(napi_env env, copy_node *c) {
  ctx_rec *rec = driver_ready(env) ? ctx_rec_current(env) : NULL;
  if (!rec) return false;
  c->ctx = rec->handle;
  ctx_rec_release(rec);
  return true;
}

/* The copy of the arguments (dest, src, bytes) at argv, each side a device address or an array of
 * page-locked memory (not both host), in the current context; *pinned the host side's
 * allocation, or NULL. false after throwing. */
static bool read_memcpy(napi_env env, const napi_value *argv, copy_node *c, host_mem **pinned) {
  CUDA_MEMCPY3D *p = &c->copy;
  host_mem *dest_pin = NULL, *src_pin = NULL;
  const void *dest_host = NULL;
  size_t bytes;
  if (!arg_size(env, argv[2], "bytes", &bytes)) return false;
  if (!bytes) return throw_range(env, "a copy node copies at least one byte"), false;
  if (!copy_side(env, argv[0], "dest", bytes, &p->dstMemoryType, &p->dstDevice, &dest_host,
                 &dest_pin) ||
      !copy_side(env, argv[1], "src", bytes, &p->srcMemoryType, &p->srcDevice, &p->srcHost,
                 &src_pin))
    return false;
  if (dest_pin && src_pin)
    return throw_type(env, "a copy node copies to or from device memory; copy between two host "
                           "arrays on the host"),
           false;
  p->dstHost = (void *)dest_host; /* the driver writes it */
  p->WidthInBytes = bytes;
  p->Height = p->Depth = 1;
  *pinned = dest_pin ? dest_pin : src_pin;
  return in_current(env, c);
}

/* Adds c's node to the graph argv[0] after argv[1], pinning what its sides name (count pins of
 * pins: a host side's allocation, arrays) and the current context, which the node runs in. */
static napi_value add_copy_node(napi_env env, const napi_value *argv, copy_node *c,
                                const graph_pin *pins, uint32_t count) {
  napi_value index =
      graph_add_node_pins(env, argv[0], argv[1], make_copy, c, "cuGraphAddMemcpyNode", pins, count);
  return index && graph_pin_current(env, argv[0]) ? index : NULL;
}

/* graphAddMemcpy(graph, deps, dest, src, bytes): a copy of bytes bytes from src to dest. */
static napi_value graph_add_memcpy(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  copy_node c = {0};
  host_mem *pinned;
  if (!read_memcpy(env, argv + 2, &c, &pinned)) return NULL;
  graph_pin pin = {pinned, &HOST_PINS};
  return add_copy_node(env, argv, &c, &pin, pinned ? 1 : 0);
}

/* graphSetMemcpy(exec or null, graph, node, dest, src, bytes): the copy node copies that from now
 * on, in exec or (null) in graph, which pins a host side's allocation first. */
static napi_value graph_set_memcpy(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  copy_node c = {0};
  host_mem *pinned;
  CUgraphExec exec;
  CUgraphNode node;
  if (!graph_node_target(env, argv, &exec, &node) || !read_memcpy(env, argv + 3, &c, &pinned) ||
      (pinned && !graph_target_pin(env, argv, pinned, &HOST_PINS)))
    return NULL;
  if (exec)
    CU_CALL(env, cuGraphExecMemcpyNodeSetParams, exec, node, &c.copy, c.ctx);
  else
    CU_CALL(env, cuGraphMemcpyNodeSetParams, node, &c.copy);
  return NULL;
}

/* graphAddCopy(graph, deps, fields, srcHost, dstHost, planar): the copy a Memcpy2D (planar) or
 * Memcpy3D describes; a host side (or a unified one given as an array) must be page-locked or
 * managed memory of cudadrv's, pinned with the node; not both. */
static napi_value graph_add_copy(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  copy_node c = {0};
  bool planar;
  if (!arg_bool(env, argv[5], &planar) ||
      !read_copy_3d(env, argv[2], argv[3], argv[4], planar, &c.copy))
    return NULL;
  const CUDA_MEMCPY3D *p = &c.copy;
  if (!p->WidthInBytes || !p->Height || !p->Depth)
    return throw_range(env, "a copy node copies at least one byte");
  host_mem *pinned = NULL;
  graph_pin pins[2]; /* the sides' arrays and host allocation */
  uint32_t count = 0;
  const CUmemorytype types[] = {p->srcMemoryType, p->dstMemoryType};
  const char *names[] = {"src", "dest"};
  for (int i = 0; i < 2; i++) {
    void *data;
    if (types[i] == CU_MEMORYTYPE_ARRAY) {
      array_h *array = handle_get(env, argv[3 + i], &ARRAY_KIND);
      node_use *use = array ? array_use_of(array) : NULL;
      if (array && !use) return throw_oom(env);
      if (!use) return NULL;
      pins[count++] = (graph_pin){use, &USE_PINS};
      continue;
    }
    if (types[i] == CU_MEMORYTYPE_DEVICE || is_undefined(env, argv[3 + i]))
      continue; /* device memory (a unified side given as an address) */
    if (pinned)
      return throw_type(env, "a copy node copies to or from device memory or an array; copy "
                             "between two host arrays on the host");
    if (!(pinned = pinned_array(env, argv[3 + i], names[i], 0, &data))) return NULL;
    pins[count++] = (graph_pin){pinned, &HOST_PINS};
  }
  if (!in_current(env, &c)) return NULL;
  return add_copy_node(env, argv, &c, pins, count);
}

bool graph_copy_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"graphAddMemcpy", graph_add_memcpy},
                                  {"graphSetMemcpy", graph_set_memcpy},
                                  {"graphAddCopy", graph_add_copy}};
  return EXPORTS(env, exports, fns);
}
