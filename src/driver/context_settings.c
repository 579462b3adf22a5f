/* context_settings: the current context's device, flags and settings: its limits, cache and
 * shared-memory config, and the range of its stream priorities. */
#include "driver.h"

static napi_value ctx_get_device(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  CUdevice device;
  CU_CALL(env, cuCtxGetDevice, &device);
  return make_int(env, device);
}

static napi_value ctx_get_flags(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  unsigned int flags;
  CU_CALL(env, cuCtxGetFlags, &flags);
  return make_int(env, flags);
}

static napi_value ctx_set_limit(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  uint32_t limit;
  size_t value;
  if (!arg_uint32(env, argv[0], "limit", &limit) || !arg_size(env, argv[1], "value", &value) ||
      !driver_ready(env))
    return NULL;
  CU_CALL(env, cuCtxSetLimit, (CUlimit)limit, value);
  return NULL;
}

static napi_value ctx_get_limit(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  uint32_t limit;
  if (!arg_uint32(env, argv[0], "limit", &limit) || !driver_ready(env)) return NULL;
  size_t value;
  CU_CALL(env, cuCtxGetLimit, &value, (CUlimit)limit);
  return make_uint(env, value);
}

static napi_value ctx_set_cache_config(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  uint32_t config;
  if (!arg_uint32(env, argv[0], "config", &config) || !driver_ready(env)) return NULL;
  CU_CALL(env, cuCtxSetCacheConfig, (CUfunc_cache)config);
  return NULL;
}

static napi_value ctx_get_cache_config(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  CUfunc_cache config;
  CU_CALL(env, cuCtxGetCacheConfig, &config);
  return make_int(env, config);
}

static napi_value ctx_set_shared_config(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  uint32_t config;
  if (!arg_uint32(env, argv[0], "config", &config) || !driver_ready(env)) return NULL;
  CU_CALL(env, cuCtxSetSharedMemConfig, (CUsharedconfig)config);
  return NULL;
}

static napi_value ctx_get_shared_config(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  CUsharedconfig config;
  CU_CALL(env, cuCtxGetSharedMemConfig, &config);
  return make_int(env, config);
}

/* ctxGetStreamPriorityRange(): [least, greatest] of the current context. */
static napi_value ctx_get_stream_priority_range(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  int least, greatest;
  CU_CALL(env, cuCtxGetStreamPriorityRange, &least, &greatest);
  return make_pair(env, make_int(env, least), make_int(env, greatest));
}

bool context_settings_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"ctxGetDevice", ctx_get_device},
      {"ctxGetFlags", ctx_get_flags},
      {"ctxSetLimit", ctx_set_limit},
      {"ctxGetLimit", ctx_get_limit},
      {"ctxSetCacheConfig", ctx_set_cache_config},
      {"ctxGetCacheConfig", ctx_get_cache_config},
      {"ctxSetSharedConfig", ctx_set_shared_config},
      {"ctxGetSharedConfig", ctx_get_shared_config},
      {"ctxGetStreamPriorityRange", ctx_get_stream_priority_range},
  };
  return EXPORTS(env, exports, fns);
}
