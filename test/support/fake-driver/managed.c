/* The stand-in's unified memory placement: prefetches, advice and the range attributes that
 * report them, kept for each managed allocation (advice on part of one applies to all of it
 * here), and CUDA 13's batched prefetches and discards. A discard fills the bytes with 0xdd, as
 * if the pages were dropped. Each call is logged (FAKE_CUDA_LOG) with its ranges and locations. */
#include "fake.h"

#include <string.h>

#define MOST 256

typedef struct {
  uintptr_t key;     /* the allocation's start; 0: a free entry */
  int read_mostly;   /* 0 or 1 */
  int preferred;     /* a device, -1 the host, -2 none */
  int last_prefetch; /* likewise */
  unsigned accessed; /* bit d: accessed by device d */
} placement;

static placement table[MOST];
/* taken by every call here to its return: workers prefetch and advise at once */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* The placement of the managed allocation holding [ptr, ptr + bytes), made on first use; NULL
 * where the range is not managed memory. */
static placement *placement_of(CUdeviceptr ptr, size_t bytes) {
  obj o;
  if (!bytes || !obj_memory((uintptr_t)ptr, bytes, &o) || o.kind != OBJ_MANAGED) return NULL;
  placement *vacant = NULL;
  for (int i = 0; i < MOST; i++) {
    if (table[i].key == o.key) return &table[i];
    if (!vacant && (!table[i].key || !obj_is(table[i].key, OBJ_MANAGED))) vacant = &table[i];
  }
  if (vacant) *vacant = (placement){o.key, 0, -2, -2, 0};
  return vacant;
}

/* A new managed allocation at ptr has no advice, whatever one freed there had. */
void fake_managed_made(CUdeviceptr ptr) {
  HOLD(&table_lock);
  for (int i = 0; i < MOST; i++)
    if (table[i].key == (uintptr_t)ptr) table[i].key = 0;
}

/* A location as the range attributes give it (a device, -1 the host), or -3 for a bad one. */
static int location_code(CUmemLocation location) {
  switch (location.type) {
  case CU_MEM_LOCATION_TYPE_DEVICE: return fake_is_device(location.id) ? location.id : -3;
  case CU_MEM_LOCATION_TYPE_HOST:
  case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return -1;
  case CU_MEM_LOCATION_TYPE_HOST_NUMA: return location.id == 0 ? -1 : -3;
  default: return -3;
  }
}

static CUresult prefetch(CUdeviceptr ptr, size_t bytes, CUmemLocation location, const char *call) {
  placement *p = placement_of(ptr, bytes);
  int code = location_code(location);
  if (!p || code == -3) return CUDA_ERROR_INVALID_VALUE;
  p->last_prefetch = code;
  if (logging())
    log_line("%s ptr=%llu bytes=%zu location=%d:%d", call, (unsigned long long)ptr, bytes,
             (int)location.type, location.id);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr ptr, size_t bytes, CUmemLocation location,
                                   unsigned int flags, CUstream stream) {
  ENTER();
  HOLD(&table_lock);
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  return prefetch(ptr, bytes, location, "cuMemPrefetchAsync");
}

