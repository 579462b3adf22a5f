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

/* The header's words, and the launch attributes word 7 asks for (its bits); the words after it
 * hold the values of those that have one. */
enum {
  DIMS = 0,
  SHARED = 6,
  ATTRIBUTES = 7,
  CLUSTER = 8,
  PRIORITY = 11,
  PREFERRED_CLUSTER = 12,
  SCHEDULING = 15,
  SYNC_DOMAIN = 16,
  CARVEOUT = 17,
  TRIGGER_AT_START = 18, /* the programmatic event's triggerAtBlockStart */
  HEADER_WORDS = 19,
  HEADER_BYTES = 80
};
enum {
  ATTR_CLUSTER = 1 << 0,
  ATTR_COOPERATIVE = 1 << 1,
  ATTR_PRIORITY = 1 << 2,
  ATTR_PREFERRED_CLUSTER = 1 << 3,
  ATTR_SCHEDULING = 1 << 4,
  ATTR_SYNC_DOMAIN = 1 << 5,
  ATTR_CARVEOUT = 1 << 6,
  ATTR_SERIALIZATION = 1 << 7,
  ATTR_PROGRAMMATIC_EVENT = 1 << 8,
  ATTR_COMPLETION_EVENT = 1 << 9,
  ATTR_ALL = (1 << 10) - 1
};
_Static_assert(HEADER_WORDS * sizeof(uint32_t) <= HEADER_BYTES, "the header's words fit its bytes");

typedef struct launcher {
  func_h *fn;
  napi_ref buffer;     /* the ArrayBuffer shared with lib/, which keeps it private */
  size_t size;         /* parameter bytes */
  stream_h *stream;    /* where launches go; NULL: the default stream */
  napi_ref stream_ref; /* its Stream object, kept alive while bound */
  /* the events of the launch attributes that take one (programmatic, completion), and their Event
   * objects, kept alive while bound; NULL where none is */
  event_h *events[2];
  napi_ref event_refs[2];
  int refs; /* the functions bound to it (launch, setStream, the graph ones) */
} launcher;

/* A launch with attributes (cuLaunchKernelEx) as the header h asks, the parameters in extra;
 * NULL (after throwing where the launch failed). launch_attributes.c. */
napi_value launch_ex(napi_env env, const launcher *l, const uint32_t *h, void **extra,
                     CUstream stream);
/* Throws the error of a failed launch of the header h: for an invalid value, with its shape. */
napi_value launch_failed(napi_env env, CUresult result, const char *api, const uint32_t *h);
/* setEvents(programmatic or null, completion or null), bound to a launcher: the events of the
 * attributes that take one. */
napi_value launcher_set_events(napi_env env, napi_callback_info info);
/* Lets go of the launcher's events (at its finalization). */
void launcher_drop_events(napi_env env, launcher *l);

/* The launcher's buffer as it is now: its header, or NULL after throwing where it was detached. */
const uint32_t *launcher_header(napi_env env, const launcher *l);

/* The kernel v (lib/'s internal state object), or NULL after throwing (a LogicError once its
 * module is unloaded). */
func_h *func_get(napi_env env, napi_value v);

/* The launcher's functions for graphs (graph_kernel.c), bound to it like launch and setStream. */
napi_value launcher_add_to_graph(napi_env env, napi_callback_info info);
napi_value launcher_set_in_graph_exec(napi_env env, napi_callback_info info);
napi_value launcher_set_in_graph(napi_env env, napi_callback_info info);

#endif
