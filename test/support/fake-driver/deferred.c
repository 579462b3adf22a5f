/* Deferred copies (FAKE_CUDA_DEFER=1): an async copy to or from page-locked host memory (allocated
 * or registered) waits in one queue, in order, as behind a busy copy engine, until a call that
 * waits for it runs it: cuEventSynchronize up to its event, every other call but those of
 * fake_defer_holds all of it, and so does an async copy that is not queued itself, which comes
 * after them in its stream. Events recorded behind queued copies are NOT_READY to cuEventQuery
 * until then. A caller that fills or reads such memory while a copy of it is queued
 * gets wrong bytes where the real driver would, not by chance. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"

typedef struct {
  unsigned char *to;
  const unsigned char *from;
  size_t width, rows, depth, to_row, from_row, to_slice, from_slice;
} deferred;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static deferred *queue;
static size_t queued, room;
static uint64_t enqueued, ran; /* copies ever queued, and run */

static bool pinned(const void *host) {
  obj o;
  return host && obj_memory((uintptr_t)host, 1, &o) &&
         (o.kind == OBJ_HOST_MEMORY || o.kind == OBJ_REGISTERED);
}

bool fake_defer_wanted(const void *to, const void *from, CUstream stream) {
  static int on = -1;
  if (on < 0) on = getenv("FAKE_CUDA_DEFER") != NULL;
  (void)stream;
  return on && (pinned(to) || pinned(from));
}

bool fake_defer(unsigned char *to, const unsigned char *from, size_t width, size_t rows,
                size_t depth, size_t to_row, size_t from_row, size_t to_slice, size_t from_slice) {
  pthread_mutex_lock(&lock);
  if (queued == room) {
    size_t more = room ? 2 * room : 16;
    deferred *grown = realloc(queue, more * sizeof *grown);
    if (!grown) return pthread_mutex_unlock(&lock), false;
    queue = grown;
    room = more;
  }
  queue[queued++] =
      (deferred){to, from, width, rows, depth, to_row, from_row, to_slice, from_slice};
  enqueued++;
  pthread_mutex_unlock(&lock);
  return true;
}

uint64_t fake_defer_mark(void) {
  pthread_mutex_lock(&lock);
  uint64_t mark = enqueued;
  pthread_mutex_unlock(&lock);
  return mark;
}

bool fake_defer_done(uint64_t mark) {
  pthread_mutex_lock(&lock);
  bool done = ran >= mark;
  pthread_mutex_unlock(&lock);
  return done;
}

/* Runs the queued copies up to mark (UINT64_MAX: all). */
void fake_defer_run(uint64_t mark) {
  pthread_mutex_lock(&lock);
  size_t n = 0;
  for (; n < queued && ran < mark; n++, ran++) {
    const deferred *d = &queue[n];
    for (size_t z = 0; z < d->depth; z++)
      for (size_t y = 0; y < d->rows; y++)
        memmove(d->to + z * d->to_slice + y * d->to_row,
                d->from + z * d->from_slice + y * d->from_row, d->width);
  }
  if (n) memmove(queue, queue + n, (queued - n) * sizeof *queue);
  queued -= n;
  pthread_mutex_unlock(&lock);
}

/* The calls that leave queued copies queued: those a staged copy makes while its copies run. */
bool fake_defer_holds(const char *symbol) {
  static const char *const holding[] = {
      "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync",   "cuMemcpy2DAsync",        "cuMemcpy3DAsync",
      "cuEventRecord",     "cuEventQuery",        "cuEventSynchronize",     "cuEventCreate",
      "cuEventDestroy",    "cuStreamIsCapturing", "cuPointerGetAttributes", "cuCtxGetCurrent"};
  for (size_t i = 0; i < sizeof holding / sizeof *holding; i++) {
    size_t n = strlen(holding[i]);
    if (!strncmp(symbol, holding[i], n) && (!symbol[n] || symbol[n] == '_')) return true;
  }
  return false;
}
