/* reaper: one process-wide thread that releases memory off the main thread, for finalizers and
 * reclaims (memory.h says why), and the release itself (release_now). */
#include <stdlib.h>
#include <unistd.h>

#include "memory.h"

typedef struct release_job {
  release_op op;
  uint64_t address;
  ctx_rec *ctx;
} release_job;

/* The reaper takes no part in stream captures (relaxed mode): see release_outside_captures. */
static void relax_captures(void) {
  CUstreamCaptureMode relaxed = CU_STREAM_CAPTURE_MODE_RELAXED;
  DRV(cuThreadExchangeStreamCaptureMode, &relaxed); /* optional: an old driver has no captures */
}

static service reaper = SERVICE(256 * 1024, relax_captures);

CUresult release_now(release_op op, uint64_t address, ctx_rec *ctx) {
  if (op == RELEASE_ALIGNED_FREE) { /* unmapping pages can wait for the device too (HMM) */
    free((void *)(uintptr_t)address);
    return CUDA_SUCCESS;
  }
  if (!ctx_enter(ctx)) return CUDA_SUCCESS;
  /* The context's work ends first: queued copies may still use the memory (pool memory, pinned
   * and registered host memory: their frees do not wait), and cuMemFree, which does wait for the
   * device, held a copy on another stream back until a 400 ms kernel ended while it waited (H100,
   * driver 580); behind cuCtxSynchronize the copy went ahead. But a synchronization beside a stream
   * capture breaks the capture (driver 580: the next work captured fails, "operation failed due to
   * a previous error during capture"): while one begun through cudadrv is under way, on any
   * thread, the release goes ahead without it (what the memory's own work used is kept alive
   * until its stream has passed it, and a captured graph keeps what its nodes use); a capture
   * beginning meanwhile waits for the synchronization to end. */
  synchronize_unless_capturing();
  CUresult result;
  switch (op) {
  case RELEASE_MEM_FREE:
  case RELEASE_MEM_FREE_ORDERED: result = DRV(cuMemFree, (CUdeviceptr)address); break;
  case RELEASE_IPC_CLOSE: result = DRV(cuIpcCloseMemHandle, (CUdeviceptr)address); break;
  case RELEASE_HOST_FREE: result = DRV(cuMemFreeHost, (void *)(uintptr_t)address); break;
  default: result = DRV(cuMemHostUnregister, (void *)(uintptr_t)address); break;
  }
  ctx_leave();
  return result;
}

/* A stream capture under way (in global mode, on any thread) refuses frees, which may wait for
 * the device: the reaper does not take part in captures (relaxed mode), and tries again for up to
 * ten seconds while one refuses it. */
static CUresult release_outside_captures(const release_job *job) {
  CUresult result = release_now(job->op, job->address, job->ctx);
  for (int tries = 0; tries < 1000 && (result == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ||
                                       result == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
       tries++) {
    usleep(10000);
    result = release_now(job->op, job->address, job->ctx);
  }
  return result;
}

/* The reaper's work: one release. */
static void reap(void *arg) {
  release_job *job = arg;
  stats_cleanup(release_outside_captures(job));
  if (job->ctx) ctx_rec_wait_end(job->ctx); /* may destroy a context detached meanwhile */
  free(job);
}

void reaper_drain(void) { service_until_idle(&reaper); }

bool reaper_enqueue(release_op op, uint64_t address, ctx_rec *ctx) {
  release_job *job = malloc(sizeof *job);
  if (!job) return false;
  job->op = op;
  job->address = address;
  job->ctx = ctx;
  if (ctx) ctx_rec_wait_begin(ctx); /* a detach() meanwhile leaves destroying it to the reaper */
  if (service_post(&reaper, reap, job)) return true;
  if (ctx) ctx_rec_wait_end(ctx);
  free(job);
  return false;
}
