/* parallel_copy: the memcpy of a staged copy, between a region of the host side and a packed
 * buffer, cut into parts over the calling thread and helper threads of cudadrv's own. Helpers are
 * threads of the process's life (THREAD_SERVES), started as needed and parked between copies:
 * part i of the current job is helper i's (1-based), part 0 the caller's. */
#include <pthread.h>
#include <string.h>

#include "memory.h"
#include "staging.h"

#define MIN_PART ((size_t)256 << 10) /* no helper gets less to copy */

static pthread_mutex_t helpers_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, finished = PTHREAD_COND_INITIALIZER;
static uint32_t started; /* helpers running */
static struct job {
  region host;
  unsigned char *packed;
  bool pack;          /* host to packed, or back */
  size_t bytes, part; /* part: bytes of each part but the last */
  uint32_t parts;
  uint64_t round; /* bumped for each job */
  uint32_t left;  /* helpers' parts not yet copied */
} job;

/* Copies bytes [part * i, part * (i + 1)) of the packed region, row piece by row piece. */
static void copy_part(const struct job *j, uint32_t i) {
  const region *r = &j->host;
  size_t at = j->part * i, end = i + 1 == j->parts ? j->bytes : at + j->part;
  while (at < end) {
    size_t row = at / r->width, column = at % r->width;
    size_t n = r->width - column < end - at ? r->width - column : end - at;
    unsigned char *host =
        r->at + row / r->rows * r->slice_pitch + row % r->rows * r->pitch + column;
    if (j->pack)
      memcpy(j->packed + at, host, n);
    else
      memcpy(host, j->packed + at, n);
    at += n;
  }
}

static void *helper_main(void *arg) {
  uint32_t index = (uint32_t)(uintptr_t)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&helpers_lock);
  for (;;) {
    while (job.round == seen) pthread_cond_wait(&go, &helpers_lock);
    seen = job.round;
    if (index >= job.parts) continue;
    struct job mine = job;
    pthread_mutex_unlock(&helpers_lock);
    copy_part(&mine, index);
    pthread_mutex_lock(&helpers_lock);
    if (--job.left == 0) pthread_cond_signal(&finished);
  }
  return NULL;
}

void parallel_copy(const region *host, unsigned char *packed, bool pack, uint32_t helpers) {
  size_t bytes = host->width * host->rows * host->slices;
  uint32_t parts = 1 + helpers;
  if (bytes / MIN_PART < parts) parts = bytes / MIN_PART ? (uint32_t)(bytes / MIN_PART) : 1;
  pthread_mutex_lock(&helpers_lock);
  while (started + 1 < parts &&
         thread_start(helper_main, (void *)(uintptr_t)(started + 1), 64 * 1024, THREAD_SERVES))
    started++;
  if (parts > started + 1) parts = started + 1;
  size_t part = (bytes / parts + 63) & ~(size_t)63;
  job = (struct job){*host, packed, pack, bytes, part, parts, job.round + 1, parts - 1};
  struct job mine = job;
  pthread_cond_broadcast(&go);
  pthread_mutex_unlock(&helpers_lock);
  copy_part(&mine, 0);
  pthread_mutex_lock(&helpers_lock);
  while (job.left) pthread_cond_wait(&finished, &helpers_lock);
  pthread_mutex_unlock(&helpers_lock);
}
