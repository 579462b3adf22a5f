/* batch_copies: many copies in one driver call: 1D ones (cuMemcpyBatchAsync, CUDA 13's
 * signature) between device memory and host buffers, and 2D and 3D ones (cuMemcpy3DBatchAsync)
 * described as Memcpy2D and Memcpy3D describe them, with CUDA arrays too. Each host side is checked
 * against its buffer. A pageable host source is read before the call returns (the driver's
 * DURING_API_CALL order), and a pageable host destination is filled before it returns (the stream
 * is synchronized), as memcpyHtoDAsync and memcpyDtoHAsync do for pageable memory; page-locked,
 * registered and managed buffers, and CUDA arrays, are kept alive until the stream has passed the
 * copies (C finds them: lib/ names nothing to keep). */
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
  CUdeviceptr start = 0;
  size_t size = 0;
  if (memory_range(ptr, &start, &size) != CUDA_SUCCESS || !size) return true;
  *last = (pinned_range){start, size};
  return false;
}

/* One side of copy i: device memory of which bytes must lie within its allocation, or a host
 * buffer of which bytes must fit (its address then, whether it is pageable, and where it is not,
 * the buffer into *keep: kept alive until the stream has passed the copy). false after throwing. */
static bool arg_side(napi_env env, napi_value value, size_t i, const char *side, size_t bytes,
                     CUdeviceptr *ptr, bool *pageable, pinned_range *last, napi_value *keep) {
  napi_valuetype type;
  *pageable = false;
  *keep = NULL;
  if (!arg_type(env, value, &type)) return false;
  if (type != napi_object) {
    char what[64];
    snprintf(what, sizeof what, "copies[%zu].%s", i, side);
    return arg_ptr(env, value, side, ptr) && known_memory(env, *ptr, bytes, what);
  }
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
  if (!*pageable) *keep = value;
  return true;
}

/* memcpyBatchAsync(copies, hints, stream): copies lib/'s flat [dest, src, bytes, ...], hints an
 * Int32Array of HINTS a copy (location hints and flags). */
