/* What the memory families share (allocations.c, reaper.c, device_memory.c, host_memory.c): the
 * deferred release of memory that garbage collection dropped, the reclaiming of it when an
 * allocation runs out of memory, and host-buffer arguments.
 *
 * Finalizers must not stall the main thread, yet cuMemFree, cuMemFreeHost and
 * cuMemHostUnregister may wait for the device. So a finalizer hands the release to one
 * process-wide thread (the reaper) that makes the owning context current, waits for it where the
 * free itself does not, and frees. While the environment is being torn down, releases happen at
 * once on the calling thread instead, so that nothing is left running in the driver at exit.
 *
 * Node runs Node-API finalizers after the collection that found the objects dead (from a
 * setImmediate), so a synchronous "collect and retry" cannot wait for them. Every allocation
 * therefore keeps a weak reference to its JS owner: after a full collection, reclaiming walks the
 * environment's live allocations and releases those whose owner the collection cleared. */
#ifndef CUDADRV_MEMORY_H
#define CUDADRV_MEMORY_H

#include "../driver/driver.h"

typedef enum release_op {
  RELEASE_MEM_FREE,         /* cuMemFree: cuMemAlloc'd, pitched and managed memory */
  RELEASE_MEM_FREE_ORDERED, /* stream-ordered (pool) memory: cuMemFree */
  RELEASE_IPC_CLOSE,        /* cuIpcCloseMemHandle */
  RELEASE_HOST_FREE,        /* cuMemFreeHost */
  RELEASE_HOST_UNREGISTER,  /* cuMemHostUnregister */
  RELEASE_ALIGNED_FREE,     /* free() of aligned host memory: no driver, no context */
} release_op;

typedef struct memory_state memory_state;

/* An allocation known to the reclaimer: embedded in the allocation's struct. */
typedef struct tracked tracked;
typedef void (*reclaim_fn)(napi_env env, tracked *node);
struct tracked {
  tracked *prev, *next;
  memory_state *state; /* NULL while not tracked */
  napi_ref owner;      /* weak: cleared by the collection that finds the owner dead */
  reclaim_fn reclaim;  /* releases the memory of a dead owner, and untracks */
  size_t bytes;        /* reported to V8 as external memory (in steps of some MiB) */
  /* For host memory that goes with its context (pinned, managed): makes it unreachable from JS
   * if ctx is its context, which is being detached. NULL for the others. */
  void (*context_gone)(napi_env env, tracked *node, ctx_rec *ctx);
};
/* Links node into the environment's list, its owner being the weak reference owner (taken over). */
void memory_link(napi_env env, memory_state *state, tracked *node, napi_ref owner, size_t bytes,
                 reclaim_fn reclaim);
/* Unlinks node (linked); leaves its owner reference alone. */
void memory_unlink(napi_env env, tracked *node);
/* Starts tracking node for owner; false after throwing. */
bool memory_track(napi_env env, tracked *node, napi_value owner, size_t bytes, reclaim_fn reclaim);
/* Stops tracking (idempotent) and takes the bytes back from V8's count. */
void memory_untrack(napi_env env, tracked *node);

/* Releases now, on this thread, in ctx (successful when the context is gone: so is the memory). */
CUresult release_now(release_op op, uint64_t address, ctx_rec *ctx);
/* For a finalizer or a reclaim of a tracked allocation: on the reaper thread, or at once while the
 * environment is torn down. Takes over nothing (ctx is retained as needed). */
void release_later(const tracked *node, release_op op, uint64_t address, ctx_rec *ctx);
/* Hands the release to the reaper thread; false (nothing taken) where it cannot. */
bool reaper_enqueue(release_op op, uint64_t address, ctx_rec *ctx);
/* Waits until the reaper has done everything handed to it. */
void reaper_drain(void);
/* The first tracked allocation that match accepts, or NULL. */
tracked *memory_find(napi_env env, bool (*match)(const tracked *node, const void *arg),
                     const void *arg);
