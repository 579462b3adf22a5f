/* driver/: what the layers above share of the driver's own objects: the records of contexts that
 * every resource points at, the type-tagged handles that wrap driver objects, stream arguments and
 * the asynchronous waits. Includes only core/. */
#ifndef CUDADRV_DRIVER_H
#define CUDADRV_DRIVER_H

#include "../core/core.h"

/* ---- contexts every resource points at (context.c) ---- */

/* One per CUcontext that cudadrv holds. Resources keep it (refcounted) so that their finalizers
 * know whether the context is still alive and can free in it. */
typedef struct ctx_rec {
  CUcontext handle;
  CUdevice device; /* where a primary context is released; -1 for one only borrowed */
  atomic_int refs;
  atomic_bool destroyed; /* detached: made in it is refused, and gone with it (ctx_rec_gone) */
  int owners;            /* Contexts that made or retained it; the last one destroys */
  bool primary;          /* retained primary context: released rather than destroyed */
  /* A green context's (cuGreenCtxDestroy): what is made in it is its device's primary context's,
   * which it retains, and outlives it, save its streams (left to the caller, and refused by driver
   * 580 after it). So it is destroyed at the record's last reference, when nothing made in it is
   * left: after detach(), what was made in it is refused and still released through it. */
  CUgreenCtx green;
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
/* Wraps in obj (a Context of lib/) the context of green, which it owns from now on (detached as a
 * made context is, and destroyed once nothing made in it is left); returns its address, or NULL
 * after throwing (green destroyed then). */
napi_value ctx_adopt_green(napi_env env, napi_value obj, CUgreenCtx green, CUdevice device);
/* Whether cudadrv uses device's primary context: a Context on it, or what was made in it, is still
 * held, or a green context of the device is not yet destroyed (what is made in one is the primary
 * context's, and it holds the primary context). */
bool primary_in_use(CUcontext primary, CUdevice device);
/* Whether what was made in rec's context went with it (detached and destroyed; a green context's
 * outlives its detach()). */
static inline bool ctx_rec_gone(const ctx_rec *rec) {
  return atomic_load(&rec->destroyed) && !rec->green;
}
/* Makes rec's context current for a cleanup; returns false when it is gone. Pair with ctx_leave. */
bool ctx_enter(ctx_rec *rec);
void ctx_leave(void);
/* Runs hook(env, rec) when rec is being detached, before the driver frees what was made in it
 * (memory/ registers the making of its host memory unreachable from JS). */
void context_on_detach(napi_env env, void (*hook)(napi_env env, ctx_rec *rec));

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
  /* What base holds besides its driver object (a graph's pins), let go of once it is released,
   * whether or not its context was still there to destroy the object in; or NULL. */
  void (*dispose)(handle_base *base);
} handle_kind;

/* The first member of every wrapped struct. */
struct handle_base {
  const handle_kind *kind;
  bool freed;
  napi_finalize finalize; /* the kind's, run at garbage collection */
};

/* Wraps obj around base (tagged with kind), in this thread's live set until finalize runs at
 * garbage collection. */
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
/* Binds v (an object of kind, or null or undefined for none) to a slot: *handle, and *ref
 * keeping v alive (the one before let go); false after throwing. For functions bound in C to the
 * objects their calls use (a kernel's launcher, a GraphExec's). */
bool handle_bind(napi_env env, napi_value v, const handle_kind *kind, void **handle, napi_ref *ref);

/* The handles wrapped on this thread and not yet finalized (live_handles.c): add is false when
 * out of memory. */
bool live_handle_add(const handle_base *base);
bool live_handle_has(const void *p);
void live_handle_remove(const handle_base *base);
size_t live_handle_count(void);

/* Streams are taken by many families (copies, launches, waits). */
typedef struct stream_keeper stream_keeper;
typedef struct stream_h {
  handle_base base;
  CUstream handle;
  ctx_rec *ctx;
  stream_keeper *keeper; /* its coalesced keep-alives (wait.c), made on first use */
  bool capturing;        /* a capture begun through cudadrv is under way (graph_capture.c) */
  struct graph_h *into;  /* the Graph that capture records into, if one of the caller's */
  cuuint64_t capture_id; /* the driver's id of that capture */
} stream_h;
extern const handle_kind STREAM_KIND;
/* Counts stream's capture as under way (on, before it begins: it waits out a synchronization of
 * the reaper's in progress) or ended, once each way; an ended capture into a Graph is forgotten. */
void capture_track(stream_h *stream, bool on);
/* cuCtxSynchronize, unless a capture begun through cudadrv is under way in the process, on any
 * thread: a synchronization beside a capture breaks it. For the reaper. */
void synchronize_unless_capturing(void);
/* How many captures begun through cudadrv are under way in the process (cuda.stats()). */
int captures_under_way(void);
/* Ends this thread's captures (begun through cudadrv) by streams of rec's context, which is being
 * detached, as capture_end_before_destroy does: once it is, such a capture can no longer be ended,
 * a graph captured into not be destroyed under it, and the driver would destroy the streams
 * mid-capture. */
