/* virtual_memory: the driver's virtual memory management. Physical allocations (cuMemCreate,
 * or imported from another process by a file descriptor) and reserved address ranges
 * (cuMemAddressReserve) into which they are mapped. A range keeps the list of its mappings, each
 * checked here to lie inside the range and inside its allocation, and to overlap no other, and
 * unmaps what is left when it is freed; a mapping keeps its physical memory (the driver's rule),
 * so an allocation may be released while mapped. */
#include <stdlib.h>

#include "memory.h"

typedef struct phys_h {
  handle_base base;
  CUmemGenericAllocationHandle handle;
  size_t size;
} phys_h;

typedef struct mapping {
  size_t offset, size;
} mapping;

typedef struct vrange_h {
  handle_base base;
  CUdeviceptr address;
  size_t size;
  mapping *maps;
  size_t count, capacity;
} vrange_h;

static CUresult release_phys(handle_base *base) {
  return DRV(cuMemRelease, ((phys_h *)base)->handle);
}

static CUresult free_range(handle_base *base) {
  vrange_h *range = (vrange_h *)base;
  for (size_t i = 0; i < range->count; i++)
    stats_cleanup(DRV(cuMemUnmap, range->address + range->maps[i].offset, range->maps[i].size));
  range->count = 0;
  return DRV(cuMemAddressFree, range->address, range->size);
}

static void dispose_range(handle_base *base) {
  vrange_h *range = (vrange_h *)base;
  free(range->maps);
  range->maps = NULL;
}

static const handle_kind PHYS_KIND = {.tag = {0x6364727670687931ULL, 0x5068797369636131ULL},
                                      .name = "PhysicalMemory",
                                      .freed =
                                          "this PhysicalMemory has been released; make a new one",
                                      .destroy = release_phys};

static const handle_kind RANGE_KIND = {
    .tag = {0x6364727676726731ULL, 0x5652616e67653031ULL},
    .name = "VirtualAddressRange",
    .freed = "this VirtualAddressRange has been freed; reserve a new one",
    .destroy = free_range,
    .dispose = dispose_range};

/* The properties of an allocation at (type, id) exportable as handleTypes; false after throwing. */
static bool arg_props(napi_env env, napi_value *argv, CUmemAllocationProp *props) {
  uint32_t handle_types;
  *props = (CUmemAllocationProp){.type = CU_MEM_ALLOCATION_TYPE_PINNED};
  if (!arg_location(env, argv[0], argv[1], &props->location) ||
      !arg_uint32(env, argv[2], "handleTypes", &handle_types))
    return false;
  props->requestedHandleTypes = (CUmemAllocationHandleType)handle_types;
  return true;
}