/* An ArrayBuffer over size bytes at host, which must lie within one host allocation of cudadrv's
 * (pinned, managed, registered): it keeps that allocation alive, and the allocation detaches it
 * when freed. NULL after throwing (a LogicError where no allocation holds the bytes); null where
 * the runtime refuses external ArrayBuffers. */
napi_value host_view(napi_env env, void *host, size_t size);
/* ctx is being detached: the driver frees the host memory made in it, so every tracked
 * allocation of it whose context_gone is set is made unreachable from JS now. */
void memory_context_detached(napi_env env, ctx_rec *ctx);
/* Releases the memory of every tracked allocation whose owner a collection found dead, waits for
 * the reaper, and returns the bytes released. */
size_t memory_reclaim(napi_env env);

/* The table of device allocations, whose ids name them to lib/: the slot plus SLOT_COUNT times
 * the slot's generation, so that a stale or forged id finds nothing. */
/* Puts node in a vacant slot (its index in *index); false when the table cannot grow. */
bool memory_slot_take(memory_state *state, tracked *node, uint32_t *index);
void memory_slot_drop(memory_state *state, uint32_t index);
/* The id of the allocation in slot index. */
double memory_slot_id(const memory_state *state, uint32_t index);
/* The allocation that id names, or NULL. */
tracked *memory_slot_find(napi_env env, double id);

/* The driver's memory pools (mempool.c), which memAllocAsync takes. */
typedef struct pool_share pool_share;
typedef struct pool_h {
  handle_base base;
  CUmemoryPool handle;
  bool owned;        /* made or imported through this object: its destroy() may let it go */
  pool_share *share; /* a pool made or imported here (NULL: a device's own, never destroyed) */
} pool_h;
extern const handle_kind POOL_KIND;

/* CUDA arrays are taken by copies (memory.c) and by textures and surfaces (module.c, texobj.c). */
typedef struct array_h {
  handle_base base;
  CUarray handle;
  ctx_rec *ctx;
  node_use *use; /* once a graph's copy node uses it: the CUarray outlives the CudaArray */
} array_h;
extern const handle_kind ARRAY_KIND;
/* The bytes of one channel of an element of format: the plain formats' (8, 16 and 32-bit
 * integers, half, float), 0 for the others (array.c). */
size_t format_channel_bytes(CUarray_format format);
/* The use of array that a graph's copy node pins (USE_PINS), free() refused while it does;
 * NULL when out of memory (array.c). */
node_use *array_use_of(array_h *array);
/* A copy to or from the CudaArray v is enqueued on stream: where a capture records it, the array
 * is pinned for the graph (capture_pin); false after throwing (array.c). */
bool capture_pin_array(napi_env env, CUstream stream, napi_value v);
/* A copy of host memory (bytes bytes at data) is enqueued on stream: where a capture records it,
 * the page-locked or managed allocation of cudadrv's that holds it is pinned for the graph
 * (capture_pin); other memory is a LogicError. false after throwing (graph_copy.c). */
bool capture_pin_host(napi_env env, CUstream stream, void *data, size_t bytes);
/* Both for the sides of a 2D or 3D copy, src and dst being what read_copy_3d took: a CudaArray,
 * a host buffer, or undefined (device memory). */
bool capture_pin_sides(napi_env env, CUstream stream, CUmemorytype src_type, napi_value src,
                       CUmemorytype dst_type, napi_value dst);

/* Each family registers its functions into exports; returns false after throwing. */
bool allocations_init(napi_env env, napi_value exports);
bool device_memory_init(napi_env env, napi_value exports);
bool copies_init(napi_env env, napi_value exports);
bool graph_copy_init(napi_env env, napi_value exports);
/* The 2D or 3D copy that the BigUint64Array fields and srcHost, dstHost (host buffers, CudaArrays
 * or undefined) describe, each side checked, in *p (planar: a 2D copy, one slice at z 0); false
 * after throwing (copies.c). */
