/* tensor_map: TMA tensor maps (cuTensorMapEncodeTiled, Im2col, Im2colWide, ReplaceAddress), the
 * 128 opaque bytes a kernel takes as a `const __grid_constant__ CUtensorMap`. lib/ describes a
 * tensor in two arrays laid out by TENSOR_LAYOUT (64-bit words: the address, the rank, the
 * dimensions and strides; 32-bit ints: the rest); C checks the rank and that the tensor's extent
 * lies within the device allocation its address is in, then encodes into a CUtensorMap of its own
 * (aligned as the driver asks) and copies the bytes out. */
#include <stdio.h>
#include <string.h>

#include "launcher.h"

enum { MOST_RANK = 5 };
/* words: address, rank, dims[5], strides[4] (bytes, of dimensions 1 to rank - 1) */
enum { TM_ADDRESS = 0, TM_RANK = 1, TM_DIMS = 2, TM_STRIDES = 7, TM_WORDS = 11 };
/* ints: data type, box[5] (tiled), element strides[5], interleave, swizzle, L2 promotion, OOB
 * fill, im2col's lower and upper pixel box corners[3] (im2colWide: the widths in [0]), channels
 * per pixel, pixels per column, im2colWide's mode */
enum {
  TM_DATA_TYPE = 0,
  TM_BOX = 1,
  TM_ELEMENT_STRIDES = 6,
  TM_INTERLEAVE = 11,
  TM_SWIZZLE = 12,
  TM_L2 = 13,
  TM_OOB = 14,
  TM_LOWER = 15,
  TM_UPPER = 18,
  TM_CHANNELS = 21,
  TM_PIXELS = 22,
  TM_MODE = 23,
  TM_INTS = 24
};
enum { TM_TILED = 0, TM_IM2COL = 1, TM_IM2COL_WIDE = 2 };

static const layout_field TENSOR_LAYOUT[] = {
    {"address", TM_ADDRESS},
    {"rank", TM_RANK},
    {"dims", TM_DIMS},
    {"strides", TM_STRIDES},
    {"words", TM_WORDS},
    {"dataType", TM_DATA_TYPE},
    {"box", TM_BOX},
    {"elementStrides", TM_ELEMENT_STRIDES},
    {"interleave", TM_INTERLEAVE},
    {"swizzle", TM_SWIZZLE},
    {"l2Promotion", TM_L2},
    {"oobFill", TM_OOB},
    {"lower", TM_LOWER},
    {"upper", TM_UPPER},
    {"channels", TM_CHANNELS},
    {"pixels", TM_PIXELS},
    {"mode", TM_MODE},
    {"ints", TM_INTS},
    {"tiled", TM_TILED},
    {"im2col", TM_IM2COL},
    {"im2colWide", TM_IM2COL_WIDE},
    {"bytes", sizeof(CUtensorMap)},
};

/* Bits of one element of each CUtensorMapDataType (the packed 4- and 6-bit types as they lie in
 * memory: 16 of them in 8 bytes, or padded to 16), or 0 for a value of no type. */
static unsigned element_bits(int32_t type) {
  static const unsigned bits[] = {8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 8, 8};
  return type >= 0 && type < (int32_t)(sizeof bits / sizeof bits[0]) ? bits[type] : 0;
}

/* A typed array argument of exactly length elements of type; false after throwing. */
static bool arg_typed(napi_env env, napi_value v, napi_typedarray_type type, size_t length,
                      const char *what, void **data) {
  bool is_typed;
  napi_typedarray_type got;
  size_t got_length;
  NAPI_CALL_BOOL(env, napi_is_typedarray(env, v, &is_typed));
  if (is_typed)
    NAPI_CALL_BOOL(env, napi_get_typedarray_info(env, v, &got, &got_length, data, NULL, NULL));
  if (!is_typed || got != type || got_length != length) {
    throw_type(env, what);
    return false;
  }
  return true;
}

/* Bytes from the tensor's address to its last element's end; false (after throwing) where that
 * overflows 64 bits. */
static bool tensor_span(napi_env env, const uint64_t *w, const int32_t *n, uint64_t *span) {
  uint64_t rank = w[TM_RANK], total = (w[TM_DIMS] * element_bits(n[TM_DATA_TYPE]) + 7) / 8, step;
  bool overflow = w[TM_DIMS] > UINT64_MAX / 64;
  for (uint64_t i = 1; i < rank && !overflow; i++)
    overflow = !w[TM_DIMS + i] ||
               __builtin_mul_overflow(w[TM_DIMS + i] - 1, w[TM_STRIDES + i - 1], &step) ||
               __builtin_add_overflow(total, step, &total);
  if (overflow) throw_range(env, "the tensor's dimensions and strides reach past 2**64 bytes");
  *span = total;
  return !overflow;
}

/* Checks the description, and that the tensor lies within the allocation of its address in the
 * current context; false after throwing. */
