/* Shared by every file of the addon: Node-API status macros, the per-addon state, argument
 * readers, driver-error throwing and the type-tagged handles that wrap driver objects. */
#ifndef CUDADRV_H
#define CUDADRV_H

#include <node_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader.h"

/* ---- Node-API status ----
 * Every Node-API call's status is checked (test/napi-status.test.js finds one that is not):
 *   NAPI_CALL(env, call)       on failure throws and returns NULL from the caller (a napi_value
 *                              or a pointer);
 *   NAPI_CALL_BOOL(env, call)  the same, returning false;
 *   a status kept in a variable, where the caller releases what it took before napi_fail();
 *   NAPI_UNTHROWN(call)        where nothing can be thrown (finalizers, teardown, settling a
 *                              Promise, throwing itself): a failure is counted in stats(). */

/* Throws the error for a failed Node-API call: a TypeError where a value of the wrong type was
 * given, else the status and Node's message (unless an exception is pending). Returns NULL. */
napi_value napi_fail(napi_env env, napi_status status);
#define NAPI_RETURN_ON_FAILURE(env, call, failed)                                                  \
  do {                                                                                             \
    napi_status status_ = (call);                                                                  \
    if (status_ != napi_ok) {                                                                      \
      napi_fail(env, status_);                                                                     \
      return failed;                                                                               \
    }                                                                                              \
  } while (0)
#define NAPI_CALL(env, call) NAPI_RETURN_ON_FAILURE(env, call, NULL)
#define NAPI_CALL_BOOL(env, call) NAPI_RETURN_ON_FAILURE(env, call, false)
/* Counts a failed status that no caller can be told of (stats().nodeApiFailures). */
void napi_unthrown(napi_status status);
#define NAPI_UNTHROWN(call) napi_unthrown(call)

/* ---- errors (errors.c) ---- */

/* Throws the CudaError lib/ builds for a failed driver call (for CUDADRV_ERROR_MISSING, a
 * RuntimeError naming the call and the driver version it needs); returns NULL. */
napi_value throw_cu(napi_env env, CUresult result, const char *api);
/* The same error as a value, for rejecting a Promise. */
napi_value make_cu_error(napi_env env, CUresult result, const char *api);
/* Throws a LogicError (use after free, wrong state) with the given message; returns NULL. */
napi_value throw_logic(napi_env env, const char *message);
/* Throws the error for a failed malloc; returns NULL. */
napi_value throw_oom(napi_env env);
/* Throws TypeError / RangeError; return NULL. */
napi_value throw_type(napi_env env, const char *message);
napi_value throw_range(napi_env env, const char *message);
/* Throws a RuntimeError unless the driver is loaded and initialised: call before the first driver
 * call of any entry point that does not take an existing handle. */
bool driver_ready(napi_env env);
/* Throws a RuntimeError with the given message (a library that could not be loaded...); code is
 * a CUresult; returns NULL. */
napi_value throw_runtime(napi_env env, int code, const char *api, const char *message);