void captures_end_in(const ctx_rec *rec);
/* Ends the capture begun through cudadrv on stream (active, or invalidated by an unsafe call
 * beside it), which is about to be destroyed, its context current: the graph the capture made is
 * destroyed, and where the capture was into a Graph of the caller's, the nodes it added stay there
 * and what they use is handed to that graph (a stream destroyed mid-capture let its pins go under
 * those nodes). A stream that joined another's capture is left to it: only the stream that began
 * a capture can end it. */
void capture_end_before_destroy(stream_h *stream);
/* Wraps obj around handle, a stream of ctx (whose reference it takes); false after throwing (the
 * stream destroyed then). */
bool stream_adopt(napi_env env, napi_value obj, CUstream handle, ctx_rec *ctx);

typedef struct node_use node_use;
typedef struct event_h {
  handle_base base;
  CUevent handle;
  ctx_rec *ctx;
  node_use *use;     /* once a graph's node uses it: the CUevent outlives the Event while it does */
  bool interprocess; /* made with CU_EVENT_INTERPROCESS, or opened from another process */
} event_h;
extern const handle_kind EVENT_KIND;
/* Whether a stream or green context of waiter may wait for event; throws (a LogicError naming
 * method) where not: see event.c. */
bool event_waitable(napi_env env, const event_h *event, CUcontext waiter, const char *method);

/* Finalizers report cleanups that failed here instead of printing (cuda.stats()). */
void stats_cleanup(CUresult result);
/* ---- stream arguments (stream.c) ---- */

/* A stream argument: undefined/null is the default stream (NULL), else a Stream object. The
 * environment remembers the last Stream it was given, weakly: the same one again costs a reference
 * read and a comparison instead of a type-tag check and an unwrap. */
bool arg_stream(napi_env env, napi_value v, CUstream *out);
/* Both at once: the CUstream, and the Stream's struct (NULL: the default stream). */
bool arg_stream_and_handle(napi_env env, napi_value v, CUstream *out, stream_h **s);
/* The same, as the Stream's struct (NULL: the default stream). */
bool arg_stream_handle(napi_env env, napi_value v, stream_h **out);

/* ---- asynchronous waits (wait.c) ---- */

typedef struct wait_op wait_op;
/* Settles on the main thread; status is the driver's result (CUDA_SUCCESS resolves with value). */
typedef void (*wait_done_fn)(napi_env env, wait_op *op, void *data);

/* For a wait found complete: true (lib/ settles it; no Promise is made here, which costs more
 * than one made in JavaScript), or, where channel_post calls are on their way, a Promise resolved
 * with value through the channel, so that those made before the work waited on ended run before
 * it settles. */
napi_value wait_done(napi_env env, napi_value value, const char *api);
/* A Promise resolved with value (the object waited on) when stream has passed everything
 * enqueued so far, keeping value alive until then; true where it already had (wait_done). */
napi_value wait_stream(napi_env env, CUstream stream, napi_value value, const char *api);
/* The same without the poll: settles when stream gets past what is enqueued now. */
napi_value wait_enqueue(napi_env env, CUstream stream, napi_value value, const char *api);
/* A Promise resolved once stream reaches this point, through cuLaunchHostFunc; never settles if
 * the stream fails before. A LogicError while the stream is capturing. */
napi_value wait_host_func(napi_env env, CUstream stream, napi_value value);
/* Keeps value alive until stream (NULL: the default stream) reaches this point, then lets it go on
 * the main thread; no Promise. Does nothing while the stream is being captured into a graph. */
bool wait_keep_alive(napi_env env, stream_h *stream, napi_value value);
/* A Stream being destroyed (main thread, its context current): its keep-alives not yet handed to
 * the driver are enqueued now. Then, whatever became of the stream, detach lets the keeper go. */
void keeper_flush(stream_keeper *keeper);
void keeper_detach(stream_keeper *keeper);
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

/* A hold on the instance's channel to the main thread, for channel_post from any thread later;
 * channel_drop (any thread) lets it go. */
wait_channel *channel_hold(napi_env env);
void channel_drop(wait_channel *channel);
/* Any thread: has the main thread call call(env, arg) soon, in order with the channel's other
 * posts and waits; or call(NULL, arg), on this thread or the main one, where the instance is gone
 * or going (call must then let go of arg without Node-API). Does not keep the event loop alive. */
void channel_post(wait_channel *channel, void (*call)(napi_env env, void *arg), void *arg);

/* ---- graphs (graph.c) ---- */

/* What a graph pins: an object of a layer above (a kernel's module) that must not be unloaded while
 * a Graph or a GraphExec may run a node using it. retain and release run on the main thread. */
typedef struct graph_pin_ops {
  void (*retain)(void *obj);
  void (*release)(void *obj);
  /* The context whose destruction takes what obj names with it, or NULL (none): the driver crashes
   * on a graph whose nodes name what went, so such a graph is refused (graph.c). */
  ctx_rec *(*context)(void *obj);
} graph_pin_ops;
/* What a node made in a context pins: obj is that context's ctx_rec (graph.c). */
extern const graph_pin_ops CTX_PINS;
/* Pins the current context on the Graph object graph, where a node was just made in it; false
 * after throwing. */
