/* library: CUlibrary objects (CUDA 12.0+), code loaded once for every context: a kernel of a
 * library becomes a CUfunction in whichever context asks for it (cuKernelGetFunction), wrapped
 * as a kernel of a view of the library in that context (module_view), so that launches, attributes
 * and occupancy work as for a module's kernels and refuse use once the library is unloaded. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "module.h"

struct library_h {
  handle_base base;
  CUlibrary handle;
  int refs; /* the Library object's, plus one per view (main thread only) */
  int pins; /* graphs and GraphExecs whose kernel nodes use its kernels: no unload meanwhile */
  bool unload_pending; /* collected while pinned: unloaded with the last pin */
};

static void library_unload(library_h *library);

void library_pin(library_h *library, int change) {
  library->pins += change;
  if (!library->pins && library->unload_pending) {
    library->unload_pending = false;
    library_unload(library);
  }
}

const char LIBRARY_UNLOADED[] =
    "this kernel's Library has been unloaded; load the library again and get the kernel from it";

static const handle_kind LIBRARY_KIND = {.tag = {0x636472766c696231ULL, 0x4c69627261727931ULL},
                                         .name = "Library",
                                         .freed = "this Library has been unloaded; load it again"};

bool library_unloaded(const library_h *library) { return library->base.freed; }

void library_release(library_h *library) {
  if (--library->refs == 0) free(library);
}

/* Unloads now; no context is needed. */
static void library_unload(library_h *library) {
  library->base.freed = true;
  stats_cleanup(DRV(cuLibraryUnload, library->handle));
}

static void library_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  library_h *library = data;
  if (library->pins) /* a Graph or GraphExec collected after it may still launch its kernels */
    library->unload_pending = !library->base.freed;
  else if (!library->base.freed)
    library_unload(library);
  library_release(library);
}

static bool library_wrap(napi_env env, napi_value obj, CUlibrary handle) {
  library_h *library = calloc(1, sizeof *library);
  if (!library) {
    DRV(cuLibraryUnload, handle);
    throw_oom(env);
    return false;
  }
  library->handle = handle;
  library->refs = 1;
  if (!handle_wrap(env, obj, &library->base, &LIBRARY_KIND, library_finalize)) {
    library_unload(library);
    library_release(library);
    return false;
  }
  return true;
}

static CUresult library_load_image(void *arg, const char *image, unsigned int count,
                                   CUjit_option *options, void **values, const char **api) {
  *api = "cuLibraryLoadData";
  return DRV(cuLibraryLoadData, arg, image, options, values, count, NULL, NULL, 0);
}

/* libraryLoadData(obj, image, keys, values): loads image (PTX, cubin or fatbin bytes) for every
 * context, wrapped in obj, with the JIT options keys[i] = values[i]. Returns { infoLog, errorLog };
 * a failure throws the driver's error carrying the same two logs. */
static napi_value library_load_data(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  if (!driver_ready(env)) return NULL;
  CUlibrary handle = NULL;
  napi_value logs = image_load(env, argv, library_load_image, &handle);
  if (!logs) {
    if (handle) DRV(cuLibraryUnload, handle);
    return NULL;
  }
  return library_wrap(env, argv[0], handle) ? logs : NULL;
}

/* libraryLoadFromFile(obj, path): the driver loads the file (cuLibraryLoadFromFile). */
static napi_value library_load_from_file(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  char path[4096];
  if (!arg_string(env, argv[1], "path", path, sizeof path) || !driver_ready(env)) return NULL;
  size_t size;
  int fd = open_regular(path, true, &size);
  if (fd >= 0) close(fd);
  if (fd == OPEN_NOT_REGULAR)
    return throw_runtime(env, CUDA_ERROR_FILE_NOT_FOUND, "cuLibraryLoadFromFile",
                         "the library path names something other than a regular file (a FIFO, a "
                         "device...), which the driver would block reading; give a file");
  CUlibrary handle;
  CU_CALL_ABOUT(env, ("%s", path), cuLibraryLoadFromFile, &handle, path, NULL, NULL, 0, NULL, NULL,
                0);
  library_wrap(env, argv[0], handle);
  return NULL;
}

/* libraryUnload(obj): unloads now; a second call does nothing. */
static napi_value library_unload_now(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  library_h *library = handle_get_any(env, argv[0], &LIBRARY_KIND);
  if (library && library->pins && !library->base.freed)
    return throw_logic(env,
                       "library.unload(): a Graph or GraphExec, or a capture under way, has kernel "
                       "nodes of this library; end the capture and destroy them first");
  if (library && !library->base.freed) library_unload(library);
  return NULL;
}

