/* mempool: the driver's memory pools (CUmemoryPool), which stream-ordered allocations draw from. */
#include <stdlib.h>

#include "memory.h"

const handle_kind POOL_KIND = {.tag = {0x63647276706f6f31ULL, 0x4d656d506f6f6c31ULL},
                               .name = "MemoryPool",
                               .freed = "this MemoryPool is gone"};

static void pool_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data); /* the device owns its pools */
}

/* memPoolGetDefault(obj, device) / memPoolGetCurrent(obj, device): the pool wrapped in obj. */
static napi_value wrap_pool(napi_env env, napi_callback_info info, bool current) {
  ARGS(env, info, 2);
  int32_t device;
  if (!arg_int32(env, argv[1], "device", &device) || !driver_ready(env)) return NULL;
  CUmemoryPool handle;
  if (current)
    CU_CALL(env, cuDeviceGetMemPool, &handle, (CUdevice)device);
  else
    CU_CALL(env, cuDeviceGetDefaultMemPool, &handle, (CUdevice)device);
  pool_h *pool = calloc(1, sizeof *pool);
  if (!pool) return throw_oom(env);
  pool->handle = handle;
  if (!handle_wrap(env, argv[0], &pool->base, &POOL_KIND, pool_finalize)) free(pool);
  return NULL;
}

static napi_value mem_pool_get_default(napi_env env, napi_callback_info info) {
  return wrap_pool(env, info, false);
}

static napi_value mem_pool_get_current(napi_env env, napi_callback_info info) {
  return wrap_pool(env, info, true);
}

/* The attributes that are ints; the others are cuuint64_t. */
static bool pool_attribute_is_int(uint32_t attribute) {
  return attribute == CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
         attribute == CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC ||
         attribute == CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

/* memPoolGetAttribute(pool, attribute): a number. */
static napi_value mem_pool_get_attribute(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  uint32_t attribute;
  if (!pool || !arg_uint32(env, argv[1], "attribute", &attribute)) return NULL;
  int small = 0;
  cuuint64_t large = 0;
  void *value = pool_attribute_is_int(attribute) ? (void *)&small : (void *)&large;
  CU_CALL(env, cuMemPoolGetAttribute, pool->handle, (CUmemPool_attribute)attribute, value);
  return pool_attribute_is_int(attribute) ? make_int(env, small) : make_uint(env, large);
}

/* memPoolSetAttribute(pool, attribute, value). */
static napi_value mem_pool_set_attribute(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  uint32_t attribute;
  size_t number;
  if (!pool || !arg_uint32(env, argv[1], "attribute", &attribute) ||
      !arg_size(env, argv[2], "value", &number))
    return NULL;
  int small = (int)(number != 0);
  cuuint64_t large = number;
  void *value = pool_attribute_is_int(attribute) ? (void *)&small : (void *)&large;
  CU_CALL(env, cuMemPoolSetAttribute, pool->handle, (CUmemPool_attribute)attribute, value);
  return NULL;
}

/* memPoolTrimTo(pool, minBytesToKeep). */
static napi_value mem_pool_trim_to(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  pool_h *pool = handle_get(env, argv[0], &POOL_KIND);
  size_t keep;
  if (!pool || !arg_size(env, argv[1], "minBytesToKeep", &keep)) return NULL;
  CU_CALL(env, cuMemPoolTrimTo, pool->handle, keep);
  return NULL;
}

bool mempool_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"memPoolGetDefault", mem_pool_get_default},
      {"memPoolGetCurrent", mem_pool_get_current},
      {"memPoolGetAttribute", mem_pool_get_attribute},
      {"memPoolSetAttribute", mem_pool_set_attribute},
      {"memPoolTrimTo", mem_pool_trim_to},
  };
  return EXPORTS(env, exports, fns);
}