/* Calls the driver (DRV); throws and returns NULL from the caller on failure. */
#define CU_CALL(env, fn, ...)                                                                      \
  do {                                                                                             \
    CUresult cu_result_ = DRV(fn, __VA_ARGS__);                                                    \
    if (cu_result_ != CUDA_SUCCESS) return throw_cu(env, cu_result_, #fn);                         \
  } while (0)

/* ---- contexts every resource points at (context.c) ---- */

/* One per CUcontext that cudadrv holds. Resources keep it (refcounted) so that their finalizers
 * know whether the context is still alive and can free in it. */
typedef struct ctx_rec {
  CUcontext handle;
  CUdevice device; /* where a primary context is released; -1 for one only borrowed */
  atomic_int refs;
  atomic_bool destroyed;         /* destroyed or released: resources in it are gone with it */
  int owners;                    /* Contexts that made or retained it; the last one destroys */
  bool primary;                  /* retained primary context: released rather than destroyed */
  atomic_int pending;            /* waits in flight (a thread may be blocked in it) */
  atomic_bool destroy_requested; /* detached while waits were pending */
  atomic_flag destroy_claimed;   /* whoever sets it destroys the context */
  struct ctx_rec *next;          /* in the process-wide list of known contexts */
} ctx_rec;

ctx_rec *ctx_rec_retain(ctx_rec *rec);
void ctx_rec_release(ctx_rec *rec);
/* The record of the context current on this thread (a new reference), or NULL after throwing
 * a LogicError that says to make a context first. */
ctx_rec *ctx_rec_current(napi_env env);
/* A thread wait is blocked in the context: detach() leaves destroying it to the wait's end. */
void ctx_rec_wait_begin(ctx_rec *rec);
void ctx_rec_wait_end(ctx_rec *rec);
/* The record of a Context object of lib/ (borrowed: valid while that object is), or NULL after
 * throwing (TypeError for another object, LogicError once detached). */
ctx_rec *ctx_rec_of_context(napi_env env, napi_value context);
/* Makes rec's context current for a cleanup; returns false when it is gone. Pair with ctx_leave. */
bool ctx_enter(ctx_rec *rec);
void ctx_leave(void);

/* ---- handles (handles.c) ---- */

typedef struct handle_base handle_base;

typedef struct handle_kind {
  napi_type_tag tag;
  const char *name;  /* "Stream" */
  const char *freed; /* "Stream has been destroyed" ... */
  /* Kinds that hold one driver object (see handle_wrap_object): destroys it, once, with its
   * context current; and where the struct keeps its retained ctx_rec * (0: it has no context). */
  CUresult (*destroy)(handle_base *base);
  size_t ctx_offset;
  /* For kinds that live in a context found elsewhere (a module's kernels): that context. */
  ctx_rec *(*context)(const handle_base *base);
} handle_kind;

/* The first member of every wrapped struct. */
struct handle_base {
  const handle_kind *kind;
  bool freed;
};

/* Wraps obj around base (tagged with kind); finalize runs at garbage collection. */
bool handle_wrap(napi_env env, napi_value obj, handle_base *base, const handle_kind *kind,
                 napi_finalize finalize);
/* Wraps obj around base, a calloc'd struct holding one driver object of kind (kind->destroy), and
 * its context's reference where kind->ctx_offset says: both let go of by handle_release or at
 * garbage collection. On failure they are let go of at once and base freed: false after
 * throwing. */
bool handle_wrap_object(napi_env env, napi_value obj, handle_base *base, const handle_kind *kind);
/* Marks base freed and destroys its driver object in its context (silently nothing where the
 * context is gone): what free()/destroy() do before the garbage collector would. */
void handle_release(handle_base *base);
/* destroy(obj)/free(obj) for such kinds: now, once; a second call does nothing. */
napi_value handle_destroy_call(napi_env env, napi_callback_info info, const handle_kind *kind);
/* The struct wrapped in value, or NULL after throwing: TypeError for another kind of object,
 * LogicError once freed or once its context is gone (its driver handle is then stale). */
void *handle_get(napi_env env, napi_value value, const handle_kind *kind);
/* handle_get's check of a struct already in hand: false after throwing. */
bool handle_alive(napi_env env, handle_base *base);
/* Like handle_get, but returns freed handles too (for free()/destroy() being idempotent). */
void *handle_get_any(napi_env env, napi_value value, const handle_kind *kind);

/* Streams are taken by many families (copies, launches, waits). */
typedef struct stream_h {
  handle_base base;
  CUstream handle;
  ctx_rec *ctx;
} stream_h;
extern const handle_kind STREAM_KIND;

typedef struct event_h {
  handle_base base;
  CUevent handle;
  ctx_rec *ctx;
} event_h;
extern const handle_kind EVENT_KIND;

/* CUDA arrays are taken by copies (memory.c) and by textures and surfaces (module.c, texobj.c). */
typedef struct array_h {
  handle_base base;
  CUarray handle;
  ctx_rec *ctx;
} array_h;
extern const handle_kind ARRAY_KIND;

/* Finalizers report cleanups that failed here instead of printing (cuda.stats()). */
void stats_cleanup(CUresult result);

/* ---- arguments (args.c) ---- */

/* Reads exactly n arguments (missing ones are undefined). */
#define ARGS(env, info, n)                                                                         \
  size_t argc = (n);                                                                               \
  napi_value argv[(n) > 0 ? (n) : 1];                                                              \
  napi_value this_arg;                                                                             \
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, &this_arg, NULL));                       \
  (void)this_arg

