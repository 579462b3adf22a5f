/* green_context: green contexts (CUDA 12.4+), contexts that run on a share of a device's SMs. A
 * device's SM resource is split into groups; a group (or several) becomes a green context, which
 * lib/ holds as a Context like any other (context.c's ctx_adopt_green): made current, its streams
 * and memory work as a made context's, and detach() ends its use (its destroy waits for what was
 * made in it: context.c). Resources live in C, wrapped in
 * SmResource objects of lib/, so that what the driver is given back is what it gave. */
#include <stdlib.h>
#include <string.h>

#include "driver.h"

typedef struct resource_h {
  handle_base base;
  CUdevResource resource;
} resource_h;

static CUresult keep_resource(handle_base *base) {
  (void)base; /* a description: nothing of the driver's to destroy */
  return CUDA_SUCCESS;
}

static const handle_kind RESOURCE_KIND = {.tag = {0x6364727672657331ULL, 0x536d5265736f7531ULL},
                                          .name = "SmResource",
                                          .freed = "this SmResource is gone",
                                          .destroy = keep_resource};

/* A new object wrapping a copy of resource, with its numbers: [object, smCount,
 * minSmPartitionSize, smCoscheduledAlignment]; NULL after throwing. */
static napi_value wrap_resource(napi_env env, const CUdevResource *resource) {
  resource_h *r = calloc(1, sizeof *r);
  if (!r) return throw_oom(env);
  r->resource = *resource;
  napi_value obj, result;
  NAPI_CALL(env, napi_create_object(env, &obj));
  if (!handle_wrap_object(env, obj, &r->base, &RESOURCE_KIND)) return NULL;
  const CUdevSmResource *sm = &resource->sm;
  NAPI_CALL(env, napi_create_array_with_length(env, 4, &result));
  NAPI_CALL(env, napi_set_element(env, result, 0, obj));
  NAPI_CALL(env, napi_set_element(env, result, 1, make_uint(env, sm->smCount)));
  NAPI_CALL(env, napi_set_element(env, result, 2, make_uint(env, sm->minSmPartitionSize)));
  NAPI_CALL(env, napi_set_element(env, result, 3, make_uint(env, sm->smCoscheduledAlignment)));
  return result;
}

/* deviceGetSmResource(device): the device's whole SM resource, wrapped (see wrap_resource). */
static napi_value device_get_sm_resource(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  int32_t device;
  if (!arg_int32(env, argv[0], "device", &device) || !driver_ready(env)) return NULL;
  CUdevResource resource;
  CU_CALL(env, cuDeviceGetDevResource, (CUdevice)device, &resource, CU_DEV_RESOURCE_TYPE_SM);
  return wrap_resource(env, &resource);
}

enum { MOST_GROUPS = 256 };

/* smResourceSplit(resource, groups, minCount): up to groups groups of at least minCount SMs each
 * (cuDevSmResourceSplitByCount), then what is left: an array of wrapped resources, the remaining
 * one last. */
static napi_value sm_resource_split(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  resource_h *input = handle_get(env, argv[0], &RESOURCE_KIND);
  uint32_t groups, min_count;
  if (!input || !arg_uint32(env, argv[1], "groups", &groups) ||
      !arg_uint32(env, argv[2], "minCount", &min_count))
    return NULL;
  if (groups < 1 || groups > MOST_GROUPS) return throw_range(env, "groups must be from 1 to 256");
  CUdevResource *made = calloc(groups, sizeof *made);
  if (!made) return throw_oom(env);
  CUdevResource remaining;
  unsigned int count = groups;
  CUresult result =
      DRV(cuDevSmResourceSplitByCount, made, &count, &input->resource, &remaining, 0, min_count);
  napi_value list = NULL;
  napi_status status = napi_ok;
  if (result == CUDA_SUCCESS) status = napi_create_array_with_length(env, count + 1, &list);
  for (unsigned int i = 0; result == CUDA_SUCCESS && status == napi_ok && i <= count; i++) {
    napi_value wrapped = wrap_resource(env, i < count ? &made[i] : &remaining);
    if (!wrapped) {
      list = NULL;
      break;
    }
    status = napi_set_element(env, list, i, wrapped);
  }
  free(made);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuDevSmResourceSplitByCount");
  if (status != napi_ok) return napi_fail(env, status);
  return list;
}