static napi_value memcpy_batch_async(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
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
  napi_value *kept = calloc(2 * count, sizeof *kept); /* the page-locked host sides */
  bool ok = dsts && srcs && sizes && indices && attrs && kept, sync = false;
  pinned_range last = {0, 0};
  if (!ok) throw_oom(env);
  for (size_t i = 0; ok && i < count; i++) {
    napi_value dst, src, bytes;
    bool dst_pageable, src_pageable;
    ok = napi_get_element(env, argv[0], (uint32_t)(3 * i), &dst) == napi_ok &&
         napi_get_element(env, argv[0], (uint32_t)(3 * i + 1), &src) == napi_ok &&
         napi_get_element(env, argv[0], (uint32_t)(3 * i + 2), &bytes) == napi_ok &&
         arg_size(env, bytes, "bytes", &sizes[i]) &&
         arg_side(env, dst, i, "dest", sizes[i], &dsts[i], &dst_pageable, &last, &kept[2 * i]) &&
         arg_side(env, src, i, "src", sizes[i], &srcs[i], &src_pageable, &last, &kept[2 * i + 1]);
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
  for (size_t i = 0; ok && result == CUDA_SUCCESS && i < 2 * count; i++)
    if (kept[i]) ok = wait_keep_alive(env, s, kept[i]);
  free(kept);
  if (!ok) return NULL;
  if (result != CUDA_SUCCESS) return throw_cu(env, result, api);
  return NULL;
}

/* ---- 2D and 3D ---- */

/* The bytes of an element of array; 0 after throwing for a format that has none (a block format).
 */
static size_t element_bytes(napi_env env, CUarray array) {
  CUDA_ARRAY3D_DESCRIPTOR d;
  CUresult result = DRV(cuArray3DGetDescriptor, &d, array);
  if (result != CUDA_SUCCESS) {
    throw_cu(env, result, "cuArray3DGetDescriptor");
    return 0;
  }
  size_t bytes = format_channel_bytes(d.Format);
  if (!bytes) throw_range(env, "memcpy3DBatchAsync(): arrays of this format cannot be batched");
  return bytes * d.NumChannels;
}

/* One side of a 3D copy as a batch operand, its bytes counted in elements of size bytes; false
 * after throwing where an offset or pitch is not a whole number of elements. */
static bool operand_of(napi_env env, CUmemorytype type, const void *host, CUdeviceptr device,
                       CUarray array, size_t x, size_t y, size_t z, size_t pitch, size_t height,
                       size_t size, CUmemcpy3DOperand *op) {
  if (x % size || pitch % size) {
    throw_range(env,
                "memcpy3DBatchAsync(): offsets and pitches must be whole elements of the array");
    return false;
  }
  *op = (CUmemcpy3DOperand){0};
  if (type == CU_MEMORYTYPE_ARRAY) {
    op->type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    op->op.array.array = array;
    op->op.array.offset = (CUoffset3D){x / size, y, z};
    return true;
  }
  CUdeviceptr base = type == CU_MEMORYTYPE_HOST ? (CUdeviceptr)(uintptr_t)host : device;
  op->type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op->op.ptr.ptr = base + (z * height + y) * pitch + x;
  op->op.ptr.rowLength = pitch / size;
  op->op.ptr.layerHeight = height;
  return true;
}

/* The batch operation of p (checked by read_copy_3d, its sides given by address too: memory the
 * driver knows, to their last byte): elements are the arrays' (1 byte between
 * pointers); a pageable host source is read during the call, a pageable destination sets *sync. */
static bool batch_op_of(napi_env env, const CUDA_MEMCPY3D *p, CUDA_MEMCPY3D_BATCH_OP *op,
                        pinned_range *last, bool *sync) {
  bool src_array = p->srcMemoryType == CU_MEMORYTYPE_ARRAY,
       dst_array = p->dstMemoryType == CU_MEMORYTYPE_ARRAY;
  size_t size = src_array ? element_bytes(env, p->srcArray) : 1;
  size_t dst_size = dst_array ? element_bytes(env, p->dstArray) : size;
  if (!size || !dst_size) return false;
  if (src_array && dst_array && size != dst_size)
    return throw_range(env, "memcpy3DBatchAsync(): arrays of other element sizes"), false;
  size = src_array ? size : dst_size;
  if (p->WidthInBytes % size)
    return throw_range(env, "memcpy3DBatchAsync(): widthInBytes must be whole elements"), false;
  if (!operand_of(env, p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes,
                  p->srcY, p->srcZ, p->srcPitch, p->srcHeight, size, &op->src) ||
      !operand_of(env, p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes,
                  p->dstY, p->dstZ, p->dstPitch, p->dstHeight, size, &op->dst))
    return false;
  op->extent = (CUextent3D){p->WidthInBytes / size, p->Height, p->Depth};
  bool src_pageable =
      p->srcMemoryType == CU_MEMORYTYPE_HOST && is_pageable(op->src.op.ptr.ptr, 1, last);
  op->srcAccessOrder =
      src_pageable ? CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL : CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  op->flags = 0;
  if (p->dstMemoryType == CU_MEMORYTYPE_HOST && is_pageable(op->dst.op.ptr.ptr, 1, last))
    *sync = true;
  return true;
}

/* A side of a 3D copy in a batch, kept (keep_copy_side) once the batch is enqueued. */
typedef struct batch_side {
  CUmemorytype type;
  napi_value value;
} batch_side;

/* memcpy3DBatchAsync(copies, stream): copies lib/'s flat [fields, srcHost, dstHost, planar, ...]
 * as memcpy3D takes one; empty copies are left out. */
static napi_value memcpy_3d_batch_async(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  stream_h *s;
  uint32_t length;
  if (!arg_stream_handle(env, argv[1], &s) || !driver_ready(env)) return NULL;
  if (!s)
    return throw_type(env,
                      "memcpy3DBatchAsync() needs a Stream: the driver refuses the default stream");
  NAPI_CALL(env, napi_get_array_length(env, argv[0], &length));
  size_t count = length / 4;
  if (length % 4 || !count || count > MAX_BATCH)
    return throw_range(env, "a batch holds 1 to 65536 copies");
  CUDA_MEMCPY3D_BATCH_OP *ops = calloc(count, sizeof *ops);
  batch_side *sides = calloc(2 * count, sizeof *sides);
  if (!ops || !sides) {
    free(ops);
    free(sides);
    return throw_oom(env);
  }
  pinned_range last = {0, 0};
  bool ok = true, sync = false;
  size_t n = 0;
  for (size_t i = 0; ok && i < count; i++) {
    napi_value item[4];
    bool planar;
    CUDA_MEMCPY3D p;
    for (uint32_t k = 0; ok && k < 4; k++)
      ok = napi_get_element(env, argv[0], (uint32_t)(4 * i) + k, &item[k]) == napi_ok;
    ok = ok && arg_bool(env, item[3], &planar) &&
         read_copy_3d(env, item[0], item[1], item[2], planar, &p) &&
         capture_pin_sides(env, s->handle, p.srcMemoryType, item[1], p.dstMemoryType, item[2]);
    if (ok && p.WidthInBytes && p.Height && p.Depth) {
      sides[2 * n] = (batch_side){p.srcMemoryType, item[1]};
      sides[2 * n + 1] = (batch_side){p.dstMemoryType, item[2]};
      ok = batch_op_of(env, &p, &ops[n++], &last, &sync);
    }
  }
  CUresult result = CUDA_SUCCESS;
  const char *api = "cuMemcpy3DBatchAsync";
  if (ok && n) result = DRV(cuMemcpy3DBatchAsync, n, ops, 0, s->handle);
  if (ok && n && result == CUDA_SUCCESS && sync) {
    api = "cuStreamSynchronize";
    result = DRV(cuStreamSynchronize, s->handle);
  }
  free(ops);
  CUresult query = CUDA_SUCCESS;
  for (size_t i = 0; ok && result == CUDA_SUCCESS && i < 2 * n; i++)
    ok = keep_copy_side(env, s, sides[i].type, sides[i].value, &query);
  free(sides);
  ok = ok && (result != CUDA_SUCCESS || keep_query_ok(env, query));
  if (!ok) return NULL;
  if (result != CUDA_SUCCESS) return throw_cu(env, result, api);
  return NULL;
}

bool batch_copies_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"memcpyBatchAsync", memcpy_batch_async},
                                  {"memcpy3DBatchAsync", memcpy_3d_batch_async}};
  return EXPORTS(env, exports, fns);
}
