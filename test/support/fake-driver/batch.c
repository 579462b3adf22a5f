/* The stand-in's batched copies (cuMemcpyBatchAsync, CUDA 13's signature): each copy moved as a
 * linear copy (none while the stream captures: driver 580 refuses them), a side being memory the
 * stand-in handed out (device, managed or page-locked; logged by its kind) or else pageable host
 * memory. The driver's rules are checked (a stream of the caller's, attribute indices from 0
 * rising, a valid source access order), and each copy is logged (FAKE_CUDA_LOG) with the order and
 * hints it got. */
#include "fake.h"

static const char *kind_name(const obj *o) {
  if (!o) return "pageable";
  switch (o->kind) {
  case OBJ_HOST_MEMORY:
  case OBJ_REGISTERED: return "pinned";
  case OBJ_MANAGED: return "managed";
  default: return "device";
  }
}

EXPORT CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                   size_t count, CUmemcpyAttributes *attrs, size_t *idxs, size_t n,
                                   CUstream stream) {
  ENTER();
  if (!stream) return CUDA_ERROR_INVALID_VALUE; /* the default stream is refused */
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (fake_stream_capturing(stream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* as 580 */
  if (!count || !n || n > count || idxs[0] != 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 1; i < n; i++)
    if (idxs[i] <= idxs[i - 1] || idxs[i] >= count) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < n; i++)
    if (attrs[i].srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
        attrs[i].srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY ||
        attrs[i].flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)
      return CUDA_ERROR_INVALID_VALUE;
  size_t k = 0;
  for (size_t i = 0; i < count; i++) {
    while (k + 1 < n && idxs[k + 1] <= i) k++;
    obj dst, src;
    bool dst_device = obj_memory((uintptr_t)dsts[i], sizes[i], &dst);
    bool src_device = obj_memory((uintptr_t)srcs[i], sizes[i], &src);
    CUresult result = fake_copy((void *)(uintptr_t)dsts[i], dst_device,
                                (const void *)(uintptr_t)srcs[i], src_device, sizes[i], stream);
    if (result != CUDA_SUCCESS) return result;
    if (logging())
      log_line("cuMemcpyBatchAsync copy=%zu bytes=%zu dst=%s src=%s order=%d flags=%u "
               "srcHint=%d:%d dstHint=%d:%d",
               i, sizes[i], kind_name(dst_device ? &dst : NULL),
               kind_name(src_device ? &src : NULL), (int)attrs[k].srcAccessOrder, attrs[k].flags,
               (int)attrs[k].srcLocHint.type, attrs[k].srcLocHint.id, (int)attrs[k].dstLocHint.type,
               attrs[k].dstLocHint.id);
  }
  return CUDA_SUCCESS;
}