static bool tensor_check(napi_env env, uint32_t kind, const uint64_t *w, const int32_t *n) {
  uint64_t rank = w[TM_RANK];
  if (rank < (kind == TM_TILED ? 1u : 3u) || rank > MOST_RANK) {
    throw_range(env, kind == TM_TILED ? "a tiled tensor map has rank 1 to 5"
                                      : "an im2col tensor map has rank 3 to 5");
    return false;
  }
  if (!element_bits(n[TM_DATA_TYPE])) {
    throw_range(env, "dataType must be a member of cuda.TensorMapDataType");
    return false;
  }
  uint64_t span;
  if (!tensor_span(env, w, n, &span) || !driver_ready(env)) return false;
  CUdeviceptr base;
  size_t size;
  CUresult result = DRV(cuMemGetAddressRange, &base, &size, (CUdeviceptr)w[TM_ADDRESS]);
  if (result != CUDA_SUCCESS) {
    throw_range(env, "the tensor's address is not device memory of the current context");
    return false;
  }
  uint64_t left = base + size - w[TM_ADDRESS];
  if (span > left) {
    char message[200];
    snprintf(message, sizeof message,
             "the tensor takes %llu bytes from its address, and its allocation has %llu there",
             (unsigned long long)span, (unsigned long long)left);
    throw_range(env, message);
    return false;
  }
  return true;
}

static CUresult encode(CUtensorMap *map, uint32_t kind, const uint64_t *w, const int32_t *n) {
  void *address = (void *)(uintptr_t)w[TM_ADDRESS];
  const cuuint64_t *dims = (const cuuint64_t *)&w[TM_DIMS];
  const cuuint64_t *strides = (const cuuint64_t *)&w[TM_STRIDES];
  const cuuint32_t *element_strides = (const cuuint32_t *)&n[TM_ELEMENT_STRIDES];
  CUtensorMapDataType type = (CUtensorMapDataType)n[TM_DATA_TYPE];
  cuuint32_t rank = (cuuint32_t)w[TM_RANK];
  CUtensorMapInterleave interleave = (CUtensorMapInterleave)n[TM_INTERLEAVE];
  CUtensorMapSwizzle swizzle = (CUtensorMapSwizzle)n[TM_SWIZZLE];
  CUtensorMapL2promotion l2 = (CUtensorMapL2promotion)n[TM_L2];
  CUtensorMapFloatOOBfill oob = (CUtensorMapFloatOOBfill)n[TM_OOB];
  switch (kind) {
  case TM_TILED:
    return DRV(cuTensorMapEncodeTiled, map, type, rank, address, dims, strides,
               (const cuuint32_t *)&n[TM_BOX], element_strides, interleave, swizzle, l2, oob);
  case TM_IM2COL:
    return DRV(cuTensorMapEncodeIm2col, map, type, rank, address, dims, strides, &n[TM_LOWER],
               &n[TM_UPPER], (cuuint32_t)n[TM_CHANNELS], (cuuint32_t)n[TM_PIXELS], element_strides,
               interleave, swizzle, l2, oob);
  default:
    return DRV(cuTensorMapEncodeIm2colWide, map, type, rank, address, dims, strides, n[TM_LOWER],
               n[TM_UPPER], (cuuint32_t)n[TM_CHANNELS], (cuuint32_t)n[TM_PIXELS], element_strides,
               interleave, (CUtensorMapIm2ColWideMode)n[TM_MODE], swizzle, l2, oob);
  }
}

static const char *const ENCODERS[] = {"cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col",
                                       "cuTensorMapEncodeIm2colWide"};

/* The arguments both calls take: out (a Uint8Array of the map's 128 bytes), kind, words, ints,
 * the last two copied (so that what is checked is what is encoded, whatever shares their memory);
 * false after throwing. */
static bool tensor_args(napi_env env, const napi_value *argv, uint8_t **out, uint32_t *kind,
                        uint64_t w[TM_WORDS], int32_t n[TM_INTS]) {
  void *words, *ints;
  bool ok = arg_typed(env, argv[0], napi_uint8_array, sizeof(CUtensorMap),
                      "expected a Uint8Array of a tensor map's 128 bytes", (void **)out) &&
            arg_uint32(env, argv[1], "kind", kind) &&
            (*kind <= TM_IM2COL_WIDE || (throw_range(env, "kind must be 0, 1 or 2"), false)) &&
            arg_typed(env, argv[2], napi_biguint64_array, TM_WORDS,
                      "expected a BigUint64Array of layouts.tensorMap.words", &words) &&
            arg_typed(env, argv[3], napi_int32_array, TM_INTS,
                      "expected an Int32Array of layouts.tensorMap.ints", &ints);
  if (!ok) return false;
  memcpy(w, words, TM_WORDS * sizeof *w);
  memcpy(n, ints, TM_INTS * sizeof *n);
  return tensor_check(env, *kind, w, n);
}

/* tensorMapEncode(out, kind, words, ints): encodes the tensor into out's 128 bytes. A map moved to
 * another tensor (map.replaceAddress) is encoded anew as well: cuTensorMapReplaceAddress would
 * read the map's bytes, which JavaScript can reach and change. */
static napi_value tensor_map_encode(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  uint8_t *out;
  uint32_t kind;
  uint64_t w[TM_WORDS];
  int32_t n[TM_INTS];
  if (!tensor_args(env, argv, &out, &kind, w, n)) return NULL;
  CUtensorMap map;
  memset(&map, 0, sizeof map);
  CUresult result = encode(&map, kind, w, n);
  if (result != CUDA_SUCCESS) return throw_cu(env, result, ENCODERS[kind]);
  memcpy(out, &map, sizeof map);
  return NULL;
}

bool tensor_map_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"tensorMapEncode", tensor_map_encode},
  };
  return EXPORTS(env, exports, fns) && EXPORT_LAYOUT(env, exports, "tensorMap", TENSOR_LAYOUT);
}
