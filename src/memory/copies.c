/* copies: copies between host, device and peer memory, memsets, and 2D and 3D copies, each
 * checked against the memory it names before the driver sees it. */
#include <stdio.h>
#include <string.h>

#include "memory.h"

/* ---- copies and memsets ---- */

/* The copies between host and device, with the driver's argument order: memcpyHtoD(dest, src)
 * copies all of src, memcpyDtoH(dest, src) fills all of dest; their Async forms take (..., stream)
 * and keep a page-locked host array alive until the stream has passed the copy. Each returns true
 * where it went through the staging buffers (done with the host memory, which needs no keeping). */
static napi_value copy_host_device(napi_env env, napi_callback_info info, bool to_device,
                                   bool async) {
  ARGS(env, info, 3);
  CUdeviceptr device;
  void *host;
  size_t bytes;
  CUstream stream = NULL;
  stream_h *s = NULL;
  if (!arg_ptr(env, argv[to_device ? 0 : 1], to_device ? "dest" : "src", &device) ||
      !arg_host(env, argv[to_device ? 1 : 0], to_device ? "src" : "dest", &host, &bytes) ||
      (async && !arg_stream_and_handle(env, argv[2], &stream, &s)) || !driver_ready(env))
    return NULL;
  if (!bytes) return NULL;
  int staged = staged_copy(env, device, host, bytes, to_device, async, s);
  if (staged) return staged > 0 ? make_bool(env, true) : NULL;
  if (async && !capture_pin_host(env, stream, host, bytes)) return NULL;
  if (to_device && async)
    CU_CALL(env, cuMemcpyHtoDAsync, device, host, bytes, stream);
  else if (to_device)
    CU_CALL(env, cuMemcpyHtoD, device, host, bytes);
  else if (async)
    CU_CALL(env, cuMemcpyDtoHAsync, host, device, bytes, stream);
  else
    CU_CALL(env, cuMemcpyDtoH, host, device, bytes);
  if (async)
    keep_copy_sides(env, s, CU_MEMORYTYPE_HOST, argv[to_device ? 1 : 0], CU_MEMORYTYPE_DEVICE,
                    NULL);
  return NULL;
}

static napi_value memcpy_htod(napi_env env, napi_callback_info info) {
  return copy_host_device(env, info, true, false);
}

static napi_value memcpy_dtoh(napi_env env, napi_callback_info info) {
  return copy_host_device(env, info, false, false);
}

static napi_value memcpy_htod_async(napi_env env, napi_callback_info info) {
  return copy_host_device(env, info, true, true);
}

static napi_value memcpy_dtoh_async(napi_env env, napi_callback_info info) {
  return copy_host_device(env, info, false, true);
}

/* memcpyDtoD(dest, src, bytes, stream): cuMemcpyDtoD when stream is undefined, else
 * cuMemcpyDtoDAsync. */
static napi_value memcpy_dtod(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  CUdeviceptr dst, src;
  size_t bytes;
  CUstream stream = NULL;
  bool sync = is_undefined(env, argv[3]);
  if (!arg_ptr(env, argv[0], "dest", &dst) || !arg_ptr(env, argv[1], "src", &src) ||
      !arg_size(env, argv[2], "size", &bytes) || (!sync && !arg_stream(env, argv[3], &stream)) ||
      !driver_ready(env))
    return NULL;
  if (bytes && sync)
    CU_CALL(env, cuMemcpyDtoD, dst, src, bytes);
  else if (bytes)
    CU_CALL(env, cuMemcpyDtoDAsync, dst, src, bytes, stream);
  return NULL;
}

/* memcpyPeer(dest, destContext, src, srcContext, bytes, stream): cuMemcpyPeer when stream is
 * undefined, else cuMemcpyPeerAsync. */
static napi_value memcpy_peer(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  CUdeviceptr dst, src;
  size_t bytes;
  CUstream stream = NULL;
  ctx_rec *dst_ctx, *src_ctx;
  bool sync = is_undefined(env, argv[5]);
  if (!arg_ptr(env, argv[0], "dest", &dst) || !(dst_ctx = ctx_rec_of_context(env, argv[1])) ||
      !arg_ptr(env, argv[2], "src", &src) || !(src_ctx = ctx_rec_of_context(env, argv[3])) ||
      !arg_size(env, argv[4], "size", &bytes) || (!sync && !arg_stream(env, argv[5], &stream)))
    return NULL;
  if (!bytes) return NULL;
  if (sync)
    CU_CALL(env, cuMemcpyPeer, dst, dst_ctx->handle, src, src_ctx->handle, bytes);
  else
    CU_CALL(env, cuMemcpyPeerAsync, dst, dst_ctx->handle, src, src_ctx->handle, bytes, stream);
  return NULL;
}