bool arg_int32(napi_env env, napi_value v, const char *name, int32_t *out);
bool arg_uint32(napi_env env, napi_value v, const char *name, uint32_t *out);
/* A size: a non-negative safe integer number or bigint. */
bool arg_size(napi_env env, napi_value v, const char *name, size_t *out);
/* A device address: a bigint or non-negative safe integer number. */
bool arg_ptr(napi_env env, napi_value v, const char *name, CUdeviceptr *out);
/* A UTF-8 string into buf; false after throwing when it is not a string or too long. */
bool arg_string(napi_env env, napi_value v, const char *name, char *buf, size_t size);
/* A host buffer argument: a TypedArray or a DataView (lib/ turns ArrayBuffers into views); data
 * points at its first byte, length counts its bytes. A TypedArray of a kind this build does not
 * know the element size of is a TypeError, never a guess. The one reader of host buffers. */
bool arg_host(napi_env env, napi_value v, const char *name, void **data, size_t *length);
/* An IPC handle (event or memory): a host buffer of exactly CU_IPC_HANDLE_SIZE bytes, copied. */
bool arg_ipc_handle(napi_env env, napi_value v, char reserved[CU_IPC_HANDLE_SIZE]);
/* A stream argument: undefined/null is the default stream (NULL), else a Stream object. The
 * environment remembers the last Stream it was given, weakly: the same one again costs a reference
 * read and a comparison instead of a type-tag check and an unwrap. */
bool arg_stream(napi_env env, napi_value v, CUstream *out);
/* The same, as the Stream's struct (NULL: the default stream). */
bool arg_stream_handle(napi_env env, napi_value v, stream_h **out);
/* A boolean lib/ passes. */
bool arg_bool(napi_env env, napi_value v, bool *out);

napi_value make_int(napi_env env, int64_t v);
napi_value make_uint(napi_env env, uint64_t v);
napi_value make_ptr(napi_env env, CUdeviceptr v); /* bigint */
napi_value make_bool(napi_env env, bool v);
/* [a, b] as a JS array; NULL after throwing (or when a or b is NULL: a throw is pending). */
napi_value make_pair(napi_env env, napi_value a, napi_value b);
napi_value make_null(napi_env env);
/* obj[key] = value; false after throwing (value NULL: making it threw already). */
bool set_named(napi_env env, napi_value obj, const char *key, napi_value value);
napi_value make_undefined(napi_env env);
bool is_undefined(napi_env env, napi_value v);
/* typeof v; false after throwing. */
bool arg_type(napi_env env, napi_value v, napi_valuetype *type);

/* napi_create_external_arraybuffer, safe when it fails: Node then calls the finalizer (later, from
 * a SetImmediate) although no buffer was made, and the caller, which still owns data, must not
 * see it. Refused (napi_no_external_buffers_allowed, Electron's memory cage): *refused, nothing
 * thrown. Other failures throw (Node's own RangeError where size is past its limit). */
bool external_arraybuffer(napi_env env, void *data, size_t size, napi_finalize finalize, void *hint,
                          napi_value *result, bool *refused);

/* ---- asynchronous waits (wait.c) ---- */

typedef struct wait_op wait_op;
/* Settles on the main thread; status is the driver's result (CUDA_SUCCESS resolves with value). */
typedef void (*wait_done_fn)(napi_env env, wait_op *op, void *data);

/* A Promise already resolved with value (undefined when NULL). */
napi_value promise_resolved(napi_env env, napi_value value);
/* A Promise already rejected with the driver error for result. */
napi_value promise_rejected(napi_env env, CUresult result, const char *api);
/* A Promise resolved with value (the object waited on) when stream has passed everything
 * enqueued so far; keeps value alive until then. */
napi_value wait_stream(napi_env env, CUstream stream, napi_value value, const char *api);
/* The same without the poll: settles when stream gets past what is enqueued now. */
napi_value wait_enqueue(napi_env env, CUstream stream, napi_value value, const char *api);
/* A Promise resolved once stream reaches this point, through cuLaunchHostFunc; never settles if
 * the stream fails before. A LogicError while the stream is capturing. */
napi_value wait_host_func(napi_env env, CUstream stream, napi_value value);
/* Keeps value alive until stream reaches this point, then lets it go on the main thread; no
 * Promise. Does nothing while the stream is being captured into a graph. */
bool wait_keep_alive(napi_env env, CUstream stream, napi_value value);
/* A Promise resolved with value once blocking(arg) returns on a thread of its own, which first
 * makes ctx current. The calls blocking may make must be safe off the main thread. */
