/* The stand-in libcuda.so.1: what its files share. See core.c for what it offers tests. */
#ifndef FAKE_DRIVER_H
#define FAKE_DRIVER_H

#define _GNU_SOURCE
#define CUDA_ENABLE_DEPRECATED
#include <cuda.h>
#include <cudaProfiler.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* The first statement of every exported call: logs it (FAKE_CUDA_TRACE) and returns the failure
 * FAKE_CUDA_FAIL asks for, if any. */
#define ENTER()                                                                                    \
  do {                                                                                             \
    CUresult injected_ = fake_enter(__func__);                                                     \
    if (injected_ != CUDA_SUCCESS) return injected_;                                               \
  } while (0)
CUresult fake_enter(const char *symbol);

void log_line(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Where the real driver crashes, or goes on with memory it freed: logs and prints why, then ends
 * the process (SIGABRT), so that a test sees that cudadrv let such a call through. */
void fake_crash(const char *why) __attribute__((noreturn));
int logging(void);

/* Objects the driver hands out, registered so that a handle is checked before use (a stale or
 * foreign one is CUDA_ERROR_INVALID_HANDLE and counted as "stale") and counted while live. */
typedef enum {
  OBJ_CONTEXT,
  OBJ_PRIMARY,
  OBJ_DEVICE_MEMORY,
  OBJ_HOST_MEMORY,
  OBJ_REGISTERED,
  OBJ_MANAGED,
  OBJ_IPC_MEMORY,
  OBJ_GLOBAL,
  OBJ_POOL_MEMORY,
  OBJ_MAPPED,
  OBJ_GRAPH_MEMORY,
  OBJ_STREAM,
  OBJ_EVENT,
  OBJ_MODULE,
  OBJ_ARRAY,
  OBJ_TEXTURE,
  OBJ_GRAPH,
  OBJ_GRAPH_EXEC,
  OBJ_FUNCTION,
  OBJ_REFERENCE,
  OBJ_LIBRARY,
  OBJ_KERNEL,
  OBJ_LINK,
  OBJ_USER_OBJECT,
  OBJ_POOL,
  OBJ_KINDS
} obj_kind;
/* The names of the live counts, in obj_kind's order; then "stale". */
#define FAKE_COUNT_NAMES                                                                           \
  "contexts", "primary", "device_memory", "host_memory", "registered", "managed", "ipc_memory",    \
      "globals", "pool_memory", "mapped", "graph_memory", "streams", "events", "modules",          \
      "arrays", "textures", "graphs", "graph_execs", "functions", "references", "libraries",       \
      "kernels", "links", "user_objects", "pools"

typedef struct {
  uintptr_t key;
  obj_kind kind;
  size_t size;     /* memory: its bytes */
  CUcontext owner; /* the context it was made in (NULL for contexts) */
} obj;

/* Registers key in the current context; CUDA_ERROR_OUT_OF_MEMORY when the table is full. */
CUresult obj_add(uintptr_t key, obj_kind kind, size_t size);
/* obj_add in owner (dropped with it; NULL: with none). */
CUresult obj_add_in(uintptr_t key, obj_kind kind, size_t size, CUcontext owner);
/* A module parsed from the stand-in's text format (module.c), loaded in the current context. */
CUresult fake_module_parse(CUmodule *out, const char *text);
int fake_module_id(CUmodule module);
void fake_module_unload(CUmodule module);
CUresult fake_module_function(CUfunction *fn, CUmodule module, const char *name);
CUresult fake_module_global(CUdeviceptr *ptr, size_t *bytes, CUmodule module, const char *name);
/* The JIT log buffers among options (NULL where absent). */
void fake_jit_logs(unsigned int n, const CUjit_option *options, void **values, char **info,
                   char **error);

/* Whether key is a live object of that kind. */
bool obj_is(uintptr_t key, obj_kind kind);
/* The context key was made in (NULL for none, or where key is unknown). */
CUcontext obj_owner(uintptr_t key);
/* Whether key is a live object of that kind (a stale or foreign key is counted as stale). */
bool obj_live(uintptr_t key, obj_kind kind);
/* Unregisters; false (counted as stale) where there was none of that kind. Frees nothing. */
bool obj_remove(uintptr_t key, obj_kind kind);
/* Gives every object of kind made in ctx to no context, calling each on it (the lock held). */
void obj_disown(CUcontext ctx, obj_kind kind, void (*each)(uintptr_t key));
/* Unregisters and frees every object made in ctx, as the driver does when a context goes. */
void obj_drop_context(CUcontext ctx);
/* What from owns is to's from now on. */
void obj_rehome(CUcontext from, CUcontext to);
/* The memory object (any memory kind) holding [address, address + bytes): true and *out. */
bool obj_memory(uintptr_t address, size_t bytes, obj *out);
void count_stale(const char *what);

/* Deferred copies (deferred.c, FAKE_CUDA_DEFER): whether a copy between to and from waits in the
 * queue; queueing one (false where memory runs out: then copy now); the queue's position; whether
 * the copies up to a position have run; running them; whether a call leaves them queued. */
bool fake_defer_wanted(const void *to, const void *from, CUstream stream);
bool fake_defer(unsigned char *to, const unsigned char *from, size_t width, size_t rows,
                size_t depth, size_t to_row, size_t from_row, size_t to_slice, size_t from_slice);
uint64_t fake_defer_mark(void);
bool fake_defer_done(uint64_t mark);
void fake_defer_run(uint64_t mark);
bool fake_defer_holds(const char *symbol);
/* Queues a stream callback behind the queued copies; false where none is queued (call it now). */
bool fake_defer_callback(CUstream stream, CUstreamCallback callback, void *data);

/* HOLD(&lock): lock is held from here to the end of the enclosing block, returns included. */
static inline void fake_unlock(pthread_mutex_t **held) { pthread_mutex_unlock(*held); }
#define HOLD(lock)                                                                                 \
  pthread_mutex_t *held_ __attribute__((cleanup(fake_unlock))) = (lock);                           \
  pthread_mutex_lock(held_)

/* A new managed allocation at ptr (managed.c forgets the advice of one freed there). */
void fake_managed_made(CUdeviceptr ptr);

/* The current context of the calling thread, or NULL. */
CUcontext current_context(void);
bool live_context(CUcontext ctx, bool report);
/* A number telling ctx from a context made later at its address while ctx lives; 0 once gone. */
unsigned long fake_context_serial(CUcontext ctx);
static inline CUresult in_context(void) {
  return current_context() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
/* Checks that [ptr, ptr + bytes) is memory the driver handed out (device memory is host memory
 * here, so copies move real bytes). */
CUresult device_range(CUdeviceptr ptr, size_t bytes);

/* The work of the calls of those names, for graph launches: a 2D memset of elements of width
 * bytes, a 3D copy, and a kernel launch (attrs as cuLaunchKernelEx logs them, or NULL). */
CUresult fake_memset_2d(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width,
                        size_t count, size_t rows, CUstream stream);
CUresult fake_copy_3d(const CUDA_MEMCPY3D *c, CUstream stream);
/* The bytes of an element of array (array.c), or 0 where it is no live array. */
size_t fake_array_element(CUarray array);
CUresult fake_event_record(CUevent event, CUstream stream);
/* A new stream of the current context. */
CUresult fake_stream_new(CUstream *stream, unsigned int flags, int priority);
/* An event a launch attribute records (programmatic, completion): made without timing, and not
 * for IPC, as the driver asks. */
CUresult fake_event_record_by_launch(CUevent event, CUstream stream);
/* A number for the event, the same for its life: the order events were made in this process. */
int fake_event_id(CUevent event);
CUcontext fake_event_context(CUevent event);
/* Aborts where driver 580 crashes: a wait by waiter's stream or green context for event. */
void fake_event_wait_check(CUevent event, CUcontext waiter);
CUresult fake_launch(CUfunction f, const CUlaunchConfig *c, void **params, void **extra,
                     const char *attrs);

/* User objects (userobj.c): take count more references of object (false where it is not a live
 * one), or drop count, the last running its destructor. */
bool fake_user_object_take(CUuserObject object, unsigned int count);
void fake_user_object_drop(CUuserObject object, unsigned int count);
/* The device of the current context (0 with none), and whether d is one of the stand-in's
 * devices (context.c). */
CUdevice fake_current_device(void);
bool fake_is_device(CUdevice d);
/* Graph memory (graphmem.c): the bytes of a graph's allocation node, shared by the node's copies
 * (held and dropped), live in the object table from the time a launch allocates them to the time
 * a free node, cuMemFree or cuMemFreeAsync frees them. */
typedef struct fake_graph_memory fake_graph_memory;
fake_graph_memory *fake_graph_memory_new(size_t bytes);
void fake_graph_memory_hold(fake_graph_memory *m);
void fake_graph_memory_drop(fake_graph_memory *m);
CUdeviceptr fake_graph_memory_address(const fake_graph_memory *m);
size_t fake_graph_memory_size(const fake_graph_memory *m);
bool fake_graph_memory_live(const fake_graph_memory *m);
/* Allocates m at a launch: an error where its bytes are still allocated. */
CUresult fake_graph_memory_alloc(fake_graph_memory *m);
/* Frees the graph memory at ptr: an error where there is none allocated there. */
CUresult fake_graph_memory_free(CUdeviceptr ptr);
/* Whether bytes at ptr are inside an allocation node's (allocated or not). */
bool fake_graph_memory_holds(CUdeviceptr ptr, size_t bytes);
/* Whether ptr is where an allocation node's bytes are (allocated or not). */
bool fake_graph_memory_at(CUdeviceptr ptr);
/* A new empty graph (graph.c). */
CUresult fake_graph_new(CUgraph *graph);
/* Whether each of the count nodes is a node of graph. */
bool fake_graph_has(CUgraph graph, const CUgraphNode *nodes, size_t count);
/* A capture into graph failed, or its stream went mid-capture: driver 580 frees the graph then,
 * and the graph a conditional node's body belongs to with it (a later call on either reads freed
 * memory there); here they go, so that a later call meets a stale handle. */
void fake_graph_lose(CUgraph graph);

/* Memory (memory.c): allocated as cuMemAlloc does, in the current context; freed as cuMemFree
 * does (device, managed, graph and pool memory); a linear copy, device sides checked. */
CUresult fake_allocate(CUdeviceptr *ptr, size_t bytes, obj_kind kind);
/* fake_allocate in owner's context rather than the current one (memory a stream's work makes). */
CUresult fake_allocate_in(CUdeviceptr *ptr, size_t bytes, obj_kind kind, CUcontext owner);
CUresult fake_release_device(CUdeviceptr ptr);
/* A linear copy on stream; async: one of page-locked memory may wait (FAKE_CUDA_DEFER). */
CUresult fake_copy(void *dst, bool dst_device, const void *src, bool src_device, size_t bytes,
                   CUstream stream, bool async);
/* Pools (pools.c): frees pool memory at ptr; the made pool whose bytes hold ptr, or NULL. */
CUresult fake_pool_free(CUdeviceptr ptr);
CUmemoryPool fake_pool_of(CUdeviceptr ptr);

/* A stream argument: the default stream, a pseudo-stream, or a live stream (else counted stale). */
bool stream_ok(CUstream stream);
/* The context a stream's work runs in: its own, or the current one's for (pseudo) default streams.
 */
CUcontext fake_stream_context(CUstream stream);
/* Whether a stream is capturing. */
bool fake_stream_capturing(CUstream stream);
/* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED where stream's capture was broken, else CUDA_SUCCESS. */
CUresult fake_capture_error(CUstream stream);
/* Breaks every capture under way, as a synchronization beside them does; whether there was one. */
bool fake_break_captures(void);
/* Whether a stream is capturing into graph (cuStreamBeginCaptureToGraph). */
bool fake_capturing_into(CUgraph graph);
/* Forgets a stream about to be freed (with its context): its capture ends. */
void fake_stream_forget(CUstream stream);
/* cuGreenCtxDestroy leaves the green context's streams (as its documentation says), detached:
 * registered and counted, refused as stale, and cuStreamDestroy then fails (driver 580). */
void fake_streams_detach(CUcontext ctx);
/* Driver 580 destroys a pool imported while ctx was current with ctx (a cuMemPoolDestroy of it
 * after is a stale handle); a green context's go to heir, its device's primary context. */
void fake_pools_context_gone(CUcontext ctx, CUcontext heir);
/* The number a stream is logged by: 0 for the default stream. */
int stream_id(CUstream stream);

#endif
