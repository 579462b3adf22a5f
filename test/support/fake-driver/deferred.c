/* Deferred copies (FAKE_CUDA_DEFER=1): an async copy to or from page-locked host memory (allocated
 * or registered) waits in one queue, in order, as behind a busy copy engine, until a call that
 * waits for it runs it: cuEventSynchronize up to its event, every other call but those of
 * fake_defer_holds all of it, and so does an async copy that is not queued itself, which comes
 * after them in its stream. Events recorded behind queued copies are NOT_READY to cuEventQuery
 * until then. A caller that fills or reads such memory while a copy of it is queued
 * gets wrong bytes where the real driver would, not by chance. A stream callback added while
 * copies are queued waits behind them, as the driver calls it once the work before it is done:
 * memory it lets go of must outlive the queued copies into it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"

typedef struct {
  unsigned char *to;
  const unsigned char *from;
  size_t width, rows, depth, to_row, from_row, to_slice, from_slice;
  CUstreamCallback callback; /* set: a stream callback, not a copy */
  CUstream stream;
  void *data;
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

/* Queues d; false where memory runs out (the caller then does it now). */
static bool enqueue(deferred d) {
  pthread_mutex_lock(&lock);
  if (queued == room) {
    size_t more = room ? 2 * room : 16;
    deferred *grown = realloc(queue, more * sizeof *grown);
    if (!grown) return pthread_mutex_unlock(&lock), false;
    queue = grown;
    room = more;
  }
  queue[queued++] = d;
  enqueued++;
  pthread_mutex_unlock(&lock);
  return true;
}

bool fake_defer(unsigned char *to, const unsigned char *from, size_t width, size_t rows,
                size_t depth, size_t to_row, size_t from_row, size_t to_slice, size_t from_slice) {
  return enqueue((deferred){.to = to,
                            .from = from,
                            .width = width,
                            .rows = rows,
                            .depth = depth,
                            .to_row = to_row,
                            .from_row = from_row,
                            .to_slice = to_slice,
                            .from_slice = from_slice});
}

bool fake_defer_callback(CUstream stream, CUstreamCallback callback, void *data) {
  pthread_mutex_lock(&lock);
  bool behind = queued > 0;
  pthread_mutex_unlock(&lock);
  return behind && enqueue((deferred){.callback = callback, .stream = stream, .data = data});
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

/* Runs the queued copies and callbacks up to mark (UINT64_MAX: all), in order; a callback is
 * called with the lock let go (it may call the driver). */
void fake_defer_run(uint64_t mark) {
  pthread_mutex_lock(&lock);
  while (queued && ran < mark) {
    deferred d = queue[0];
    memmove(queue, queue + 1, (queued - 1) * sizeof *queue);
    queued--;
    ran++;
    if (d.callback) {
      pthread_mutex_unlock(&lock);
      d.callback(d.stream, CUDA_SUCCESS, d.data);
      pthread_mutex_lock(&lock);
      continue;
    }
    for (size_t z = 0; z < d.depth; z++)
      for (size_t y = 0; y < d.rows; y++)
        memmove(d.to + z * d.to_slice + y * d.to_row, d.from + z * d.from_slice + y * d.from_row,
                d.width);
  }
  pthread_mutex_unlock(&lock);
}

/* The calls that leave queued copies queued: those a staged copy makes while its copies run, and
 * those that keep an async copy's memory until its stream has passed it. */
bool fake_defer_holds(const char *symbol) {
  static const char *const holding[] = {
      "cuMemcpyHtoDAsync",   "cuMemcpyDtoHAsync",   "cuMemcpy2DAsync",        "cuMemcpy3DAsync",
      "cuEventRecord",       "cuEventQuery",        "cuEventSynchronize",     "cuEventCreate",
      "cuEventDestroy",      "cuStreamIsCapturing", "cuPointerGetAttributes", "cuCtxGetCurrent",
      "cuStreamAddCallback", "cuCtxPushCurrent",    "cuCtxPopCurrent"};
  for (size_t i = 0; i < sizeof holding / sizeof *holding; i++) {
    size_t n = strlen(holding[i]);
    if (!strncmp(symbol, holding[i], n) && (!symbol[n] || symbol[n] == '_')) return true;
  }
  return false;
}
