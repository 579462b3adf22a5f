/* module.h, kernel/'s header: what module.c (modules), library.c, texref.c (references) and
 * launch.c (kernels) share, and what compiler/ uses of them. */
#ifndef CUDADRV_MODULE_H
#define CUDADRV_MODULE_H

#include "../cache/cache.h"
#include "../memory/memory.h"

typedef struct library_h library_h;

/* A loaded module. Its kernels, launchers and references point at it (counted in refs) so that
 * they can tell once it is unloaded: the struct outlives the CUmodule until the last is gone.
 * A library's kernel in a context has one too, a view with no CUmodule, unloaded with the
 * library. */
typedef struct module_h {
  handle_base base;
  CUmodule handle;
  ctx_rec *ctx;
  int refs; /* the Module object's, plus one per kernel and reference (main thread only) */
  library_h *library;  /* a view's library (counted), else NULL */
  int pins;            /* graphs and GraphExecs whose kernel nodes use it: no unload meanwhile */
  bool unload_pending; /* collected while pinned: unloaded with the last pin */
} module_h;

/* What a graph's kernel node pins: its module (a view's library with it). */
extern const graph_pin_ops MODULE_PINS;
/* A view of library is pinned (change 1) or no longer (-1). */
void library_pin(library_h *library, int change);

/* library.c: the view's library. */
void library_release(library_h *library);
bool library_unloaded(const library_h *library);
extern const char LIBRARY_UNLOADED[];
extern const char MODULE_FREED[];

/* Why the kernels of module can no longer be used (it, or the library it is a view of, was
 * unloaded), or NULL while they can. Inline: every launch asks. */
static inline const char *module_gone(const module_h *module) {
  if (module->library) return library_unloaded(module->library) ? LIBRARY_UNLOADED : NULL;
  return module->base.freed ? MODULE_FREED : NULL;
}
/* A view of library in ctx (both retained), with one reference for the caller; NULL when out of
 * memory. */
module_h *module_view(library_h *library, ctx_rec *ctx);
/* The bytes of a Uint8Array; false after throwing a TypeError. */
bool arg_bytes(napi_env env, napi_value v, const char *name, const uint8_t **data, size_t *length);
/* Loads an image with load(arg, image, count, options, values, &api), a driver call: the arguments
 * are argv's (obj, image, keys, values), image a Uint8Array checked by image_problem and copied
 * with a NUL after it, the JIT options with log buffers added. Returns { infoLog, errorLog }, or
 * NULL after throwing the driver's error carrying both logs. */
typedef CUresult (*image_loader)(void *arg, const char *image, unsigned int count,
                                 CUjit_option *options, void **values, const char **api);
napi_value image_load(napi_env env, const napi_value *argv, image_loader load, void *arg);

/* The module in v, or NULL after throwing. */
module_h *get_module(napi_env env, napi_value v);
void module_retain(module_h *module);
void module_release(module_h *module);

/* Wraps a new kernel of module around obj (a plain object lib/ keeps); false after throwing. */
bool func_wrap(napi_env env, napi_value obj, CUfunction handle, module_h *module);

/* Why the driver must not be given the cubin or fatbin p (it reads by the sizes inside, which
 * must lie within length), or NULL where it may. */
const char *image_problem(const uint8_t *p, size_t length);
/* JIT options keys[i] = values[i] (unsigned integers; none that takes a pointer or a log buffer:
 * cudadrv collects the logs) into options and option_values; false after throwing. */
enum { MAX_JIT_OPTIONS = 32 };
bool jit_options_read(napi_env env, napi_value keys, napi_value values, CUjit_option *options,
                      void **option_values, uint32_t *count);

/* Each family registers its functions into exports; returns false after throwing. */
bool module_init(napi_env env, napi_value exports);
bool library_init(napi_env env, napi_value exports);
bool texref_init(napi_env env, napi_value exports);
bool launch_init(napi_env env, napi_value exports);
bool occupancy_init(napi_env env, napi_value exports);
bool tensor_map_init(napi_env env, napi_value exports);

#endif