/* The arguments of a memset: memsetD8/16/32(dest, value, count, stream) and memsetD2D8/16/32(dest,
 * pitch, value, width, height, stream); a stream (or null) makes it the Async form, undefined the
 * synchronous one. false after throwing, or (nothing thrown) where there is nothing to set. */
typedef struct memset_args {
  CUdeviceptr dest;
  size_t pitch, width, height; /* 1D: width is the count, height 1 */
  uint32_t value;
  bool async;
  CUstream stream;
} memset_args;

static bool read_memset(napi_env env, const napi_value *a, bool two_d, memset_args *m) {
  m->pitch = 0;
  m->height = 1;
  m->async = !is_undefined(env, a[two_d ? 5 : 3]);
  m->stream = NULL;
  return arg_ptr(env, a[0], "dest", &m->dest) &&
         (!two_d || arg_size(env, a[1], "pitch", &m->pitch)) &&
         arg_uint32(env, a[two_d ? 2 : 1], "value", &m->value) &&
         arg_size(env, a[two_d ? 3 : 2], two_d ? "width" : "count", &m->width) &&
         (!two_d || arg_size(env, a[4], "height", &m->height)) &&
         (!m->async || arg_stream(env, a[two_d ? 5 : 3], &m->stream)) && driver_ready(env) &&
         m->width && m->height;
}

static napi_value memset_d8(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  memset_args m;
  if (!read_memset(env, argv, false, &m)) return NULL;
  if (m.async)
    CU_CALL(env, cuMemsetD8Async, m.dest, (unsigned char)m.value, m.width, m.stream);
  else
    CU_CALL(env, cuMemsetD8, m.dest, (unsigned char)m.value, m.width);
  return NULL;
}

static napi_value memset_d16(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  memset_args m;
  if (!read_memset(env, argv, false, &m)) return NULL;
  if (m.async)
    CU_CALL(env, cuMemsetD16Async, m.dest, (unsigned short)m.value, m.width, m.stream);
  else
    CU_CALL(env, cuMemsetD16, m.dest, (unsigned short)m.value, m.width);
  return NULL;
}

static napi_value memset_d32(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  memset_args m;
  if (!read_memset(env, argv, false, &m)) return NULL;
  if (m.async)
    CU_CALL(env, cuMemsetD32Async, m.dest, m.value, m.width, m.stream);
  else
    CU_CALL(env, cuMemsetD32, m.dest, m.value, m.width);
  return NULL;
}

static napi_value memset_d2d8(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  memset_args m;
  if (!read_memset(env, argv, true, &m)) return NULL;
  if (m.async)
    CU_CALL(env, cuMemsetD2D8Async, m.dest, m.pitch, (unsigned char)m.value, m.width, m.height,
            m.stream);
  else
    CU_CALL(env, cuMemsetD2D8, m.dest, m.pitch, (unsigned char)m.value, m.width, m.height);
  return NULL;
}

static napi_value memset_d2d16(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  memset_args m;
  if (!read_memset(env, argv, true, &m)) return NULL;
  if (m.async)
    CU_CALL(env, cuMemsetD2D16Async, m.dest, m.pitch, (unsigned short)m.value, m.width, m.height,
            m.stream);
  else
    CU_CALL(env, cuMemsetD2D16, m.dest, m.pitch, (unsigned short)m.value, m.width, m.height);
  return NULL;
}

static napi_value memset_d2d32(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  memset_args m;
  if (!read_memset(env, argv, true, &m)) return NULL;
  if (m.async)
    CU_CALL(env, cuMemsetD2D32Async, m.dest, m.pitch, m.value, m.width, m.height, m.stream);
  else
    CU_CALL(env, cuMemsetD2D32, m.dest, m.pitch, m.value, m.width, m.height);
  return NULL;
}

/* ---- 2D and 3D copies ---- */

/* The fields lib/ passes, as a BigUint64Array, per side then for the extent. */
enum {
  F_X,
  F_Y,
  F_Z,
  F_LOD,
  F_TYPE,
  F_DEVICE,
  F_PITCH,
  F_HEIGHT, /* src at 0, dst at F_SIDE */
  F_SIDE,
  F_WIDTH = 2 * F_SIDE,
  F_ROWS,
  F_DEPTH,
  F_COUNT
};
static const layout_field COPY_LAYOUT[] = {
    {"x", F_X},         {"y", F_Y},           {"z", F_Z},         {"lod", F_LOD},
    {"type", F_TYPE},   {"device", F_DEVICE}, {"pitch", F_PITCH}, {"height", F_HEIGHT},
    {"side", F_SIDE},   {"width", F_WIDTH},   {"rows", F_ROWS},   {"depth", F_DEPTH},
    {"count", F_COUNT},
};

