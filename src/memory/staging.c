/* staging: synchronous copies between pageable host memory (an ordinary TypedArray) and device
 * memory through two page-locked buffers of cudadrv's own. Helper threads fill (or drain) one
 * buffer while the copy engine moves the other, which beats the driver's own pageable path by
 * the memcpy bandwidth of several cores.
 *
 * The copies go to the legacy default stream, as cuMemcpyHtoD's own do, and the call returns when
 * the last has completed: a synchronous copy's ordering and completion are unchanged. One staged
 * copy runs at a time in the process; a copy that finds the buffers busy (another thread's) takes
 * the driver's path. The buffers are malloc'd and registered (portable), never cuMemHostAlloc'd:
 * a context's end unregisters them but cannot free them under us; they are registered again when
 * that is found. Helpers are threads of the process's life, parked between copies. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memory.h"

#define MOST_HELPERS 15
#define MOST_BUFFER_BYTES ((size_t)256 << 20) /* each; the gain flattens long before */
#define MIN_PART ((size_t)256 << 10)          /* no helper gets less to copy */
#define MIN_CHUNK ((size_t)256 << 10)

typedef struct settings {
  bool enabled;
  size_t threshold;    /* the least bytes a staged copy takes */
  size_t buffer_bytes; /* of each of the two buffers */
  uint32_t helpers;    /* threads beside the caller's own */
} settings;

static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER; /* held by the one staged copy */
static settings current;                                 /* under busy */
static atomic_size_t least = SIZE_MAX; /* current.threshold, or SIZE_MAX while off: read unlocked */
static unsigned char *buffers[2];      /* under busy */
static size_t allocated;               /* bytes of each buffer, under busy */

/* ---- helpers: part i of the current job for helper i (1-based); part 0 is the caller's ---- */

static pthread_mutex_t helpers_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, finished = PTHREAD_COND_INITIALIZER;
static uint32_t started; /* helpers running */
static struct job {
  unsigned char *dst;
  const unsigned char *src;
  size_t bytes, part; /* part: bytes of each part but the last */
  uint32_t parts;
  uint64_t round; /* bumped for each job */
  uint32_t left;  /* helpers' parts not yet copied */
} job;

