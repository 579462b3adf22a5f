/* texobj: texture and surface objects (CUtexObject, CUsurfObject), which C++ kernels take as
 * cudaTextureObject_t / cudaSurfaceObject_t arguments. A texture object reads a CudaArray, linear
 * memory or pitched 2D memory; a surface object reads and writes a CudaArray made for surfaces.
 * lib/ keeps what they read alive as long as they are. */
#include <stdlib.h>
#include <string.h>

#include "memory.h"

typedef struct texobj_h {
  handle_base base;
  CUtexObject handle; /* CUsurfObject for a surface: both 64-bit */
  ctx_rec *ctx;
  bool surface;
} texobj_h;

static CUresult destroy_texobj(handle_base *base) {
  texobj_h *t = (texobj_h *)base;
  return t->surface ? DRV(cuSurfObjectDestroy, t->handle) : DRV(cuTexObjectDestroy, t->handle);
}

static const handle_kind TEXOBJ_KIND = {.tag = {0x6364727674786f31ULL, 0x5465784f626a3031ULL},
                                        .name = "TextureObject or SurfaceObject",
                                        .freed = "this object has been destroyed; create a new one",
                                        .destroy = destroy_texobj,
                                        .ctx_offset = offsetof(texobj_h, ctx)};

/* Wraps obj around a new object (ctx's reference taken over); its handle as a bigint. */
static napi_value wrap_texobj(napi_env env, napi_value obj, CUtexObject handle, ctx_rec *ctx,
                              bool surface) {
  texobj_h *t = calloc(1, sizeof *t);
  if (!t) {
    if (surface)
      DRV(cuSurfObjectDestroy, handle);
    else
      DRV(cuTexObjectDestroy, handle);
    ctx_rec_release(ctx);
    return throw_oom(env);
  }
  t->handle = handle;
  t->ctx = ctx;
  t->surface = surface;
  if (!handle_wrap_object(env, obj, &t->base, &TEXOBJ_KIND)) return NULL;
  return make_ptr(env, (CUdeviceptr)handle);
}

/* Makes a texture object (desc given) or a surface object (desc NULL) over resource in the current
 * context, wrapped in obj; its handle as a bigint. */
static napi_value create_object(napi_env env, napi_value obj, const CUDA_RESOURCE_DESC *resource,
                                const CUDA_TEXTURE_DESC *desc) {
  ctx_rec *ctx = ctx_rec_current(env);
  if (!ctx) return NULL;
  CUtexObject handle;
  CUresult result = desc ? DRV(cuTexObjectCreate, &handle, resource, desc, NULL)
                         : DRV(cuSurfObjectCreate, &handle, resource);
  if (result != CUDA_SUCCESS) {
    ctx_rec_release(ctx);
    return throw_cu(env, result, desc ? "cuTexObjectCreate" : "cuSurfObjectCreate");
  }
  return wrap_texobj(env, obj, handle, ctx, !desc);
}

/* The fields of texObjectCreate, in a BigUint64Array. */
enum {
  T_KIND, /* one of the kinds below */
  T_ADDRESS,
  T_FORMAT,
  T_CHANNELS,
  T_BYTES,
  T_WIDTH,
  T_HEIGHT,
  T_PITCH,
  T_ADDRESS_MODE, /* three, one per dimension */
  T_FILTER_MODE = T_ADDRESS_MODE + 3,
  T_FLAGS,
  T_MAX_ANISOTROPY,
  T_COUNT
};
/* What T_KIND says the resource is. */
enum { KIND_ARRAY, KIND_LINEAR, KIND_PITCH2D };
static const layout_field TEXTURE_LAYOUT[] = {
    {"kind", T_KIND},
    {"address", T_ADDRESS},
    {"format", T_FORMAT},
    {"channels", T_CHANNELS},
    {"bytes", T_BYTES},
    {"width", T_WIDTH},
    {"height", T_HEIGHT},
    {"pitch", T_PITCH},
    {"addressMode", T_ADDRESS_MODE},
    {"filterMode", T_FILTER_MODE},
    {"flags", T_FLAGS},
    {"maxAnisotropy", T_MAX_ANISOTROPY},
    {"count", T_COUNT},
    {"kindArray", KIND_ARRAY},
    {"kindLinear", KIND_LINEAR},
    {"kindPitch2D", KIND_PITCH2D},
};

