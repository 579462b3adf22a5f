/* The stand-in's TMA tensor maps: the checks the driver documents for cuTensorMapEncodeTiled,
 * Im2col and Im2colWide (alignments, ranks, bounds), and maps whose opaque words
 * say what was encoded: [0] the address, [1] kind | rank << 8 | data type << 16, [2..6] the
 * dimensions, [7..10] the strides. Each call is logged (FAKE_CUDA_LOG). */
#include "fake.h"

#include <stdio.h>
#include <string.h>

enum { TILED = 1, IM2COL = 2, IM2COL_WIDE = 3 };

/* What every encoding checks, and the words it writes; a CUresult other than success where the
 * driver refuses. */
static CUresult encode_common(CUtensorMap *map, int kind, CUtensorMapDataType type, cuuint32_t rank,
                              void *address, const cuuint64_t *dims, const cuuint64_t *strides,
                              const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                              CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                              CUtensorMapFloatOOBfill oob) {
  if (!map || (uintptr_t)map % 64 || (uintptr_t)address % 16 || !dims || !element_strides)
    return CUDA_ERROR_INVALID_VALUE;
  if (rank < (kind == TILED ? 1u : 3u) || rank > 5 || (unsigned)type > 15)
    return CUDA_ERROR_INVALID_VALUE;
  if ((unsigned)interleave > CU_TENSOR_MAP_INTERLEAVE_32B ||
      (unsigned)swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B ||
      (unsigned)l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B ||
      (unsigned)oob > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t i = 0; i < rank; i++) {
    if (!dims[i] || dims[i] > (1ULL << 32) || !element_strides[i] || element_strides[i] > 8)
      return CUDA_ERROR_INVALID_VALUE;
    if (i && (strides[i - 1] % 16 || strides[i - 1] >= (1ULL << 40)))
      return CUDA_ERROR_INVALID_VALUE;
  }
  memset(map, 0, sizeof *map);
  map->opaque[0] = (cuuint64_t)(uintptr_t)address;
  map->opaque[1] = (cuuint64_t)kind | (cuuint64_t)rank << 8 | (cuuint64_t)type << 16;
  for (cuuint32_t i = 0; i < rank; i++) map->opaque[2 + i] = dims[i];
  for (cuuint32_t i = 1; i < rank; i++) map->opaque[7 + i - 1] = strides[i - 1];
  return CUDA_SUCCESS;
}

/* "a,b,c" of n numbers into text. */
static const char *list_u64(char *text, size_t size, const cuuint64_t *v, cuuint32_t n) {
  size_t at = 0;
  text[0] = '\0';
  for (cuuint32_t i = 0; i < n && at < size; i++)
    at += (size_t)snprintf(text + at, size - at, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
  return text;
}
static const char *list_i32(char *text, size_t size, const int *v, cuuint32_t n) {
  size_t at = 0;
  text[0] = '\0';
  for (cuuint32_t i = 0; i < n && at < size; i++)
    at += (size_t)snprintf(text + at, size - at, "%s%d", i ? "," : "", v[i]);
  return text;
}

/* The common part of each call's log line. */
static void log_common(const char *what, CUtensorMapDataType type, cuuint32_t rank, void *address,
                       const cuuint64_t *dims, const cuuint64_t *strides,
                       const cuuint32_t *element_strides, const char *rest) {
  char d[128], s[128], e[64];
  log_line("tensormap %s type=%d rank=%u address=%llx dims=%s strides=%s estrides=%s %s", what,
           (int)type, rank, (unsigned long long)(uintptr_t)address,
           list_u64(d, sizeof d, dims, rank), list_u64(s, sizeof s, strides, rank - 1),
           list_i32(e, sizeof e, (const int *)element_strides, rank), rest);
}

EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                       void *address, const cuuint64_t *dims,
                                       const cuuint64_t *strides, const cuuint32_t *box,
                                       const cuuint32_t *element_strides,
                                       CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                       CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  ENTER();
  CUresult result = encode_common(map, TILED, type, rank, address, dims, strides, element_strides,
                                  interleave, swizzle, l2, oob);
  if (result != CUDA_SUCCESS) return result;
  for (cuuint32_t i = 0; i < rank; i++)
    if (!box[i] || box[i] > 256) return CUDA_ERROR_INVALID_VALUE;
  char b[64], rest[160];
  snprintf(rest, sizeof rest, "box=%s flags=%d,%d,%d,%d",
           list_i32(b, sizeof b, (const int *)box, rank), (int)interleave, (int)swizzle, (int)l2,
           (int)oob);
  log_common("tiled", type, rank, address, dims, strides, element_strides, rest);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuTensorMapEncodeIm2col(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                        void *address, const cuuint64_t *dims,
                                        const cuuint64_t *strides, const int *lower,
                                        const int *upper, cuuint32_t channels, cuuint32_t pixels,
                                        const cuuint32_t *element_strides,
                                        CUtensorMapInterleave interleave,
                                        CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                        CUtensorMapFloatOOBfill oob) {
  ENTER();
  CUresult result = encode_common(map, IM2COL, type, rank, address, dims, strides, element_strides,
                                  interleave, swizzle, l2, oob);
  if (result != CUDA_SUCCESS) return result;
  if (!channels || channels > 256 || !pixels || pixels > 1024) return CUDA_ERROR_INVALID_VALUE;
  char lo[64], up[64], rest[200];
  snprintf(rest, sizeof rest, "lower=%s upper=%s channels=%u pixels=%u",
           list_i32(lo, sizeof lo, lower, rank - 2), list_i32(up, sizeof up, upper, rank - 2),
           channels, pixels);
  log_common("im2col", type, rank, address, dims, strides, element_strides, rest);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuTensorMapEncodeIm2colWide(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, int lower, int upper, cuuint32_t channels,
    cuuint32_t pixels, const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
    CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
    CUtensorMapFloatOOBfill oob) {
  ENTER();
  CUresult result = encode_common(map, IM2COL_WIDE, type, rank, address, dims, strides,
                                  element_strides, interleave, swizzle, l2, oob);
  if (result != CUDA_SUCCESS) return result;
  if (!channels || channels > 256 || !pixels || pixels > 1024 ||
      (unsigned)mode > CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128)
    return CUDA_ERROR_INVALID_VALUE;
  char rest[160];
  snprintf(rest, sizeof rest, "width=%d,%d channels=%u pixels=%u mode=%d", lower, upper, channels,
           pixels, (int)mode);
  log_common("im2colwide", type, rank, address, dims, strides, element_strides, rest);
  return CUDA_SUCCESS;
}