static void copy_part(const struct job *j, uint32_t i) {
  size_t at = j->part * i;
  size_t n = i + 1 == j->parts ? j->bytes - at : j->part;
  memcpy(j->dst + at, j->src + at, n);
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

/* memcpy(dst, src, bytes) over the caller's thread and up to `helpers` helpers, started as
 * needed (fewer where no thread can be had). */
static void parallel_copy(void *dst, const void *src, size_t bytes, uint32_t helpers) {
  uint32_t parts = 1 + helpers;
  if (bytes / MIN_PART < parts) parts = bytes / MIN_PART ? (uint32_t)(bytes / MIN_PART) : 1;
  pthread_mutex_lock(&helpers_lock);
  while (started + 1 < parts &&
         thread_start(helper_main, (void *)(uintptr_t)(started + 1), 64 * 1024, THREAD_SERVES))
    started++;
  if (parts > started + 1) parts = started + 1;
  size_t part = (bytes / parts + 63) & ~(size_t)63;
  job = (struct job){dst, src, bytes, part, parts, job.round + 1, parts - 1};
  struct job mine = job;
  pthread_cond_broadcast(&go);
  pthread_mutex_unlock(&helpers_lock);
  copy_part(&mine, 0);
  pthread_mutex_lock(&helpers_lock);
  while (job.left) pthread_cond_wait(&finished, &helpers_lock);
  pthread_mutex_unlock(&helpers_lock);
}

/* ---- the buffers ---- */

/* Under busy: frees the buffers where they can be (unregistered, or unknown to CUDA: registered
 * memory must not be freed, or a later malloc of the same pages would be taken as pinned). */
static bool release_buffers(void) {
  for (int i = 0; i < 2; i++) {
    if (!buffers[i]) continue;
    CUdeviceptr start;
    size_t size = 0;
    /* memory the driver cannot say it has let go of (no context current, say) is kept */
    if (memory_range((CUdeviceptr)(uintptr_t)buffers[i], &start, &size) != CUDA_SUCCESS ||
        (size && DRV(cuMemHostUnregister, buffers[i]) != CUDA_SUCCESS))
      return false;
    free(buffers[i]);
    buffers[i] = NULL;
  }
  allocated = 0;
  return true;
}

/* Under busy: both buffers, of current.buffer_bytes, registered in the current context (again,
 * where a context's end dropped their registration: both were registered together); false where
 * they cannot be had. */
static bool buffers_ready(void) {
  if (allocated != current.buffer_bytes && !release_buffers()) return false;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  for (int i = 0; i < 2 && !buffers[i]; i++) {
    void *memory;
    if (posix_memalign(&memory, page, current.buffer_bytes)) return release_buffers(), false;
    buffers[i] = memory;
    allocated = current.buffer_bytes;
  }
  CUdeviceptr start;
  size_t size = 0;
  if (memory_range((CUdeviceptr)(uintptr_t)buffers[0], &start, &size) != CUDA_SUCCESS) return false;
  for (int i = 0; i < 2 && !size; i++) {
    CUresult result = DRV(cuMemHostRegister, buffers[i], allocated, CU_MEMHOSTREGISTER_PORTABLE);
    if (result != CUDA_SUCCESS && result != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) return false;
  }
  return true;
}

/* ---- the copy ---- */

typedef struct pipeline {
  CUdeviceptr device;
  unsigned char *host;
  size_t bytes;
  size_t chunk; /* bytes through a buffer at a time: a quarter of the copy, within the buffer */
  bool to_device;
  CUevent events[2];
  bool pending[2]; /* a copy through buffer i is queued and its event recorded */
  const char *api; /* the call that failed */
} pipeline;

/* Queues the copy of chunk k between device and buffer k % 2, and its event. */
static CUresult queue_chunk(pipeline *p, size_t k) {
  size_t at = k * p->chunk, n = p->bytes - at < p->chunk ? p->bytes - at : p->chunk;
  int b = (int)(k % 2);
  CUresult result = p->to_device ? DRV(cuMemcpyHtoDAsync, p->device + at, buffers[b], n, NULL)
                                 : DRV(cuMemcpyDtoHAsync, buffers[b], p->device + at, n, NULL);
  p->api = p->to_device ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync";
  if (result == CUDA_SUCCESS) {
    result = DRV(cuEventRecord, p->events[b], NULL);
    p->api = "cuEventRecord";
  }
  p->pending[b] = result == CUDA_SUCCESS;
  return result;
}

/* Waits for the copy through buffer b, if one is queued. */
static CUresult wait_buffer(pipeline *p, int b) {
  if (!p->pending[b]) return CUDA_SUCCESS;
  p->pending[b] = false;
  p->api = "cuEventSynchronize";
  return DRV(cuEventSynchronize, p->events[b]);
}

static CUresult run(pipeline *p, uint32_t helpers) {
  /* four chunks at least, so that copying in memory and the copy engine overlap */
  p->chunk = ((p->bytes / 4 + 4095) & ~(size_t)4095);
  if (p->chunk < MIN_CHUNK) p->chunk = MIN_CHUNK;
  if (p->chunk > allocated) p->chunk = allocated;
  size_t chunks = (p->bytes + p->chunk - 1) / p->chunk;
  CUresult result = CUDA_SUCCESS;
  if (!p->to_device)
    for (size_t k = 0; k < 2 && k < chunks && result == CUDA_SUCCESS; k++)
      result = queue_chunk(p, k);
  for (size_t k = 0; k < chunks && result == CUDA_SUCCESS; k++) {
    int b = (int)(k % 2);
    size_t at = k * p->chunk, n = p->bytes - at < p->chunk ? p->bytes - at : p->chunk;
    if ((result = wait_buffer(p, b)) != CUDA_SUCCESS) break;
    if (p->to_device) {
      parallel_copy(buffers[b], p->host + at, n, helpers);
      result = queue_chunk(p, k);
    } else {
      parallel_copy(p->host + at, buffers[b], n, helpers);
      if (k + 2 < chunks) result = queue_chunk(p, k + 2);
    }
  }
  /* nothing may still move through the buffers when the next copy fills them */
  for (int b = 0; b < 2; b++) {
    const char *api = p->api;
    CUresult waited = wait_buffer(p, b);
    if (result == CUDA_SUCCESS)
      result = waited;
    else
      p->api = api;
  }
  return result;
}

int staged_copy(napi_env env, CUdeviceptr device, void *host, size_t bytes, bool to_device) {
  if (bytes < atomic_load_explicit(&least, memory_order_relaxed) || pthread_mutex_trylock(&busy))
    return 0;
  int outcome = 0;
  CUdeviceptr start;
  size_t known = 1;
  pipeline p = {device, host, bytes, 0, to_device, {NULL, NULL}, {false, false}, NULL};
  /* page-locked, registered and managed memory are the driver's to copy at full speed */
  if (memory_range((CUdeviceptr)(uintptr_t)host, &start, &known) != CUDA_SUCCESS || known ||
      !buffers_ready())
    goto done;
  if (DRV(cuEventCreate, &p.events[0], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) goto done;
  if (DRV(cuEventCreate, &p.events[1], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) goto done;
  CUresult result = run(&p, current.helpers);
  outcome = result == CUDA_SUCCESS ? 1 : (throw_cu(env, result, p.api), -1);
done:
  for (int i = 0; i < 2; i++)
    if (p.events[i]) (void)DRV(cuEventDestroy, p.events[i]);
  pthread_mutex_unlock(&busy);
  return outcome;
}

/* ---- what lib/ sets and reads ---- */

static void set_locked(settings s) {
  current = s;
  atomic_store(&least, s.enabled ? s.threshold : SIZE_MAX);
}

/* stagingSettings(enabled?, threshold?, bufferBytes?, helpers?): sets what is given (all four, or
 * none), and returns [enabled, threshold, bufferBytes, helpers, the most helpers]. Waits for a
 * staged copy of another thread to end. */
static napi_value staging_settings(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  settings s;
  bool set = !is_undefined(env, argv[0]);
  if (set) {
    if (!arg_bool(env, argv[0], &s.enabled) || !arg_size(env, argv[1], "threshold", &s.threshold) ||
        !arg_size(env, argv[2], "bufferBytes", &s.buffer_bytes) ||
        !arg_uint32(env, argv[3], "helpers", &s.helpers))
      return NULL;
    if (s.buffer_bytes < 4096 || s.buffer_bytes > MOST_BUFFER_BYTES || s.helpers > MOST_HELPERS)
      return throw_range(env, "staging: bufferBytes from 4096 to 2**28, helpers from 0 to 15");
  }
  pthread_mutex_lock(&busy);
  if (set) set_locked(s);
  s = current;
  pthread_mutex_unlock(&busy);
  napi_value result;
  NAPI_CALL(env, napi_create_array_with_length(env, 5, &result));
  napi_value values[5] = {make_bool(env, s.enabled), make_uint(env, s.threshold),
                          make_uint(env, s.buffer_bytes), make_uint(env, s.helpers),
                          make_uint(env, MOST_HELPERS)};
  for (uint32_t i = 0; i < 5; i++) NAPI_CALL(env, napi_set_element(env, result, i, values[i]));
  return result;
}

/* stagingRelease(): frees the buffers unless a copy uses them; whether none is left. */
static napi_value staging_release(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
  if (!pthread_mutex_trylock(&busy)) {
    released = release_buffers();
    pthread_mutex_unlock(&busy);
  }
  return make_bool(env, released);
}

bool staging_init(napi_env env, napi_value exports) {
  static atomic_flag once = ATOMIC_FLAG_INIT;
  if (!atomic_flag_test_and_set(&once)) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t helpers = cores > 1 ? (uint32_t)(cores - 1) : 0;
    pthread_mutex_lock(&busy);
    /* on an H100 host (bench/staging.js), staging beat the driver from 16 MiB both ways and lost
     * below 4 MiB; 7 helpers and the caller move 16 MiB chunks at 20-40 GB/s */
    set_locked((settings){true, (size_t)16 << 20, (size_t)16 << 20, helpers > 7 ? 7 : helpers});
    pthread_mutex_unlock(&busy);
  }
  static const export_fn fns[] = {{"stagingSettings", staging_settings},
                                  {"stagingRelease", staging_release}};
  return EXPORTS(env, exports, fns);
}