/* memGetAllocationGranularity(locationType, locationId, handleTypes, recommended): bytes. */
static napi_value mem_get_allocation_granularity(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  CUmemAllocationProp props;
  bool recommended;
  if (!arg_props(env, argv, &props) || !arg_bool(env, argv[3], &recommended) || !driver_ready(env))
    return NULL;
  size_t granularity;
  CU_CALL(env, cuMemGetAllocationGranularity, &granularity, &props,
          recommended ? CU_MEM_ALLOC_GRANULARITY_RECOMMENDED : CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  return make_uint(env, granularity);
}

static napi_value adopt_phys(napi_env env, napi_value obj, CUmemGenericAllocationHandle handle,
                             size_t size) {
  phys_h *phys = calloc(1, sizeof *phys);
  if (!phys) {
    DRV(cuMemRelease, handle);
    return throw_oom(env);
  }
  phys->handle = handle;
  phys->size = size;
  handle_wrap_object(env, obj, &phys->base, &PHYS_KIND);
  return NULL;
}

/* memCreate(obj, bytes, locationType, locationId, handleTypes): physical memory in obj. */
static napi_value mem_create(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  size_t bytes;
  CUmemAllocationProp props;
  if (!arg_size(env, argv[1], "bytes", &bytes) || !arg_props(env, argv + 2, &props) ||
      !driver_ready(env))
    return NULL;
  CUmemGenericAllocationHandle handle;
  CU_CALL(env, cuMemCreate, &handle, bytes, &props, 0);
  return adopt_phys(env, argv[0], handle, bytes);
}

/* memRelease(obj): lets the physical memory go once no range maps it; again does nothing. */
static napi_value mem_release(napi_env env, napi_callback_info info) {
  return handle_destroy_call(env, info, &PHYS_KIND);
}

/* memExportHandle(phys, obj): a new file descriptor for it, owned by obj (a ShareableHandle). */
static napi_value mem_export_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  phys_h *phys = handle_get(env, argv[0], &PHYS_KIND);
  if (!phys) return NULL;
  int fd = -1;
  CU_CALL(env, cuMemExportToShareableHandle, &fd, phys->handle,
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  shareable_handle_wrap(env, argv[1], fd);
  return NULL;
}

/* memImportHandle(obj, fd, bytes): the physical memory another process exported as fd (of
 * bytes, as it says; the driver refuses mappings past the real size). */
static napi_value mem_import_handle(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  int fd;
  size_t bytes;
  if (!arg_fd(env, argv[1], &fd) || !arg_size(env, argv[2], "bytes", &bytes) || !driver_ready(env))
    return NULL;
  CUmemGenericAllocationHandle handle;
  CU_CALL(env, cuMemImportFromShareableHandle, &handle, (void *)(intptr_t)fd,
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  return adopt_phys(env, argv[0], handle, bytes);
}

/* memAddressReserve(obj, bytes, alignment): a range of addresses in obj; its start. */
static napi_value mem_address_reserve(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  size_t bytes, alignment;
  if (!arg_size(env, argv[1], "bytes", &bytes) ||
      !arg_size(env, argv[2], "alignment", &alignment) || !driver_ready(env))
    return NULL;
  CUdeviceptr address;
  CU_CALL(env, cuMemAddressReserve, &address, bytes, alignment, 0, 0);
  vrange_h *range = calloc(1, sizeof *range);
  if (!range) {
    DRV(cuMemAddressFree, address, bytes);
    return throw_oom(env);
  }
  range->address = address;
  range->size = bytes;
  if (!handle_wrap_object(env, argv[0], &range->base, &RANGE_KIND)) return NULL;
  return make_ptr(env, address);
}

/* Reads (range, offset, bytes): false after throwing unless [offset, offset + bytes) is a
 * non-empty part of the range. */
static bool arg_span(napi_env env, napi_value *argv, vrange_h **range, size_t *offset,
                     size_t *bytes) {
  *range = handle_get(env, argv[0], &RANGE_KIND);
  if (!*range || !arg_size(env, argv[1], "offset", offset) ||
      !arg_size(env, argv[2], "bytes", bytes))
    return false;
  if (!*bytes || *offset > (*range)->size || *bytes > (*range)->size - *offset) {
    throw_range(env, "offset and bytes must name a non-empty part of the range");
    return false;
  }
  return true;
}

/* memMap(range, offset, bytes, phys, physOffset): maps bytes of phys from physOffset at offset. */
static napi_value mem_map(napi_env env, napi_callback_info info) {
  ARGS(env, info, 5);
  vrange_h *range;
  size_t offset, bytes, phys_offset;
  if (!arg_span(env, argv, &range, &offset, &bytes)) return NULL;
  phys_h *phys = handle_get(env, argv[3], &PHYS_KIND);
  if (!phys || !arg_size(env, argv[4], "physicalOffset", &phys_offset)) return NULL;
  if (phys_offset > phys->size || bytes > phys->size - phys_offset)
    return throw_range(env, "the mapping reaches past the end of the PhysicalMemory");
  for (size_t i = 0; i < range->count; i++) {
    const mapping *m = &range->maps[i];
    if (offset < m->offset + m->size && m->offset < offset + bytes)
      return throw_logic(env, "the mapping overlaps one already made; unmap that first");
  }
  if (range->count == range->capacity) {
    size_t capacity = range->capacity ? 2 * range->capacity : 4;
    mapping *grown = realloc(range->maps, capacity * sizeof *grown);
    if (!grown) return throw_oom(env);
    range->maps = grown;
    range->capacity = capacity;
  }
  CU_CALL(env, cuMemMap, range->address + offset, bytes, phys_offset, phys->handle, 0);
  range->maps[range->count++] = (mapping){offset, bytes};
  return NULL;
}

/* memUnmap(range, offset, bytes): undoes the mapping made there, which it must name exactly. */
static napi_value mem_unmap(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  vrange_h *range;
  size_t offset, bytes;
  if (!arg_span(env, argv, &range, &offset, &bytes)) return NULL;
  size_t i = 0;
  while (i < range->count && (range->maps[i].offset != offset || range->maps[i].size != bytes)) i++;
  if (i == range->count)
    return throw_logic(env, "no mapping was made at that offset of that size; unmap one whole "
                            "mapping at a time");
  CU_CALL(env, cuMemUnmap, range->address + offset, bytes);
  range->maps[i] = range->maps[--range->count];
  return NULL;
}

/* memSetAccess(range, offset, bytes, locationType, locationId, flags). */
static napi_value mem_set_access(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  vrange_h *range;
  size_t offset, bytes;
  CUmemAccessDesc access;
  uint32_t flags;
  if (!arg_span(env, argv, &range, &offset, &bytes) ||
      !arg_location(env, argv[3], argv[4], &access.location) ||
      !arg_uint32(env, argv[5], "flags", &flags))
    return NULL;
  access.flags = (CUmemAccess_flags)flags;
  CU_CALL(env, cuMemSetAccess, range->address + offset, bytes, &access, 1);
  return NULL;
}

/* memAddressFree(range): unmaps what is mapped and frees the addresses; again does nothing. */
static napi_value mem_address_free(napi_env env, napi_callback_info info) {
  return handle_destroy_call(env, info, &RANGE_KIND);
}

bool virtual_memory_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"memGetAllocationGranularity", mem_get_allocation_granularity},
      {"memCreate", mem_create},
      {"memRelease", mem_release},
      {"memExportHandle", mem_export_handle},
      {"memImportHandle", mem_import_handle},
      {"memAddressReserve", mem_address_reserve},
      {"memMap", mem_map},
      {"memUnmap", mem_unmap},
      {"memSetAccess", mem_set_access},
      {"memAddressFree", mem_address_free},
  };
  return EXPORTS(env, exports, fns);
}
