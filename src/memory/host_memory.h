/* host_memory.h: what host_memory.c (the allocations) and host_views.c (the views asBuffer()
 * makes of them) share. */
#ifndef CUDADRV_HOST_MEMORY_H
#define CUDADRV_HOST_MEMORY_H

#include "memory.h"

typedef enum { HOST_ALIGNED, HOST_PINNED, HOST_MANAGED, HOST_REGISTERED } host_origin;

typedef struct host_mem {
  handle_base base; /* freed: released (or unregistered) */
  tracked node;     /* owner: the ArrayBuffer; for a registration, its RegisteredHostMemory */
  host_origin origin;
  bool v8_owned; /* the bytes belong to a V8 ArrayBuffer: registered here, never freed here */
  void *data;    /* the first byte handed out: what is freed or unregistered */
  size_t size;
  unsigned int flags;
  ctx_rec *ctx;    /* NULL for aligned memory */
  int refs;        /* the wrapper's, the ArrayBuffer's finalizer's for an allocation, a pin's */
  int pins;        /* graphs and GraphExecs whose copy nodes use it: no free() meanwhile */
  napi_env env;    /* where its last reference may be let go by an unpin */
  napi_ref *views; /* weak: ArrayBuffers over the memory made by asBuffer(), detached with it */
  uint32_t view_count, view_room;
} host_mem;

static inline host_mem *host_of(const tracked *node) {
  return (host_mem *)((char *)node - offsetof(host_mem, node));
}

/* What a graph's copy node pins: a page-locked allocation (main thread). */
extern const graph_pin_ops HOST_PINS;

/* The reclaim of a host allocation (what marks a tracked node as one). */
void host_reclaim(napi_env env, tracked *node);
/* Detaches the ArrayBuffer ref holds, if it is alive and not detached yet: it reads as empty. */
void detach_referenced(napi_env env, napi_ref ref);
/* Lets go of the views asBuffer() made of h's memory, detaching them first where detach (the
 * memory is being freed). */
void host_drop_views(napi_env env, host_mem *h, bool detach);

#endif
