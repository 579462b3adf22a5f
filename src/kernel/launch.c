/* launch: kernels (CUfunction), their attributes and parameter layout, and the launch.
 *
 * A launch is the hot path. lib/ packs a call's arguments into an ArrayBuffer that a launcher
 * shares with it: a header of uint32 (grid x y z, block x y z, shared bytes, the launch
 * attributes asked for and their values: launcher.h), then from byte HEADER_BYTES the kernel's
 * parameters, laid out as the kernel's parameter space. The launcher is a JS function bound in C to
 * the kernel and to that buffer, and to the stream its launches go to, which changes only when lib/
 * binds another: so a launch is one call into C taking no argument, and C reads nothing from JS
 * values. C keeps a reference to the buffer, never a pointer into it: a launch asks where its bytes
 * are, and finds a buffer detached (transferred away) empty. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher.h"

static ctx_rec *context_of_function(const handle_base *base) {
  return ((const func_h *)base)->module->ctx;
}

static const handle_kind FUNCTION_KIND = {.tag = {0x6364727666756e31ULL, 0x4b65726e656c3031ULL},
                                          .name = "Kernel",
                                          .freed = MODULE_FREED,
                                          .context = context_of_function};

static void func_release(func_h *fn) {
  if (--fn->refs > 0) return;
  module_release(fn->module);
  free(fn);
}

static void func_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  func_release(data);
}

bool func_wrap(napi_env env, napi_value obj, CUfunction handle, module_h *module) {
  func_h *fn = calloc(1, sizeof *fn);
  if (!fn) {
    throw_oom(env);
    return false;
  }
  fn->handle = handle;
  fn->module = module;
  fn->refs = 1;
  module_retain(module);
  if (!handle_wrap(env, obj, &fn->base, &FUNCTION_KIND, func_finalize)) {
    func_release(fn);
    return false;
  }
  return true;
}

func_h *func_get(napi_env env, napi_value v) {
  func_h *fn = handle_get(env, v, &FUNCTION_KIND);
  const char *gone = fn ? module_gone(fn->module) : NULL;
  if (gone) {
    throw_logic(env, gone);
    return NULL;
  }
  return fn;
}

/* ---- launchers ---- */

static const layout_field LAUNCH_LAYOUT[] = {
    {"grid", DIMS},
    {"block", DIMS + 3},
    {"shared", SHARED},
    {"attributes", ATTRIBUTES},
    {"cluster", CLUSTER},
    {"headerWords", HEADER_WORDS},
    {"headerBytes", HEADER_BYTES},
    {"priority", PRIORITY},
    {"preferredCluster", PREFERRED_CLUSTER},
    {"scheduling", SCHEDULING},
    {"syncDomain", SYNC_DOMAIN},
    {"carveout", CARVEOUT},
    {"triggerAtStart", TRIGGER_AT_START},
    {"attrCluster", ATTR_CLUSTER},
    {"attrCooperative", ATTR_COOPERATIVE},
    {"attrPriority", ATTR_PRIORITY},
    {"attrPreferredCluster", ATTR_PREFERRED_CLUSTER},
    {"attrScheduling", ATTR_SCHEDULING},
    {"attrSyncDomain", ATTR_SYNC_DOMAIN},
    {"attrCarveout", ATTR_CARVEOUT},
    {"attrSerialization", ATTR_SERIALIZATION},
    {"attrProgrammaticEvent", ATTR_PROGRAMMATIC_EVENT},
    {"attrCompletionEvent", ATTR_COMPLETION_EVENT},
};
enum { MAX_PARAM_BYTES = 32764 };

static void launcher_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  launcher *l = data;
  if (--l->refs > 0) return;
  NAPI_UNTHROWN(napi_delete_reference(env, l->buffer));
  if (l->stream_ref) NAPI_UNTHROWN(napi_delete_reference(env, l->stream_ref));
  launcher_drop_events(env, l);
  func_release(l->fn);
  free(l);
}

/* The launcher's buffer as it is now: its header, or NULL after throwing where it was detached. */
const uint32_t *launcher_header(napi_env env, const launcher *l) {
  napi_value buffer;
  void *data = NULL;
  size_t length = 0;
  napi_status status = napi_get_reference_value(env, l->buffer, &buffer);
  if (status == napi_ok) status = napi_get_arraybuffer_info(env, buffer, &data, &length);
  if (status != napi_ok) {
    napi_fail(env, status);
    return NULL;
  }
  if (length != HEADER_BYTES + l->size) {
    throw_logic(env, "this launcher's parameter buffer was detached (transferred away); get a new "
                     "launcher for the kernel");
    return NULL;
  }
  return data;
}

