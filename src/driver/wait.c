/* wait: Promises settled by the GPU without blocking the main thread or libuv's thread pool.
 *
 * A stream wait enqueues cuStreamAddCallback; the driver calls it on its own thread when the
 * stream gets there (with the error, if the stream failed, which cuLaunchHostFunc would not
 * report), and it hands the wait to the main thread through one thread-safe function per addon
 * instance. A context wait runs cuCtxSynchronize on a short-lived thread of its own. Work that is
 * already complete resolves at once, after a short poll, without leaving the main thread.
 *
 * A worker can be terminated while waits are in flight: its channel is then marked closed under
 * the lock that every sender takes, and late callbacks free their wait instead of sending it.
 *
 * Long work that is not a wait (an NVRTC compile) runs the same way, on a thread of its own, and
 * builds its result on the main thread (run_on_thread). A worker's teardown waits for the work it
 * started: Node ends the workers before the process's exit() runs NVIDIA's libraries' destructors,
 * which a compile still running in them would not survive. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "driver.h"

struct wait_channel {
  pthread_mutex_t lock;
  pthread_cond_t worked; /* working fell to 0 */
  napi_threadsafe_function tsfn;
  bool closed;       /* the addon instance is gone: send nothing */
  int working;       /* run_posted work queued or running (under lock) */
  atomic_int refs;   /* the instance's, plus one per wait in flight */
  int pending;       /* waits not yet settled (main thread only) */
  atomic_int posted; /* channel_post calls not yet made */
};

struct wait_op {
  wait_channel *channel;
  napi_deferred deferred;
  napi_ref value; /* what the Promise resolves with, kept alive meanwhile; may be NULL */
  const char *api;
  CUresult status;
  /* thread waits */
  ctx_rec *ctx;
  blocking_fn blocking;
  void *arg;
  void (*done)(void *arg);
  /* work on a thread (run_on_thread) */
  work_fn work;
  settle_fn settle;
  void (*release)(void *arg);
  /* a call posted by channel_post */
  void (*call)(napi_env env, void *arg);
  /* a keep-alive of a Stream's: its keeper, settled when this one is */
  stream_keeper *keeper;
};

/* The keep-alives of one Stream. An async copy keeps its buffers alive with a stream callback,
 * and the driver holds the stream up at each one, so one a copy would cost a copy ten times over
 * (28 us against 2.4 on the H100). So at most one callback of a stream's is in flight: buffers
 * kept meanwhile gather in `next`, a keep-alive not yet enqueued, which goes on the stream when
 * the one in flight settles; it then lies after all their work. The fields but refs are the main
 * thread's. */
struct stream_keeper {
  atomic_int refs; /* the stream's, and one a keep-alive naming it */
  CUstream stream;
  ctx_rec *ctx;
  bool in_flight; /* a keep-alive of its is on the stream, not yet settled */
  bool gone;      /* the stream was destroyed, or its context */
  wait_op *next;  /* what was kept while one was in flight (its value an array), or NULL */
};

static void CUDA_CB stream_reached(CUstream stream, CUresult status, void *data);
static void wait_finish(wait_op *op, CUresult status);

static void keeper_release(stream_keeper *keeper) {
  if (keeper && atomic_fetch_sub(&keeper->refs, 1) == 1) {
    ctx_rec_release(keeper->ctx);
    free(keeper);
  }
}

static void channel_release(wait_channel *channel) {
  if (atomic_fetch_sub(&channel->refs, 1) == 1) {
    pthread_cond_destroy(&channel->worked);
    pthread_mutex_destroy(&channel->lock);
    free(channel);
  }
}

/* Frees a wait, and what run_on_thread was given with it. */
static void op_free(wait_op *op) {
  if (op->release) op->release(op->arg);
  keeper_release(op->keeper);
  free(op);
}

/* Main thread: a new wait holding value, counted so the event loop stays alive meanwhile; with
 * promise NULL, a wait that settles no Promise (it only holds value). */
