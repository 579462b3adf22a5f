/* launcher.h: what launch.c (kernels and their launchers) and graph_kernel.c (kernel nodes of
 * graphs, made from a launcher's buffer) share. */
#ifndef CUDADRV_LAUNCHER_H
#define CUDADRV_LAUNCHER_H

#include "module.h"

typedef struct func_h {
  handle_base base;
  CUfunction handle;
  module_h *module;
  int refs; /* the holder lib/ keeps, plus one per launcher (main thread only) */
} func_h;

/* The header's words, and the launch attributes word 7 asks for (its bits). */
enum { DIMS = 0, SHARED = 6, ATTRIBUTES = 7, CLUSTER = 8, HEADER_WORDS = 11, HEADER_BYTES = 48 };
enum { ATTR_CLUSTER = 1, ATTR_COOPERATIVE = 2 };
_Static_assert(HEADER_WORDS * sizeof(uint32_t) <= HEADER_BYTES, "the header's words fit its bytes");

typedef struct launcher {
  func_h *fn;
  napi_ref buffer;     /* the ArrayBuffer shared with lib/, which keeps it private */
  size_t size;         /* parameter bytes */
  stream_h *stream;    /* where launches go; NULL: the default stream */
  napi_ref stream_ref; /* its Stream object, kept alive while bound */
  int refs;            /* the functions bound to it (launch, setStream, the graph ones) */
} launcher;

/* The launcher's buffer as it is now: its header, or NULL after throwing where it was detached. */
const uint32_t *launcher_header(napi_env env, const launcher *l);

/* The kernel v (lib/'s internal state object), or NULL after throwing (a LogicError once its
 * module is unloaded). */
func_h *func_get(napi_env env, napi_value v);

/* The launcher's functions for graphs (graph_kernel.c), bound to it like launch and setStream. */
napi_value launcher_add_to_graph(napi_env env, napi_callback_info info);
napi_value launcher_set_in_graph_exec(napi_env env, napi_callback_info info);
napi_value launcher_set_in_graph(napi_env env, napi_callback_info info);
/* graphPinKernel(graph, kernel), for captured graphs. */
napi_value graph_pin_kernel(napi_env env, napi_callback_info info);

#endif
