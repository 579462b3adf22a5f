/* pointer_attributes: what the driver knows of any address (cuPointerGetAttributes), device,
 * host, managed or foreign; zeros where CUDA does not know the memory. From that, what an async
 * copy must keep alive (keep_copy_side). */
#include <stdio.h>
#include <string.h>

#include "memory.h"

typedef enum value_kind { AS_INT, AS_BOOL, AS_ADDRESS, AS_SIZE } value_kind;

static const struct {
  CUpointer_attribute attribute;
  const char *key;
  value_kind kind;
} ATTRIBUTES[] = {
    {CU_POINTER_ATTRIBUTE_CONTEXT, "context", AS_ADDRESS},
    {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "memoryType", AS_INT},
    {CU_POINTER_ATTRIBUTE_DEVICE_POINTER, "devicePointer", AS_ADDRESS},
    {CU_POINTER_ATTRIBUTE_HOST_POINTER, "hostPointer", AS_ADDRESS},
    {CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, "syncMemops", AS_BOOL},
    {CU_POINTER_ATTRIBUTE_BUFFER_ID, "bufferId", AS_ADDRESS},
    {CU_POINTER_ATTRIBUTE_IS_MANAGED, "isManaged", AS_BOOL},
    {CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, "device", AS_INT},
    {CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, "legacyIpcCapable", AS_BOOL},
    {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, "rangeStart", AS_ADDRESS},
    {CU_POINTER_ATTRIBUTE_RANGE_SIZE, "rangeSize", AS_SIZE},
    {CU_POINTER_ATTRIBUTE_MAPPED, "mapped", AS_BOOL},
    {CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, "allowedHandleTypes", AS_SIZE},
    {CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, "gpuDirectRdmaCapable", AS_BOOL},
    {CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, "accessFlags", AS_INT},
    {CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, "memoryPool", AS_ADDRESS},
    {CU_POINTER_ATTRIBUTE_MAPPING_SIZE, "mappingSize", AS_SIZE},
    {CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, "mappingBase", AS_ADDRESS},
    {CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, "memoryBlockId", AS_ADDRESS},
};
#define COUNT (sizeof ATTRIBUTES / sizeof ATTRIBUTES[0])

/* pointerAttributes(address or host view): { key: value } of ATTRIBUTES. Each value has 8 zeroed
 * bytes, of which the driver writes 1 (a bool), 4 (an int) or 8: reading the low 4 bytes of the
 * small ones is right whichever it writes. */
static napi_value pointer_attributes(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  napi_valuetype type;
  CUdeviceptr ptr;
  if (!arg_type(env, argv[0], &type)) return NULL;
  if (type == napi_object) {
    void *data;
    size_t length;
    if (!arg_host(env, argv[0], "pointer", &data, &length)) return NULL;
    ptr = (CUdeviceptr)(uintptr_t)data;
  } else if (!arg_ptr(env, argv[0], "pointer", &ptr)) {
    return NULL;
  }
  if (!driver_ready(env)) return NULL;
  CUpointer_attribute attributes[COUNT];
  uint64_t values[COUNT];
  void *slots[COUNT];
  memset(values, 0, sizeof values);
  for (size_t i = 0; i < COUNT; i++) {
    attributes[i] = ATTRIBUTES[i].attribute;
    slots[i] = &values[i];
  }
  CU_CALL(env, cuPointerGetAttributes, (unsigned)COUNT, attributes, slots, ptr);
  napi_value result;
  NAPI_CALL(env, napi_create_object(env, &result));
  for (size_t i = 0; i < COUNT; i++) {
    uint32_t low;
    memcpy(&low, &values[i], sizeof low);
    napi_value value;
    switch (ATTRIBUTES[i].kind) {
    case AS_INT: value = make_int(env, (int32_t)low); break;
    case AS_BOOL: value = make_bool(env, low != 0); break;
    case AS_ADDRESS: value = make_ptr(env, (CUdeviceptr)values[i]); break;
    default: value = make_uint(env, values[i]); break;
    }
    if (!set_named(env, result, ATTRIBUTES[i].key, value)) return NULL;
  }
  return result;
}

CUresult memory_range(CUdeviceptr ptr, CUdeviceptr *start, size_t *size) {
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                      CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned int memory_type = 0;
  void *values[] = {&memory_type, start, size};
  CUresult result = DRV(cuPointerGetAttributes, 3, attributes, values, ptr);
  if (result == CUDA_SUCCESS && !memory_type) *size = 0; /* memory CUDA never saw */
  return result;
}

bool known_memory(napi_env env, CUdeviceptr ptr, size_t bytes, const char *what) {
  CUdeviceptr start = 0;
  size_t size = 0;
  CUresult result = memory_range(ptr, &start, &size);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, "cuPointerGetAttributes"), false;
  if (size && ptr >= start && ptr - start <= size && bytes <= size - (ptr - start)) return true;
  char message[200];
  snprintf(message, sizeof message,
           "%s: 0x%llx is not memory CUDA knows, or %zu bytes from it run past its allocation; "
           "pass device memory that is not freed, or a host buffer",
           what, (unsigned long long)ptr, bytes);
  throw_range(env, message);
  return false;
}

bool keep_copy_side(napi_env env, stream_h *s, CUmemorytype type, napi_value side,
                    CUresult *query) {
  if (type == CU_MEMORYTYPE_DEVICE || is_undefined(env, side)) return true;
  CUresult found = CUDA_SUCCESS;
  if (type != CU_MEMORYTYPE_ARRAY) {
    void *data;
    size_t length;
    CUdeviceptr start = 0;
    size_t size = 0;
    if (!arg_host(env, side, "host", &data, &length)) return false;
    found = memory_range((CUdeviceptr)(uintptr_t)data, &start, &size);
    if (found == CUDA_SUCCESS && !size)
      return true; /* pageable: the driver was done with it when the call returned */
  }
  if (found != CUDA_SUCCESS && *query == CUDA_SUCCESS) *query = found; /* kept all the same */
  return wait_keep_alive(env, s, side);
}

bool keep_query_ok(napi_env env, CUresult query) {
  return query == CUDA_SUCCESS || (throw_cu(env, query, "cuPointerGetAttributes"), false);
}

bool keep_copy_sides(napi_env env, stream_h *s, CUmemorytype src_type, napi_value src,
                     CUmemorytype dst_type, napi_value dst) {
  CUresult query = CUDA_SUCCESS;
  return keep_copy_side(env, s, src_type, src, &query) &&
         keep_copy_side(env, s, dst_type, dst, &query) && keep_query_ok(env, query);
}

bool pointer_attributes_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"pointerAttributes", pointer_attributes}};
  return EXPORTS(env, exports, fns);
}
