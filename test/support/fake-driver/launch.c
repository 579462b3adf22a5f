/* The stand-in's launches: they check what the driver would, then log the kernel, its
 * configuration and its parameter bytes (FAKE_CUDA_LOG). No kernel runs. */
#include "fake.h"

#include <stdio.h>

size_t function_params(CUfunction f, const char **name);

/* attrs describes the launch attributes (cuLaunchKernelEx), or is NULL. */
CUresult fake_launch(CUfunction f, const CUlaunchConfig *c, void **params, void **extra,
                     const char *attrs) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!obj_live((uintptr_t)f, OBJ_FUNCTION)) return CUDA_ERROR_INVALID_HANDLE;
  if (!stream_ok(c->hStream)) return CUDA_ERROR_INVALID_HANDLE;
  if (params) return CUDA_ERROR_INVALID_VALUE;
  if (!c->gridDimX || !c->gridDimY || !c->gridDimZ || !c->blockDimX || !c->blockDimY ||
      !c->blockDimZ || c->gridDimX > 2147483647u || c->gridDimY > 65535 || c->gridDimZ > 65535 ||
      c->blockDimX > 1024 || c->blockDimY > 1024 || c->blockDimZ > 64 ||
      (unsigned long long)c->blockDimX * c->blockDimY * c->blockDimZ > 1024 ||
      c->sharedMemBytes > 232448)
    return CUDA_ERROR_INVALID_VALUE;
  const unsigned char *buffer = NULL;
  size_t size = 0;
  for (int i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
      buffer = extra[i + 1];
    else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
      size = *(size_t *)extra[i + 1];
    else
      return CUDA_ERROR_INVALID_VALUE;
  }
  const char *name;
  size_t want = function_params(f, &name);
  if (size != want || (size && !buffer)) return CUDA_ERROR_INVALID_VALUE;
  /* read every byte, as the driver copies them (a sanitizer sees a short buffer) */
  volatile unsigned char sum = 0;
  for (size_t i = 0; i < size; i++) sum += buffer[i];
  if (!logging()) return CUDA_SUCCESS;
  char hex[2 * 4096 + 1] = "";
  for (size_t i = 0; i < size && i < 4096; i++) sprintf(hex + 2 * i, "%02x", buffer[i]);
  log_line("launch%s %s grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%d%s%s params=%s",
           attrs ? "ex" : "", name, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
           c->blockDimY, c->blockDimZ, c->sharedMemBytes, stream_id(c->hStream),
           attrs ? " attrs=" : "", attrs ? attrs : "", hex);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz,
                               unsigned int shared, CUstream stream, void **params, void **extra) {
  ENTER();
  CUlaunchConfig config = {gx, gy, gz, bx, by, bz, shared, stream, NULL, 0};
  return fake_launch(f, &config, params, extra, NULL);
}

/* Attributes are logged as id:values, comma-separated: "4:2,1,1;2:1" for a cluster of 2x1x1 and a
 * cooperative launch. A cluster must divide the grid; a cooperative grid must fit at once (132
 * multiprocessors of 2048 threads). */
EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                                 void **extra) {
  ENTER();
  char attrs[256] = "";
  int at = 0;
  if (c->numAttrs > 8) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned int i = 0; i < c->numAttrs; i++) {
    const CUlaunchAttribute *a = &c->attrs[i];
    const char *sep = i ? ";" : "";
    switch (a->id) {
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
      unsigned int x = a->value.clusterDim.x, y = a->value.clusterDim.y, z = a->value.clusterDim.z;
      if (!x || !y || !z || !c->gridDimX || !c->gridDimY || !c->gridDimZ || c->gridDimX % x ||
          c->gridDimY % y || c->gridDimZ % z || (unsigned long long)x * y * z > 8)
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
      at += snprintf(attrs + at, sizeof attrs - at, "%s%d:%u,%u,%u", sep, (int)a->id, x, y, z);
      break;
    }
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: {
      unsigned long long blocks = (unsigned long long)c->gridDimX * c->gridDimY * c->gridDimZ;
      unsigned long long threads = (unsigned long long)c->blockDimX * c->blockDimY * c->blockDimZ;
      if (a->value.cooperative && threads && threads <= 2048 && blocks > 132ULL * (2048 / threads))
        return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
      at +=
          snprintf(attrs + at, sizeof attrs - at, "%s%d:%d", sep, (int)a->id, a->value.cooperative);
      break;
    }
    default: at += snprintf(attrs + at, sizeof attrs - at, "%s%d:?", sep, (int)a->id);
    }
  }
  return fake_launch(f, c, params, extra, attrs);
}
