/* errors: every failure reaches JS through one factory that lib/errors.js registers, so the
 * error class (MemoryError, LaunchError...) is chosen in one place, from one table. */
#include <stdarg.h>
#include <stdio.h>

#include "core.h"

/* What a Node-API call expected where it got another type: the caller passed a wrong value. */
static const char *expected_type(napi_status status) {
  switch (status) {
  case napi_object_expected: return "an object";
  case napi_string_expected: return "a string";
  case napi_name_expected: return "a string or symbol";
  case napi_function_expected: return "a function";
  case napi_number_expected: return "a number";
  case napi_boolean_expected: return "a boolean";
  case napi_array_expected: return "an array";
  case napi_bigint_expected: return "a bigint";
  case napi_arraybuffer_expected: return "an ArrayBuffer";
  case napi_detachable_arraybuffer_expected: return "a detachable ArrayBuffer";
  default: return NULL;
  }
}

napi_value napi_fail(napi_env env, napi_status status) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) != napi_ok || pending) return NULL;
  const char *expected = expected_type(status);
  char message[256];
  if (expected) {
    snprintf(message, sizeof message, "cudadrv: an argument is not %s", expected);
    NAPI_UNTHROWN(napi_throw_type_error(env, NULL, message));
  } else {
    const napi_extended_error_info *info = NULL;
    if (napi_get_last_error_info(env, &info) != napi_ok) info = NULL;
    snprintf(message, sizeof message, "cudadrv internal error: Node-API status %d (%s)",
             (int)status, info && info->error_message ? info->error_message : "no message");
    NAPI_UNTHROWN(napi_throw_error(env, NULL, message));
  }
  return NULL;
}

/* kind: "cuda" (a driver result), "logic" (use after free, wrong state), "runtime" or "memory"
 * (the host is out of memory). The error lib/'s factory makes, or a plain Error with the message
 * before the factory is registered; NULL with an exception pending where one could not be made. */
static napi_value make_error(napi_env env, int64_t code, const char *api, const char *message,
                             const char *kind) {
  napi_value factory = NULL, global, argv[4], result = NULL;
  addon_state *state = state_of(env);
  napi_status status = napi_create_int64(env, code, &argv[0]);
  if (status == napi_ok)
    status = api ? napi_create_string_utf8(env, api, NAPI_AUTO_LENGTH, &argv[1])
                 : napi_get_null(env, &argv[1]);
  if (status == napi_ok)
    status = message ? napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &argv[2])
                     : napi_get_null(env, &argv[2]);
  if (status == napi_ok) status = napi_create_string_utf8(env, kind, NAPI_AUTO_LENGTH, &argv[3]);
  if (status == napi_ok && state && state->error_factory)
    status = napi_get_reference_value(env, state->error_factory, &factory);
  if (status == napi_ok && factory) {
    status = napi_get_global(env, &global);
    if (status == napi_ok) status = napi_call_function(env, global, factory, 4, argv, &result);
  } else if (status == napi_ok) {
    napi_value text;
    status =
        napi_create_string_utf8(env, message ? message : "CUDA error", NAPI_AUTO_LENGTH, &text);
    if (status == napi_ok) status = napi_create_error(env, NULL, text, &result);
  }
  if (status != napi_ok) return napi_fail(env, status); /* the factory's own throw stays pending */
  return result;
}

static napi_value throw_value(napi_env env, napi_value error) {
  if (error) NAPI_UNTHROWN(napi_throw(env, error));
  return NULL;
}

/* The driver's own description, or NULL where no driver is loaded (lib falls back to the name). */
static const char *cu_description(CUresult result) {
  const char *text = NULL;
  if (loader_opened() && cu.cuGetErrorString && cu.cuGetErrorString(result, &text) != CUDA_SUCCESS)
    text = NULL;
  return text;
}

/* The RuntimeError for an entry point the loaded driver lacks. */
static napi_value make_missing_error(napi_env env, const char *api) {
  char message[320];
  int version = 0, needs = loader_entry_version(api);
  if (cu.cuDriverGetVersion) cu.cuDriverGetVersion(&version);
  snprintf(message, sizeof message,
           "%s is not provided by the installed CUDA driver (version %d.%d); it needs a driver for "
           "CUDA %d.%d or newer: update the NVIDIA driver to use it",
           api, version / 1000, version % 1000 / 10, needs / 1000, needs % 1000 / 10);
  return make_error(env, CUDA_ERROR_NOT_SUPPORTED, api, message, "runtime");
}

napi_value make_cu_error(napi_env env, CUresult result, const char *api) {
  if (result == CUDADRV_ERROR_MISSING) return make_missing_error(env, api);
  return make_error(env, (int64_t)result, api, cu_description(result), "cuda");
}

napi_value throw_cu(napi_env env, CUresult result, const char *api) {
  return throw_value(env, make_cu_error(env, result, api));
}

napi_value throw_cu_about(napi_env env, CUresult result, const char *api, const char *format, ...) {
  if (result == CUDADRV_ERROR_MISSING) return throw_cu(env, result, api);
  char subject[320], message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(subject, sizeof subject, format, args);
  va_end(args);
  const char *text = cu_description(result);
  if (!text && cu.cuGetErrorName && cu.cuGetErrorName(result, &text) != CUDA_SUCCESS) text = NULL;
  snprintf(message, sizeof message, "%s (%s)", text ? text : "unknown error", subject);
  return throw_value(env, make_error(env, (int64_t)result, api, message, "cuda"));
}

