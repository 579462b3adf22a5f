/* array: CUDA arrays (CUarray), the opaque memory textures and surfaces read and write, and the
 * copies between them and host or device memory. Texture and surface objects over them are in
 * texobj.c; 2D and 3D copies with an array side in memory.c. */
#include <stdlib.h>

#include "memory.h"

size_t format_channel_bytes(CUarray_format format) {
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

/* Graphs' copy nodes share the CUarray, the last to let go destroying it: driver 580 crashes
 * instantiating, launching or reading a graph whose copy node names a destroyed array. */
static CUresult destroy_array_object(void *object) { return DRV(cuArrayDestroy, object); }

node_use *array_use_of(array_h *array) {
  return node_use_of(&array->use, array->handle, destroy_array_object, array->ctx);
}

bool capture_pin_array(napi_env env, CUstream stream, napi_value v) {
  if (!captures_under_way()) return true; /* one load */
  array_h *array = handle_get(env, v, &ARRAY_KIND);
  node_use *use = array ? array_use_of(array) : NULL;
  if (array && !use) throw_oom(env);
  return use && capture_pin(env, stream, use, &USE_PINS);
}

static CUresult destroy_array(handle_base *base) {
  array_h *array = (array_h *)base;
  return array->use ? CUDA_SUCCESS : DRV(cuArrayDestroy, array->handle); /* the use's to do */
}

static void dispose_array(handle_base *base) { node_use_drop(&((array_h *)base)->use); }

const handle_kind ARRAY_KIND = {.tag = {0x6364727661727231ULL, 0x4375646141727231ULL},
                                .name = "CudaArray",
                                .freed = "this CudaArray has been freed; create a new CudaArray",
                                .destroy = destroy_array,
                                .ctx_offset = offsetof(array_h, ctx),
                                .dispose = dispose_array};

/* arrayCreate(obj, width, height, depth, format, channels, flags): a CUDA array in the current
 * context, wrapped in obj (cuArray3DCreate: depth 0 makes a 1D or 2D array). */
static napi_value array_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 7);
  size_t width, height, depth;
  uint32_t format, channels, flags;
  if (!arg_size(env, argv[1], "width", &width) || !arg_size(env, argv[2], "height", &height) ||
      !arg_size(env, argv[3], "depth", &depth) || !arg_uint32(env, argv[4], "format", &format) ||
      !arg_uint32(env, argv[5], "numChannels", &channels) ||
      !arg_uint32(env, argv[6], "flags", &flags))
    return NULL;
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUDA_ARRAY3D_DESCRIPTOR desc = {.Width = width,
                                  .Height = height,
                                  .Depth = depth,
                                  .Format = (CUarray_format)format,
                                  .NumChannels = channels,
                                  .Flags = flags};
  CUarray handle;
  CUresult result = DRV(cuArray3DCreate, &handle, &desc);
  array_h *array = result == CUDA_SUCCESS ? calloc(1, sizeof *array) : NULL;
  if (!array) {
    if (result == CUDA_SUCCESS) DRV(cuArrayDestroy, handle);
    ctx_rec_release(ctx);
    return result == CUDA_SUCCESS ? throw_oom(env) : throw_cu(env, result, "cuArray3DCreate");
  }
  array->handle = handle;
  array->ctx = ctx;
  handle_wrap_object(env, argv[0], &array->base, &ARRAY_KIND);
  return NULL;
}

/* arrayFree(obj): destroys the array now; a second call does nothing. Refused while a node of a
 * Graph or GraphExec, or of a capture under way, copies to or from it. */
static napi_value array_free(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  array_h *array = handle_get_any(env, argv[0], &ARRAY_KIND);
  if (array && !array->base.freed && array->use && array->use->refs > 1)
    return throw_logic(env, "array.free(): a Graph or GraphExec that lives, or a capture under "
                            "way, copies to or from this CudaArray; destroy() those first");
  return handle_destroy_call(env, info, &ARRAY_KIND);
}

/* arrayGetDescriptor(obj): [width, height, depth, format, numChannels, flags]
 * (cuArray3DGetDescriptor). */
static napi_value array_get_descriptor(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  array_h *array = handle_get(env, argv[0], &ARRAY_KIND);
  if (!array) return NULL;
  CUDA_ARRAY3D_DESCRIPTOR d;
  CU_CALL(env, cuArray3DGetDescriptor, &d, array->handle);
  const uint64_t fields[] = {d.Width,       d.Height, d.Depth, (uint64_t)d.Format,
                             d.NumChannels, d.Flags};
  napi_value result;
  NAPI_CALL(env, napi_create_array_with_length(env, 6, &result));
  for (uint32_t i = 0; i < 6; i++)
    NAPI_CALL(env, napi_set_element(env, result, i, make_uint(env, fields[i])));
  return result;
}