bool read_copy_3d(napi_env env, napi_value fields, napi_value src_host, napi_value dst_host,
                  bool planar, CUDA_MEMCPY3D *p);
/* The 2D copy of a planar 3D one (its Z, Depth and heights unused; copies.c). */
CUDA_MEMCPY2D planar_copy(const CUDA_MEMCPY3D *c);
bool mempool_init(napi_env env, napi_value exports);
bool managed_init(napi_env env, napi_value exports);
bool virtual_memory_init(napi_env env, napi_value exports);
/* A CUmemLocation from lib/'s (type, id), and a file descriptor argument (0 or more): false after
 * throwing (mempool.c). */
bool arg_location(napi_env env, napi_value type, napi_value id, CUmemLocation *location);
bool arg_fd(napi_env env, napi_value v, int *fd);
/* Wraps fd, a descriptor an export just made, in obj (a ShareableHandle), which closes it; on
 * failure closes it: false after throwing (mempool.c). */
bool shareable_handle_wrap(napi_env env, napi_value obj, int fd);
bool batch_copies_init(napi_env env, napi_value exports);
bool staging_init(napi_env env, napi_value exports);
/* A copy between device memory and pageable host memory through cudadrv's staging buffers
 * (staging.c), on stream where async (NULL: the legacy stream, as for a synchronous copy): 1 when
 * done (an async copy to the device: once the host memory has been read; from the device: when
 * the bytes are there), -1 after throwing, 0 where staging does not apply (off, too few bytes,
 * host memory CUDA knows, a capture, a stream of another context than the current one, the
 * buffers busy or not to be had, rows wider than a buffer): the caller takes the driver's path.
 * staged_copy_3d takes a 3D copy (planar: a 2D one) with one side host memory, checked by
 * read_copy_3d, and the other device memory or an array. */
int staged_copy(napi_env env, CUdeviceptr device, void *host, size_t bytes, bool to_device,
                bool async, const stream_h *stream);
int staged_copy_3d(napi_env env, const CUDA_MEMCPY3D *copy, bool planar, bool async,
                   const stream_h *stream);
bool pointer_attributes_init(napi_env env, napi_value exports);
bool host_memory_init(napi_env env, napi_value exports);
bool array_init(napi_env env, napi_value exports);
bool texobj_init(napi_env env, napi_value exports);

/* Whether [ptr, ptr + bytes) lies within one allocation CUDA knows; throws a RangeError naming
 * what where not (pointer_attributes.c). Where the driver infers a pointer's kind (batch copies,
 * unified copy sides), it reads and writes an address it does not know as pageable host memory:
 * an address that is not, or no longer, memory of CUDA's must never reach it. */
bool known_memory(napi_env env, CUdeviceptr ptr, size_t bytes, const char *what);
/* The allocation CUDA knows at ptr: [*start, *start + *size), a *size of 0 where it knows none
 * (cuPointerGetAttributes's result). */
CUresult memory_range(CUdeviceptr ptr, CUdeviceptr *start, size_t *size);
/* After an async copy was enqueued on s: keeps side, the copy's host array (type HOST, or UNIFIED
 * given as an array) or CudaArray (type ARRAY), alive until s has passed the copy, where the
 * driver may still use it (page-locked, registered and managed memory: a pageable array was read
 * or filled before the driver returned). C decides, not lib/: an array collected under a copy
 * in flight would be written after it is freed. Where the driver cannot say, side is kept and
 * its error left in *query (the first only), for keep_query_ok to throw once every side is kept.
 * false after throwing. */
bool keep_copy_side(napi_env env, stream_h *s, CUmemorytype type, napi_value side, CUresult *query);
bool keep_query_ok(napi_env env, CUresult query);
/* keep_copy_side for both sides of one copy (a DEVICE side's value is not read); false after
 * throwing. */
bool keep_copy_sides(napi_env env, stream_h *s, CUmemorytype src_type, napi_value src,
                     CUmemorytype dst_type, napi_value dst);

#endif