napi_value throw_logic(napi_env env, const char *message) {
  return throw_value(env, make_error(env, CUDA_ERROR_INVALID_HANDLE, NULL, message, "logic"));
}

napi_value throw_type(napi_env env, const char *message) {
  NAPI_UNTHROWN(napi_throw_type_error(env, NULL, message));
  return NULL;
}

/* A MemoryError, which lib/'s allocations answer with a collection and one more try. */
napi_value throw_oom(napi_env env) {
  return throw_value(env, make_error(env, CUDA_ERROR_OUT_OF_MEMORY, "malloc",
                                     "out of host memory; free memory or allocate less", "memory"));
}

napi_value throw_range(napi_env env, const char *message) {
  NAPI_UNTHROWN(napi_throw_range_error(env, NULL, message));
  return NULL;
}

napi_value throw_runtime(napi_env env, int code, const char *api, const char *message) {
  return throw_value(env, make_error(env, code, api, message, "runtime"));
}

bool driver_ready(napi_env env) {
  CUresult status = loader_load();
  if (status == CUDA_SUCCESS) return true;
  if (status == CUDA_ERROR_SHARED_OBJECT_INIT_FAILED && !loader_opened())
    throw_value(env, make_error(env, status, "dlopen", loader_error(), "runtime"));
  else if (!cu.cuInit)
    throw_value(env, make_error(env, status, "cuGetProcAddress", loader_error(), "runtime"));
  else
    throw_cu(env, status, "cuInit");
  return false;
}

/* setErrorFactory(fn): lib/errors.js hands over the function that builds every error. */
static napi_value set_error_factory(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  napi_valuetype type;
  NAPI_CALL(env, napi_typeof(env, argv[0], &type));
  if (type != napi_function) return throw_type(env, "setErrorFactory expects a function");
  addon_state *state = state_of(env);
  napi_ref factory;
  NAPI_CALL(env, napi_create_reference(env, argv[0], 1, &factory));
  if (state->error_factory) NAPI_UNTHROWN(napi_delete_reference(env, state->error_factory));
  state->error_factory = factory;
  return NULL;
}

/* errorForResult(code, api): the error a failing driver call gives; for tests without a GPU. */
static napi_value error_for_result(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  int32_t code;
  char api[128];
  if (!arg_int32(env, argv[0], "code", &code) || !arg_string(env, argv[1], "api", api, sizeof api))
    return NULL;
  return make_cu_error(env, (CUresult)code, api);
}

/* isAvailable(): true when the driver loads and cuInit succeeds; never throws. */
static napi_value is_available(napi_env env, napi_callback_info info) {
  (void)info;
  return make_bool(env, loader_load() == CUDA_SUCCESS);
}

/* init(flags): cuInit already ran with 0 on first use; later flags are checked by the driver. */
static napi_value init(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  uint32_t flags = 0;
  napi_valuetype type;
  NAPI_CALL(env, napi_typeof(env, argv[0], &type));
  if (type != napi_undefined && !arg_uint32(env, argv[0], "flags", &flags)) return NULL;
  if (!driver_ready(env)) return NULL;
  CU_CALL(env, cuInit, flags);
  return NULL;
}

static napi_value driver_get_version(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  int version;
  CU_CALL(env, cuDriverGetVersion, &version);
  return make_int(env, version);
}

typedef struct {
  napi_env env;
  napi_value list;
  uint32_t count;
  bool failed;
} missing_list;

static void add_missing(const char *name, int version, void *data) {
  missing_list *m = data;
  napi_value pair, text, needs;
  if (m->failed) return;
  m->failed = napi_create_array_with_length(m->env, 2, &pair) != napi_ok ||
              napi_create_string_utf8(m->env, name, NAPI_AUTO_LENGTH, &text) != napi_ok ||
              napi_create_int32(m->env, version, &needs) != napi_ok ||
              napi_set_element(m->env, pair, 0, text) != napi_ok ||
              napi_set_element(m->env, pair, 1, needs) != napi_ok ||
              napi_set_element(m->env, m->list, m->count++, pair) != napi_ok;
}

/* driverMissingEntries(): [[name, version], ...] of the entry points the installed driver lacks,
 * each with the CUDA version that provides it. */
static napi_value driver_missing_entries(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  missing_list m = {env, NULL, 0, false};
  NAPI_CALL(env, napi_create_array(env, &m.list));
  loader_each_missing(add_missing, &m);
  if (m.failed) return napi_fail(env, napi_generic_failure);
  return m.list;
}

/* The CUDA version of the headers this addon was built against. */
static napi_value header_version(napi_env env, napi_callback_info info) {
  (void)info;
  return make_int(env, CUDA_VERSION);
}

bool errors_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"setErrorFactory", set_error_factory},
      {"errorForResult", error_for_result},
      {"isAvailable", is_available},
      {"init", init},
      {"driverGetVersion", driver_get_version},
      {"driverMissingEntries", driver_missing_entries},
      {"headerVersion", header_version},
  };
  return EXPORTS(env, exports, fns);
}

/* ---- Promises already settled ---- */

napi_value promise_rejected(napi_env env, CUresult result, const char *api) {
  napi_deferred deferred;
  napi_value promise;
  NAPI_CALL(env, napi_create_promise(env, &deferred, &promise));
  napi_value error = make_cu_error(env, result, api);
  if (!error) return NULL;
  NAPI_CALL(env, napi_reject_deferred(env, deferred, error));
  return promise;
}