typedef CUresult (*blocking_fn)(void *arg);
napi_value wait_on_thread(napi_env env, ctx_rec *ctx, blocking_fn blocking, void *arg,
                          napi_value value, const char *api, void (*done)(void *arg));
/* A Promise settled after work(arg) has run on a thread of its own with stack_size bytes of
 * stack: on the main thread, it resolves with what settle(env, arg) returns, or rejects with the
 * exception settle leaves pending when it returns NULL. release(arg) runs last whatever happens
 * (the thread could not start, the instance was torn down first), on any thread: it must not
 * call Node-API. work must not either. */
typedef void (*work_fn)(void *arg);
typedef napi_value (*settle_fn)(napi_env env, void *arg);
napi_value run_on_thread(napi_env env, work_fn work, settle_fn settle, void (*release)(void *arg),
                         void *arg, size_t stack_size);
/* The same, with the work run by post(run, op) on a thread of the caller's (a queue's); post
 * returns false where it cannot (nothing has run). post NULL: a new thread of stack_size bytes. */
typedef bool (*post_fn)(void (*run)(void *op), void *op);
napi_value run_posted(napi_env env, work_fn work, settle_fn settle, void (*release)(void *arg),
                      void *arg, post_fn post, size_t stack_size);

/* ---- threads (threads.c): every thread the addon starts ---- */

typedef enum thread_kind {
  THREAD_FINISHES, /* works in a library and ends by itself (a compile): exit waits for it */
  THREAD_WAITS,    /* blocked on the device, maybe for ever: exit does not wait for it */
  THREAD_SERVES,   /* a service's worker for the process's life (service_post) */
} thread_kind;
/* Starts a detached thread running body(arg); false if it could not. */
bool thread_start(void *(*body)(void *), void *arg, size_t stack_size, thread_kind kind);
/* A service: work queued from any thread and run in turn on one thread of its own, started on
 * the first post and kept for the process's life (the cache writer, the linking thread, the
 * reaper of dropped memory). Exit waits until every service's queue is empty. Declare one with
 * SERVICE(stack size, a function its thread runs first or NULL); the fields are threads.c's. */
typedef struct service_item service_item;
typedef struct service {
  size_t stack_size;
  void (*on_start)(void);
  pthread_mutex_t lock;
  pthread_cond_t work, idle;
  service_item *first, *last;
  size_t outstanding; /* queued or running */
  bool started;
} service;
#define SERVICE(stack_size_, on_start_)                                                            \
  {                                                                                                \
    .stack_size = (stack_size_), .on_start = (on_start_), .lock = PTHREAD_MUTEX_INITIALIZER,       \
    .work = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER                             \
  }
/* Queues run(arg) on s's thread; false where no thread can be had (nothing is queued). */
bool service_post(service *s, void (*run)(void *), void *arg);
/* Queues run(arg) and waits until it has run; false as service_post. */
bool service_run_waited(service *s, void (*run)(void *), void *arg);
/* Returns once everything queued on s has run. */
void service_until_idle(service *s);
/* Runs body(arg) on a new thread with stack_size bytes of stack and waits for it; false if no
 * thread could be started (body has not run). */
bool thread_run(void *(*body)(void *), void *arg, size_t stack_size);
/* Waits for every THREAD_FINISHES thread and for every service's queue. */
void threads_drain(void);
/* True once the process is exiting: a thread that returns from the driver then touches nothing. */
bool threads_exiting(void);
/* Makes exit drain the threads before the destructors of every library loaded so far: call after
 * loading one. */
void threads_guard_exit(void);

/* ---- imports (imports.c) ---- */
typedef struct import_binding {
  const char *name;  /* a function the library imports: "open" */
  void *replacement; /* what its calls reach instead */
} import_binding;
/* Binds the library dlopen'd as handle's imports of each binding's name to its replacement. Call
 * before anything of the library runs. */
void imports_rebind(void *handle, const import_binding *bindings, size_t count);

/* ---- signals (signals.c) ---- */
/* Binds the signal() and sigaction() imports of the library dlopen'd as handle to functions that
 * change no disposition: NVIDIA's compiler would otherwise replace Node's SIGINT and SIGTERM
 * handlers. Call before anything of the library runs. */
void signals_keep(void *handle);

