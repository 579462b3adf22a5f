/* The floor for bench/staging.js: copies between pageable host memory (malloc'd, every page
 * touched, as a JavaScript TypedArray's) and device memory from C, with the driver loaded as
 * cudadrv loads it (dlopen("libcuda.so.1"), each entry point through cuGetProcAddress_v2).
 *
 *   copy_floor MOST_BYTES
 *
 * Allocates MOST_BYTES of device memory in device 0's primary context and of pageable host memory,
 * then for every line read on stdin, "H BYTES" or "D BYTES", copies BYTES host to device
 * (cuMemcpyHtoD) or device to host (cuMemcpyDtoH) and prints the copy's milliseconds on a line of
 * its own. */
#include <string.h>
// clang-format off
#define DRIVER_CALLS(X)                                                                        \
  X(cuInit, 2000) X(cuGetErrorString, 6000) X(cuDeviceGet, 2000)                                 \
  X(cuDevicePrimaryCtxRetain, 7000) X(cuCtxSetCurrent, 4000) X(cuMemAlloc, 3020)                 \
  X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020)
// clang-format on
#define FLOOR_NAME "copy_floor"
#include "floor_driver.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MOST_BYTES\n", argv[0]);
    return 2;
  }
  size_t most = strtoull(argv[1], NULL, 10);
  load_driver();
  CK(cu.cuInit(0));
  CUdevice device;
  CUcontext ctx;
  CUdeviceptr memory;
  CK(cu.cuDeviceGet(&device, 0));
  CK(cu.cuDevicePrimaryCtxRetain(&ctx, device));
  CK(cu.cuCtxSetCurrent(ctx));
  CK(cu.cuMemAlloc(&memory, most));
  unsigned char *host = malloc(most);
  if (!host) return 1;
  memset(host, 1, most);
  char direction;
  for (size_t bytes; scanf(" %c %zu", &direction, &bytes) == 2;) {
    if (bytes > most || (direction != 'H' && direction != 'D')) return 2;
    double start = now_ms();
    if (direction == 'H')
      CK(cu.cuMemcpyHtoD(memory, host, bytes));
    else
      CK(cu.cuMemcpyDtoH(host, memory, bytes));
    printf("%.4f\n", now_ms() - start);
    fflush(stdout);
  }
  return 0;
}
