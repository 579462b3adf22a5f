/* host_views: ArrayBuffers over part of a host allocation, made by asBuffer() from a device
 * address. Each keeps its allocation alive and is listed (weakly) in it, so that freeing the
 * allocation detaches every view and none reads or writes freed memory. */
#include <stdlib.h>

#include "host_memory.h"

void detach_referenced(napi_env env, napi_ref ref) {
  napi_value buffer = NULL;
  bool detached = true;
  if (napi_get_reference_value(env, ref, &buffer) == napi_ok && buffer &&
      napi_is_detached_arraybuffer(env, buffer, &detached) == napi_ok && !detached)
    NAPI_UNTHROWN(napi_detach_arraybuffer(env, buffer));
}

void host_drop_views(napi_env env, host_mem *h, bool detach) {
  for (uint32_t i = 0; i < h->view_count; i++) {
    if (detach) detach_referenced(env, h->views[i]);
    NAPI_UNTHROWN(napi_delete_reference(env, h->views[i]));
  }
  free(h->views);
  h->views = NULL;
  h->view_count = h->view_room = 0;
}

/* Whether node is a live host allocation holding the bytes range = {address, size}. */
static bool holds(const tracked *node, const void *arg) {
  const uintptr_t *range = arg;
  if (node->reclaim != host_reclaim) return false;
  const host_mem *h = host_of(node);
  uintptr_t start = (uintptr_t)h->data;
  return !h->base.freed && range[0] >= start && range[0] - start <= h->size &&
         range[1] <= h->size - (range[0] - start);
}

static void view_finalize(napi_env env, void *data, void *hint) {
  (void)data;
  NAPI_UNTHROWN(napi_delete_reference(env, hint));
}

/* Room in h's list for one more view, after letting go of views already collected. */
static bool view_room(napi_env env, host_mem *h) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < h->view_count; i++) {
    napi_value view = NULL;
    if (napi_get_reference_value(env, h->views[i], &view) == napi_ok && view)
      h->views[kept++] = h->views[i];
    else
      NAPI_UNTHROWN(napi_delete_reference(env, h->views[i]));
  }
  h->view_count = kept;
  if (kept < h->view_room) return true;
  uint32_t room = h->view_room ? 2 * h->view_room : 4;
  napi_ref *grown = room > h->view_room ? realloc(h->views, room * sizeof *grown) : NULL;
  if (!grown) return throw_oom(env), false;
  h->views = grown;
  h->view_room = room;
  return true;
}

napi_value host_view(napi_env env, void *host, size_t size) {
  uintptr_t range[2] = {(uintptr_t)host, size};
  tracked *node = memory_find(env, holds, range);
  napi_value owner = NULL, result;
  if (node && napi_get_reference_value(env, node->owner, &owner) != napi_ok) owner = NULL;
  if (!owner)
    return throw_logic(env, "asBuffer(): this memory is not in a live host allocation of cudadrv's "
                            "(pinned, managed or registered); allocate it with cudadrv to view it");
  host_mem *h = host_of(node);
  if (!view_room(env, h)) return NULL;
  napi_ref keep, weak;
  NAPI_CALL(env, napi_create_reference(env, owner, 1, &keep)); /* the view keeps the memory */
  bool refused;
  if (!external_arraybuffer(env, host, size, view_finalize, keep, &result, &refused)) {
    NAPI_UNTHROWN(napi_delete_reference(env, keep));
    return refused ? make_null(env) : NULL;
  }
  napi_status status = napi_create_reference(env, result, 0, &weak);
  if (status != napi_ok) {
    NAPI_UNTHROWN(napi_detach_arraybuffer(env, result)); /* never left viewing memory unlisted */
    return napi_fail(env, status);
  }
  h->views[h->view_count++] = weak;
  return result;
}
