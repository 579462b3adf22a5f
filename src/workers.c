/* workers: threads kept for long work (NVRTC compiles), each with as much stack as a main thread
 * gets (the compiler recurses deeply on some sources). A fresh thread per compile cost 3-5% of
 * the compile on an H100 host, pinned to one core (NVRTC from C, fresh thread against main
 * thread): glibc gives a thread's stack pages back when it ends, and a new thread's malloc cache
 * starts empty, so each compile faulted its stack in again. A worker waits WORKER_IDLE_SECONDS
 * for more work, then ends; there are as many as work has been given at once. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "cudadrv.h"

#define WORKER_STACK (8 * 1024 * 1024)
#define WORKER_IDLE_SECONDS 60

typedef struct task {
  struct task *next;
  work_fn work;
  void *arg;
} task;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t queued;   /* a task was queued */
  pthread_cond_t finished; /* a waited-for task finished (workers_run) */
  task *first, *last;
  int waiting;             /* tasks queued and not yet taken */
  int idle;                /* workers waiting for a task */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .queued = PTHREAD_COND_INITIALIZER,
          .finished = PTHREAD_COND_INITIALIZER};

static atomic_uint workers_started;

/* Under lock: waits for a task until the idle time is up; NULL then. */
static task *next_task(void) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += WORKER_IDLE_SECONDS;
  pool.idle++;
  int timed_out = 0;
  while (!pool.first && timed_out != ETIMEDOUT)
    timed_out = pthread_cond_timedwait(&pool.queued, &pool.lock, &until);
  pool.idle--;
  task *next = pool.first;
  if (next) {
    pool.first = next->next;
    if (!pool.first) pool.last = NULL;
    pool.waiting--;
  }
  return next;
}

static void *worker_main(void *unused) {
  (void)unused;
  pthread_mutex_lock(&pool.lock);
  for (task *t; (t = next_task());) {
    pthread_mutex_unlock(&pool.lock);
    t->work(t->arg);
    free(t);
    pthread_mutex_lock(&pool.lock);
  }
  pthread_mutex_unlock(&pool.lock);
  return NULL;
}

/* Under lock: a new worker; false when none could start. */
static bool start_worker(void) {
  pthread_attr_t attr;
  pthread_t thread;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, WORKER_STACK);
  bool started = pthread_create(&thread, &attr, worker_main, NULL) == 0;
  pthread_attr_destroy(&attr);
  if (started) atomic_fetch_add(&workers_started, 1);
  return started;
}

bool workers_submit(work_fn work, void *arg) {
  task *t = malloc(sizeof *t);
  if (!t) return false;
  t->next = NULL;
  t->work = work;
  t->arg = arg;
  pthread_mutex_lock(&pool.lock);
  bool queued = pool.waiting < pool.idle || start_worker();
  if (queued) {
    if (pool.last) pool.last->next = t;
    else pool.first = t;
    pool.last = t;
    pool.waiting++;
    pthread_cond_signal(&pool.queued);
  }
  pthread_mutex_unlock(&pool.lock);
  if (!queued) free(t);
  return queued;
}

typedef struct waited {
  work_fn work;
  void *arg;
  bool done;
} waited;

static void run_waited(void *data) {
  waited *w = data;
  w->work(w->arg);
  pthread_mutex_lock(&pool.lock);
  w->done = true;
  pthread_cond_broadcast(&pool.finished);
  pthread_mutex_unlock(&pool.lock);
}

void workers_run(work_fn work, void *arg) {
  waited w = {work, arg, false};
  if (!workers_submit(run_waited, &w)) {
    work(arg); /* no worker to be had: the calling thread's stack will have to do */
    return;
  }
  pthread_mutex_lock(&pool.lock);
  while (!w.done) pthread_cond_wait(&pool.finished, &pool.lock);
  pthread_mutex_unlock(&pool.lock);
}

/* workersStarted(): how many workers the process has started (for tests). */
static napi_value workers_started_count(napi_env env, napi_callback_info info) {
  (void)info;
  return make_uint(env, atomic_load(&workers_started));
}

bool workers_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"workersStarted", workers_started_count}};
  return EXPORTS(env, exports, fns);
}
