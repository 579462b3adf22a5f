/* threads: every thread the addon starts (compiles, context waits, the reaper of dropped memory,
 * the cache writer) is started here, and none may be running in a library as the process exits.
 *
 * exit() runs the libraries' own destructors (NVRTC's static objects, the driver's teardown)
 * while other threads go on: a compile still in NVRTC then crashes the process. So exit waits
 * here, through an atexit handler, for every thread that works in a library (a compile finishes:
 * NVRTC cannot be interrupted) and for the service threads to empty their queues. A thread that
 * waits on the device (cuCtxSynchronize) may never return, so exit does not wait for it; from then
 * on it touches nothing of the addon's when it does (threads_exiting()).
 *
 * atexit handlers run in the reverse order of their registration, and a library registers its
 * destructors when it is loaded: the handler is registered again after each library is loaded
 * (threads_guard_exit), so that it runs before that library's destructors; and since a library
 * can register more as it runs, lib/ drains from process's 'exit' event too, before exit(). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"

#define MAX_SERVICES 4
#define SMALL_STACK ((size_t)8 << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ended = PTHREAD_COND_INITIALIZER;
static int working;                     /* threads started with THREAD_FINISHES, not yet ended */
static service *services[MAX_SERVICES]; /* started, for the exit drain */
static int service_count;
static atomic_bool exiting;

/* What this thread is, for a drain that it runs itself (a library that calls exit() on it): it
 * must not wait for itself. */
static _Thread_local bool finishing_here;
static _Thread_local service *serving_here;

typedef struct start {
  void *(*body)(void *);
  void *arg;
  thread_kind kind;
} start;

static void *trampoline(void *data) {
  start s = *(start *)data;
  free(data);
  finishing_here = s.kind == THREAD_FINISHES;
  serving_here = s.kind == THREAD_SERVES ? s.arg : NULL;
  s.body(s.arg);
  if (s.kind == THREAD_FINISHES) {
    pthread_mutex_lock(&lock);
    if (--working == 0) pthread_cond_broadcast(&ended);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

/* pthread_create with a stack of stack_size bytes or, where that much address space cannot be
 * had (ulimit -v), of a main thread's 8 MiB. */
static bool create(pthread_t *thread, bool detached, size_t stack_size, void *(*body)(void *),
                   void *arg) {
  for (;;) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (detached) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, stack_size);
    int failed = pthread_create(thread, &attr, body, arg);
    pthread_attr_destroy(&attr);
    if (!failed) return true;
    if (failed != EAGAIN || stack_size <= SMALL_STACK) return false;
    stack_size = SMALL_STACK;
  }
}

bool thread_start(void *(*body)(void *), void *arg, size_t stack_size, thread_kind kind) {
  start *s = malloc(sizeof *s);
  if (!s) return false;
  *s = (start){.body = body, .arg = arg, .kind = kind};
  pthread_t thread;
  pthread_mutex_lock(&lock);
  bool started = create(&thread, true, stack_size, trampoline, s);
  if (started && kind == THREAD_FINISHES) working++;
  pthread_mutex_unlock(&lock);
  if (!started) free(s);
  return started;
}

/* ---- services ---- */

typedef struct service_item {
  void (*run)(void *);
  void *arg;
  struct service_item *next;
} service_item;

static void *service_main(void *arg) {
  service *s = arg;
  if (s->on_start) s->on_start();
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->first) pthread_cond_wait(&s->work, &s->lock);
    service_item *item = s->first;
    if (!(s->first = item->next)) s->last = NULL;
    pthread_mutex_unlock(&s->lock);
    item->run(item->arg);
    free(item);
    pthread_mutex_lock(&s->lock);
    if (--s->outstanding == 0) pthread_cond_broadcast(&s->idle);
  }
  return NULL;
}

/* Called with s->lock held: s's thread, started on first use and registered for the exit drain
 * (a service that cannot be registered is not started). */
static bool service_started_locked(service *s) {
  if (s->started) return true;
  pthread_mutex_lock(&lock);
  bool room = service_count < MAX_SERVICES;
  pthread_mutex_unlock(&lock);
  if (!room || !thread_start(service_main, s, s->stack_size, THREAD_SERVES)) return false;
  pthread_mutex_lock(&lock);
  services[service_count++] = s;
  pthread_mutex_unlock(&lock);
  return s->started = true;
}

bool service_post(service *s, void (*run)(void *), void *arg) {
  service_item *item = malloc(sizeof *item);
  if (!item) return false;
  *item = (service_item){run, arg, NULL};
  pthread_mutex_lock(&s->lock);
  bool queued = service_started_locked(s);
  if (queued) {
    if (s->last)
      s->last->next = item;
    else
      s->first = item;
    s->last = item;
    s->outstanding++;
    pthread_cond_signal(&s->work);
  }
  pthread_mutex_unlock(&s->lock);
  if (!queued) free(item);
  return queued;
}

typedef struct waited {
  service *s;
  void (*run)(void *);
  void *arg;
  bool done;
} waited;

static void run_and_tell(void *arg) {
  waited *w = arg;
  w->run(w->arg);
  pthread_mutex_lock(&w->s->lock);
  w->done = true;
  pthread_cond_broadcast(&w->s->idle);
  pthread_mutex_unlock(&w->s->lock);
}

bool service_run_waited(service *s, void (*run)(void *), void *arg) {
  waited w = {s, run, arg, false};
  if (!service_post(s, run_and_tell, &w)) return false;
  pthread_mutex_lock(&s->lock);
  while (!w.done) pthread_cond_wait(&s->idle, &s->lock);
  pthread_mutex_unlock(&s->lock);
  return true;
}

void service_until_idle(service *s) {
  pthread_mutex_lock(&s->lock);
  while (s->outstanding) pthread_cond_wait(&s->idle, &s->lock);
  pthread_mutex_unlock(&s->lock);
}

bool thread_run(void *(*body)(void *), void *arg, size_t stack_size) {
  pthread_t thread;
  bool started = create(&thread, false, stack_size, body, arg);
  if (started) pthread_join(thread, NULL);
  return started;
}

bool threads_exiting(void) { return atomic_load(&exiting); }

void threads_drain(void) {
  pthread_mutex_lock(&lock);
  while (working > (finishing_here ? 1 : 0)) pthread_cond_wait(&ended, &lock);
  int count = service_count;
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < count; i++)
    if (services[i] != serving_here) service_until_idle(services[i]);
}

static void drain_at_exit(void) {
  atomic_store(&exiting, true);
  threads_drain();
}

void threads_guard_exit(void) { atexit(drain_at_exit); }

/* drainThreads(): the drain, for lib/ to call from process's 'exit' event. NVRTC registers
 * destructors of its own as a compile first needs them (after this file's atexit handler, so they
 * run before it): only a drain before exit() itself runs is sure to come first. On the main
 * thread only: a worker's exit does not end the process, and need not wait for others' work. */
static napi_value drain_threads(napi_env env, napi_callback_info info) {
  (void)info;
  if (syscall(SYS_gettid) == getpid()) threads_drain();
  return make_undefined(env);
}

bool threads_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"drainThreads", drain_threads}};
  return EXPORTS(env, exports, fns);
}