/* launch(): launches the kernel as the buffer says, on the bound stream. */
static napi_value launcher_launch(napi_env env, napi_callback_info info) {
  launcher *l;
  NAPI_CALL(env, napi_get_cb_info(env, info, NULL, NULL, NULL, (void **)&l));
  const char *gone = module_gone(l->fn->module);
  if (gone) return throw_logic(env, gone);
  if (!handle_alive(env, &l->fn->base)) return NULL;
  CUstream stream = NULL;
  if (l->stream) {
    if (!handle_alive(env, &l->stream->base)) return NULL;
    stream = l->stream->handle;
  }
  const uint32_t *h = launcher_header(env, l);
  if (!h) return NULL;
  /* A capture records a node of the kernel: its module stays loaded while the capture, and the
   * graph it makes, live (module.free() is refused meanwhile). */
  if (stream && captures_under_way() && !capture_pin(env, stream, l->fn->module, &MODULE_PINS))
    return NULL;
  size_t size = l->size;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (char *)h + HEADER_BYTES,
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  void **params = size ? extra : NULL;
  if (h[ATTRIBUTES]) return launch_ex(env, l, h, params, stream);
  CUresult result = DRV(cuLaunchKernel, l->fn->handle, h[DIMS], h[DIMS + 1], h[DIMS + 2],
                        h[DIMS + 3], h[DIMS + 4], h[DIMS + 5], h[SHARED], stream, NULL, params);
  return result == CUDA_SUCCESS ? NULL : launch_failed(env, result, "cuLaunchKernel", h);
}

napi_value launch_failed(napi_env env, CUresult result, const char *api, const uint32_t *h) {
  if (result != CUDA_ERROR_INVALID_VALUE) return throw_cu(env, result, api);
  return throw_cu_about(env, result, api,
                        "grid %ux%ux%u, block %ux%ux%u, %u bytes of dynamic shared memory: see the "
                        "device's maxThreadsPerBlock, maxBlockDimX..Z and maxGridDimX..Z",
                        h[DIMS], h[DIMS + 1], h[DIMS + 2], h[DIMS + 3], h[DIMS + 4], h[DIMS + 5],
                        h[SHARED]);
}

/* setStream(stream or null): the stream the next launches go to (null: the default stream). */
static napi_value launcher_set_stream(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  launcher *l;
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, (void **)&l));
  handle_bind(env, arg, &STREAM_KIND, (void **)&l->stream, &l->stream_ref);
  return NULL;
}

/* launchWait(stream or null): a Promise settled once the stream is past what is enqueued now
 * (true where it already is); a kernel's fault rejects it. */
static napi_value launch_wait(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUstream stream;
  if (!arg_stream(env, argv[0], &stream)) return NULL;
  return wait_stream(env, stream, NULL, "cuLaunchKernel");
}

/* launcherCreate(kernel, size): [launch, buffer, setStream, the graph functions, setEvents] for
 * parameters of size bytes. */
static napi_value launcher_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  func_h *fn = func_get(env, argv[0]);
  size_t size;
  if (!fn || !arg_size(env, argv[1], "size", &size)) return NULL;
  if (size > MAX_PARAM_BYTES) {
    char message[160];
    snprintf(message, sizeof message, "kernel arguments take %zu bytes; CUDA allows at most %d",
             size, MAX_PARAM_BYTES);
    return throw_range(env, message);
  }
  launcher *l = calloc(1, sizeof *l);
  if (!l) return throw_oom(env);
  void *data;
  napi_value buffer, result;
  napi_status status = napi_create_arraybuffer(env, HEADER_BYTES + size, &data, &buffer);
  if (status == napi_ok) status = napi_create_reference(env, buffer, 1, &l->buffer);
  if (status != napi_ok) {
    free(l);
    return napi_fail(env, status);
  }
  l->fn = fn;
  fn->refs++;
  l->size = size;
  static const export_fn bound[] = {
      {"launch", launcher_launch},           {"setStream", launcher_set_stream},
      {"addToGraph", launcher_add_to_graph}, {"setInGraphExec", launcher_set_in_graph_exec},
      {"setInGraph", launcher_set_in_graph}, {"setEvents", launcher_set_events}};
  enum { BOUND = sizeof bound / sizeof bound[0] };
  napi_value functions[BOUND];
  l->refs = 1; /* ours until the functions hold it */
  status = bind_functions(env, bound, BOUND, l, &l->refs, launcher_finalize, functions);
  launcher_finalize(env, l, NULL); /* lets go of ours: freed here where no function holds it */
  if (status != napi_ok) return napi_fail(env, status);
  /* [launch, buffer, setStream, addToGraph, setInGraphExec, setInGraph, setEvents] */
  NAPI_CALL(env, napi_create_array_with_length(env, BOUND + 1, &result));
  NAPI_CALL(env, napi_set_element(env, result, 0, functions[0]));
  NAPI_CALL(env, napi_set_element(env, result, 1, buffer));
  for (uint32_t i = 1; i < BOUND; i++)
    NAPI_CALL(env, napi_set_element(env, result, i + 1, functions[i]));
  return result;
}

