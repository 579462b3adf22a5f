/* module: CUmodule objects (PTX, cubin, fatbin loaded into a context), their functions, globals,
 * and the texture and surface references their PTX or cubin declares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "module.h"

static ctx_rec *context_of_module(const handle_base *base) { return ((const module_h *)base)->ctx; }

static const handle_kind MODULE_KIND = {.tag = {0x636472766d6f6431ULL, 0x4d6f64756c653031ULL},
                                        .name = "Module",
                                        .freed = "this Module has been freed; load it again",
                                        .context = context_of_module};

void module_retain(module_h *module) { module->refs++; }

void module_release(module_h *module) {
  if (--module->refs > 0) return;
  ctx_rec_release(module->ctx);
  if (module->library) library_release(module->library);
  free(module);
}

static void module_pin(void *obj) {
  module_h *module = obj;
  module->pins++;
  module_retain(module);
  if (module->library) library_pin(module->library, 1);
}

static void module_unload(module_h *module);

static void module_unpin(void *obj) {
  module_h *module = obj;
  if (--module->pins == 0 && module->unload_pending) {
    module->unload_pending = false;
    module_unload(module);
  }
  if (module->library) library_pin(module->library, -1);
  module_release(module);
}

/* A module (a library's view) goes with its context, and its kernels with it. */
static ctx_rec *module_context(void *obj) { return ((module_h *)obj)->ctx; }

const graph_pin_ops MODULE_PINS = {module_pin, module_unpin, module_context};

const char MODULE_FREED[] =
    "this kernel's Module has been freed; load the module again and get the kernel from it";

module_h *module_view(library_h *library, ctx_rec *ctx) {
  module_h *view = calloc(1, sizeof *view);
  if (!view) return NULL;
  view->ctx = ctx_rec_retain(ctx);
  view->library = library;
  view->refs = 1;
  return view;
}

/* Unloads in the module's own context, whatever context is current. */
static void module_unload(module_h *module) {
  module->base.freed = true;
  if (ctx_enter(module->ctx)) {
    stats_cleanup(DRV(cuModuleUnload, module->handle));
    ctx_leave();
  }
}

static void module_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  module_h *module = data;
  if (module->pins) /* a Graph or GraphExec collected after it may still launch its kernels */
    module->unload_pending = !module->base.freed;
  else if (!module->base.freed)
    module_unload(module);
  module_release(module);
}

/* Wraps handle (loaded in ctx, whose reference it takes over) around obj. */
static bool module_wrap(napi_env env, napi_value obj, CUmodule handle, ctx_rec *ctx) {
  module_h *module = calloc(1, sizeof *module);
  if (!module) {
    DRV(cuModuleUnload, handle);
    ctx_rec_release(ctx);
    throw_oom(env);
    return false;
  }
  module->handle = handle;
  module->ctx = ctx;
  module->refs = 1;
  if (!handle_wrap(env, obj, &module->base, &MODULE_KIND, module_finalize)) {
    module_unload(module);
    module_release(module);
    return false;
  }
  return true;
}

module_h *get_module(napi_env env, napi_value v) { return handle_get(env, v, &MODULE_KIND); }

/* ---- loading ---- */

/* The bytes of a Uint8Array (lib/ passes every image as one). */
bool arg_bytes(napi_env env, napi_value v, const char *name, const uint8_t **data, size_t *length) {
  bool is_typed = false;
  napi_typedarray_type type;
  void *bytes;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, v, &type, length, &bytes, NULL, NULL) != napi_ok ||
      type != napi_uint8_array) {
    char message[128];
    snprintf(message, sizeof message, "%s must be a Buffer", name);
    throw_type(env, message);
    return false;
  }
  *data = bytes;
  return true;
}

static uint64_t read_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static bool within(uint64_t offset, uint64_t size, size_t length) {
  return offset <= length && size <= length - offset;
}

/* The driver reads a cubin or fatbin by the sizes inside it, not by the buffer's length: check
 * that everything those sizes reach lies within the buffer (PTX is read up to its NUL, which the
 * copy appends). */