static wait_op *wait_begin(napi_env env, napi_value value, const char *api, napi_value *promise) {
  wait_channel *channel = state_of(env)->waits;
  wait_op *op = calloc(1, sizeof *op);
  if (!op) {
    throw_oom(env);
    return NULL;
  }
  napi_status status = value ? napi_create_reference(env, value, 1, &op->value) : napi_ok;
  if (status == napi_ok && promise) status = napi_create_promise(env, &op->deferred, promise);
  if (status != napi_ok) {
    if (op->value) NAPI_UNTHROWN(napi_delete_reference(env, op->value));
    free(op);
    napi_fail(env, status);
    return NULL;
  }
  op->channel = channel;
  op->api = api;
  atomic_fetch_add(&channel->refs, 1);
  if (channel->pending++ == 0) NAPI_UNTHROWN(napi_ref_threadsafe_function(env, channel->tsfn));
  return op;
}

/* Main thread: undoes wait_begin for a wait that could not be enqueued. */
static void wait_cancel(napi_env env, wait_op *op) {
  wait_channel *channel = op->channel;
  if (op->value) NAPI_UNTHROWN(napi_delete_reference(env, op->value));
  if (--channel->pending == 0) NAPI_UNTHROWN(napi_unref_threadsafe_function(env, channel->tsfn));
  op_free(op);
  channel_release(channel);
}

/* Any thread: queues op for the main thread; false where the instance is gone or going. */
static bool channel_send(wait_channel *channel, wait_op *op) {
  pthread_mutex_lock(&channel->lock);
  bool sent = !channel->closed && !threads_exiting() &&
              napi_call_threadsafe_function(channel->tsfn, op, napi_tsfn_nonblocking) == napi_ok;
  pthread_mutex_unlock(&channel->lock);
  return sent;
}

/* Any thread: hands the finished wait to the main thread, or drops it if the instance is gone. */
static void wait_finish(wait_op *op, CUresult status) {
  wait_channel *channel = op->channel;
  op->status = status;
  if (!channel_send(channel, op)) {
    op_free(op);
    channel_release(channel);
  }
}

/* Hands next to the stream, in its context; where that cannot be, lets its values go once the
 * stream has passed their work (at once where the stream or its context is gone). */
static void keeper_enqueue(stream_keeper *keeper, wait_op *next) {
  CUresult result = CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (!keeper->gone && ctx_enter(keeper->ctx)) {
    result = DRV(cuStreamAddCallback, keeper->stream, stream_reached, next, 0);
    if (result != CUDA_SUCCESS) DRV(cuStreamSynchronize, keeper->stream);
    ctx_leave();
  }
  if (result != CUDA_SUCCESS) wait_finish(next, result);
}

/* Main thread: a keep-alive of keeper's settled; what was kept meanwhile goes on the stream. */
static void keeper_settled(stream_keeper *keeper) {
  wait_op *next = keeper->next;
  keeper->next = NULL;
  keeper->in_flight = next != NULL;
  if (next) keeper_enqueue(keeper, next);
}

void keeper_flush(stream_keeper *keeper) {
  if (!keeper || !keeper->next) return;
  wait_op *next = keeper->next;
  keeper->next = NULL;
  keeper_enqueue(keeper, next);
}

void keeper_detach(stream_keeper *keeper) {
  if (!keeper) return;
  keeper->gone = true;
  keeper_flush(keeper); /* where destroy could not run: the work went with the context */
  keeper_release(keeper);
}

/* Main thread: resolves deferred with value, or rejects it with value where reject is set;
 * value NULL means making it threw: it rejects with what was thrown, so nothing stays pending. */
static void settle_deferred(napi_env env, napi_deferred deferred, napi_value value, bool reject) {
  if (!value) {
    reject = true;
    if (napi_get_and_clear_last_exception(env, &value) != napi_ok) value = NULL;
    if (!value) value = make_undefined(env);
  }
  NAPI_UNTHROWN(reject ? napi_reject_deferred(env, deferred, value)
                       : napi_resolve_deferred(env, deferred, value));
}

