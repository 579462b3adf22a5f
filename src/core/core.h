/* core/, the bottom layer, which every file of the addon includes: Node-API status macros, the
 * per-addon state, argument readers, error throwing, threads and the driver's entry points
 * (loader.h). It includes nothing of the folders above it (test/package/layout.test.js checks
 * every folder's includes): core, then driver and cache, memory, kernel, compiler, src/addon.c. */
#ifndef CUDADRV_CORE_H
#define CUDADRV_CORE_H

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
/* throw_cu with what the call was about (a name, a path, sizes: printf's format) after the
 * driver's description, in parentheses. */
napi_value throw_cu_about(napi_env env, CUresult result, const char *api, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
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
/* A Promise already rejected with the driver error for result. */
napi_value promise_rejected(napi_env env, CUresult result, const char *api);

/* Calls the driver (DRV); throws and returns NULL from the caller on failure. */
#define CU_CALL(env, fn, ...)                                                                      \
  do {                                                                                             \
    CUresult cu_result_ = DRV(fn, __VA_ARGS__);                                                    \
    if (cu_result_ != CUDA_SUCCESS) return throw_cu(env, cu_result_, #fn);                         \
  } while (0)

/* CU_CALL, the error saying what the call was about: CU_CALL_ABOUT(env, ("'%s'", name), fn, ...).
 */
#define CU_CALL_ABOUT(env, subject, fn, ...)                                                       \
  do {                                                                                             \
    CUresult cu_result_ = DRV(fn, __VA_ARGS__);                                                    \
    if (cu_result_ != CUDA_SUCCESS) return throw_cu_about(env, cu_result_, #fn, SUBJECT_ subject); \
  } while (0)
#define SUBJECT_(...) __VA_ARGS__

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

/* ---- per-addon state (addon.c) ----
 * Each layer's part is a pointer to a struct that only that layer knows. */

typedef struct wait_channel wait_channel;
struct ctx_rec;
typedef struct addon_state {
  napi_ref error_factory;  /* lib's (code, api, message, kind) => Error */
  wait_channel *waits;     /* driver/wait.c */
  napi_ref context_lookup; /* lib's (ctx_address bigint) => Context | undefined */
  /* driver/context.c calls it as a context is detached (context_on_detach sets it). */
  void (*context_detached)(napi_env env, struct ctx_rec *rec);
  struct memory_state *memory; /* memory/allocations.c: live allocations, for reclaiming;
                                * NULL once the environment is being torn down */
  napi_ref last_stream;        /* weak: the last Stream argument (driver/stream.c), whose struct: */
  struct stream_h *last_stream_h;
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
/* Makes count functions (into out) bound to data, each counted in *refs while it lives, and
 * finalize(env, data, NULL) called as each is collected (it frees data when *refs reaches 0). The
 * caller holds one count through the call and lets go of it after, by calling finalize itself:
 * data is then freed there if no function holds it. */
napi_status bind_functions(napi_env env, const export_fn *fns, size_t count, void *data, int *refs,
                           napi_finalize finalize, napi_value *out);

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
bool threads_init(napi_env env, napi_value exports);

/* ---- regular files (regular_files.c) ---- */

/* Opens path for reading without waiting (a FIFO put there opens at once; a symbolic link is
 * followed only if follow): the descriptor of a regular file, *size its bytes; else one of: */
enum { OPEN_NOTHING = -1 /* nothing there, or nothing to read */, OPEN_NOT_REGULAR = -2 };
int open_regular(const char *path, bool follow, size_t *size);
/* Reads all of fd (size bytes as fstat says) into a new Buffer; NULL result when it changed size
 * meanwhile or could not be read. */
napi_status read_whole(napi_env env, int fd, size_t size, napi_value *result);

#endif
