/* profiler: cuProfilerStart/Stop, and cuProfilerInitialize where the driver still has it. */
#include "driver.h"

static napi_value profiler_start(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  CU_CALL(env, cuProfilerStart);
  return NULL;
}

static napi_value profiler_stop(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  CU_CALL(env, cuProfilerStop);
  return NULL;
}

/* profilerInitialize(configFile, outputFile, mode): gone from cuda.h since CUDA 12, resolved
 * from the driver by name; where the driver lacks it, the call is a RuntimeError (DRV). */
static napi_value profiler_initialize(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  char config[4096], output[4096];
  uint32_t mode;
  if (!arg_string(env, argv[0], "configFile", config, sizeof config) ||
      !arg_string(env, argv[1], "outputFile", output, sizeof output) ||
      !arg_uint32(env, argv[2], "outputMode", &mode) || !driver_ready(env))
    return NULL;
  CU_CALL(env, cuProfilerInitialize, config, output, (CUoutput_mode)mode);
  return NULL;
}

bool profiler_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"profilerStart", profiler_start},
      {"profilerStop", profiler_stop},
      {"profilerInitialize", profiler_initialize},
  };
  return EXPORTS(env, exports, fns);
}
