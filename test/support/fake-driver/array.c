/* The stand-in's arrays (host memory, rows of width elements), pitched and 3D copies between any
 * of host, device and array memory, and texture and surface objects over them. */
#include "fake.h"

#include <stdlib.h>
#include <string.h>

struct CUarray_st {
  CUDA_ARRAY3D_DESCRIPTOR desc;
  size_t element, row; /* bytes an element, bytes a row */
  unsigned char *data;
};

static size_t format_bytes(CUarray_format format) {
  switch (format) {
  case CU_AD_FORMAT_UNSIGNED_INT8:
  case CU_AD_FORMAT_SIGNED_INT8: return 1;
  case CU_AD_FORMAT_UNSIGNED_INT16:
  case CU_AD_FORMAT_SIGNED_INT16:
  case CU_AD_FORMAT_HALF: return 2;
  case CU_AD_FORMAT_UNSIGNED_INT32:
  case CU_AD_FORMAT_SIGNED_INT32:
  case CU_AD_FORMAT_FLOAT: return 4;
  default: return 0;
  }
}

static bool array_ok(CUarray array) { return obj_live((uintptr_t)array, OBJ_ARRAY); }
size_t fake_array_element(CUarray array) { return array_ok(array) ? array->element : 0; }
static size_t rows_of(const CUarray a) { return a->desc.Height ? a->desc.Height : 1; }
static size_t depth_of(const CUarray a) { return a->desc.Depth ? a->desc.Depth : 1; }