/* One side of a copy into the CUDA_MEMCPY3D_PEER fields; a host side (or a unified one given as a
 * host buffer) is checked to hold every byte the copy touches; an array side comes as its CudaArray
 * in host's place (the driver checks extents within arrays). */
static bool read_side(napi_env env, const uint64_t *f, const uint64_t *extent, napi_value host,
                      const char *name, size_t *x, size_t *y, size_t *z, size_t *lod,
                      CUmemorytype *type, const void **host_ptr, CUdeviceptr *device,
                      CUarray *array, size_t *pitch, size_t *height) {
  char message[160];
  *x = f[F_X], *y = f[F_Y], *z = f[F_Z], *lod = f[F_LOD], *pitch = f[F_PITCH],
  *height = f[F_HEIGHT];
  *type = (CUmemorytype)f[F_TYPE];
  *device = (CUdeviceptr)f[F_DEVICE];
  if (*type == CU_MEMORYTYPE_ARRAY) {
    array_h *a = handle_get(env, host, &ARRAY_KIND);
    if (a) *array = a->handle;
    return a != NULL;
  }
  if (*type != CU_MEMORYTYPE_HOST && *type != CU_MEMORYTYPE_DEVICE &&
      *type != CU_MEMORYTYPE_UNIFIED) {
    snprintf(message, sizeof message, "%s memory type must be host, device, array or unified",
             name);
    throw_range(env, message);
    return false;
  }
  /* one past the last byte touched: x + ((z + depth - 1) * height + y + rows - 1) * pitch + width
   */
  uint64_t slice, row, rows, end = 0, tail;
  bool overflow = false;
  if (extent[0] && extent[1] && extent[2]) {
    overflow = __builtin_add_overflow(f[F_Z], extent[2] - 1, &slice) ||
               __builtin_mul_overflow(slice, f[F_HEIGHT], &rows) ||
               __builtin_add_overflow(f[F_Y], extent[1] - 1, &row) ||
               __builtin_add_overflow(rows, row, &rows) ||
               __builtin_mul_overflow(rows, f[F_PITCH], &end) ||
               __builtin_add_overflow(f[F_X], extent[0], &tail) ||
               __builtin_add_overflow(end, tail, &end);
  }
  if (overflow) {
    snprintf(message, sizeof message, "%s: the copy reaches past 2**64 bytes", name);
    throw_range(env, message);
    return false;
  }
  /* a side given by address: the driver must know every byte of it (a unified side it does not
   * know, it would take for pageable host memory) */
  if (*type == CU_MEMORYTYPE_DEVICE || (*type == CU_MEMORYTYPE_UNIFIED && is_undefined(env, host)))
    return !end || known_memory(env, *device, end, name);
  void *data;
  size_t length;
  if (!arg_host(env, host, name, &data, &length)) return false;
  if (*type == CU_MEMORYTYPE_HOST)
    *host_ptr = data;
  else
    *device = (CUdeviceptr)(uintptr_t)data;
  if (end > length) {
    snprintf(message, sizeof message, "%s: the copy reaches past the end of the host buffer", name);
    throw_range(env, message);
    return false;
  }
  return true;
}

/* Reads fields (BigUint64Array of F_COUNT), srcHost and dstHost into c. A planar copy (2D) is
 * checked as the driver will make it, whatever the fields say of a third dimension: one slice, at
 * z 0 (a depth of 0 skipped the host checks while the 2D copy went ahead). */