/* Main thread (env NULL when the instance is being torn down): settles the Promise. */
static void wait_settle(napi_env env, napi_value unused, void *context, void *data) {
  (void)unused;
  wait_channel *channel = context;
  wait_op *op = data;
  if (op->call) {
    op->call(env, op->arg);
    atomic_fetch_sub(&channel->posted, 1);
  } else if (env) {
    if (!op->deferred) {
      /* a keep-alive: letting go of value is all there is to do, and a Stream's next goes on */
      if (op->keeper) keeper_settled(op->keeper);
    } else if (op->settle) {
      /* run_on_thread: the value is built now; NULL means it threw */
      settle_deferred(env, op->deferred, op->settle(env, op->arg), false);
    } else if (op->status == CUDA_SUCCESS) {
      napi_value value = NULL;
      if (op->value && napi_get_reference_value(env, op->value, &value) != napi_ok) value = NULL;
      settle_deferred(env, op->deferred, value ? value : make_undefined(env), false);
    } else {
      settle_deferred(env, op->deferred, make_cu_error(env, op->status, op->api), true);
    }
    if (op->value) NAPI_UNTHROWN(napi_delete_reference(env, op->value));
    if (--channel->pending == 0) NAPI_UNTHROWN(napi_unref_threadsafe_function(env, channel->tsfn));
  }
  op_free(op);
  channel_release(channel);
}

wait_channel *channel_hold(napi_env env) {
  wait_channel *channel = state_of(env)->waits;
  atomic_fetch_add(&channel->refs, 1);
  return channel;
}

void channel_drop(wait_channel *channel) { channel_release(channel); }

void channel_post(wait_channel *channel, void (*call)(napi_env env, void *arg), void *arg) {
  wait_op *op = calloc(1, sizeof *op);
  if (!op) {
    call(NULL, arg);
    return;
  }
  op->channel = channel;
  op->call = call;
  op->arg = arg;
  atomic_fetch_add(&channel->refs, 1);
  atomic_fetch_add(&channel->posted, 1);
  if (!channel_send(channel, op)) {
    free(op);
    atomic_fetch_sub(&channel->posted, 1);
    channel_release(channel);
    call(NULL, arg);
  }
}

napi_value wait_done(napi_env env, napi_value value, const char *api) {
  if (!atomic_load(&state_of(env)->waits->posted)) return make_bool(env, true);
  napi_value promise;
  wait_op *op = wait_begin(env, value, api, &promise);
  if (op) wait_finish(op, CUDA_SUCCESS); /* through the channel, behind the calls */
  return op ? promise : NULL;
}