EXPORT CUresult cuArray3DCreate(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d) {
  ENTER();
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  size_t element = format_bytes(d->Format) * d->NumChannels;
  if (!element || (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
    return CUDA_ERROR_INVALID_VALUE;
  if (!d->Width || d->Width > 131072 || d->Height > 65536 || d->Depth > 16384 ||
      (d->Depth && !d->Height))
    return CUDA_ERROR_INVALID_VALUE;
  size_t row = d->Width * element,
         bytes = row * (d->Height ? d->Height : 1) * (d->Depth ? d->Depth : 1);
  if (bytes > ((size_t)1 << 32)) return CUDA_ERROR_OUT_OF_MEMORY;
  /* one block: the array, then its bytes */
  struct CUarray_st *a = calloc(1, sizeof *a + bytes);
  if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
  a->desc = *d;
  a->element = element;
  a->row = row;
  a->data = (unsigned char *)(a + 1);
  CUresult result = obj_add((uintptr_t)a, OBJ_ARRAY, 0);
  if (result != CUDA_SUCCESS) return free(a), result;
  *out = a;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuArrayDestroy(CUarray array) {
  ENTER();
  if (!obj_remove((uintptr_t)array, OBJ_ARRAY)) return CUDA_ERROR_INVALID_HANDLE;
  free(array);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray array) {
  ENTER();
  if (!array_ok(array)) return CUDA_ERROR_INVALID_HANDLE;
  *d = array->desc;
  return CUDA_SUCCESS;
}

/* ---- copies: one side of a pitched or 3D copy ---- */

typedef struct {
  CUmemorytype type;
  const void *host;
  CUdeviceptr device;
  CUarray array;
  size_t pitch, height, x, y, z;
} side;

/* The address of the side's first byte, with the extent of width bytes x rows x depth checked
 * where the driver knows the memory (device and arrays); NULL where it is out of bounds. */
static unsigned char *side_base(const side *s, size_t width, size_t rows, size_t depth) {
  if (s->type == CU_MEMORYTYPE_ARRAY) {
    CUarray a = s->array;
    if (!array_ok(a)) return NULL;
    if (s->x > a->row || width > a->row - s->x || s->y > rows_of(a) || rows > rows_of(a) - s->y ||
        s->z > depth_of(a) || depth > depth_of(a) - s->z)
      return NULL;
    return a->data + (s->z * rows_of(a) + s->y) * a->row + s->x;
  }
  size_t height = s->height ? s->height : rows;
  if ((rows > 1 || depth > 1) && s->pitch < width) return NULL;
  if (depth > 1 && height < rows) return NULL;
  unsigned __int128 first = ((unsigned __int128)s->z * height + s->y) * s->pitch + s->x;
  unsigned __int128 last =
      first + ((unsigned __int128)(depth - 1) * height + (rows - 1)) * s->pitch + width;
  if (last > SIZE_MAX) return NULL;
  if (s->type == CU_MEMORYTYPE_HOST) return (unsigned char *)s->host + (size_t)first;
  if (s->type != CU_MEMORYTYPE_DEVICE && s->type != CU_MEMORYTYPE_UNIFIED) return NULL;
  if (device_range(s->device + (size_t)first, (size_t)(last - first)) != CUDA_SUCCESS) return NULL;
  return (unsigned char *)(uintptr_t)s->device + (size_t)first;
}

static size_t side_row(const side *s) {
  return s->type == CU_MEMORYTYPE_ARRAY ? s->array->row : s->pitch;
}
static size_t side_slice(const side *s, size_t rows) {
  if (s->type == CU_MEMORYTYPE_ARRAY) return s->array->row * rows_of(s->array);
  return s->pitch * (s->height ? s->height : rows);
}

static CUresult copy_3d(const side *src, const side *dst, size_t width, size_t rows, size_t depth,
                        CUstream stream, bool async) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (!width || !rows || !depth) return CUDA_SUCCESS;
  unsigned char *from = side_base(src, width, rows, depth),
                *to = side_base(dst, width, rows, depth);
  if (!from || !to) return CUDA_ERROR_INVALID_VALUE;
  if (async && fake_defer_wanted(to, from, stream) &&
      fake_defer(to, from, width, rows, depth, side_row(dst), side_row(src), side_slice(dst, rows),
                 side_slice(src, rows)))
    return CUDA_SUCCESS;
  if (async) fake_defer_run(UINT64_MAX); /* after the copies queued before it */
  for (size_t z = 0; z < depth; z++)
    for (size_t y = 0; y < rows; y++)
      memmove(to + z * side_slice(dst, rows) + y * side_row(dst),
              from + z * side_slice(src, rows) + y * side_row(src), width);
  return CUDA_SUCCESS;
}

#define SIDE_2D(c, p)                                                                              \
  {                                                                                                \
    c->p##MemoryType, c->p##Host, c->p##Device, c->p##Array, c->p##Pitch, 0, c->p##XInBytes,       \
        c->p##Y, 0                                                                                 \
  }
#define SIDE_3D(c, p)                                                                              \
  {                                                                                                \
    c->p##MemoryType, c->p##Host, c->p##Device, c->p##Array, c->p##Pitch, c->p##Height,            \
        c->p##XInBytes, c->p##Y, c->p##Z                                                           \
  }

static CUresult copy_2d(const CUDA_MEMCPY2D *c, CUstream stream, bool async) {
  side src = SIDE_2D(c, src), dst = SIDE_2D(c, dst);
  return copy_3d(&src, &dst, c->WidthInBytes, c->Height, 1, stream, async);
}
static CUresult copy_3d_of(const CUDA_MEMCPY3D *c, CUstream stream, bool async) {
  if (c->srcLOD || c->dstLOD) return CUDA_ERROR_INVALID_VALUE;
  side src = SIDE_3D(c, src), dst = SIDE_3D(c, dst);
  return copy_3d(&src, &dst, c->WidthInBytes, c->Height, c->Depth, stream, async);
}
CUresult fake_copy_3d(const CUDA_MEMCPY3D *c, CUstream stream) {
  return copy_3d_of(c, stream, false);
}
static CUresult copy_3d_peer(const CUDA_MEMCPY3D_PEER *c, CUstream stream) {
  if (!c->srcContext || !c->dstContext) return CUDA_ERROR_INVALID_CONTEXT;
  if (c->srcLOD || c->dstLOD) return CUDA_ERROR_INVALID_VALUE;
  side src = SIDE_3D(c, src), dst = SIDE_3D(c, dst);
  return copy_3d(&src, &dst, c->WidthInBytes, c->Height, c->Depth, stream, false);
}
EXPORT CUresult cuMemcpy2D(const CUDA_MEMCPY2D *c) {
  ENTER();
  return copy_2d(c, 0, false);
}
EXPORT CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D *c) {
  ENTER();
  return copy_2d(c, 0, false);
}
EXPORT CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D *c, CUstream s) {
  ENTER();
  return copy_2d(c, s, true);
}
EXPORT CUresult cuMemcpy3D(const CUDA_MEMCPY3D *c) {
  ENTER();
  return fake_copy_3d(c, 0);
}
EXPORT CUresult cuMemcpy3DAsync(const CUDA_MEMCPY3D *c, CUstream s) {
  ENTER();
  return copy_3d_of(c, s, true);
}
EXPORT CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *c) {
  ENTER();
  return copy_3d_peer(c, 0);
}
EXPORT CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *c, CUstream s) {
  ENTER();
  return copy_3d_peer(c, s);
}

