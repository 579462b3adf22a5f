/* What the floors of bench/peer.js and bench/staging.js share: the driver loaded as cudadrv loads
 * it (dlopen("libcuda.so.1"), each entry point through cuGetProcAddress_v2), CK() for its calls,
 * and a clock. Define FLOOR_NAME (for messages) and DRIVER_CALLS(X), X(name, version) for each
 * entry point used, before including it; the entry points are then cu.name. */
#ifndef CUDADRV_BENCH_FLOOR_DRIVER_H
#define CUDADRV_BENCH_FLOOR_DRIVER_H
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DRIVER_ENTRY(name, version) PFN_##name##_v##version name;
static struct {
  DRIVER_CALLS(DRIVER_ENTRY)
} cu;
#undef DRIVER_ENTRY

static void check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS) return;
  const char *text = "unknown error";
  if (cu.cuGetErrorString) cu.cuGetErrorString(result, &text);
  fprintf(stderr, FLOOR_NAME ": %s failed: %s\n", call, text);
  exit(1);
}
#define CK(call) check(call, #call)

static void load_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  PFN_cuGetProcAddress_v12000 get_proc =
      lib ? (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2") : NULL;
  if (!get_proc) {
    fprintf(stderr, FLOOR_NAME ": no driver with cuGetProcAddress_v2: %s\n", dlerror());
    exit(1);
  }
  CUdriverProcAddressQueryResult found;
#define DRIVER_RESOLVE(name, version)                                                              \
  if (get_proc(#name, (void **)&cu.name, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found) !=    \
          CUDA_SUCCESS ||                                                                          \
      found != CU_GET_PROC_ADDRESS_SUCCESS) {                                                      \
    fprintf(stderr, FLOOR_NAME ": the driver lacks %s\n", #name);                                  \
    exit(1);                                                                                       \
  }
  DRIVER_CALLS(DRIVER_RESOLVE)
#undef DRIVER_RESOLVE
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
#endif
