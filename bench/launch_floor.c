/* launch_floor: the floor bench/launch.js compares cudadrv's launches with. Plain C against the
 * driver, loaded as cudadrv loads it (dlopen libcuda.so.1, every call through cuGetProcAddress),
 * launching the same kernels the same way: an empty kernel, and one of 4 arguments (two
 * pointers, an int and a float), in batches on the primary context's default stream.
 *
 *   cc -O2 -I/usr/local/cuda/include bench/launch_floor.c -ldl -o launch_floor
 *   ./launch_floor kernels.ptx BATCH ROUNDS
 *
 * Prints one JSON object: microseconds per launch (median over ROUNDS batches of BATCH launches)
 * to enqueue (the CPU's cost) and with the final synchronize (the throughput). */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static PFN_cuInit_v2000 pInit;
static PFN_cuDeviceGet_v2000 pDeviceGet;
static PFN_cuDevicePrimaryCtxRetain_v7000 pPrimaryCtxRetain;
static PFN_cuCtxSetCurrent_v4000 pCtxSetCurrent;
static PFN_cuModuleLoadData_v2000 pModuleLoadData;
static PFN_cuModuleGetFunction_v2000 pModuleGetFunction;
static PFN_cuMemAlloc_v3020 pMemAlloc;
static PFN_cuLaunchKernel_v4000 pLaunchKernel;
static PFN_cuCtxSynchronize_v2000 pCtxSynchronize;

#define CHECK(call)                                                        \
  do {                                                                     \
    CUresult r_ = (call);                                                  \
    if (r_ != CUDA_SUCCESS) {                                              \
      fprintf(stderr, "launch_floor: %s failed with CUresult %d\n", #call, (int)r_); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, compare);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Medians of enqueue and enqueue+synchronize times per launch, in microseconds. */
static void measure(CUfunction f, void **params, int batch, int rounds, double *enqueue, double *synced) {
  double *a = malloc(rounds * sizeof *a), *b = malloc(rounds * sizeof *b);
  for (int i = 0; i < 10 * batch; i++) CHECK(pLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
  CHECK(pCtxSynchronize());
  for (int r = 0; r < rounds; r++) {
    double t0 = now_us();
    for (int i = 0; i < batch; i++) CHECK(pLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    double t1 = now_us();
    CHECK(pCtxSynchronize());
    double t2 = now_us();
    a[r] = (t1 - t0) / batch;
    b[r] = (t2 - t0) / batch;
  }
  *enqueue = median(a, rounds);
  *synced = median(b, rounds);
  free(a);
  free(b);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: launch_floor kernels.ptx BATCH ROUNDS\n");
    return 2;
  }
  int batch = atoi(argv[2]), rounds = atoi(argv[3]);
  FILE *file = fopen(argv[1], "rb");
  if (!file) {
    perror(argv[1]);
    return 1;
  }
  static char ptx[1 << 16];
  ptx[fread(ptx, 1, sizeof ptx - 1, file)] = '\0';
  fclose(file);

  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "launch_floor: %s\n", dlerror());
    return 1;
  }
  PFN_cuGetProcAddress_v12000 getProc = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
  if (!getProc) {
    fprintf(stderr, "launch_floor: the driver lacks cuGetProcAddress_v2\n");
    return 1;
  }
  CUdriverProcAddressQueryResult found;
#define RESOLVE(var, name, version) CHECK(getProc(name, (void **)&var, version, CU_GET_PROC_ADDRESS_DEFAULT, &found))
  RESOLVE(pInit, "cuInit", 2000);
  RESOLVE(pDeviceGet, "cuDeviceGet", 2000);
  RESOLVE(pPrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000);
  RESOLVE(pCtxSetCurrent, "cuCtxSetCurrent", 4000);
  RESOLVE(pModuleLoadData, "cuModuleLoadData", 2000);
  RESOLVE(pModuleGetFunction, "cuModuleGetFunction", 2000);
  RESOLVE(pMemAlloc, "cuMemAlloc", 3020);
  RESOLVE(pLaunchKernel, "cuLaunchKernel", 4000);
  RESOLVE(pCtxSynchronize, "cuCtxSynchronize", 2000);

  CUdevice device;
  CUcontext ctx;
  CUmodule module;
  CUfunction empty, four;
  CUdeviceptr a, b;
  CHECK(pInit(0));
  CHECK(pDeviceGet(&device, 0));
  CHECK(pPrimaryCtxRetain(&ctx, device));
  CHECK(pCtxSetCurrent(ctx));
  CHECK(pModuleLoadData(&module, ptx));
  CHECK(pModuleGetFunction(&empty, module, "empty"));
  CHECK(pModuleGetFunction(&four, module, "four"));
  CHECK(pMemAlloc(&a, 1024));
  CHECK(pMemAlloc(&b, 1024));
  int n = 256;
  float s = 2.0f;
  void *params[] = {&a, &b, &n, &s};

  double empty_enqueue, empty_synced, four_enqueue, four_synced;
  measure(empty, NULL, batch, rounds, &empty_enqueue, &empty_synced);
  measure(four, params, batch, rounds, &four_enqueue, &four_synced);
  printf("{\"emptyEnqueue\": %.4f, \"emptySynced\": %.4f, \"fourEnqueue\": %.4f, \"fourSynced\": %.4f}\n",
         empty_enqueue, empty_synced, four_enqueue, four_synced);
  return 0;
}