/* ---- what the driver knows of a kernel ---- */

/* funcGetParamInfo(kernel): [offset0, size0, offset1, size1, ...] of the kernel's parameters
 * (cuFuncGetParamInfo), or null where the driver cannot tell. */
static napi_value func_get_param_info(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  func_h *fn = func_get(env, argv[0]);
  if (!fn) return NULL;
  napi_value result;
  NAPI_CALL(env, napi_create_array(env, &result));
  for (size_t i = 0; i < MAX_PARAM_BYTES; i++) {
    size_t offset, size;
    CUresult status = DRV(cuFuncGetParamInfo, fn->handle, i, &offset, &size);
    if (status == CUDA_ERROR_INVALID_VALUE) break; /* past the last parameter */
    if (status != CUDA_SUCCESS) {
      NAPI_CALL(env, napi_get_null(env, &result));
      return result;
    }
    NAPI_CALL(env, napi_set_element(env, result, (uint32_t)(2 * i), make_uint(env, offset)));
    NAPI_CALL(env, napi_set_element(env, result, (uint32_t)(2 * i + 1), make_uint(env, size)));
  }
  return result;
}

/* funcGetAttribute(kernel, attribute). */
static napi_value func_get_attribute(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  func_h *fn = func_get(env, argv[0]);
  uint32_t attribute;
  if (!fn || !arg_uint32(env, argv[1], "attribute", &attribute)) return NULL;
  int value;
  CU_CALL(env, cuFuncGetAttribute, &value, (CUfunction_attribute)attribute, fn->handle);
  return make_int(env, value);
}

/* funcSetAttribute(kernel, attribute, value). */
static napi_value func_set_attribute(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  func_h *fn = func_get(env, argv[0]);
  uint32_t attribute;
  int32_t value;
  if (!fn || !arg_uint32(env, argv[1], "attribute", &attribute) ||
      !arg_int32(env, argv[2], "value", &value))
    return NULL;
  CU_CALL(env, cuFuncSetAttribute, fn->handle, (CUfunction_attribute)attribute, value);
  return NULL;
}

/* funcSetCacheConfig(kernel, config). */
static napi_value func_set_cache_config(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  func_h *fn = func_get(env, argv[0]);
  uint32_t config;
  if (!fn || !arg_uint32(env, argv[1], "config", &config)) return NULL;
  CU_CALL(env, cuFuncSetCacheConfig, fn->handle, (CUfunc_cache)config);
  return NULL;
}

/* funcSetSharedMemConfig(kernel, config). */
static napi_value func_set_shared_mem_config(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  func_h *fn = func_get(env, argv[0]);
  uint32_t config;
  if (!fn || !arg_uint32(env, argv[1], "config", &config)) return NULL;
  CU_CALL(env, cuFuncSetSharedMemConfig, fn->handle, (CUsharedconfig)config);
  return NULL;
}

bool launch_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"launcherCreate", launcher_create},
      {"launchWait", launch_wait},
      {"funcGetParamInfo", func_get_param_info},
      {"funcGetAttribute", func_get_attribute},
      {"funcSetAttribute", func_set_attribute},
      {"funcSetCacheConfig", func_set_cache_config},
      {"funcSetSharedMemConfig", func_set_shared_mem_config},
  };
  return EXPORTS(env, exports, fns) && EXPORT_LAYOUT(env, exports, "launch", LAUNCH_LAYOUT);
}
