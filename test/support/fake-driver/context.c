/* The stand-in's devices and contexts: FAKE_CUDA_DEVICES devices (1 or 2, default 1), contexts
 * made and destroyed for real (with what was made in them), primary contexts retained by count,
 * a stack of current contexts per thread. */
#include "fake.h"

#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CUctx_st {
  CUdevice device;
  unsigned int flags;
  size_t limits[CU_LIMIT_MAX];
  CUfunc_cache cache;
  CUsharedconfig shared;
  bool peer; /* access to the other device's memory enabled */
};

#define MAX_DEVICES 2
static struct CUctx_st primary[MAX_DEVICES];
static int primary_count[MAX_DEVICES];
static _Thread_local CUcontext stack[64];
static CUcontext recycled;
static _Thread_local int depth;

static int devices(void) {
  const char *n = getenv("FAKE_CUDA_DEVICES");
  return n && atoi(n) == 2 ? 2 : 1;
}
bool fake_is_device(CUdevice d) { return d >= 0 && d < devices(); }

static bool is_primary(CUcontext ctx) { return ctx >= primary && ctx < primary + MAX_DEVICES; }

/* A context handle the driver knows: one made by cuCtxCreate and not destroyed, or a retained
 * primary context. A stale one is counted where report is set. */
bool live_context(CUcontext ctx, bool report) {
  bool live =
      is_primary(ctx) ? primary_count[ctx - primary] > 0 : obj_is((uintptr_t)ctx, OBJ_CONTEXT);
  if (!live && report) count_stale("context");
  return live;
}