bool graph_pin_current(napi_env env, napi_value graph);
/* One pin: obj, with its ops. */
typedef struct graph_pin {
  void *obj;
  const graph_pin_ops *ops;
} graph_pin;
/* A driver object that graphs' nodes name (an event's CUevent, an array's CUarray), shared by its
 * handle and the nodes' pins (main thread only): the last to let go destroys it, in its context,
 * with destroy; its handle's destruction and collection leave that to the use once it has one. */
struct node_use {
  void *object;
  CUresult (*destroy)(void *object);
  ctx_rec *ctx;
  int refs;
};
/* What pins a node_use. */
extern const graph_pin_ops USE_PINS;
/* The use of object in *slot, made on first call; NULL when out of memory. */
node_use *node_use_of(node_use **slot, void *object, CUresult (*destroy)(void *object),
                      ctx_rec *ctx);
/* The handle lets go of the use in *slot, if it has one. */
void node_use_drop(node_use **slot);
/* The use of event (see node_use_of). */
node_use *event_use_of(event_h *event);
/* Makes a node of graph after count nodes deps, with a driver call; api names it. */
typedef CUresult (*node_maker)(void *arg, CUgraph graph, const CUgraphNode *deps, size_t count,
                               CUgraphNode *node);
/* Adds to the Graph object graph, after the nodes that deps names (a Uint32Array of node indices
 * of that graph), the node make(arg, ...) makes; pins the pin_count pins of pin_list, once it is
 * made, for as long as the Graph or a GraphExec made from it lives. The new node's index, or NULL
 * after throwing. graph_add_node pins obj (ops NULL: nothing). */
napi_value graph_add_node_pins(napi_env env, napi_value graph, napi_value deps, node_maker make,
                               void *arg, const char *api, const graph_pin *pin_list,
                               uint32_t pin_count);
napi_value graph_add_node(napi_env env, napi_value graph, napi_value deps, node_maker make,
                          void *arg, const char *api, void *obj, const graph_pin_ops *ops);

/* Pins obj for as long as the Graph object graph or a GraphExec made from it later lives (what a
 * captured node uses); false after throwing. */
bool graph_pin_use(napi_env env, napi_value graph, void *obj, const graph_pin_ops *ops);
/* Where stream is capturing, pins obj for the graph the capture makes (what the recorded work
 * names, which the driver crashes on once gone: a CudaArray), until then and if none is made, until
 * the capture ends; false after throwing. */
bool capture_pin(napi_env env, CUstream stream, void *obj, const graph_pin_ops *ops);
/* Whether a capture of cudadrv's records what is enqueued on stream now, and its id; capture_pin
 * by that id. */
bool capture_recording(CUstream stream, cuuint64_t *id);
bool capture_pin_id(napi_env env, cuuint64_t id, void *obj, const graph_pin_ops *ops);

/* The node of the Graph object graph that index names; false after throwing. */
bool graph_node_arg(napi_env env, napi_value graph, napi_value index, CUgraphNode *node);

/* The executable graph and the node of the (exec, graph, node index) arguments of a call on one
 * node of a GraphExec: node must be of the Graph exec was instantiated from. false after
 * throwing. */
bool graph_exec_node(napi_env env, const napi_value *argv, CUgraphExec *exec, CUgraphNode *node);

/* The node of the (exec or null, graph, node index) arguments of a call setting one node's
 * parameters: in exec, or (null) in graph itself, where *exec is NULL. false after throwing. */
bool graph_node_target(napi_env env, const napi_value *argv, CUgraphExec *exec, CUgraphNode *node);
/* Pins obj for as long as the target of those arguments (the GraphExec, or the Graph and the
 * GraphExecs made from it later) lives; false after throwing. */
bool graph_target_pin(napi_env env, const napi_value *argv, void *obj, const graph_pin_ops *ops);

/* Each family registers its functions into exports; returns false after throwing. */
bool handles_init(napi_env env, napi_value exports);
bool wait_init(napi_env env, napi_value exports);
bool constants_init(napi_env env, napi_value exports);
bool device_init(napi_env env, napi_value exports);
bool context_init(napi_env env, napi_value exports);
bool context_settings_init(napi_env env, napi_value exports);
bool stream_init(napi_env env, napi_value exports);
bool event_init(napi_env env, napi_value exports);
bool green_context_init(napi_env env, napi_value exports);
bool profiler_init(napi_env env, napi_value exports);
bool graph_init(napi_env env, napi_value exports);
bool graph_nodes_init(napi_env env, napi_value exports);
bool graph_host_init(napi_env env, napi_value exports);
bool graph_memory_init(napi_env env, napi_value exports);
bool graph_params_init(napi_env env, napi_value exports);
bool graph_capture_init(napi_env env, napi_value exports);
bool graph_exec_init(napi_env env, napi_value exports);

#endif