const char *image_problem(const uint8_t *p, size_t length) {
  static const char truncated[] = "image is truncated: its headers reach past its end";
  if (length >= 4 && memcmp(p,
                            "\x7f"
                            "ELF",
                            4) == 0) {
    if (length < 64 || p[4] != 2) return "image is an ELF file but not a 64-bit cubin";
    uint64_t phoff = read_le(p + 0x20, 8), shoff = read_le(p + 0x28, 8);
    uint64_t phentsize = read_le(p + 0x36, 2), phnum = read_le(p + 0x38, 2);
    uint64_t shentsize = read_le(p + 0x3a, 2), shnum = read_le(p + 0x3c, 2);
    if (!within(phoff, phentsize * phnum, length) || !within(shoff, shentsize * shnum, length))
      return truncated;
    if (shnum && shentsize < 0x28) return truncated;
    for (uint64_t i = 0; i < shnum; i++) {
      const uint8_t *section = p + shoff + i * shentsize;
      uint32_t type = (uint32_t)read_le(section + 4, 4);
      /* SHT_NOBITS, and the CUDA kind a relocatable cubin's .nv.global has: no bytes in the file */
      if (type != 8 && type != 0x70000007 &&
          !within(read_le(section + 0x18, 8), read_le(section + 0x20, 8), length))
        return truncated;
    }
    return NULL;
  }
  if (length >= 4 && read_le(p, 4) == 0xBA55ED50u) {
    /* A fatbin: a header (magic, version, its own size, the size of what follows), then entries,
     * each a header (kind, version, its own size, the size of its payload...) and its payload. */
    if (length < 16) return truncated;
    uint64_t at = read_le(p + 6, 2), size = read_le(p + 8, 8);
    if (at < 16 || !within(at, size, length)) return truncated;
    uint64_t end = at + size;
    while (end - at >= 16) {
      uint64_t header = read_le(p + at + 4, 4), payload = read_le(p + at + 8, 8);
      if (header < 16 || !within(header, payload, end - at)) return truncated;
      at += header + payload;
    }
    return NULL;
  }
  if (length >= 4 && read_le(p, 4) == 0x466243B1u)
    return "image is a fatbin wrapper (it holds a pointer); pass the fatbin itself";
  return NULL;
}

/* JIT options whose value is a pointer or a buffer size: cudadrv collects the logs itself, and
 * takes no pointer from JS. */
static bool option_allowed(uint32_t option) {
  switch (option) {
  case CU_JIT_WALL_TIME:
  case CU_JIT_INFO_LOG_BUFFER:
  case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
  case CU_JIT_ERROR_LOG_BUFFER:
  case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
  case CU_JIT_GLOBAL_SYMBOL_NAMES:
  case CU_JIT_GLOBAL_SYMBOL_ADDRESSES:
  case CU_JIT_GLOBAL_SYMBOL_COUNT:
  case CU_JIT_REFERENCED_KERNEL_NAMES:
  case CU_JIT_REFERENCED_KERNEL_COUNT:
  case CU_JIT_REFERENCED_VARIABLE_NAMES:
  case CU_JIT_REFERENCED_VARIABLE_COUNT: return false;
  default: return option < CU_JIT_NUM_OPTIONS;
  }
}

enum { LOG_BYTES = 32768 };

bool jit_options_read(napi_env env, napi_value keys, napi_value values, CUjit_option *options,
                      void **option_values, uint32_t *count) {
  uint32_t n, m;
  if (napi_get_array_length(env, keys, &n) != napi_ok ||
      napi_get_array_length(env, values, &m) != napi_ok || n != m) {
    throw_type(env, "JIT options must be two arrays of the same length");
    return false;
  }
  if (n > MAX_JIT_OPTIONS) {
    throw_range(env, "at most 32 JIT options");
    return false;
  }
  for (uint32_t i = 0; i < n; i++) {
    napi_value key, value;
    uint32_t option, number;
    NAPI_CALL_BOOL(env, napi_get_element(env, keys, i, &key));
    NAPI_CALL_BOOL(env, napi_get_element(env, values, i, &value));
    if (!arg_uint32(env, key, "JIT option", &option) ||
        !arg_uint32(env, value, "JIT option value", &number))
      return false;
    if (!option_allowed(option)) {
      char message[200];
      snprintf(message, sizeof message,
               "JIT option %u is not accepted: cudadrv collects the JIT logs itself (pass a "
               "messageHandler) and takes no pointer-valued options",
               option);
      throw_range(env, message);
      return false;
    }
    options[i] = (CUjit_option)option;
    option_values[i] = (void *)(uintptr_t)number;
  }
  *count = n;
  return true;
}

static napi_value string_of(napi_env env, char *buffer) {
  buffer[LOG_BYTES - 1] = '\0';
  napi_value s;
  NAPI_CALL(env, napi_create_string_utf8(env, buffer, NAPI_AUTO_LENGTH, &s));
  return s;
}

