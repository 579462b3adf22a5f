/* call_timer: a libcuda.so.1 for bench/call-times.js, in front of the real driver
 * (CALL_TIMER_REAL, its path). It hands out the driver's entry points through cuGetProcAddress_v2,
 * the one way cudadrv and bench/floor.c load them, with those of TIMED wrapped: each call is timed
 * on the monotonic clock. At exit it appends one JSON line to CALL_TIMER_OUT:
 *   {"process": "node" or "floor", "clockNs": what one reading of the clock pair costs,
 *    "calls": {NAME: [count, nanoseconds in all, the clock's readings included]}}
 * so that the time a process spends inside the driver's calls can be set beside the time of its
 * steps: what is left is the caller's own. The first CALL_TIMER_SKIP calls of each (the warm-up
 * steps') are made but not counted.
 *
 * cc -O2 -shared -fPIC -I<cuda include> bench/call_timer.c -ldl -o DIR/libcuda.so.1 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* X(name, parameters, arguments): the calls timed, by the name cuGetProcAddress is asked for. */
// clang-format off
#define TIMED(X)                                                                                   \
  X(cuStreamQuery, (CUstream s), (s))                                                              \
  X(cuGraphLaunch, (CUgraphExec e, CUstream s), (e, s))                                            \
  X(cuLaunchKernel, (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
                     unsigned bz, unsigned shared, CUstream s, void **params, void **extra),        \
    (f, gx, gy, gz, bx, by, bz, shared, s, params, extra))                                         \
  X(cuMemAlloc, (CUdeviceptr *p, size_t n), (p, n))                                                \
  X(cuMemFree, (CUdeviceptr p), (p))                                                               \
  X(cuMemAllocAsync, (CUdeviceptr *p, size_t n, CUstream s), (p, n, s))                            \
  X(cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, s))                                           \
  X(cuMemcpyHtoD, (CUdeviceptr d, const void *h, size_t n), (d, h, n))                             \
  X(cuMemcpyDtoH, (void *h, CUdeviceptr d, size_t n), (h, d, n))                                   \
  X(cuCtxGetCurrent, (CUcontext *c), (c))
// clang-format on

#define ENUM(name, params, args) T_##name,
enum { TIMED(ENUM) T_COUNT };
#undef ENUM

static const char *names[T_COUNT] = {
#define NAME(name, params, args) #name,
    TIMED(NAME)
#undef NAME
};
static void *reals[T_COUNT];
static double spent[T_COUNT];
static unsigned long long calls[T_COUNT], skipped[T_COUNT], skip;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define WRAP(name, params, args)                                                                   \
  static CUresult timed_##name params {                                                            \
    if (skip && skipped[T_##name] < skip) {                                                        \
      skipped[T_##name]++;                                                                         \
      return ((CUresult(*) params)reals[T_##name])args;                                            \
    }                                                                                              \
    double start = now_ns();                                                                       \
    CUresult result = ((CUresult(*) params)reals[T_##name])args;                                   \
    spent[T_##name] += now_ns() - start;                                                           \
    calls[T_##name]++;                                                                             \
    return result;                                                                                 \
  }
TIMED(WRAP)
#undef WRAP

static void *wrappers[T_COUNT] = {
#define WRAPPER(name, params, args) (void *)timed_##name,
    TIMED(WRAPPER)
#undef WRAPPER
};

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

__attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                    CUdriverProcAddressQueryResult *status) {
  static get_proc_fn real;
  if (!real) {
    const char *path = getenv("CALL_TIMER_REAL");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    real = lib ? (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    const char *skipping = getenv("CALL_TIMER_SKIP");
    skip = skipping ? strtoull(skipping, NULL, 10) : 0;
    if (!real) {
      fprintf(stderr, "call_timer: no driver at CALL_TIMER_REAL (%s)\n", path ? path : "unset");
      return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
    }
  }
  CUresult result = real(symbol, pfn, version, flags, status);
  for (int i = 0; result == CUDA_SUCCESS && *pfn && i < T_COUNT; i++)
    if (!strcmp(symbol, names[i])) {
      reals[i] = *pfn;
      *pfn = wrappers[i];
    }
  return result;
}

__attribute__((destructor)) static void report(void) {
  const char *out = getenv("CALL_TIMER_OUT");
  FILE *file = out ? fopen(out, "a") : NULL;
  if (!file) return;
  double pair = 0;
  enum { READINGS = 100000 };
  for (int i = 0; i < READINGS; i++) {
    double start = now_ns();
    pair += now_ns() - start;
  }
  pair /= READINGS;
  fprintf(file, "{\"process\":\"%s\",\"clockNs\":%.2f,\"calls\":{", program_invocation_short_name,
          pair);
  const char *comma = "";
  for (int i = 0; i < T_COUNT; i++)
    if (calls[i]) {
      fprintf(file, "%s\"%s\":[%llu,%.0f]", comma, names[i], calls[i], spent[i]);
      comma = ",";
    }
  fprintf(file, "}}\n");
  fclose(file);
}
