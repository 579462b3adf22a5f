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

/* One side of copy i: an address, or a host buffer of which bytes must fit (its address then,
 * and whether CUDA does not know the memory: pageable). false after throwing. */
static bool arg_side(napi_env env, napi_value value, size_t i, const char *side, size_t bytes,
                     CUdeviceptr *ptr, bool *pageable) {
  napi_valuetype type;
  *pageable = false;
  if (!arg_type(env, value, &type)) return false;
  char name[48];
  snprintf(name, sizeof name, "copies[%zu].%s", i, side);
  if (type != napi_object) return arg_ptr(env, value, name, ptr);
  void *data;
  size_t length;
  if (!arg_host(env, value, name, &data, &length)) return false;
  if (bytes > length) {
    char message[160];
    snprintf(message, sizeof message, "%s holds %zu bytes, fewer than the %zu to copy", name,
             length, bytes);
    throw_range(env, message);
    return false;
  }
  *ptr = (CUdeviceptr)(uintptr_t)data;
  unsigned int memory_type = 0;
  *pageable = DRV(cuPointerGetAttribute, &memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, *ptr) !=
              CUDA_SUCCESS;
  return true;
}

static bool any_pageable_source(const CUmemcpyAttributes *attrs, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (attrs[i].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) return true;
  return false;
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
  if (!ok) throw_oom(env);
  for (size_t i = 0; ok && i < count; i++) {
    napi_value dst, src, bytes;
    bool dst_pageable, src_pageable;
    ok = napi_get_element(env, argv[0], (uint32_t)(3 * i), &dst) == napi_ok &&
         napi_get_element(env, argv[0], (uint32_t)(3 * i + 1), &src) == napi_ok &&
         napi_get_element(env, argv[0], (uint32_t)(3 * i + 2), &bytes) == napi_ok &&
         arg_size(env, bytes, "bytes", &sizes[i]) &&
         arg_side(env, dst, i, "dest", sizes[i], &dsts[i], &dst_pageable) &&
         arg_side(env, src, i, "src", sizes[i], &srcs[i], &src_pageable);
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
  CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
  if (ok && (sync || any_pageable_source(attrs, count)) &&
      DRV(cuStreamIsCapturing, s->handle, &capturing) == CUDA_SUCCESS &&
      capturing != CU_STREAM_CAPTURE_STATUS_NONE) {
    ok = false; /* a graph would read or fill the pageable memory at its launches, unkept */
    throw_logic(env, "memcpyBatchAsync(): a captured copy needs page-locked host memory "
                     "(pagelockedEmpty() and friends), not pageable TypedArrays");
  }
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