/* Linear copies to and from arrays: offsets in bytes into the array's rows, laid end to end. */
static side linear(CUmemorytype type, const void *host, CUdeviceptr device, CUarray array,
                   size_t offset) {
  side s = {type, host, device, array, 0, 0, offset, 0, 0};
  if (type == CU_MEMORYTYPE_ARRAY && obj_is((uintptr_t)array, OBJ_ARRAY)) {
    s.x = offset % array->row;
    s.y = offset / array->row;
  }
  return s;
}
static CUresult copy_linear(side src, side dst, size_t bytes, CUstream stream, bool async) {
  /* a linear range of an array must stay within one row here */
  return copy_3d(&src, &dst, bytes, 1, 1, stream, async);
}
#define ARR(a, o) linear(CU_MEMORYTYPE_ARRAY, NULL, 0, a, o)
#define HOST(h) linear(CU_MEMORYTYPE_HOST, h, 0, NULL, 0)
#define DEVICE(d) linear(CU_MEMORYTYPE_DEVICE, NULL, d, NULL, 0)
EXPORT CUresult cuMemcpyDtoA(CUarray a, size_t o, CUdeviceptr d, size_t n) {
  ENTER();
  return copy_linear(DEVICE(d), ARR(a, o), n, 0, false);
}
EXPORT CUresult cuMemcpyAtoD(CUdeviceptr d, CUarray a, size_t o, size_t n) {
  ENTER();
  return copy_linear(ARR(a, o), DEVICE(d), n, 0, false);
}
EXPORT CUresult cuMemcpyHtoA(CUarray a, size_t o, const void *h, size_t n) {
  ENTER();
  return copy_linear(HOST(h), ARR(a, o), n, 0, false);
}
EXPORT CUresult cuMemcpyAtoH(void *h, CUarray a, size_t o, size_t n) {
  ENTER();
  return copy_linear(ARR(a, o), HOST(h), n, 0, false);
}
EXPORT CUresult cuMemcpyAtoA(CUarray d, size_t dO, CUarray s, size_t sO, size_t n) {
  ENTER();
  return copy_linear(ARR(s, sO), ARR(d, dO), n, 0, false);
}
EXPORT CUresult cuMemcpyHtoAAsync(CUarray a, size_t o, const void *h, size_t n, CUstream s) {
  ENTER();
  return copy_linear(HOST(h), ARR(a, o), n, s, true);
}
EXPORT CUresult cuMemcpyAtoHAsync(void *h, CUarray a, size_t o, size_t n, CUstream s) {
  ENTER();
  return copy_linear(ARR(a, o), HOST(h), n, s, true);
}

/* ---- texture and surface objects: ids, checked against their resource ---- */

static CUresult resource_ok(const CUDA_RESOURCE_DESC *r) {
  switch (r->resType) {
  case CU_RESOURCE_TYPE_ARRAY:
    return array_ok(r->res.array.hArray) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  case CU_RESOURCE_TYPE_LINEAR:
    return device_range(r->res.linear.devPtr, r->res.linear.sizeInBytes);
  case CU_RESOURCE_TYPE_PITCH2D:
    if (r->res.pitch2D.pitchInBytes < r->res.pitch2D.width) return CUDA_ERROR_INVALID_VALUE;
    return device_range(r->res.pitch2D.devPtr, r->res.pitch2D.pitchInBytes * r->res.pitch2D.height);
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}
static CUresult object_create(unsigned long long *id, const CUDA_RESOURCE_DESC *r) {
  static unsigned long long next = 1;
  CUresult result = resource_ok(r);
  if (result != CUDA_SUCCESS) return result;
  unsigned long long mine = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
  if ((result = obj_add(mine, OBJ_TEXTURE, 0)) == CUDA_SUCCESS) *id = mine;
  return result;
}
EXPORT CUresult cuTexObjectCreate(CUtexObject *t, const CUDA_RESOURCE_DESC *r,
                                  const CUDA_TEXTURE_DESC *d, const CUDA_RESOURCE_VIEW_DESC *v) {
  ENTER();
  if (!d || v) return CUDA_ERROR_INVALID_VALUE;
  return object_create(t, r);
}
EXPORT CUresult cuTexObjectDestroy(CUtexObject t) {
  ENTER();
  return obj_remove(t, OBJ_TEXTURE) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
EXPORT CUresult cuSurfObjectCreate(CUsurfObject *s, const CUDA_RESOURCE_DESC *r) {
  ENTER();
  if (r->resType != CU_RESOURCE_TYPE_ARRAY) return CUDA_ERROR_INVALID_VALUE;
  return object_create(s, r);
}
EXPORT CUresult cuSurfObjectDestroy(CUsurfObject s) {
  ENTER();
  return obj_remove(s, OBJ_TEXTURE) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