/* The calling thread's current context, or NULL where it has none or it was destroyed since. */
CUcontext current_context(void) {
  CUcontext ctx = depth ? stack[depth - 1] : NULL;
  return ctx && live_context(ctx, false) ? ctx : NULL;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  ENTER();
  if (!fake_is_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetCount(int *count) {
  ENTER();
  *count = devices();
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  ENTER();
  if (!fake_is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
  if (length < 1) return CUDA_ERROR_INVALID_VALUE;
  snprintf(name, (size_t)length, "stand-in driver");
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device) {
  ENTER();
  if (!fake_is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = 1; return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *value = 0x18 + device; return CUDA_SUCCESS;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}
EXPORT CUresult cuDeviceTotalMem(size_t *bytes, CUdevice device) {
  ENTER();
  if (!fake_is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetPCIBusId(char *id, int length, CUdevice device) {
  ENTER();
  if (!fake_is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
  if (length < 1) return CUDA_ERROR_INVALID_VALUE;
  snprintf(id, (size_t)length, "00000000:%02X:00.0", 0x18 + device);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice *device, const char *id) {
  ENTER();
  for (int d = 0; d < devices(); d++) {
    char mine[32];
    snprintf(mine, sizeof mine, "00000000:%02X:00.0", 0x18 + d);
    if (strcasecmp(id, mine) == 0 || strcasecmp(id, mine + 4) == 0)
      return *device = d, CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}
EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice device, CUdevice peer) {
  ENTER();
  if (!fake_is_device(device) || !fake_is_device(peer)) return CUDA_ERROR_INVALID_DEVICE;
  *can = device != peer;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice device) {
  ENTER();
  if (!fake_is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
  for (int i = 0; i < 16; i++) uuid->bytes[i] = (char)(0xa0 + i + 16 * device);
  return CUDA_SUCCESS;
}

/* ---- contexts ---- */

static CUresult create_context(CUcontext *ctx, unsigned int flags, CUdevice dev) {
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (depth == (int)(sizeof stack / sizeof *stack)) return CUDA_ERROR_OUT_OF_MEMORY;
  /* the last context destroyed is made again at its address (a stale handle then names a new one)
   */
  struct CUctx_st *made = __atomic_exchange_n(&recycled, NULL, __ATOMIC_ACQ_REL);
  if (!made && !(made = malloc(sizeof *made))) return CUDA_ERROR_OUT_OF_MEMORY;
  memset(made, 0, sizeof *made);
  made->device = dev;
  made->flags = flags;
  CUresult result = obj_add((uintptr_t)made, OBJ_CONTEXT, 0);
  if (result != CUDA_SUCCESS) return free(made), result;
  *ctx = made;
  stack[depth++] = made;
  return CUDA_SUCCESS;
}
/* cuCtxCreate_v2, the ABI from CUDA 3.2 to 12.4 (what cudadrv resolves on every driver), and
 * cuCtxCreate_v4 (12.5 on). */
EXPORT CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned int flags, CUdevice dev) {
  ENTER();
  return create_context(ctx, flags, dev);
}
EXPORT CUresult cuCtxCreate(CUcontext *ctx, CUctxCreateParams *params, unsigned int flags,
                            CUdevice dev) {
  ENTER();
  (void)params;
  return create_context(ctx, flags, dev);
}
EXPORT CUresult cuCtxDestroy(CUcontext ctx) {
  ENTER();
  if (is_primary(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!obj_remove((uintptr_t)ctx, OBJ_CONTEXT)) return CUDA_ERROR_INVALID_CONTEXT;
  obj_drop_context(ctx);
  if (depth && stack[depth - 1] == ctx) depth--;
  free(__atomic_exchange_n(&recycled, ctx, __ATOMIC_ACQ_REL));
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (primary_count[dev]++ == 0) {
    CUresult result = obj_add((uintptr_t)&primary[dev], OBJ_PRIMARY, 0);
    if (result != CUDA_SUCCESS) return primary_count[dev]--, result;
    primary[dev].device = dev;
  }
  *ctx = &primary[dev];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (!primary_count[dev]) return CUDA_ERROR_INVALID_CONTEXT;
  if (--primary_count[dev] == 0) {
    obj_remove((uintptr_t)&primary[dev], OBJ_PRIMARY);
    obj_drop_context(&primary[dev]);
    unsigned int flags = primary[dev].flags;
    memset(&primary[dev], 0, sizeof primary[dev]);
    primary[dev].flags = flags;
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *flags = primary[dev].flags;
  *active = primary_count[dev] > 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (flags & ~0x1fu) return CUDA_ERROR_INVALID_VALUE;
  primary[dev].flags = flags;
  return CUDA_SUCCESS;
}
/* The primary context's objects go, and its flags; those who retained it still hold it. */
EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  obj_drop_context(&primary[dev]);
  primary[dev].flags = 0;
  log_line("primary reset %d", dev);
  return CUDA_SUCCESS;
}
/* Peers: a link of rank 1, with access and atomics, and no CUDA array access. */
EXPORT CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attribute,
                                        CUdevice device, CUdevice peer) {
  ENTER();
  if (!fake_is_device(device) || !fake_is_device(peer) || device == peer)
    return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
  case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:
  case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
  case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: *value = 1; return CUDA_SUCCESS;
  case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 0; return CUDA_SUCCESS;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}
EXPORT CUresult cuCtxPushCurrent(CUcontext ctx) {
  ENTER();
  if (!live_context(ctx, true)) return CUDA_ERROR_INVALID_CONTEXT;
  if (depth == (int)(sizeof stack / sizeof *stack)) return CUDA_ERROR_OUT_OF_MEMORY;
  stack[depth++] = ctx;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxPopCurrent(CUcontext *ctx) {
  ENTER();
  if (depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  CUcontext top = stack[--depth];
  if (ctx) *ctx = top;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  ENTER();
  if (ctx && !live_context(ctx, true)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!ctx) {
    if (depth) depth--;
    return CUDA_SUCCESS;
  }
  if (depth == 0) depth = 1;
  stack[depth - 1] = ctx;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx) {
  ENTER();
  *ctx = depth ? stack[depth - 1] : NULL;
  return CUDA_SUCCESS;
}
CUdevice fake_current_device(void) {
  CUcontext ctx = current_context();
  return ctx ? ctx->device : 0;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  *device = ctx->device;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSynchronize(void) {
  ENTER();
  const char *ms = getenv("FAKE_CUDA_SYNC_MS"); /* work that takes this long to finish */
  if (ms) usleep((useconds_t)atoi(ms) * 1000);
  return in_context();
}
EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if ((int)limit < 0 || limit >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
  ctx->limits[limit] = value;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetLimit(size_t *value, CUlimit limit) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if ((int)limit < 0 || limit >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
  *value = ctx->limits[limit];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if ((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
  ctx->cache = config;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache *config) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  *config = ctx->cache;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetSharedMemConfig(CUsharedconfig config) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if ((unsigned)config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE) return CUDA_ERROR_INVALID_VALUE;
  ctx->shared = config;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetSharedMemConfig(CUsharedconfig *config) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  *config = ctx->shared;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version) {
  ENTER();
  if (ctx ? !live_context(ctx, true) : !current_context()) return CUDA_ERROR_INVALID_CONTEXT;
  *version = 3020;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetFlags(unsigned int *flags) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  *flags = ctx->flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest) {
  ENTER();
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (!live_context(peer, true) || flags) return CUDA_ERROR_INVALID_VALUE;
  if (peer->device == ctx->device) return CUDA_ERROR_INVALID_DEVICE;
  if (ctx->peer) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  ctx->peer = true;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peer) {
  ENTER();
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (!live_context(peer, true)) return CUDA_ERROR_INVALID_VALUE;
  if (!ctx->peer) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  ctx->peer = false;
  return CUDA_SUCCESS;
}
