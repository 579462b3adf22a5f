/* module.h: what module.c (modules), texref.c (references) and launch.c (kernels) share. */
#ifndef CUDADRV_MODULE_H
#define CUDADRV_MODULE_H

#include "cudadrv.h"

/* A loaded module. Its kernels, launchers and references point at it (counted in refs) so that
 * they can tell once it is unloaded: the struct outlives the CUmodule until the last is gone. */
typedef struct module_h {
  handle_base base;
  CUmodule handle;
  ctx_rec *ctx;
  int refs; /* the Module object's, plus one per kernel and reference (main thread only) */
} module_h;

/* The module in v, or NULL after throwing. */
module_h *get_module(napi_env env, napi_value v);
void module_retain(module_h *module);
void module_release(module_h *module);

/* Wraps a new kernel of module around obj (a plain object lib/ keeps); false after throwing. */
bool func_wrap(napi_env env, napi_value obj, CUfunction handle, module_h *module);

#endif
