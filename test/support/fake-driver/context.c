/* The stand-in's devices and contexts: FAKE_CUDA_DEVICES devices (1 or 2, default 1), contexts
 * made and destroyed for real (with what was made in them), primary contexts retained by count,
 * a stack of current contexts per thread. */
#include "fake.h"

#include <pthread.h>
#include <unistd.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CUctx_st {
  CUdevice device;
  unsigned int flags;
  size_t limits[CU_LIMIT_MAX];
  CUfunc_cache cache;
  CUsharedconfig shared;
  bool peer;  /* access to the other device's memory enabled */
  bool green; /* a green context's: on SMs first_sm to first_sm + sms - 1 */
  unsigned int first_sm, sms;
  unsigned long serial; /* tells a context from one made later at its address */
};

static unsigned long serials;

static unsigned long new_serial(void) { return __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED); }

unsigned long fake_context_serial(CUcontext ctx) {
  return ctx && live_context(ctx, false) ? ctx->serial : 0;
}

#define MAX_DEVICES 2
static struct CUctx_st primary[MAX_DEVICES];
/* retained and released from any thread (cudadrv's reaper destroys green contexts, which hold
 * one, while the main thread makes the next): changed under primary_lock, read atomically */
static int primary_count[MAX_DEVICES];
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local CUcontext stack[4096]; /* deeper than cudadrv's tests and fuzzer push */
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
  bool live = is_primary(ctx) ? __atomic_load_n(&primary_count[ctx - primary], __ATOMIC_ACQUIRE) > 0
                              : obj_is((uintptr_t)ctx, OBJ_CONTEXT);
  if (!live && report) count_stale("context");
  return live;
}

/* The calling thread's current context, or NULL where it has none or it is a primary context
 * released since (driver 580's calls fail there: "context is destroyed"). A made or green context
 * destroyed since, current again (left below others on the stack, then popped to), crashes: on
 * driver 580 calls into it fail, and the process aborts later on a corrupted heap. */