static bool library_and_name(napi_env env, const napi_value *argv, library_h **library, char *name,
                             size_t size) {
  return (*library = handle_get(env, argv[0], &LIBRARY_KIND)) &&
         arg_string(env, argv[1], "name", name, size);
}

/* The library of argv[0] and its kernel called argv[1] (cuLibraryGetKernel, which needs no
 * context); false after throwing. */
static bool library_kernel(napi_env env, const napi_value *argv, library_h **library,
                           CUkernel *kernel) {
  char name[4096];
  if (!library_and_name(env, argv, library, name, sizeof name)) return false;
  CUresult result = DRV(cuLibraryGetKernel, kernel, (*library)->handle, name);
  if (result != CUDA_SUCCESS)
    throw_cu_about(env, result, "cuLibraryGetKernel", "kernel '%s'", name);
  return result == CUDA_SUCCESS;
}

/* libraryHasKernel(library, name): throws the driver's error where the library has no kernel called
 * name. */
static napi_value library_has_kernel(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  library_h *library;
  CUkernel kernel;
  library_kernel(env, argv, &library, &kernel);
  return NULL;
}

/* libraryKernelNames(library): the names of every kernel of the library (cuLibraryEnumerateKernels,
 * cuKernelGetName: CUDA 12.4). */
static napi_value library_kernel_names(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  library_h *library = handle_get(env, argv[0], &LIBRARY_KIND);
  if (!library) return NULL;
  unsigned int count;
  CU_CALL(env, cuLibraryGetKernelCount, &count, library->handle);
  CUkernel *kernels = malloc((count ? count : 1) * sizeof *kernels);
  if (!kernels) return throw_oom(env);
  CUresult result = DRV(cuLibraryEnumerateKernels, kernels, count, library->handle);
  const char *api = "cuLibraryEnumerateKernels";
  napi_value names = NULL;
  napi_status status = napi_create_array_with_length(env, count, &names);
  for (unsigned int i = 0; result == CUDA_SUCCESS && status == napi_ok && i < count; i++) {
    const char *name;
    napi_value text;
    result = DRV(cuKernelGetName, &name, kernels[i]);
    api = "cuKernelGetName";
    if (result != CUDA_SUCCESS) break;
    status = napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &text);
    if (status == napi_ok) status = napi_set_element(env, names, i, text);
  }
  free(kernels);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, api);
  if (status != napi_ok) return napi_fail(env, status);
  return names;
}

/* libraryGetFunction(library, name, holder): wraps the kernel called name, as a CUfunction of the
 * current context, around holder. */
static napi_value library_get_function(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  library_h *library;
  CUkernel kernel;
  CUfunction handle;
  if (!library_kernel(env, argv, &library, &kernel)) return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUresult result = DRV(cuKernelGetFunction, &handle, kernel);
  module_h *view = result == CUDA_SUCCESS ? module_view(library, ctx) : NULL;
  ctx_rec_release(ctx);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuKernelGetFunction");
  if (!view) return throw_oom(env);
  library->refs++;
  func_wrap(env, argv[2], handle, view);
  module_release(view); /* the kernel holds it now, or nothing does */
  return NULL;
}

/* libraryGetGlobal(library, name, managed): [address bigint, size] of the global (or managed
 * variable) called name, in the current context. */
static napi_value library_get_global(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  library_h *library;
  char name[4096];
  bool managed;
  if (!library_and_name(env, argv, &library, name, sizeof name) ||
      !arg_bool(env, argv[2], &managed))
    return NULL;
  CUdeviceptr ptr;
  size_t size;
  if (managed) {
    CU_CALL(env, cuLibraryGetManaged, &ptr, &size, library->handle, name);
  } else {
    ctx_rec *ctx = ctx_rec_current(env); /* a global lives in a context: say so if there is none */
    if (!ctx) return NULL;
    ctx_rec_release(ctx);
    CU_CALL(env, cuLibraryGetGlobal, &ptr, &size, library->handle, name);
  }
  return make_pair(env, make_ptr(env, ptr), make_uint(env, size));
}

bool library_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"libraryLoadData", library_load_data},       {"libraryLoadFromFile", library_load_from_file},
      {"libraryUnload", library_unload_now},        {"libraryHasKernel", library_has_kernel},
      {"libraryGetFunction", library_get_function}, {"libraryGetGlobal", library_get_global},
      {"libraryKernelNames", library_kernel_names},
  };
  return EXPORTS(env, exports, fns);
}
