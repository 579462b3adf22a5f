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
    CUresult result =
        fake_copy((void *)(uintptr_t)dsts[i], dst_device, (const void *)(uintptr_t)srcs[i],
                  src_device, sizes[i], stream, true);
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

/* One operand of a 3D batch as a side of a CUDA_MEMCPY3D (pitches and offsets in bytes, elements
 * of size bytes); false where it is malformed. */
static bool side_of(const CUmemcpy3DOperand *op, size_t size, const CUextent3D *extent,
                    CUmemorytype *type, const void **host, CUdeviceptr *device, CUarray *array,
                    size_t *x, size_t *y, size_t *z, size_t *pitch, size_t *height) {
  *x = *y = *z = *pitch = *height = 0;
  if (op->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
    *type = CU_MEMORYTYPE_ARRAY;
    *array = op->op.array.array;
    *x = op->op.array.offset.x * size;
    *y = op->op.array.offset.y;
    *z = op->op.array.offset.z;
    return true;
  }
  if (op->type != CU_MEMCPY_OPERAND_TYPE_POINTER) return false;
  size_t row = op->op.ptr.rowLength ? op->op.ptr.rowLength : extent->width;
  if (row < extent->width || (op->op.ptr.layerHeight && op->op.ptr.layerHeight < extent->height))
    return false;
  *pitch = row * size;
  *height = op->op.ptr.layerHeight ? op->op.ptr.layerHeight : extent->height;
  bool known = obj_memory((uintptr_t)op->op.ptr.ptr, 1, NULL);
  *type = known ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  *device = op->op.ptr.ptr;
  *host = (const void *)(uintptr_t)op->op.ptr.ptr;
  return true;
}

/* Each operation as a 3D copy (the element size the arrays', 1 between pointers), logged. */
EXPORT CUresult cuMemcpy3DBatchAsync(size_t count, CUDA_MEMCPY3D_BATCH_OP *ops,
                                     unsigned long long flags, CUstream stream) {
  ENTER();
  if (!stream) return CUDA_ERROR_INVALID_VALUE;
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (fake_stream_capturing(stream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (!count || flags) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++) {
    const CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
    if (!op->extent.width || !op->extent.height || !op->extent.depth ||
        op->srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
        op->srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY || op->flags)
      return CUDA_ERROR_INVALID_VALUE;
    size_t src_size = op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY
                          ? fake_array_element(op->src.op.array.array)
                          : 0,
           dst_size = op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY
                          ? fake_array_element(op->dst.op.array.array)
                          : 0;
    if ((src_size && dst_size && src_size != dst_size) ||
        (op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY && !src_size) ||
        (op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY && !dst_size))
      return CUDA_ERROR_INVALID_VALUE;
    size_t size = src_size ? src_size : dst_size ? dst_size : 1;
    CUDA_MEMCPY3D c = {0};
    if (!side_of(&op->src, size, &op->extent, &c.srcMemoryType, &c.srcHost, &c.srcDevice,
                 &c.srcArray, &c.srcXInBytes, &c.srcY, &c.srcZ, &c.srcPitch, &c.srcHeight) ||
        !side_of(&op->dst, size, &op->extent, &c.dstMemoryType, (const void **)&c.dstHost,
                 &c.dstDevice, &c.dstArray, &c.dstXInBytes, &c.dstY, &c.dstZ, &c.dstPitch,
                 &c.dstHeight))
      return CUDA_ERROR_INVALID_VALUE;
    c.WidthInBytes = op->extent.width * size;
    c.Height = op->extent.height;
    c.Depth = op->extent.depth;
    CUresult result = fake_copy_3d(&c, stream);
    if (result != CUDA_SUCCESS) return result;
    if (logging())
      log_line("cuMemcpy3DBatchAsync copy=%zu extent=%zux%zux%zu element=%zu order=%d", i,
               op->extent.width, op->extent.height, op->extent.depth, size,
               (int)op->srcAccessOrder);
  }
  return CUDA_SUCCESS;
}