/* ---- code images (module.c) ---- */
/* Why the driver must not be given the cubin or fatbin p (it reads by the sizes inside, which
 * must lie within length), or NULL where it may. */
const char *image_problem(const uint8_t *p, size_t length);
/* JIT options keys[i] = values[i] (unsigned integers; none that takes a pointer or a log buffer:
 * cudadrv collects the logs) into options and option_values; false after throwing. */
enum { MAX_JIT_OPTIONS = 32 };
bool jit_options_read(napi_env env, napi_value keys, napi_value values, CUjit_option *options,
                      void **option_values, uint32_t *count);

/* ---- per-addon state (addon.c) ---- */

typedef struct wait_channel wait_channel;
typedef struct addon_state {
  napi_ref error_factory; /* lib's (code, api, message, kind) => Error */
  wait_channel *waits;
  napi_ref context_lookup;     /* lib's (ctx_address bigint) => Context | undefined */
  struct memory_state *memory; /* allocations.c: live allocations, for reclaiming (memory.h);
                                * NULL once the environment is being torn down */
  napi_ref last_stream;        /* weak: the last Stream argument (args.c), whose struct is: */
  stream_h *last_stream_h;
} addon_state;

addon_state *state_of(napi_env env);

/* ---- export tables ---- */

typedef struct export_fn {
  const char *name;
  napi_callback fn;
} export_fn;
bool export_functions(napi_env env, napi_value exports, const export_fn *fns, size_t count);
#define EXPORTS(env, exports, table)                                                               \
  export_functions(env, exports, table, sizeof(table) / sizeof((table)[0]))

/* A layout that lib/ and C share (a header, a descriptor's slots, a selector's values): C defines
 * it once, as an enum, and exports its names and values as the frozen object exports.layouts[name]
 * (lib/internal/layouts.js reads it and checks that it knows every name, and only those). */
typedef struct layout_field {
  const char *name;
  uint32_t value;
} layout_field;
bool export_layout(napi_env env, napi_value exports, const char *name, const layout_field *fields,
                   size_t count);
#define EXPORT_LAYOUT(env, exports, name, table)                                                   \
  export_layout(env, exports, name, table, sizeof(table) / sizeof((table)[0]))

/* Each family registers its functions into exports; returns false after throwing. */
bool errors_init(napi_env env, napi_value exports);
bool handles_init(napi_env env, napi_value exports);
bool wait_init(napi_env env, napi_value exports);
bool threads_init(napi_env env, napi_value exports);
bool constants_init(napi_env env, napi_value exports);
bool device_init(napi_env env, napi_value exports);
bool context_init(napi_env env, napi_value exports);
bool stream_init(napi_env env, napi_value exports);
bool event_init(napi_env env, napi_value exports);
bool profiler_init(napi_env env, napi_value exports);
bool allocations_init(napi_env env, napi_value exports);
bool device_memory_init(napi_env env, napi_value exports);
bool copies_init(napi_env env, napi_value exports);
bool mempool_init(napi_env env, napi_value exports);
bool host_memory_init(napi_env env, napi_value exports);
bool module_init(napi_env env, napi_value exports);
bool library_init(napi_env env, napi_value exports);
bool link_init(napi_env env, napi_value exports);
bool texref_init(napi_env env, napi_value exports);
bool launch_init(napi_env env, napi_value exports);
bool nvrtc_init(napi_env env, napi_value exports);
bool graph_init(napi_env env, napi_value exports);
bool digest_init(napi_env env, napi_value exports);
bool files_init(napi_env env, napi_value exports);
/* Opens path for reading without waiting (a FIFO put there opens at once; a symbolic link is
 * followed only if follow): the descriptor of a regular file, *size its bytes; else one of: */
enum { OPEN_NOTHING = -1 /* nothing there, or nothing to read */, OPEN_NOT_REGULAR = -2 };
int open_regular(const char *path, bool follow, size_t *size);
/* Why another user could replace what path names, or NULL: path and each directory above it must
 * belong to root or this user, and only a sticky directory (/tmp) may be writable by others.
 * message (at least 512 bytes) says which and why. */
const char *path_problem(const char *path, char *message, size_t size);
bool file_writer_init(napi_env env, napi_value exports);
bool array_init(napi_env env, napi_value exports);
bool texobj_init(napi_env env, napi_value exports);

#endif
