/* memcpy_floor: the C side of bench/memory.js. It makes the copies that bench measures through
 * cudadrv, with the same driver calls, sizes and repetitions, in the same run:
 *
 *   memcpy_floor SAMPLES SIZE:REPS ...
 *
 * For each SIZE (bytes), each direction (HtoD, DtoH), each kind of host memory (pageable from
 * malloc, pinned from cuMemHostAlloc) and each mode (sync: cuMemcpyHtoD/DtoH; async:
 * cuMemcpy*Async on a non-blocking stream, then cuStreamSynchronize), SAMPLES times: REPS copies
 * timed as a whole. Prints {"device", "results": [{size, direction, memory, mode, seconds: [...]}]}.
 *
 * It loads the driver as cudadrv does: dlopen("libcuda.so.1"), every entry point through
 * cuGetProcAddress_v2 at an explicit ABI version (never -lcuda), on the device's primary context.
 * Built by bench/memory.js: cc -O2 -I<cuda include> bench/memcpy_floor.c -ldl */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DRIVER_CALLS(X)                                                                      \
  X(cuInit, 2000) X(cuGetErrorString, 6000) X(cuDeviceGet, 2000) X(cuDeviceGetName, 2000)      \
  X(cuDevicePrimaryCtxRetain, 7000) X(cuCtxPushCurrent, 4000) X(cuStreamCreate, 2000)          \
  X(cuStreamSynchronize, 2000) X(cuMemAlloc, 3020) X(cuMemFree, 3020) X(cuMemHostAlloc, 2020)  \
  X(cuMemFreeHost, 2000) X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020) X(cuMemcpyHtoDAsync, 3020)                       \
  X(cuMemcpyDtoHAsync, 3020)

#define DRIVER_ENTRY(name, version) PFN_##name##_v##version name;
static struct {
  DRIVER_CALLS(DRIVER_ENTRY)
} cu;
#undef DRIVER_ENTRY

static void fatal(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("memcpy_floor: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  exit(1);
}

static void check(CUresult result, const char *api) {
  if (result == CUDA_SUCCESS) return;
  const char *text = NULL;
  if (cu.cuGetErrorString(result, &text) != CUDA_SUCCESS || !text) text = "unknown error";
  fatal("%s failed: %s", api, text);
}
#define CK(fn, ...) check(cu.fn(__VA_ARGS__), #fn)

static void load_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) fatal("could not load libcuda.so.1: %s", dlerror());
  PFN_cuGetProcAddress_v12000 get_proc =
      (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) fatal("libcuda.so.1 has no cuGetProcAddress_v2 (a driver older than CUDA 12)");
  CUdriverProcAddressQueryResult found;
#define DRIVER_RESOLVE(name, version)                                                       \
  if (get_proc(#name, (void **)&cu.name, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found) \
          != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS)                          \
    fatal("the driver does not provide %s", #name);
  DRIVER_CALLS(DRIVER_RESOLVE)
#undef DRIVER_RESOLVE
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* REPS copies of size bytes, timed as a whole. */
static double measure(int to_device, int async, void *host, CUdeviceptr device, size_t size,
                      long reps, CUstream stream) {
  double start = now();
  for (long i = 0; i < reps; i++) {
    if (to_device && async) CK(cuMemcpyHtoDAsync, device, host, size, stream);
    else if (to_device) CK(cuMemcpyHtoD, device, host, size);
    else if (async) CK(cuMemcpyDtoHAsync, host, device, size, stream);
    else CK(cuMemcpyDtoH, host, device, size);
  }
  if (async) CK(cuStreamSynchronize, stream);
  return now() - start;
}

int main(int argc, char **argv) {
  if (argc < 3) fatal("usage: memcpy_floor SAMPLES SIZE:REPS ...");
  int samples = atoi(argv[1]);
  load_driver();
  CK(cuInit, 0);
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  char name[256];
  CK(cuDeviceGet, &dev, 0);
  CK(cuDeviceGetName, name, sizeof name, dev);
  CK(cuDevicePrimaryCtxRetain, &ctx, dev);
  CK(cuCtxPushCurrent, ctx);
  CK(cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING);
  printf("{\"device\": \"%s\", \"results\": [", name);
  const char *separator = "";
  for (int a = 2; a < argc; a++) {
    size_t size;
    long reps;
    if (sscanf(argv[a], "%zu:%ld", &size, &reps) != 2 || !size || reps < 1)
      fatal("bad SIZE:REPS %s", argv[a]);
    CUdeviceptr device;
    void *pinned, *pageable = malloc(size);
    if (!pageable) fatal("out of host memory");
    memset(pageable, 0x5a, size);
    CK(cuMemAlloc, &device, size);
    CK(cuMemHostAlloc, &pinned, size, 0);
    memset(pinned, 0xa5, size);
    for (int to_device = 1; to_device >= 0; to_device--) {
      for (int kind = 0; kind < 2; kind++) {
        for (int async = 0; async < 2; async++) {
          void *host = kind ? pinned : pageable;
          measure(to_device, async, host, device, size, 1, stream); /* warm-up */
          printf("%s\n {\"size\": %zu, \"direction\": \"%s\", \"memory\": \"%s\", \"mode\": \"%s\", "
                 "\"reps\": %ld, \"seconds\": [",
                 separator, size, to_device ? "HtoD" : "DtoH", kind ? "pinned" : "pageable",
                 async ? "async" : "sync", reps);
          for (int s = 0; s < samples; s++)
            printf("%s%.9f", s ? ", " : "", measure(to_device, async, host, device, size, reps, stream));
          printf("]}");
          separator = ",";
        }
      }
    }
    CK(cuMemFreeHost, pinned);
    CK(cuMemFree, device);
    free(pageable);
  }
  printf("\n]}\n");
  return 0;
}