/* greenCtxCreate(obj, device, resources): a green context on device with the SM resources of the
 * array resources, wrapped in obj (a Context); its address. */
static napi_value green_ctx_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  int32_t device;
  uint32_t count;
  bool is_array;
  if (!arg_int32(env, argv[1], "device", &device)) return NULL;
  NAPI_CALL(env, napi_is_array(env, argv[2], &is_array));
  if (!is_array) return throw_type(env, "resources must be an array of SmResource");
  NAPI_CALL(env, napi_get_array_length(env, argv[2], &count));
  if (count < 1 || count > MOST_GROUPS) return throw_range(env, "give 1 to 256 SmResource");
  CUdevResource *resources = calloc(count, sizeof *resources);
  if (!resources) return throw_oom(env);
  for (uint32_t i = 0; i < count; i++) {
    napi_value item;
    resource_h *r = napi_get_element(env, argv[2], i, &item) == napi_ok
                        ? handle_get(env, item, &RESOURCE_KIND)
                        : NULL;
    if (!r) return free(resources), NULL;
    resources[i] = r->resource;
  }
  CUdevResourceDesc desc;
  CUresult result = DRV(cuDevResourceGenerateDesc, &desc, resources, count);
  free(resources);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuDevResourceGenerateDesc");
  CUgreenCtx green;
  CU_CALL(env, cuGreenCtxCreate, &green, desc, (CUdevice)device, CU_GREEN_CTX_DEFAULT_STREAM);
  return ctx_adopt_green(env, argv[0], green, (CUdevice)device);
}

/* The green context of the Context v; NULL after throwing where v is another kind of context. */
static CUgreenCtx green_of(napi_env env, napi_value v) {
  ctx_rec *rec = ctx_rec_of_context(env, v);
  if (rec && !rec->green) throw_type(env, "expected a green context (device.makeGreenContext())");
  return rec ? rec->green : NULL;
}

/* greenCtxGetSmResource(context): the SM resource the green context runs on, wrapped. */
static napi_value green_ctx_get_sm_resource(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUgreenCtx green = green_of(env, argv[0]);
  if (!green) return NULL;
  CUdevResource resource;
  CU_CALL(env, cuGreenCtxGetDevResource, green, &resource, CU_DEV_RESOURCE_TYPE_SM);
  return wrap_resource(env, &resource);
}

/* greenCtxEvent(context, event, wait): records event at the point the green context's work has
 * reached (cuGreenCtxRecordEvent), or makes its later work wait for it (cuGreenCtxWaitEvent). */
static napi_value green_ctx_event(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  CUgreenCtx green = green_of(env, argv[0]);
  event_h *event = green ? handle_get(env, argv[1], &EVENT_KIND) : NULL;
  bool wait;
  if (!event || !arg_bool(env, argv[2], &wait)) return NULL;
  if (wait && !event_waitable(env, event, ctx_rec_of_context(env, argv[0])->handle,
                              "greenContext.waitEvent()"))
    return NULL;
  if (wait)
    CU_CALL(env, cuGreenCtxWaitEvent, green, event->handle);
  else
    CU_CALL(env, cuGreenCtxRecordEvent, green, event->handle);
  return NULL;
}

/* greenCtxStreamCreate(obj, context, flags, priority): a stream of the green context, wrapped in
 * obj, without making the context current (cuGreenCtxStreamCreate, CUDA 12.5). */
static napi_value green_ctx_stream_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  CUgreenCtx green = green_of(env, argv[1]);
  uint32_t flags;
  int32_t priority;
  if (!green || !arg_uint32(env, argv[2], "flags", &flags) ||
      !arg_int32(env, argv[3], "priority", &priority))
    return NULL;
  CUstream handle;
  CU_CALL(env, cuGreenCtxStreamCreate, &handle, green, flags, priority);
  stream_adopt(env, argv[0], handle, ctx_rec_retain(ctx_rec_of_context(env, argv[1])));
  return NULL;
}

bool green_context_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"deviceGetSmResource", device_get_sm_resource},
      {"smResourceSplit", sm_resource_split},
      {"greenCtxCreate", green_ctx_create},
      {"greenCtxGetSmResource", green_ctx_get_sm_resource},
      {"greenCtxEvent", green_ctx_event},
      {"greenCtxStreamCreate", green_ctx_stream_create},
  };
  return EXPORTS(env, exports, fns);
}