static bool read_fields(napi_env env, napi_value v, napi_typedarray_type want, size_t count,
                        void **data) {
  napi_typedarray_type type;
  size_t length;
  bool is = false;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is ||
      napi_get_typedarray_info(env, v, &type, &length, data, NULL, NULL) != napi_ok ||
      type != want || length != count) {
    throw_type(env, "expected the texture object's fields as layouts.texture lays them out");
    return false;
  }
  return true;
}

/* The normalized formats that name their channels: the bytes of one, and how many. */
static const struct {
  CUarray_format format;
  uint8_t size, named;
} NAMED_CHANNELS[] = {
    {CU_AD_FORMAT_UNORM_INT8X1, 1, 1},       {CU_AD_FORMAT_UNORM_INT8X2, 1, 2},
    {CU_AD_FORMAT_UNORM_INT8X4, 1, 4},       {CU_AD_FORMAT_SNORM_INT8X1, 1, 1},
    {CU_AD_FORMAT_SNORM_INT8X2, 1, 2},       {CU_AD_FORMAT_SNORM_INT8X4, 1, 4},
    {CU_AD_FORMAT_UNORM_INT16X1, 2, 1},      {CU_AD_FORMAT_UNORM_INT16X2, 2, 2},
    {CU_AD_FORMAT_UNORM_INT16X4, 2, 4},      {CU_AD_FORMAT_SNORM_INT16X1, 2, 1},
    {CU_AD_FORMAT_SNORM_INT16X2, 2, 2},      {CU_AD_FORMAT_SNORM_INT16X4, 2, 4},
    {CU_AD_FORMAT_UNORM_INT_101010_2, 1, 4}, /* four channels in 32 bits */
};

/* The bytes a texel of format with channels channels takes in pitched memory (the channels a
 * format names, where it names more); 0 for a format whose texels cudadrv does not know there
 * (block-compressed, planar video). */
static uint64_t texel_bytes(uint64_t format, uint64_t channels) {
  uint64_t size = format <= CU_AD_FORMAT_MAX ? format_channel_bytes((CUarray_format)format) : 0;
  if (size) return size * channels;
  for (size_t i = 0; i < sizeof NAMED_CHANNELS / sizeof *NAMED_CHANNELS; i++)
    if (NAMED_CHANNELS[i].format == format)
      return NAMED_CHANNELS[i].size *
             (channels > NAMED_CHANNELS[i].named ? channels : NAMED_CHANNELS[i].named);
  return 0;
}

/* texelBytes(format, channels): texel_bytes, for lib/'s check of a slice. */
static napi_value texel_bytes_call(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  uint32_t format, channels;
  if (!arg_uint32(env, argv[0], "format", &format) ||
      !arg_uint32(env, argv[1], "channels", &channels))
    return NULL;
  return make_uint(env, channels >= 1 && channels <= 4 ? texel_bytes(format, channels) : 0);
}

/* Whether the memory a linear or pitched resource reads lies within one allocation CUDA knows
 * (lib/ checks slices; C, whatever it was passed); false after throwing. */
static bool resource_known(napi_env env, const CUDA_RESOURCE_DESC *r, uint64_t format,
                           uint64_t channels) {
  if (channels < 1 || channels > 4)
    return throw_range(env, "numChannels must be from 1 to 4"), false;
  if (r->resType == CU_RESOURCE_TYPE_LINEAR)
    return known_memory(env, r->res.linear.devPtr, r->res.linear.sizeInBytes, "TextureObject");
  uint64_t texel = texel_bytes(format, channels), row, span;
  if (!texel)
    return throw_range(env, "TextureObject: pitched memory of this format is not supported; read "
                            "it through a CudaArray"),
           false;
  size_t width = r->res.pitch2D.width, height = r->res.pitch2D.height;
  if (!height) return throw_range(env, "TextureObject: height must be at least 1"), false;
  if (__builtin_mul_overflow(texel, width, &row) ||
      __builtin_mul_overflow(r->res.pitch2D.pitchInBytes, height - 1, &span) ||
      __builtin_add_overflow(span, row, &span))
    return throw_range(env, "TextureObject: the pitched memory's size overflows"), false;
  return known_memory(env, r->res.pitch2D.devPtr, span, "TextureObject");
}

