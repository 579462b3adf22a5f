/* managed: where unified memory lives. Prefetches to a device or the host, advice, the range
 * attributes that say what was advised and where pages were last prefetched, and CUDA 13's
 * batched prefetches and discards. A range is a host view of managed memory (its bytes) or an
 * address and a size from lib/; the driver refuses a range that is not managed memory. */
#include <stdlib.h>

#include "memory.h"

/* The most ranges in one batch; lib/ refuses more first. */
#define MAX_BATCH 65536

/* A range: a host view (a managed array) or an address and bytes. */
static bool arg_range(napi_env env, napi_value memory, napi_value size, CUdeviceptr *ptr,
                      size_t *bytes) {
  napi_valuetype type;
  if (!arg_type(env, memory, &type)) return false;
  if (type != napi_object)
    return arg_ptr(env, memory, "memory", ptr) && arg_size(env, size, "bytes", bytes);
  void *data;
  if (!arg_host(env, memory, "memory", &data, bytes)) return false;
  *ptr = (CUdeviceptr)(uintptr_t)data;
  return true;
}

/* memPrefetchAsync(memory, bytes, locationType, locationId, stream). */
static napi_value mem_prefetch_async(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  CUdeviceptr ptr;
  size_t bytes;
  CUmemLocation location;
  CUstream stream;
  if (!arg_range(env, argv[0], argv[1], &ptr, &bytes) ||
      !arg_location(env, argv[2], argv[3], &location) || !arg_stream(env, argv[4], &stream) ||
      !driver_ready(env))
    return NULL;
  CU_CALL(env, cuMemPrefetchAsync, ptr, bytes, location, 0, stream);
  return NULL;
}

/* memAdvise(memory, bytes, advice, locationType, locationId). */
static napi_value mem_advise(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  CUdeviceptr ptr;
  size_t bytes;
  uint32_t advice;
  CUmemLocation location;
  if (!arg_range(env, argv[0], argv[1], &ptr, &bytes) ||
      !arg_uint32(env, argv[2], "advice", &advice) ||
      !arg_location(env, argv[3], argv[4], &location) || !driver_ready(env))
    return NULL;
  CU_CALL(env, cuMemAdvise, ptr, bytes, (CUmem_advise)advice, location);
  return NULL;
}

/* An int range attribute as a JS number; NULL after throwing. */
static napi_value range_int(napi_env env, CUmem_range_attribute attribute, CUdeviceptr ptr,
                            size_t bytes) {
  int value = 0;
  CU_CALL(env, cuMemRangeGetAttribute, &value, sizeof value, attribute, ptr, bytes);
  return make_int(env, value);
}

/* memRangeAttributes(memory, bytes, devices): { readMostly, preferredLocation,
 * lastPrefetchLocation, accessedBy } as the driver's ints (a device ordinal, -1 the host, -2
 * none); accessedBy lists up to devices ordinals. */
static napi_value mem_range_attributes(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  CUdeviceptr ptr;
  size_t bytes;
  uint32_t devices;
  if (!arg_range(env, argv[0], argv[1], &ptr, &bytes) ||
      !arg_uint32(env, argv[2], "devices", &devices) || !driver_ready(env))
    return NULL;
  if (devices < 1 || devices > 1024) return throw_range(env, "devices must be from 1 to 1024");
  napi_value result;
  NAPI_CALL(env, napi_create_object(env, &result));
  static const struct {
    CUmem_range_attribute attribute;
    const char *key;
  } INTS[] = {{CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, "readMostly"},
              {CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, "preferredLocation"},
              {CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, "lastPrefetchLocation"}};
  for (size_t i = 0; i < sizeof INTS / sizeof INTS[0]; i++) {
    napi_value value = range_int(env, INTS[i].attribute, ptr, bytes);
    if (!set_named(env, result, INTS[i].key, value)) return NULL;
  }
  int *accessed = malloc(devices * sizeof *accessed);
  if (!accessed) return throw_oom(env);
  CUresult status = DRV(cuMemRangeGetAttribute, accessed, devices * sizeof *accessed,
                        CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ptr, bytes);
  napi_value list = NULL;
  if (status == CUDA_SUCCESS && napi_create_array(env, &list) == napi_ok) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < devices && list; i++) {
      if (accessed[i] < 0) continue; /* CU_DEVICE_INVALID pads the list */
      if (napi_set_element(env, list, n++, make_int(env, accessed[i])) != napi_ok) list = NULL;
    }
  }
  free(accessed);
  if (status != CUDA_SUCCESS) return throw_cu(env, status, "cuMemRangeGetAttribute");
  if (!list) return napi_fail(env, napi_generic_failure);
  return set_named(env, result, "accessedBy", list) ? result : NULL;
}

