/* The stand-in's virtual memory management. Physical allocations are memfds, reserved ranges are
 * PROT_NONE mappings of host addresses, and cuMemMap maps the memfd over part of a range, so that
 * two ranges mapping one allocation (or two processes, through an exported descriptor) see the
 * same bytes. Mapped memory becomes readable and writable at cuMemSetAccess, and is then device
 * memory to the stand-in's checks (a copy to it works) until it is unmapped. Granularity: 64 KiB.
 */
#include "fake.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GRANULE ((size_t)64 << 10)
#define MOST_MAPPINGS 4096

typedef struct {
  uintptr_t address; /* 0: a free entry */
  size_t size;
  bool accessible;
} fake_mapping;

/* taken by the calls that read or change it: workers map and unmap at once */
static fake_mapping mappings[MOST_MAPPINGS];
static pthread_mutex_t mappings_lock = PTHREAD_MUTEX_INITIALIZER;

/* CUmemGenericAllocationHandle values are memfd + 1 here (0 is no handle). */
static int fd_of(CUmemGenericAllocationHandle handle) { return (int)handle - 1; }

EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                              CUmemAllocationGranularity_flags option) {
  ENTER();
  if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || option > 1 ||
      (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE && !fake_is_device(prop->location.id)))
    return CUDA_ERROR_INVALID_VALUE;
  *granularity = option ? 2 * GRANULE : GRANULE;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags) {
  ENTER();
  if (!prop || flags || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || !size || size % GRANULE ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !fake_is_device(prop->location.id) ||
      prop->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return CUDA_ERROR_INVALID_VALUE;
  int fd = memfd_create("fake-cuda-physical", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (ftruncate(fd, (off_t)size) != 0) return close(fd), CUDA_ERROR_OUT_OF_MEMORY;
  *handle = (CUmemGenericAllocationHandle)fd + 1;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  ENTER();
  struct stat st;
  if (fd_of(handle) < 0 || fstat(fd_of(handle), &st) != 0) return CUDA_ERROR_INVALID_VALUE;
  close(fd_of(handle)); /* mappings keep the memory */
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemExportToShareableHandle(void *shareable, CUmemGenericAllocationHandle handle,
                                             CUmemAllocationHandleType type,
                                             unsigned long long flags) {
  ENTER();
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags) return CUDA_ERROR_INVALID_VALUE;
  int fd = dup(fd_of(handle));
  if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
  *(int *)shareable = fd;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
                                               void *shareable, CUmemAllocationHandleType type) {
  ENTER();
  struct stat st;
  int fd = (int)(intptr_t)shareable;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || fstat(fd, &st) != 0 ||
      !S_ISREG(st.st_mode))
    return CUDA_ERROR_INVALID_VALUE;
  int own = dup(fd);
  if (own < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *handle = (CUmemGenericAllocationHandle)own + 1;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                    CUdeviceptr addr, unsigned long long flags) {
  ENTER();
  if (!size || size % GRANULE || (alignment && alignment % GRANULE) || addr || flags)
    return CUDA_ERROR_INVALID_VALUE;
  /* reserved with room to start at a granule, the rest given back */
  size_t align = alignment > GRANULE ? alignment : GRANULE;
  char *base =
      mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  char *start = (char *)(((uintptr_t)base + align - 1) / align * align);
  if (start > base) munmap(base, (size_t)(start - base));
  if (start + size < base + size + align)
    munmap(start + size, (size_t)(base + size + align - (start + size)));
  *ptr = (CUdeviceptr)(uintptr_t)start;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  ENTER();
  HOLD(&mappings_lock);
  for (int i = 0; i < MOST_MAPPINGS; i++)
    if (mappings[i].address >= ptr && mappings[i].address < ptr + size)
      return CUDA_ERROR_INVALID_VALUE; /* unmap first */
  return munmap((void *)(uintptr_t)ptr, size) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                         CUmemGenericAllocationHandle handle, unsigned long long flags) {
  ENTER();
  struct stat st;
  if (flags || !size || size % GRANULE || offset % GRANULE || ptr % GRANULE ||
      fstat(fd_of(handle), &st) != 0 || offset + size > (size_t)st.st_size)
    return CUDA_ERROR_INVALID_VALUE;
  HOLD(&mappings_lock);
  int slot = 0;
  while (slot < MOST_MAPPINGS && mappings[slot].address) slot++;
  if (slot == MOST_MAPPINGS) return CUDA_ERROR_OUT_OF_MEMORY;
  void *at = mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, fd_of(handle),
                  (off_t)offset);
  if (at == MAP_FAILED) return CUDA_ERROR_INVALID_VALUE;
  mappings[slot] = (fake_mapping){(uintptr_t)ptr, size, false};
  return CUDA_SUCCESS;
}

/* the mapping of exactly [ptr, ptr + size), under mappings_lock; NULL where none is */
static fake_mapping *mapping_at(CUdeviceptr ptr, size_t size) {
  for (int i = 0; i < MOST_MAPPINGS; i++)
    if (mappings[i].address && mappings[i].address == ptr && mappings[i].size == size)
      return &mappings[i];
  return NULL;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  ENTER();
  HOLD(&mappings_lock);
  fake_mapping *m = mapping_at(ptr, size);
  if (!m) return CUDA_ERROR_INVALID_VALUE;
  if (m->accessible) obj_remove(m->address, OBJ_MAPPED);
  mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  *m = (fake_mapping){0, 0, false};
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                               size_t count) {
  ENTER();
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++)
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        !fake_is_device(desc[i].location.id) || desc[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_VALUE;
  HOLD(&mappings_lock);
  fake_mapping *m = mapping_at(ptr, size);
  if (!m || mprotect((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult result = m->accessible ? CUDA_SUCCESS : obj_add(m->address, OBJ_MAPPED, m->size);
  if (result == CUDA_SUCCESS) m->accessible = true;
  return result;
}