static bool read_copy(napi_env env, napi_value fields, napi_value src_host, napi_value dst_host,
                      CUDA_MEMCPY3D_PEER *c, bool planar) {
  napi_typedarray_type type;
  size_t count;
  void *data;
  bool is = false;
  if (napi_is_typedarray(env, fields, &is) != napi_ok || !is ||
      napi_get_typedarray_info(env, fields, &type, &count, &data, NULL, NULL) != napi_ok ||
      type != napi_biguint64_array || count != F_COUNT) {
    throw_type(env, "fields must be a BigUint64Array of the copy's parameters");
    return false;
  }
  uint64_t f[F_COUNT];
  memcpy(f, data, sizeof f);
  if (planar) {
    f[F_Z] = f[F_SIDE + F_Z] = 0;
    f[F_DEPTH] = 1;
  }
  memset(c, 0, sizeof *c);
  c->WidthInBytes = f[F_WIDTH];
  c->Height = f[F_ROWS];
  c->Depth = f[F_DEPTH];
  return read_side(env, f, f + F_WIDTH, src_host, "src", &c->srcXInBytes, &c->srcY, &c->srcZ,
                   &c->srcLOD, &c->srcMemoryType, &c->srcHost, &c->srcDevice, &c->srcArray,
                   &c->srcPitch, &c->srcHeight) &&
         read_side(env, f + F_SIDE, f + F_WIDTH, dst_host, "dest", &c->dstXInBytes, &c->dstY,
                   &c->dstZ, &c->dstLOD, &c->dstMemoryType, (const void **)&c->dstHost,
                   &c->dstDevice, &c->dstArray, &c->dstPitch, &c->dstHeight);
}

/* The 2D copy of a planar 3D one (its Z, Depth and heights unused). */
CUDA_MEMCPY2D planar_copy(const CUDA_MEMCPY3D *c) {
  return (CUDA_MEMCPY2D){.srcXInBytes = c->srcXInBytes,
                         .srcY = c->srcY,
                         .srcMemoryType = c->srcMemoryType,
                         .srcHost = c->srcHost,
                         .srcDevice = c->srcDevice,
                         .srcArray = c->srcArray,
                         .srcPitch = c->srcPitch,
                         .dstXInBytes = c->dstXInBytes,
                         .dstY = c->dstY,
                         .dstMemoryType = c->dstMemoryType,
                         .dstHost = c->dstHost,
                         .dstDevice = c->dstDevice,
                         .dstArray = c->dstArray,
                         .dstPitch = c->dstPitch,
                         .WidthInBytes = c->WidthInBytes,
                         .Height = c->Height};
}

/* memcpy2D(fields, srcHost, dstHost, stream): cuMemcpy2D when stream is undefined, else
 * cuMemcpy2DAsync (keep_copy_sides); true where staged. */
static napi_value memcpy_2d(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  CUDA_MEMCPY3D c;
  bool sync = is_undefined(env, argv[3]);
  CUstream stream = NULL;
  stream_h *s = NULL;
  if (!read_copy_3d(env, argv[0], argv[1], argv[2], true, &c) ||
      (!sync && !arg_stream_and_handle(env, argv[3], &stream, &s)) || !driver_ready(env))
    return NULL;
  if (!c.WidthInBytes || !c.Height) return NULL;
  int staged = staged_copy_3d(env, &c, true, !sync, s);
  if (staged) return staged > 0 ? make_bool(env, true) : NULL;
  CUDA_MEMCPY2D p = planar_copy(&c);
  if (sync) {
    CU_CALL(env, cuMemcpy2D, &p);
    return NULL;
  }
  if (!capture_pin_sides(env, stream, c.srcMemoryType, argv[1], c.dstMemoryType, argv[2]))
    return NULL;
  CU_CALL(env, cuMemcpy2DAsync, &p, stream);
  keep_copy_sides(env, s, c.srcMemoryType, argv[1], c.dstMemoryType, argv[2]);
  return NULL;
}

/* memcpy2DUnaligned(fields, srcHost, dstHost): cuMemcpy2DUnaligned; true where staged. */
static napi_value memcpy_2d_unaligned(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  CUDA_MEMCPY3D c;
  if (!read_copy_3d(env, argv[0], argv[1], argv[2], true, &c) || !driver_ready(env) ||
      !c.WidthInBytes || !c.Height)
    return NULL;
  int staged = staged_copy_3d(env, &c, true, false, NULL);
  if (staged) return staged > 0 ? make_bool(env, true) : NULL;
  CUDA_MEMCPY2D p = planar_copy(&c);
  CU_CALL(env, cuMemcpy2DUnaligned, &p);
  return NULL;
}