/* The driver's thread: the stream got here. */
static void CUDA_CB stream_reached(CUstream stream, CUresult status, void *data) {
  (void)stream;
  wait_finish(data, status);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* How long a wait polls on the main thread before it hands over to the driver's callback: work
 * that ends within it (a short kernel) settles without the cost of a thread hop. */
static const double POLL_US = 20;

napi_value wait_stream(napi_env env, CUstream stream, napi_value value, const char *api) {
  CUresult status = DRV(cuStreamQuery, stream);
  if (status == CUDA_ERROR_NOT_READY) /* the clock only then: a complete stream's wait is short */
    for (double start = now_us(); status == CUDA_ERROR_NOT_READY && now_us() - start < POLL_US;)
      status = DRV(cuStreamQuery, stream);
  if (status == CUDA_SUCCESS) return wait_done(env, value, api);
  if (status == CUDADRV_ERROR_MISSING) return promise_rejected(env, status, "cuStreamQuery");
  if (status != CUDA_ERROR_NOT_READY) return promise_rejected(env, status, api);
  return wait_enqueue(env, stream, value, api);
}

napi_value wait_enqueue(napi_env env, CUstream stream, napi_value value, const char *api) {
  napi_value promise;
  wait_op *op = wait_begin(env, value, api, &promise);
  if (!op) return NULL;
  CUresult result = DRV(cuStreamAddCallback, stream, stream_reached, op, 0);
  if (result != CUDA_SUCCESS) {
    wait_cancel(env, op);
    return throw_cu(env, result, "cuStreamAddCallback");
  }
  return promise;
}

static void CUDA_CB host_func_reached(void *data) { wait_finish(data, CUDA_SUCCESS); }

napi_value wait_host_func(napi_env env, CUstream stream, napi_value value) {
  /* A graph would call it at each launch, after the first has freed op. */
  CUstreamCaptureStatus capture;
  if (DRV(cuStreamIsCapturing, stream, &capture) == CUDA_SUCCESS &&
      capture != CU_STREAM_CAPTURE_STATUS_NONE)
    return throw_logic(
        env, "stream.launchHostFunc(): the stream is capturing into a graph, which would call the "
             "function at each of its launches while the Promise settles once; call it outside "
             "the capture");
  napi_value promise;
  wait_op *op = wait_begin(env, value, "cuLaunchHostFunc", &promise);
  if (!op) return NULL;
  CUresult result = DRV(cuLaunchHostFunc, stream, host_func_reached, op);
  if (result != CUDA_SUCCESS) {
    wait_cancel(env, op);
    return throw_cu(env, result, "cuLaunchHostFunc");
  }
  return promise;
}

/* Adds value to what keeper's next keep-alive holds (made on first use: an array); false after
 * throwing. */
static bool keeper_add(napi_env env, stream_keeper *keeper, napi_value value) {
  napi_value list;
  uint32_t length = 0;
  if (keeper->next) {
    NAPI_CALL_BOOL(env, napi_get_reference_value(env, keeper->next->value, &list));
    NAPI_CALL_BOOL(env, napi_get_array_length(env, list, &length));
  } else {
    NAPI_CALL_BOOL(env, napi_create_array(env, &list));
  }
  NAPI_CALL_BOOL(env, napi_set_element(env, list, length, value));
  if (keeper->next) return true;
  wait_op *op = wait_begin(env, list, "cuStreamAddCallback", NULL);
  if (!op) return false;
  op->keeper = keeper;
  atomic_fetch_add(&keeper->refs, 1);
  keeper->next = op;
  return true;
}

/* Through cuStreamAddCallback, which the driver calls even after the stream failed, so the value
 * is let go (and the event loop not held) whatever happens; on a Stream of the user's, coalesced
 * (stream_keeper). Capture refuses stream callbacks, and a graph would run one at each launch:
 * while capturing, keeping buffers is the graph's owner's. */
bool wait_keep_alive(napi_env env, stream_h *s, napi_value value) {
  CUstream stream = s ? s->handle : NULL;
  CUstreamCaptureStatus capture;
  if (DRV(cuStreamIsCapturing, stream, &capture) == CUDA_SUCCESS &&
      capture != CU_STREAM_CAPTURE_STATUS_NONE)
    return true; /* where the query fails, the callback below keeps the value or throws */
  if (s && !s->keeper) {
    if (!(s->keeper = calloc(1, sizeof *s->keeper))) {
      throw_oom(env);
      return false;
    }
    atomic_init(&s->keeper->refs, 1);
    s->keeper->stream = stream;
    s->keeper->ctx = ctx_rec_retain(s->ctx);
  }
  if (s && s->keeper->in_flight) return keeper_add(env, s->keeper, value);
  wait_op *op = wait_begin(env, value, "cuStreamAddCallback", NULL);
  if (!op) return false;
  if (s) { /* before the driver may call it back */
    op->keeper = s->keeper;
    atomic_fetch_add(&s->keeper->refs, 1);
  }
  CUresult result = DRV(cuStreamAddCallback, stream, stream_reached, op, 0);
  if (result != CUDA_SUCCESS) {
    wait_cancel(env, op);
    throw_cu(env, result, "cuStreamAddCallback");
    return false;
  }
  if (s) s->keeper->in_flight = true;
  return true;
}

static void *wait_thread(void *data) {
  wait_op *op = data;
  CUresult status = op->ctx ? DRV(cuCtxSetCurrent, op->ctx->handle) : CUDA_SUCCESS;
  if (status != CUDA_SUCCESS)
    op->api = "cuCtxSetCurrent"; /* the error names the call that failed */
  else
    status = op->blocking(op->arg);
  if (threads_exiting()) return NULL; /* the process is going: touch nothing */
  if (op->ctx) {
    DRV(cuCtxSetCurrent, NULL);
    ctx_rec_wait_end(op->ctx);
  }
  if (op->done) op->done(op->arg);
  wait_finish(op, status);
  return NULL;
}

napi_value wait_on_thread(napi_env env, ctx_rec *ctx, blocking_fn blocking, void *arg,
                          napi_value value, const char *api, void (*done)(void *arg)) {
  napi_value promise;
  wait_op *op = wait_begin(env, value, api, &promise);
  if (!op) return NULL;
  op->ctx = ctx;
  op->blocking = blocking;
  op->arg = arg;
  op->done = done;
  if (ctx) ctx_rec_wait_begin(ctx);
  if (!thread_start(wait_thread, op, 256 * 1024, THREAD_WAITS)) {
    if (ctx) ctx_rec_wait_end(ctx);
    wait_cancel(env, op);
    return throw_runtime(
        env, CUDA_ERROR_OPERATING_SYSTEM, "pthread_create",
        "could not start a thread to wait on; the system is out of threads or memory");
  }
  return promise;
}

/* Counts run_posted work of op's instance in (+1) or out (-1). */
static void count_work(wait_op *op, int change) {
  wait_channel *channel = op->channel;
  pthread_mutex_lock(&channel->lock);
  if ((channel->working += change) == 0) pthread_cond_broadcast(&channel->worked);
  pthread_mutex_unlock(&channel->lock);
}

static void run_work(void *data) {
  wait_op *op = data;
  op->work(op->arg);
  count_work(op, -1);
  wait_finish(op, CUDA_SUCCESS);
}

static void *work_thread(void *data) {
  run_work(data);
  return NULL;
}

napi_value run_on_thread(napi_env env, work_fn work, settle_fn settle, void (*release)(void *arg),
                         void *arg, size_t stack_size) {
  return run_posted(env, work, settle, release, arg, NULL, stack_size);
}

napi_value run_posted(napi_env env, work_fn work, settle_fn settle, void (*release)(void *arg),
                      void *arg, post_fn post, size_t stack_size) {
  napi_value promise;
  wait_op *op = wait_begin(env, NULL, NULL, &promise);
  if (!op) {
    release(arg);
    return NULL;
  }
  op->work = work;
  op->settle = settle;
  op->release = release;
  op->arg = arg;
  count_work(op, +1);
  if (post ? !post(run_work, op) : !thread_start(work_thread, op, stack_size, THREAD_FINISHES)) {
    count_work(op, -1);
    wait_cancel(env, op);
    return throw_runtime(
        env, CUDA_ERROR_OPERATING_SYSTEM, "pthread_create",
        "could not start a thread to work on; the system is out of threads or memory");
  }
  return promise;
}

static void channel_close(void *data) {
  wait_channel *channel = data;
  pthread_mutex_lock(&channel->lock);
  while (channel->working) pthread_cond_wait(&channel->worked, &channel->lock);
  channel->closed = true;
  pthread_mutex_unlock(&channel->lock);
  channel_release(channel);
}

bool wait_init(napi_env env, napi_value exports) {
  (void)exports;
  wait_channel *channel = calloc(1, sizeof *channel);
  if (!channel) return throw_oom(env), false;
  pthread_mutex_init(&channel->lock, NULL);
  pthread_cond_init(&channel->worked, NULL);
  atomic_init(&channel->refs, 1);
  napi_value name;
  napi_status status = napi_create_string_utf8(env, "cudadrv wait", NAPI_AUTO_LENGTH, &name);
  if (status == napi_ok)
    status = napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, NULL, NULL, channel,
                                             wait_settle, &channel->tsfn);
  if (status != napi_ok) {
    free(channel);
    napi_fail(env, status);
    return false;
  }
  NAPI_CALL_BOOL(env, napi_unref_threadsafe_function(env, channel->tsfn));
  state_of(env)->waits = channel;
  /* Added after the thread-safe function, so it runs before Node tears that down. */
  NAPI_CALL_BOOL(env, napi_add_env_cleanup_hook(env, channel_close, channel));
  return true;
}
