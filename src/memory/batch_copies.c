/* batch_copies: many 1D copies in one driver call (cuMemcpyBatchAsync, CUDA 13's signature),
 * between device memory and host buffers. Each host side is checked against its buffer. A
 * pageable host source is read before the call returns (the driver's DURING_API_CALL order), and
 * a pageable host destination is filled before it returns (the stream is synchronized), as
 * memcpyHtoDAsync and memcpyDtoHAsync do for pageable memory; page-locked, registered and managed
 * buffers are kept alive until the stream has passed the copies. */
#include <stdio.h>
#include <stdlib.h>

#include "memory.h"

#define MAX_BATCH 65536
enum { HINT_SRC_TYPE, HINT_SRC_ID, HINT_DST_TYPE, HINT_DST_ID, HINT_FLAGS, HINTS };

/* The page-locked range the last host side lay in: a side within it needs no driver query. */
typedef struct pinned_range {
  CUdeviceptr start;
  size_t size;
} pinned_range;

/* Whether [ptr, ptr + bytes) is memory CUDA does not know (pageable); remembers a page-locked
 * range found in *last. */
static bool is_pageable(CUdeviceptr ptr, size_t bytes, pinned_range *last) {
  if (ptr >= last->start && ptr - last->start <= last->size &&
      bytes <= last->size - (ptr - last->start))
    return false;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                      CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned int memory_type = 0;
  CUdeviceptr start = 0;
  size_t size = 0;
  void *values[] = {&memory_type, &start, &size};
  if (DRV(cuPointerGetAttributes, 3, attributes, values, ptr) != CUDA_SUCCESS || !memory_type)
    return true;
  *last = (pinned_range){start, size};
  return false;
}

/* One side of copy i: an address, or a host buffer of which bytes must fit (its address then,
 * and whether it is pageable). false after throwing. */
static bool arg_side(napi_env env, napi_value value, size_t i, const char *side, size_t bytes,
                     CUdeviceptr *ptr, bool *pageable, pinned_range *last) {
  napi_valuetype type;
  *pageable = false;
  if (!arg_type(env, value, &type)) return false;
  if (type != napi_object) return arg_ptr(env, value, side, ptr);
  void *data;
  size_t length;
  if (!arg_host(env, value, side, &data, &length)) return false;
  if (bytes > length) {
    char message[160];
    snprintf(message, sizeof message, "copies[%zu].%s holds %zu bytes, fewer than the %zu to copy",
             i, side, length, bytes);
    throw_range(env, message);
    return false;
  }
  *ptr = (CUdeviceptr)(uintptr_t)data;
  *pageable = is_pageable(*ptr, bytes, last);
  return true;
}

/* memcpyBatchAsync(copies, hints, stream, keep): copies lib/'s flat [dest, src, bytes, ...],
 * hints an Int32Array of HINTS a copy (location hints and flags); keep stays alive until the
 * stream has passed the copies. */
static napi_value memcpy_batch_async(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  stream_h *s;
  void *hint_data;
  size_t hint_bytes;
  uint32_t length;
  if (!arg_stream_handle(env, argv[2], &s) ||
      !arg_host(env, argv[1], "hints", &hint_data, &hint_bytes) || !driver_ready(env))
    return NULL;
  if (!s)
    return throw_type(env,
                      "memcpyBatchAsync() needs a Stream: the driver refuses the default stream");
  NAPI_CALL(env, napi_get_array_length(env, argv[0], &length));
  size_t count = length / 3;
  if (length % 3 || !count || count > MAX_BATCH)
    return throw_range(env, "a batch holds 1 to 65536 copies");
  if (hint_bytes != count * HINTS * sizeof(int32_t)) return throw_range(env, "one hint a copy");
  const int32_t *hints = hint_data;
  CUdeviceptr *dsts = calloc(count, sizeof *dsts), *srcs = calloc(count, sizeof *srcs);
  size_t *sizes = calloc(count, sizeof *sizes), *indices = calloc(count, sizeof *indices);
  CUmemcpyAttributes *attrs = calloc(count, sizeof *attrs);
  bool ok = dsts && srcs && sizes && indices && attrs, sync = false;
  pinned_range last = {0, 0};
  if (!ok) throw_oom(env);
  for (size_t i = 0; ok && i < count; i++) {
    napi_value dst, src, bytes;
    bool dst_pageable, src_pageable;
    ok = napi_get_element(env, argv[0], (uint32_t)(3 * i), &dst) == napi_ok &&
         napi_get_element(env, argv[0], (uint32_t)(3 * i + 1), &src) == napi_ok &&
         napi_get_element(env, argv[0], (uint32_t)(3 * i + 2), &bytes) == napi_ok &&
         arg_size(env, bytes, "bytes", &sizes[i]) &&
         arg_side(env, dst, i, "dest", sizes[i], &dsts[i], &dst_pageable, &last) &&
         arg_side(env, src, i, "src", sizes[i], &srcs[i], &src_pageable, &last);
    if (!ok) break;
    const int32_t *hint = hints + HINTS * i;
    attrs[i].srcAccessOrder = src_pageable ? CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL
                                           : CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    attrs[i].srcLocHint.type = (CUmemLocationType)hint[HINT_SRC_TYPE];
    attrs[i].srcLocHint.id = hint[HINT_SRC_ID];
    attrs[i].dstLocHint.type = (CUmemLocationType)hint[HINT_DST_TYPE];
    attrs[i].dstLocHint.id = hint[HINT_DST_ID];
    attrs[i].flags = (unsigned)hint[HINT_FLAGS];
    indices[i] = i;
    sync = sync || dst_pageable;
  }
  CUresult result = CUDA_SUCCESS;
  const char *api = "cuMemcpyBatchAsync";
  if (ok)
    result = DRV(cuMemcpyBatchAsync, dsts, srcs, sizes, count, attrs, indices, count, s->handle);
  if (ok && result == CUDA_SUCCESS && sync) {
    api = "cuStreamSynchronize";
    result = DRV(cuStreamSynchronize, s->handle);
  }
  free(dsts);
  free(srcs);
  free(sizes);
  free(indices);
  free(attrs);
  if (!ok) return NULL;
  if (result != CUDA_SUCCESS) return throw_cu(env, result, api);
  wait_keep_alive(env, s->handle, argv[3]);
  return NULL;
}

bool batch_copies_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"memcpyBatchAsync", memcpy_batch_async}};
  return EXPORTS(env, exports, fns);
}