EXPORT CUresult cuMemAdvise(CUdeviceptr ptr, size_t bytes, CUmem_advise advice,
                            CUmemLocation location) {
  ENTER();
  HOLD(&table_lock);
  placement *p = placement_of(ptr, bytes);
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  int code = location_code(location);
  switch (advice) {
  case CU_MEM_ADVISE_SET_READ_MOSTLY: p->read_mostly = 1; break;
  case CU_MEM_ADVISE_UNSET_READ_MOSTLY: p->read_mostly = 0; break;
  case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
    if (code == -3) return CUDA_ERROR_INVALID_VALUE;
    p->preferred = code;
    break;
  case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: p->preferred = -2; break;
  case CU_MEM_ADVISE_SET_ACCESSED_BY:
  case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
    if (code < 0) return CUDA_ERROR_INVALID_DEVICE; /* devices only */
    if (advice == CU_MEM_ADVISE_SET_ACCESSED_BY)
      p->accessed |= 1u << code;
    else
      p->accessed &= ~(1u << code);
    break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (logging())
    log_line("cuMemAdvise ptr=%llu bytes=%zu advice=%d location=%d:%d", (unsigned long long)ptr,
             bytes, (int)advice, (int)location.type, location.id);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemRangeGetAttribute(void *data, size_t size, CUmem_range_attribute attribute,
                                       CUdeviceptr ptr, size_t bytes) {
  ENTER();
  HOLD(&table_lock);
  placement *p = placement_of(ptr, bytes);
  if (!p || !data || size % 4 || !size) return CUDA_ERROR_INVALID_VALUE;
  int *out = data;
  if (attribute == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
    size_t n = 0;
    for (int d = 0; d < 32; d++)
      if (p->accessed & (1u << d) && n < size / 4) out[n++] = d;
    while (n < size / 4) out[n++] = -2; /* CU_DEVICE_INVALID */
    return CUDA_SUCCESS;
  }
  if (size != 4) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
  case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: *out = p->read_mostly; return CUDA_SUCCESS;
  case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: *out = p->preferred; return CUDA_SUCCESS;
  case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION: *out = p->last_prefetch; return CUDA_SUCCESS;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}

/* The checks of a batch: ranges, locations with their first indices (0, rising, in range). */
static CUresult batch_ok(const CUdeviceptr *ptrs, const size_t *sizes, size_t count,
                         const size_t *location_idxs, size_t locations, unsigned long long flags,
                         CUstream stream, bool with_locations) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!stream_ok(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (!count || flags || !ptrs || !sizes) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++)
    if (!placement_of(ptrs[i], sizes[i])) return CUDA_ERROR_INVALID_VALUE;
  if (!with_locations) return CUDA_SUCCESS;
  if (!locations || locations > count || location_idxs[0] != 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 1; i < locations; i++)
    if (location_idxs[i] <= location_idxs[i - 1] || location_idxs[i] >= count)
      return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* Range i's location: the last whose first index is at most i. */
static CUmemLocation location_for(size_t i, const CUmemLocation *locations, const size_t *idxs,
                                  size_t n) {
  size_t k = 0;
  while (k + 1 < n && idxs[k + 1] <= i) k++;
  return locations[k];
}

static void discard(CUdeviceptr ptr, size_t bytes) {
  memset((void *)(uintptr_t)ptr, 0xdd, bytes);
  if (logging()) log_line("discard ptr=%llu bytes=%zu", (unsigned long long)ptr, bytes);
}

/* A batched prefetch, each range discarded first where discard_first. */
static CUresult prefetch_batch(CUdeviceptr *ptrs, size_t *sizes, size_t count,
                               CUmemLocation *locations, size_t *idxs, size_t n,
                               unsigned long long flags, CUstream stream, bool discard_first) {
  CUresult result = batch_ok(ptrs, sizes, count, idxs, n, flags, stream, true);
  for (size_t i = 0; result == CUDA_SUCCESS && i < count; i++)
    if (location_code(location_for(i, locations, idxs, n)) == -3) result = CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; result == CUDA_SUCCESS && i < count; i++) {
    if (discard_first) discard(ptrs[i], sizes[i]);
    prefetch(ptrs[i], sizes[i], location_for(i, locations, idxs, n), "prefetch");
  }
  return result;
}

EXPORT CUresult cuMemPrefetchBatchAsync(CUdeviceptr *ptrs, size_t *sizes, size_t count,
                                        CUmemLocation *locations, size_t *idxs, size_t n,
                                        unsigned long long flags, CUstream stream) {
  ENTER();
  HOLD(&table_lock);
  return prefetch_batch(ptrs, sizes, count, locations, idxs, n, flags, stream, false);
}

EXPORT CUresult cuMemDiscardBatchAsync(CUdeviceptr *ptrs, size_t *sizes, size_t count,
                                       unsigned long long flags, CUstream stream) {
  ENTER();
  HOLD(&table_lock);
  CUresult result = batch_ok(ptrs, sizes, count, NULL, 0, flags, stream, false);
  for (size_t i = 0; result == CUDA_SUCCESS && i < count; i++) discard(ptrs[i], sizes[i]);
  return result;
}

EXPORT CUresult cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *ptrs, size_t *sizes, size_t count,
                                                  CUmemLocation *locations, size_t *idxs, size_t n,
                                                  unsigned long long flags, CUstream stream) {
  ENTER();
  HOLD(&table_lock);
  return prefetch_batch(ptrs, sizes, count, locations, idxs, n, flags, stream, true);
}