CUcontext current_context(void) {
  CUcontext ctx = depth ? stack[depth - 1] : NULL;
  if (!ctx || live_context(ctx, false)) return ctx;
  if (!is_primary(ctx)) fake_crash("a call in a destroyed context, current again");
  return NULL;
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
  made->serial = new_serial();
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
  if (is_primary(ctx) || (live_context(ctx, false) && ctx->green))
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!obj_remove((uintptr_t)ctx, OBJ_CONTEXT)) return CUDA_ERROR_INVALID_CONTEXT;
  fake_pools_context_gone(ctx, NULL);
  obj_drop_context(ctx);
  if (depth && stack[depth - 1] == ctx) depth--;
  free(__atomic_exchange_n(&recycled, ctx, __ATOMIC_ACQ_REL));
  return CUDA_SUCCESS;
}
/* A retain and a release of dev's primary context, which a green context makes too. */
static CUresult primary_retain(CUdevice dev) {
  CUresult result = CUDA_SUCCESS;
  pthread_mutex_lock(&primary_lock);
  if (primary_count[dev] == 0 &&
      (result = obj_add((uintptr_t)&primary[dev], OBJ_PRIMARY, 0)) == CUDA_SUCCESS) {
    primary[dev].device = dev;
    primary[dev].serial = new_serial();
  }
  if (result == CUDA_SUCCESS) __atomic_add_fetch(&primary_count[dev], 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&primary_lock);
  return result;
}
/* false where dev's primary context is not retained */
static bool primary_release(CUdevice dev) {
  pthread_mutex_lock(&primary_lock);
  int left = primary_count[dev] ? __atomic_sub_fetch(&primary_count[dev], 1, __ATOMIC_RELEASE) : -1;
  if (left == 0) {
    obj_remove((uintptr_t)&primary[dev], OBJ_PRIMARY);
    fake_pools_context_gone(&primary[dev], NULL);
    obj_drop_context(&primary[dev]);
    unsigned int flags = primary[dev].flags;
    memset(&primary[dev], 0, sizeof primary[dev]);
    primary[dev].flags = flags;
  }
  pthread_mutex_unlock(&primary_lock);
  return left >= 0;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  CUresult result = primary_retain(dev);
  if (result == CUDA_SUCCESS) *ctx = &primary[dev];
  return result;
}
EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  return primary_release(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  HOLD(&primary_lock);
  *flags = primary[dev].flags;
  *active = primary_count[dev] > 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (flags & ~0x1fu) return CUDA_ERROR_INVALID_VALUE;
  HOLD(&primary_lock);
  primary[dev].flags = flags;
  return CUDA_SUCCESS;
}
/* The primary context's objects go, and its flags; those who retained it still hold it. */
EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev) {
  ENTER();
  if (!fake_is_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  HOLD(&primary_lock);
  fake_pools_context_gone(&primary[dev], NULL);
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
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  /* as driver 580: a synchronization beside a capture, on any thread, breaks the capture, one
   * begun while it waits too */
  if (fake_break_captures()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  const char *ms = getenv("FAKE_CUDA_SYNC_MS"); /* work that takes this long to finish */
  if (ms) usleep((useconds_t)atoi(ms) * 1000);
  return fake_break_captures() ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
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

/* ---- green contexts: a device of 132 SMs, split in groups of at least 8, 2 aligned ---- */

enum { SMS = 132, MIN_PARTITION = 8, ALIGNMENT = 2 };
static const char RESOURCE_MAGIC[8] = "FAKESMRS";

/* What the stand-in keeps in a resource's padding: which SMs of which device it is. */
typedef struct {
  char magic[8];
  int device;
  unsigned int first;
} resource_place;

static void make_resource(CUdevResource *r, int device, unsigned int first, unsigned int count) {
  memset(r, 0, sizeof *r);
  r->type = CU_DEV_RESOURCE_TYPE_SM;
  resource_place place = {{0}, device, first};
  memcpy(place.magic, RESOURCE_MAGIC, sizeof place.magic);
  memcpy(r->_internal_padding, &place, sizeof place);
  r->sm.smCount = count;
  r->sm.minSmPartitionSize = MIN_PARTITION;
  r->sm.smCoscheduledAlignment = ALIGNMENT;
}
/* The place of a resource the stand-in made, or false. */
static bool place_of(const CUdevResource *r, resource_place *place) {
  if (!r || r->type != CU_DEV_RESOURCE_TYPE_SM) return false;
  memcpy(place, r->_internal_padding, sizeof *place);
  return memcmp(place->magic, RESOURCE_MAGIC, sizeof place->magic) == 0 &&
         fake_is_device(place->device) && place->first + r->sm.smCount <= SMS;
}

EXPORT CUresult cuDeviceGetDevResource(CUdevice device, CUdevResource *r, CUdevResourceType type) {
  ENTER();
  if (!fake_is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
  if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  make_resource(r, device, 0, SMS);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDevSmResourceSplitByCount(CUdevResource *result, unsigned int *groups,
                                            const CUdevResource *input, CUdevResource *remaining,
                                            unsigned int flags, unsigned int min_count) {
  ENTER();
  resource_place place;
  if (!groups || !place_of(input, &place) || flags)
    return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  /* 64 bits: a min_count near 2^32 rounds up past 32 (the fuzzer's SIGFPE, a division by 0) */
  unsigned long long wanted = min_count < MIN_PARTITION ? MIN_PARTITION : min_count;
  wanted = (wanted + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
  unsigned int fit = wanted > input->sm.smCount ? 0 : input->sm.smCount / (unsigned int)wanted;
  unsigned int size = wanted > UINT_MAX ? UINT_MAX : (unsigned int)wanted;
  unsigned int made = result ? (*groups < fit ? *groups : fit) : fit;
  for (unsigned int i = 0; result && i < made; i++)
    make_resource(&result[i], place.device, place.first + i * size, size);
  if (remaining)
    make_resource(remaining, place.device, place.first + made * size,
                  input->sm.smCount - made * size);
  *groups = made;
  log_line("sm split %u of %u from %u: %u groups", size, input->sm.smCount, place.first, made);
  return CUDA_SUCCESS;
}

struct CUdevResourceDesc_st {
  int device;
  unsigned int first, sms;
};
EXPORT CUresult cuDevResourceGenerateDesc(CUdevResourceDesc *desc, CUdevResource *resources,
                                          unsigned int count) {
  ENTER();
  static struct CUdevResourceDesc_st descs[64];
  static unsigned int next;
  if (!desc || !resources || !count) return CUDA_ERROR_INVALID_VALUE;
  resource_place first, place;
  if (!place_of(&resources[0], &first)) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  unsigned int sms = 0;
  for (unsigned int i = 0; i < count; i++) { /* contiguous groups of one device, as split made */
    if (!place_of(&resources[i], &place) || place.device != first.device ||
        place.first != first.first + sms)
      return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    sms += resources[i].sm.smCount;
  }
  if (!sms) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  struct CUdevResourceDesc_st *d = &descs[__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % 64];
  *d = (struct CUdevResourceDesc_st){first.device, first.first, sms};
  *desc = d;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGreenCtxCreate(CUgreenCtx *green, CUdevResourceDesc desc, CUdevice device,
                                 unsigned int flags) {
  ENTER();
  if (!green || !desc || flags != CU_GREEN_CTX_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
  if (!fake_is_device(device) || desc->device != device) return CUDA_ERROR_INVALID_DEVICE;
  struct CUctx_st *made = calloc(1, sizeof *made);
  if (!made) return CUDA_ERROR_OUT_OF_MEMORY;
  made->device = device;
  made->green = true;
  made->first_sm = desc->first;
  made->sms = desc->sms;
  made->serial = new_serial();
  CUresult result = obj_add((uintptr_t)made, OBJ_CONTEXT, 0);
  if (result == CUDA_SUCCESS && (result = primary_retain(device)) != CUDA_SUCCESS)
    obj_remove((uintptr_t)made, OBJ_CONTEXT);
  if (result != CUDA_SUCCESS) return free(made), result;
  *green = (CUgreenCtx)made;
  log_line("green create sms=%u+%u", desc->first, desc->sms);
  return CUDA_SUCCESS;
}
/* A green context the stand-in made and has not destroyed, as its context; NULL otherwise. */
static CUcontext green_context(CUgreenCtx green) {
  CUcontext ctx = (CUcontext)green;
  return green && live_context(ctx, true) && ctx->green ? ctx : NULL;
}
EXPORT CUresult cuGreenCtxDestroy(CUgreenCtx green) {
  ENTER();
  CUcontext ctx = green_context(green);
  if (!ctx || !obj_remove((uintptr_t)ctx, OBJ_CONTEXT)) return CUDA_ERROR_INVALID_HANDLE;
  /* as driver 580: its streams are left to the caller, refused from now on; the rest of what was
   * made in it is its device's primary context's, which it retained */
  fake_streams_detach(ctx);
  obj_rehome(ctx, &primary[ctx->device]);
  fake_pools_context_gone(ctx, &primary[ctx->device]);
  primary_release(ctx->device);
  for (int i = depth - 1; i >= 0; i--) /* the driver takes it off the caller's stack */
    if (stack[i] == ctx) memmove(&stack[i], &stack[i + 1], (size_t)(--depth - i) * sizeof *stack);
  log_line("green destroy sms=%u+%u", ctx->first_sm, ctx->sms);
  free(ctx);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxFromGreenCtx(CUcontext *ctx, CUgreenCtx green) {
  ENTER();
  if (!ctx || !(*ctx = green_context(green))) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGreenCtxGetDevResource(CUgreenCtx green, CUdevResource *r,
                                         CUdevResourceType type) {
  ENTER();
  CUcontext ctx = green_context(green);
  if (!ctx) return CUDA_ERROR_INVALID_HANDLE;
  if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  make_resource(r, ctx->device, ctx->first_sm, ctx->sms);
  return CUDA_SUCCESS;
}
static CUresult green_event(CUgreenCtx green, CUevent event, const char *what) {
  CUcontext ctx = green_context(green);
  if (!ctx) return CUDA_ERROR_INVALID_HANDLE;
  bool wait = strcmp(what, "wait") == 0;
  /* waits take events of any context; records, only the green context's own (as driver 580) */
  CUresult result = wait ? (obj_live((uintptr_t)event, OBJ_EVENT)
                                ? (fake_event_wait_check(event, ctx), CUDA_SUCCESS)
                                : CUDA_ERROR_INVALID_HANDLE)
                    : obj_live((uintptr_t)event, OBJ_EVENT) && fake_event_context(event) != ctx
                        ? CUDA_ERROR_INVALID_HANDLE
                        : fake_event_record(event, NULL);
  if (result == CUDA_SUCCESS)
    log_line("green %s sms=%u+%u event%d", what, ctx->first_sm, ctx->sms, fake_event_id(event));
  return result;
}
EXPORT CUresult cuGreenCtxRecordEvent(CUgreenCtx green, CUevent event) {
  ENTER();
  return green_event(green, event, "record");
}
EXPORT CUresult cuGreenCtxWaitEvent(CUgreenCtx green, CUevent event) {
  ENTER();
  return green_event(green, event, "wait");
}
EXPORT CUresult cuGreenCtxStreamCreate(CUstream *stream, CUgreenCtx green, unsigned int flags,
                                       int priority) {
  ENTER();
  CUcontext ctx = green_context(green);
  if (!ctx) return CUDA_ERROR_INVALID_HANDLE;
  if (flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
  if (depth == (int)(sizeof stack / sizeof *stack)) return CUDA_ERROR_OUT_OF_MEMORY;
  stack[depth++] = ctx; /* made in the green context, which stays as current as it was */
  CUresult result = fake_stream_new(stream, flags, priority);
  depth--;
  if (result == CUDA_SUCCESS) log_line("green stream sms=%u+%u", ctx->first_sm, ctx->sms);
  return result;
}
