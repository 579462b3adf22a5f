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
  if (fake_capture_error(c->hStream) != CUDA_SUCCESS) return fake_capture_error(c->hStream);
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
/* Whether the preferred cluster p fits the launch: a multiple of the cluster dimension (which
 * must be given) in x and y, equal in z, and dividing the grid. */
static bool preferred_fits(const CUlaunchConfig *c, const CUlaunchAttribute *cluster,
                           unsigned int x, unsigned int y, unsigned int z) {
  if (!cluster || !x || !y || !z) return false;
  unsigned int cx = cluster->value.clusterDim.x, cy = cluster->value.clusterDim.y,
               cz = cluster->value.clusterDim.z;
  return cx && cy && x % cx == 0 && y % cy == 0 && z == cz && c->gridDimX % x == 0 &&
         c->gridDimY % y == 0 && c->gridDimZ % z == 0;
}

/* One attribute of c checked and written to attrs at *at; a CUresult other than success where the
 * driver would refuse it. */
static CUresult launch_attribute(const CUlaunchConfig *c, const CUlaunchAttribute *a,
                                 const char *sep, char *attrs, size_t size, int *at) {
  const CUlaunchAttribute *cluster = NULL;
  for (unsigned int i = 0; i < c->numAttrs; i++)
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) cluster = &c->attrs[i];
  const CUlaunchAttributeValue *v = &a->value;
  int id = (int)a->id;
  switch (a->id) {
  case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
    unsigned int x = v->clusterDim.x, y = v->clusterDim.y, z = v->clusterDim.z;
    if (!x || !y || !z || !c->gridDimX || !c->gridDimY || !c->gridDimZ || c->gridDimX % x ||
        c->gridDimY % y || c->gridDimZ % z || (unsigned long long)x * y * z > 8)
      return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    *at += snprintf(attrs + *at, size - *at, "%s%d:%u,%u,%u", sep, id, x, y, z);
    return CUDA_SUCCESS;
  }
  case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION: {
    unsigned int x = v->preferredClusterDim.x, y = v->preferredClusterDim.y,
                 z = v->preferredClusterDim.z;
    if (!preferred_fits(c, cluster, x, y, z)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    *at += snprintf(attrs + *at, size - *at, "%s%d:%u,%u,%u", sep, id, x, y, z);
    return CUDA_SUCCESS;
  }
  case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: {
    unsigned long long blocks = (unsigned long long)c->gridDimX * c->gridDimY * c->gridDimZ;
    unsigned long long threads = (unsigned long long)c->blockDimX * c->blockDimY * c->blockDimZ;
    if (v->cooperative && threads && threads <= 2048 && blocks > 132ULL * (2048 / threads))
      return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    *at += snprintf(attrs + *at, size - *at, "%s%d:%d", sep, id, v->cooperative);
    return CUDA_SUCCESS;
  }
  case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    *at += snprintf(attrs + *at, size - *at, "%s%d:%d", sep, id, v->priority);
    return CUDA_SUCCESS;
  case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    if ((unsigned)v->clusterSchedulingPolicyPreference >
        CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING)
      return CUDA_ERROR_INVALID_VALUE;
    *at += snprintf(attrs + *at, size - *at, "%s%d:%d", sep, id,
                    (int)v->clusterSchedulingPolicyPreference);
    return CUDA_SUCCESS;
  case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    if ((unsigned)v->memSyncDomain > CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE)
      return CUDA_ERROR_INVALID_VALUE;
    *at += snprintf(attrs + *at, size - *at, "%s%d:%d", sep, id, (int)v->memSyncDomain);
    return CUDA_SUCCESS;
  case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    if (v->sharedMemCarveout > 100) /* -1 too, as driver 580 does here */
      return CUDA_ERROR_INVALID_VALUE;
    *at += snprintf(attrs + *at, size - *at, "%s%d:%d", sep, id, (int)v->sharedMemCarveout);
    return CUDA_SUCCESS;
  case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
    *at += snprintf(attrs + *at, size - *at, "%s%d:%d", sep, id,
                    v->programmaticStreamSerializationAllowed);
    return CUDA_SUCCESS;
  case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT: {
    CUresult result = fake_event_record_by_launch(v->programmaticEvent.event, c->hStream);
    if (result != CUDA_SUCCESS) return result;
    *at += snprintf(attrs + *at, size - *at, "%s%d:event%d,%d", sep, id,
                    fake_event_id(v->programmaticEvent.event),
                    v->programmaticEvent.triggerAtBlockStart);
    return CUDA_SUCCESS;
  }
  case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT: {
    CUresult result = fake_event_record_by_launch(v->launchCompletionEvent.event, c->hStream);
    if (result != CUDA_SUCCESS) return result;
    *at += snprintf(attrs + *at, size - *at, "%s%d:event%d", sep, id,
                    fake_event_id(v->launchCompletionEvent.event));
    return CUDA_SUCCESS;
  }
  default: *at += snprintf(attrs + *at, size - *at, "%s%d:?", sep, id); return CUDA_SUCCESS;
  }
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                                 void **extra) {
  ENTER();
  char attrs[512] = "";
  int at = 0;
  if (c->numAttrs > 16) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned int i = 0; i < c->numAttrs; i++) {
    CUresult result = launch_attribute(c, &c->attrs[i], i ? ";" : "", attrs, sizeof attrs, &at);
    if (result != CUDA_SUCCESS) return result;
  }
  return fake_launch(f, c, params, extra, attrs);
}