bool read_copy_3d(napi_env env, napi_value fields, napi_value src_host, napi_value dst_host,
                  bool planar, CUDA_MEMCPY3D *p) {
  CUDA_MEMCPY3D_PEER c;
  if (!read_copy(env, fields, src_host, dst_host, &c, planar)) return false;
  *p = (CUDA_MEMCPY3D){.srcXInBytes = c.srcXInBytes,
                       .srcY = c.srcY,
                       .srcZ = c.srcZ,
                       .srcLOD = c.srcLOD,
                       .srcMemoryType = c.srcMemoryType,
                       .srcHost = c.srcHost,
                       .srcDevice = c.srcDevice,
                       .srcArray = c.srcArray,
                       .srcPitch = c.srcPitch,
                       .srcHeight = c.srcHeight,
                       .dstXInBytes = c.dstXInBytes,
                       .dstY = c.dstY,
                       .dstZ = c.dstZ,
                       .dstLOD = c.dstLOD,
                       .dstMemoryType = c.dstMemoryType,
                       .dstHost = c.dstHost,
                       .dstDevice = c.dstDevice,
                       .dstArray = c.dstArray,
                       .dstPitch = c.dstPitch,
                       .dstHeight = c.dstHeight,
                       .WidthInBytes = c.WidthInBytes,
                       .Height = c.Height,
                       .Depth = c.Depth};
  return true;
}

/* memcpy3D(fields, srcHost, dstHost, stream): cuMemcpy3D, or cuMemcpy3DAsync (keep_copy_sides);
 * true where staged. */
static napi_value memcpy_3d(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  CUDA_MEMCPY3D p;
  bool sync = is_undefined(env, argv[3]);
  CUstream stream = NULL;
  stream_h *s = NULL;
  if (!read_copy_3d(env, argv[0], argv[1], argv[2], false, &p) ||
      (!sync && !arg_stream_and_handle(env, argv[3], &stream, &s)) || !driver_ready(env))
    return NULL;
  if (!p.WidthInBytes || !p.Height || !p.Depth) return NULL;
  int staged = staged_copy_3d(env, &p, false, !sync, s);
  if (staged) return staged > 0 ? make_bool(env, true) : NULL;
  if (sync) {
    CU_CALL(env, cuMemcpy3D, &p);
    return NULL;
  }
  if (!capture_pin_sides(env, stream, p.srcMemoryType, argv[1], p.dstMemoryType, argv[2]))
    return NULL;
  CU_CALL(env, cuMemcpy3DAsync, &p, stream);
  keep_copy_sides(env, s, p.srcMemoryType, argv[1], p.dstMemoryType, argv[2]);
  return NULL;
}

/* memcpy3DPeer(fields, srcHost, dstHost, srcContext, dstContext, stream). */
static napi_value memcpy_3d_peer(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  CUDA_MEMCPY3D_PEER c;
  bool sync = is_undefined(env, argv[5]);
  CUstream stream = NULL;
  stream_h *s = NULL;
  ctx_rec *src_ctx, *dst_ctx;
  if (!read_copy(env, argv[0], argv[1], argv[2], &c, false) ||
      !(src_ctx = ctx_rec_of_context(env, argv[3])) ||
      !(dst_ctx = ctx_rec_of_context(env, argv[4])) ||
      (!sync && !arg_stream_and_handle(env, argv[5], &stream, &s)))
    return NULL;
  c.srcContext = src_ctx->handle;
  c.dstContext = dst_ctx->handle;
  if (!c.WidthInBytes || !c.Height || !c.Depth) return NULL;
  if (sync) {
    CU_CALL(env, cuMemcpy3DPeer, &c);
    return NULL;
  }
  if (!capture_pin_sides(env, stream, c.srcMemoryType, argv[1], c.dstMemoryType, argv[2]))
    return NULL;
  CU_CALL(env, cuMemcpy3DPeerAsync, &c, stream);
  keep_copy_sides(env, s, c.srcMemoryType, argv[1], c.dstMemoryType, argv[2]);
  return NULL;
}

bool copies_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"memcpyHtoD", memcpy_htod},
      {"memcpyDtoH", memcpy_dtoh},
      {"memcpyHtoDAsync", memcpy_htod_async},
      {"memcpyDtoHAsync", memcpy_dtoh_async},
      {"memcpyDtoD", memcpy_dtod},
      {"memcpyPeer", memcpy_peer},
      {"memsetD8", memset_d8},
      {"memsetD16", memset_d16},
      {"memsetD32", memset_d32},
      {"memsetD2D8", memset_d2d8},
      {"memsetD2D16", memset_d2d16},
      {"memsetD2D32", memset_d2d32},
      {"memcpy2D", memcpy_2d},
      {"memcpy2DUnaligned", memcpy_2d_unaligned},
      {"memcpy3D", memcpy_3d},
      {"memcpy3DPeer", memcpy_3d_peer},
  };
  return EXPORTS(env, exports, fns) && EXPORT_LAYOUT(env, exports, "copy", COPY_LAYOUT);
}