/* The resource a texture object reads: the array (for T_KIND 0) or the memory in fields. */
static bool read_resource(napi_env env, napi_value array_arg, const uint64_t *f,
                          CUDA_RESOURCE_DESC *r) {
  memset(r, 0, sizeof *r);
  switch (f[T_KIND]) {
  case KIND_ARRAY: {
    array_h *array = handle_get(env, array_arg, &ARRAY_KIND);
    if (!array) return false;
    r->resType = CU_RESOURCE_TYPE_ARRAY;
    r->res.array.hArray = array->handle;
    return true;
  }
  case KIND_LINEAR:
    r->resType = CU_RESOURCE_TYPE_LINEAR;
    r->res.linear.devPtr = (CUdeviceptr)f[T_ADDRESS];
    r->res.linear.format = (CUarray_format)f[T_FORMAT];
    r->res.linear.numChannels = (unsigned)f[T_CHANNELS];
    r->res.linear.sizeInBytes = (size_t)f[T_BYTES];
    return resource_known(env, r, f[T_FORMAT], f[T_CHANNELS]);
  case KIND_PITCH2D:
    r->resType = CU_RESOURCE_TYPE_PITCH2D;
    r->res.pitch2D.devPtr = (CUdeviceptr)f[T_ADDRESS];
    r->res.pitch2D.format = (CUarray_format)f[T_FORMAT];
    r->res.pitch2D.numChannels = (unsigned)f[T_CHANNELS];
    r->res.pitch2D.width = (size_t)f[T_WIDTH];
    r->res.pitch2D.height = (size_t)f[T_HEIGHT];
    r->res.pitch2D.pitchInBytes = (size_t)f[T_PITCH];
    return resource_known(env, r, f[T_FORMAT], f[T_CHANNELS]);
  default: throw_range(env, "unknown texture resource kind"); return false;
  }
}

/* texObjectCreate(obj, array or null, fields, borderColor): a texture object in the current
 * context wrapped in obj; its handle (a bigint). borderColor: a Float32Array of 4. */
static napi_value texobj_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  uint64_t *f;
  float *border;
  CUDA_RESOURCE_DESC resource;
  if (!read_fields(env, argv[2], napi_biguint64_array, T_COUNT, (void **)&f) ||
      !read_fields(env, argv[3], napi_float32_array, 4, (void **)&border) ||
      !read_resource(env, argv[1], f, &resource))
    return NULL;
  CUDA_TEXTURE_DESC desc;
  memset(&desc, 0, sizeof desc);
  for (int i = 0; i < 3; i++) desc.addressMode[i] = (CUaddress_mode)f[T_ADDRESS_MODE + i];
  desc.filterMode = (CUfilter_mode)f[T_FILTER_MODE];
  desc.flags = (unsigned)f[T_FLAGS];
  desc.maxAnisotropy = (unsigned)f[T_MAX_ANISOTROPY];
  memcpy(desc.borderColor, border, sizeof desc.borderColor);
  return create_object(env, argv[0], &resource, &desc);
}

/* surfObjectCreate(obj, array): a surface object over a CudaArray made with SURFACE_LDST. */
static napi_value surfobj_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  array_h *array = handle_get(env, argv[1], &ARRAY_KIND);
  if (!array) return NULL;
  CUDA_RESOURCE_DESC resource;
  memset(&resource, 0, sizeof resource);
  resource.resType = CU_RESOURCE_TYPE_ARRAY;
  resource.res.array.hArray = array->handle;
  return create_object(env, argv[0], &resource, NULL);
}

/* texObjectDestroy(obj): destroys a texture or surface object now; a second call does nothing. */
static napi_value texobj_destroy(napi_env env, napi_callback_info info) {
  return handle_destroy_call(env, info, &TEXOBJ_KIND);
}

bool texobj_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"texObjectCreate", texobj_create},
      {"texelBytes", texel_bytes_call},
      {"surfObjectCreate", surfobj_create},
      {"texObjectDestroy", texobj_destroy},
  };
  return EXPORTS(env, exports, fns) && EXPORT_LAYOUT(env, exports, "texture", TEXTURE_LAYOUT);
}