/* arrayHandle(obj): the CUarray as a bigint (PyCUDA's Array.handle). */
static napi_value array_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  array_h *array = handle_get(env, argv[0], &ARRAY_KIND);
  return array ? make_ptr(env, (CUdeviceptr)(uintptr_t)array->handle) : NULL;
}

/* ---- copies with a 1D array: the array's side is (array, byte offset) ---- */

/* memcpyHtoA(array, offset, src, stream) / memcpyAtoH(dest, array, offset, stream): cuMemcpyHtoA /
 * cuMemcpyAtoH when stream is undefined, else their Async forms, keeping the array and a
 * page-locked host array alive until the stream has passed the copy. */
static napi_value copy_host_array(napi_env env, napi_callback_info info, bool to_array) {
  ARGS(env, info, 4);
  napi_value array_arg = argv[to_array ? 0 : 1], offset_arg = argv[to_array ? 1 : 2],
             host_arg = argv[to_array ? 2 : 0];
  array_h *array = handle_get(env, array_arg, &ARRAY_KIND);
  size_t offset, bytes;
  void *host;
  CUstream stream = NULL;
  stream_h *s = NULL;
  bool sync = is_undefined(env, argv[3]);
  if (!array || !arg_size(env, offset_arg, "offset", &offset) ||
      !arg_host(env, host_arg, to_array ? "src" : "dest", &host, &bytes) ||
      (!sync && !arg_stream_and_handle(env, argv[3], &stream, &s)))
    return NULL;
  if (!bytes) return NULL;
  if (!sync &&
      (!capture_pin_array(env, stream, array_arg) || !capture_pin_host(env, stream, host, bytes)))
    return NULL;
  if (to_array && sync)
    CU_CALL(env, cuMemcpyHtoA, array->handle, offset, host, bytes);
  else if (to_array)
    CU_CALL(env, cuMemcpyHtoAAsync, array->handle, offset, host, bytes, stream);
  else if (sync)
    CU_CALL(env, cuMemcpyAtoH, host, array->handle, offset, bytes);
  else
    CU_CALL(env, cuMemcpyAtoHAsync, host, array->handle, offset, bytes, stream);
  if (!sync) keep_copy_sides(env, s, CU_MEMORYTYPE_ARRAY, array_arg, CU_MEMORYTYPE_HOST, host_arg);
  return NULL;
}

static napi_value memcpy_htoa(napi_env env, napi_callback_info info) {
  return copy_host_array(env, info, true);
}

static napi_value memcpy_atoh(napi_env env, napi_callback_info info) {
  return copy_host_array(env, info, false);
}

/* memcpyDtoA(array, offset, src, bytes) / memcpyAtoD(dest, array, offset, bytes). */
static napi_value copy_device_array(napi_env env, napi_callback_info info, bool to_array) {
  ARGS(env, info, 4);
  array_h *array = handle_get(env, argv[to_array ? 0 : 1], &ARRAY_KIND);
  size_t offset, bytes;
  CUdeviceptr device;
  if (!array || !arg_size(env, argv[to_array ? 1 : 2], "offset", &offset) ||
      !arg_ptr(env, argv[to_array ? 2 : 0], to_array ? "src" : "dest", &device) ||
      !arg_size(env, argv[3], "bytes", &bytes))
    return NULL;
  if (!bytes) return NULL;
  if (to_array)
    CU_CALL(env, cuMemcpyDtoA, array->handle, offset, device, bytes);
  else
    CU_CALL(env, cuMemcpyAtoD, device, array->handle, offset, bytes);
  return NULL;
}

static napi_value memcpy_dtoa(napi_env env, napi_callback_info info) {
  return copy_device_array(env, info, true);
}

static napi_value memcpy_atod(napi_env env, napi_callback_info info) {
  return copy_device_array(env, info, false);
}

/* memcpyAtoA(dest, destOffset, src, srcOffset, bytes). */
static napi_value memcpy_atoa(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  array_h *dst = handle_get(env, argv[0], &ARRAY_KIND);
  array_h *src = dst ? handle_get(env, argv[2], &ARRAY_KIND) : NULL;
  size_t dst_offset, src_offset, bytes;
  if (!src || !arg_size(env, argv[1], "destOffset", &dst_offset) ||
      !arg_size(env, argv[3], "srcOffset", &src_offset) || !arg_size(env, argv[4], "bytes", &bytes))
    return NULL;
  if (bytes) CU_CALL(env, cuMemcpyAtoA, dst->handle, dst_offset, src->handle, src_offset, bytes);
  return NULL;
}

bool array_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"arrayCreate", array_create},
      {"arrayFree", array_free},
      {"arrayGetDescriptor", array_get_descriptor},
      {"arrayHandle", array_handle},
      {"memcpyHtoA", memcpy_htoa},
      {"memcpyAtoH", memcpy_atoh},
      {"memcpyDtoA", memcpy_dtoa},
      {"memcpyAtoD", memcpy_atod},
      {"memcpyAtoA", memcpy_atoa},
  };
  return EXPORTS(env, exports, fns);
}