napi_value image_load(napi_env env, const napi_value *argv, image_loader load, void *arg) {
  const uint8_t *image;
  size_t length;
  CUjit_option options[MAX_JIT_OPTIONS + 4];
  void *values[MAX_JIT_OPTIONS + 4];
  uint32_t count;
  if (!arg_bytes(env, argv[1], "image", &image, &length) ||
      !jit_options_read(env, argv[2], argv[3], options, values, &count))
    return NULL;
  if (length == 0) return throw_range(env, "image must not be empty");
  const char *problem = image_problem(image, length);
  if (problem) return throw_range(env, problem);
  char *copy = malloc(length + 1), *logs = calloc(2, LOG_BYTES);
  if (!copy || !logs) {
    free(copy);
    free(logs);
    return throw_oom(env);
  }
  memcpy(copy, image, length);
  copy[length] = '\0'; /* PTX is read up to a NUL */
  char *info_log = logs, *error_log = logs + LOG_BYTES;
  options[count] = CU_JIT_INFO_LOG_BUFFER;
  values[count++] = info_log;
  options[count] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES;
  values[count++] = (void *)(uintptr_t)(LOG_BYTES - 1);
  options[count] = CU_JIT_ERROR_LOG_BUFFER;
  values[count++] = error_log;
  options[count] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
  values[count++] = (void *)(uintptr_t)(LOG_BYTES - 1);
  const char *api = NULL;
  CUresult result = load(arg, copy, count, options, values, &api);
  free(copy);
  napi_value result_logs = NULL, info_value = string_of(env, info_log),
             error_value = string_of(env, error_log);
  free(logs);
  if (result != CUDA_SUCCESS) {
    napi_value error = make_cu_error(env, result, api);
    if (!error || !info_value || !error_value) return NULL; /* an exception is pending */
    NAPI_CALL(env, napi_set_named_property(env, error, "infoLog", info_value));
    NAPI_CALL(env, napi_set_named_property(env, error, "errorLog", error_value));
    NAPI_CALL(env, napi_throw(env, error));
    return NULL;
  }
  napi_status status =
      info_value && error_value ? napi_create_object(env, &result_logs) : napi_pending_exception;
  if (status == napi_ok) status = napi_set_named_property(env, result_logs, "infoLog", info_value);
  if (status == napi_ok)
    status = napi_set_named_property(env, result_logs, "errorLog", error_value);
  return status == napi_ok ? result_logs : napi_fail(env, status);
}

static CUresult module_load_image(void *arg, const char *image, unsigned int count,
                                  CUjit_option *options, void **values, const char **api) {
  *api = "cuModuleLoadDataEx";
  return DRV(cuModuleLoadDataEx, arg, image, count, options, values);
}

/* moduleLoadData(obj, image, keys, values): loads image (PTX, cubin or fatbin bytes) into the
 * current context, wrapped in obj, with the JIT options keys[i] = values[i]. Returns
 * { infoLog, errorLog }; a failure throws the driver's error carrying the same two logs. */
static napi_value module_load_data(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUmodule handle = NULL;
  napi_value logs = image_load(env, argv, module_load_image, &handle);
  if (!logs) {
    if (handle) DRV(cuModuleUnload, handle);
    ctx_rec_release(ctx);
    return NULL;
  }
  return module_wrap(env, argv[0], handle, ctx) ? logs : NULL;
}

/* moduleLoad(obj, path): the driver loads the file (cuModuleLoad) into the current context. */
static napi_value module_load(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  char path[4096];
  if (!arg_string(env, argv[1], "path", path, sizeof path)) return NULL;
  /* the driver would wait forever on a FIFO, or read a device for ever: a regular file only
   * (nothing there is the driver's to report) */
  size_t size;
  int fd = open_regular(path, true, &size);
  if (fd >= 0) close(fd);
  if (fd == OPEN_NOT_REGULAR)
    return throw_runtime(env, CUDA_ERROR_FILE_NOT_FOUND, "cuModuleLoad",
                         "the module path names something other than a regular file (a FIFO, a "
                         "device...), which the driver would block reading; give a file");
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUmodule handle;
  CUresult result = DRV(cuModuleLoad, &handle, path);
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu_about(env, result, "cuModuleLoad", "%s", path);
  }
  module_wrap(env, argv[0], handle, ctx);
  return NULL;
}

/* moduleUnload(obj): unloads now; a second call does nothing. */
static napi_value module_unload_now(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  module_h *module = handle_get_any(env, argv[0], &MODULE_KIND);
  if (module && module->pins && !module->base.freed)
    return throw_logic(env,
                       "module.free(): a Graph or GraphExec, or a capture under way, has kernel "
                       "nodes of this module; end the capture and destroy them first");
  if (module && !module->base.freed) module_unload(module);
  return NULL;
}

/* ---- what a module holds ---- */

static bool module_and_name(napi_env env, const napi_value *argv, module_h **module, char *name,
                            size_t size) {
  return (*module = get_module(env, argv[0])) && arg_string(env, argv[1], "name", name, size);
}

/* moduleGetFunction(module, name, holder): wraps the kernel called name around holder. */
static napi_value module_get_function(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  module_h *module;
  char name[4096];
  if (!module_and_name(env, argv, &module, name, sizeof name)) return NULL;
  CUfunction handle;
  CU_CALL_ABOUT(env, ("kernel '%s'", name), cuModuleGetFunction, &handle, module->handle, name);
  func_wrap(env, argv[2], handle, module);
  return NULL;
}

/* moduleGetGlobal(module, name): [address bigint, size] of the global called name. */
static napi_value module_get_global(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  module_h *module;
  char name[4096];
  if (!module_and_name(env, argv, &module, name, sizeof name)) return NULL;
  CUdeviceptr ptr;
  size_t size;
  CU_CALL_ABOUT(env, ("global '%s'", name), cuModuleGetGlobal, &ptr, &size, module->handle, name);
  return make_pair(env, make_ptr(env, ptr), make_uint(env, size));
}

bool module_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"moduleLoadData", module_load_data},   {"moduleLoad", module_load},
      {"moduleUnload", module_unload_now},    {"moduleGetFunction", module_get_function},
      {"moduleGetGlobal", module_get_global},
  };
  return EXPORTS(env, exports, fns);
}