typedef enum batch_op { BATCH_PREFETCH, BATCH_DISCARD, BATCH_DISCARD_PREFETCH } batch_op;

/* memBatchAsync(op, ranges, locations, stream): ranges lib/'s flat [memory, bytes, ...];
 * locations an Int32Array of (type, id) pairs, one a range (empty for discards). */
static napi_value mem_batch_async(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  uint32_t op, length;
  CUstream stream;
  if (!arg_uint32(env, argv[0], "op", &op) || !arg_stream(env, argv[3], &stream) ||
      !driver_ready(env))
    return NULL;
  NAPI_CALL(env, napi_get_array_length(env, argv[1], &length));
  size_t count = length / 2;
  if (op > BATCH_DISCARD_PREFETCH || length % 2 || !count || count > MAX_BATCH)
    return throw_range(env, "a batch holds 1 to 65536 ranges");
  void *location_data = NULL;
  size_t location_bytes = 0;
  if (op != BATCH_DISCARD) {
    if (!arg_host(env, argv[2], "locations", &location_data, &location_bytes)) return NULL;
    if (location_bytes != count * 2 * sizeof(int32_t))
      return throw_range(env, "a batch needs one location a range");
  }
  CUdeviceptr *ptrs = calloc(count, sizeof *ptrs);
  size_t *sizes = calloc(count, sizeof *sizes), *indices = calloc(count, sizeof *indices);
  CUmemLocation *locations = calloc(count, sizeof *locations);
  bool ok = ptrs && sizes && indices && locations;
  if (!ok) throw_oom(env);
  for (size_t i = 0; ok && i < count; i++) {
    napi_value memory, bytes;
    ok = napi_get_element(env, argv[1], (uint32_t)(2 * i), &memory) == napi_ok &&
         napi_get_element(env, argv[1], (uint32_t)(2 * i + 1), &bytes) == napi_ok &&
         arg_range(env, memory, bytes, &ptrs[i], &sizes[i]);
    if (ok && location_data) {
      const int32_t *pair = (const int32_t *)location_data + 2 * i;
      locations[i].type = (CUmemLocationType)pair[0];
      locations[i].id = pair[1];
    }
    indices[i] = i;
  }
  CUresult result = CUDA_SUCCESS;
  const char *api = "cuMemPrefetchBatchAsync";
  if (ok && op == BATCH_PREFETCH) {
    result = DRV(cuMemPrefetchBatchAsync, ptrs, sizes, count, locations, indices, count, 0, stream);
  } else if (ok && op == BATCH_DISCARD) {
    api = "cuMemDiscardBatchAsync";
    result = DRV(cuMemDiscardBatchAsync, ptrs, sizes, count, 0, stream);
  } else if (ok) {
    api = "cuMemDiscardAndPrefetchBatchAsync";
    result = DRV(cuMemDiscardAndPrefetchBatchAsync, ptrs, sizes, count, locations, indices, count,
                 0, stream);
  }
  free(ptrs);
  free(sizes);
  free(indices);
  free(locations);
  if (ok && result != CUDA_SUCCESS) return throw_cu(env, result, api);
  return NULL;
}

bool managed_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"memPrefetchAsync", mem_prefetch_async},
      {"memAdvise", mem_advise},
      {"memRangeAttributes", mem_range_attributes},
      {"memBatchAsync", mem_batch_async},
  };
  return EXPORTS(env, exports, fns);
}
