/* launch_attributes: launches with attributes (cuLaunchKernelEx), as a launcher's header asks,
 * and the events bound to a launcher for the attributes that take one. lib/ writes the header
 * (lib/kernel/launch-attributes.js); C reads only its words, and checks every value the driver
 * would otherwise trust: an event named by a bit must be bound, and alive. */
#include <string.h>

#include "launcher.h"

enum { PROGRAMMATIC, COMPLETION };
enum { MOST_ATTRIBUTES = 10 };

/* The next attribute of attrs, its id set. */
static CUlaunchAttribute *next_attribute(CUlaunchAttribute *attrs, unsigned int *n,
                                         CUlaunchAttributeID id) {
  CUlaunchAttribute *a = &attrs[(*n)++];
  a->id = id;
  return a;
}

/* The bound event that bit asks for; NULL after throwing where none is, or it was destroyed. A
 * capture on stream may name it in its graph: its CUevent then outlives destroy() while the graph
 * does, as an event node's. */
static CUevent bound_event(napi_env env, const launcher *l, int which, CUstream stream) {
  event_h *event = l->events[which];
  if (!event) {
    throw_logic(env, "this launch asks for an event attribute, but no event is bound");
    return NULL;
  }
  if (!handle_alive(env, &event->base)) return NULL;
  if (captures_under_way()) {
    node_use *use = event_use_of(event);
    if (!use) return throw_oom(env), NULL;
    if (!capture_pin(env, stream, use, &USE_PINS)) return NULL;
  }
  return event->handle;
}

napi_value launch_ex(napi_env env, const launcher *l, const uint32_t *h, void **extra,
                     CUstream stream) {
  CUlaunchAttribute attrs[MOST_ATTRIBUTES];
  unsigned int n = 0;
  uint32_t bits = h[ATTRIBUTES];
  memset(attrs, 0, sizeof attrs);
  if (bits & ~(uint32_t)ATTR_ALL) return throw_range(env, "unknown launch attribute bits");
  if (bits & ATTR_CLUSTER) {
    CUlaunchAttribute *a = next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    a->value.clusterDim.x = h[CLUSTER];
    a->value.clusterDim.y = h[CLUSTER + 1];
    a->value.clusterDim.z = h[CLUSTER + 2];
  }
  if (bits & ATTR_COOPERATIVE)
    next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_COOPERATIVE)->value.cooperative = 1;
  if (bits & ATTR_PRIORITY)
    next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_PRIORITY)->value.priority = (int32_t)h[PRIORITY];
  if (bits & ATTR_PREFERRED_CLUSTER) {
    CUlaunchAttribute *a =
        next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION);
    a->value.preferredClusterDim.x = h[PREFERRED_CLUSTER];
    a->value.preferredClusterDim.y = h[PREFERRED_CLUSTER + 1];
    a->value.preferredClusterDim.z = h[PREFERRED_CLUSTER + 2];
  }
  if (bits & ATTR_SCHEDULING)
    next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE)
        ->value.clusterSchedulingPolicyPreference = (CUclusterSchedulingPolicy)h[SCHEDULING];
  if (bits & ATTR_SYNC_DOMAIN)
    next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN)->value.memSyncDomain =
        (CUlaunchMemSyncDomain)h[SYNC_DOMAIN];
  if (bits & ATTR_CARVEOUT)
    next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)
        ->value.sharedMemCarveout = h[CARVEOUT];
  if (bits & ATTR_SERIALIZATION)
    next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
        ->value.programmaticStreamSerializationAllowed = 1;
  if (bits & ATTR_PROGRAMMATIC_EVENT) {
    CUevent event = bound_event(env, l, PROGRAMMATIC, stream);
    if (!event) return NULL;
    CUlaunchAttribute *a = next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT);
    a->value.programmaticEvent.event = event;
    a->value.programmaticEvent.triggerAtBlockStart = h[TRIGGER_AT_START] != 0;
  }
  if (bits & ATTR_COMPLETION_EVENT) {
    CUevent event = bound_event(env, l, COMPLETION, stream);
    if (!event) return NULL;
    next_attribute(attrs, &n, CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
        ->value.launchCompletionEvent.event = event;
  }
  CUlaunchConfig config = {h[DIMS],     h[DIMS + 1], h[DIMS + 2], h[DIMS + 3], h[DIMS + 4],
                           h[DIMS + 5], h[SHARED],   stream,      attrs,       n};
  CUresult result = DRV(cuLaunchKernelEx, &config, l->fn->handle, NULL, extra);
  return result == CUDA_SUCCESS ? NULL : launch_failed(env, result, "cuLaunchKernelEx", h);
}

static bool bind_event(napi_env env, launcher *l, int which, napi_value v) {
  return handle_bind(env, v, &EVENT_KIND, (void **)&l->events[which], &l->event_refs[which]);
}

napi_value launcher_set_events(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  launcher *l;
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&l));
  if (argc < 2) return throw_type(env, "setEvents(programmatic, completion) takes two arguments");
  if (!bind_event(env, l, PROGRAMMATIC, argv[0])) return NULL;
  bind_event(env, l, COMPLETION, argv[1]);
  return NULL;
}

void launcher_drop_events(napi_env env, launcher *l) {
  for (int i = 0; i < 2; i++)
    if (l->event_refs[i]) NAPI_UNTHROWN(napi_delete_reference(env, l->event_refs[i]));
}
