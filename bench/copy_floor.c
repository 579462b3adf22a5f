/* The floor for bench/staging.js: copies between pageable host memory (malloc'd, every page
 * touched, as a JavaScript TypedArray's) and device memory from C, with the driver loaded as
 * cudadrv loads it (dlopen("libcuda.so.1"), each entry point through cuGetProcAddress_v2).
 *
 *   copy_floor MOST_BYTES
 *
 * Allocates MOST_BYTES of device memory in device 0's primary context and of pageable host memory
 * (a little more: a 2D copy's host rows are ROW + 64 bytes apart), then for every line read on
 * stdin, "<mode> BYTES", copies BYTES and prints the copy's milliseconds on a line of its own:
 *   H, D  host to device (cuMemcpyHtoD), device to host (cuMemcpyDtoH)
 *   h, d  the same with cuMemcpyHtoDAsync / cuMemcpyDtoHAsync on a stream, then
 *         cuStreamSynchronize
 *   p, q  the same with cuMemcpy2D: rows of ROW bytes, BYTES / ROW of them */
#include <string.h>
// clang-format off
#define DRIVER_CALLS(X)                                                                        \
  X(cuInit, 2000) X(cuGetErrorString, 6000) X(cuDeviceGet, 2000)                                 \
  X(cuDevicePrimaryCtxRetain, 7000) X(cuCtxSetCurrent, 4000) X(cuMemAlloc, 3020)                 \
  X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020) X(cuStreamCreate, 2000)                          \
  X(cuMemcpyHtoDAsync, 3020) X(cuMemcpyDtoHAsync, 3020) X(cuStreamSynchronize, 2000)              \
  X(cuMemcpy2D, 3020)
// clang-format on
#define FLOOR_NAME "copy_floor"
#include "floor_driver.h"

#define ROW ((size_t)65536)

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
  CUstream stream;
  CK(cu.cuStreamCreate(&stream, 0));
  size_t room = most + most / ROW * 64 + ROW;
  unsigned char *host = malloc(room);
  if (!host) return 1;
  memset(host, 1, room);
  char mode;
  for (size_t bytes; scanf(" %c %zu", &mode, &bytes) == 2;) {
    if (bytes > most || !strchr("HDhdpq", mode) || (strchr("pq", mode) && bytes % ROW)) return 2;
    CUDA_MEMCPY2D plane = {.srcMemoryType = mode == 'p' ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE,
                           .dstMemoryType = mode == 'p' ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST,
                           .srcHost = host,
                           .srcDevice = memory,
                           .dstHost = host,
                           .dstDevice = memory,
                           .srcPitch = mode == 'p' ? ROW + 64 : ROW,
                           .dstPitch = mode == 'p' ? ROW : ROW + 64,
                           .WidthInBytes = ROW,
                           .Height = bytes / ROW};
    double start = now_ms();
    if (mode == 'H')
      CK(cu.cuMemcpyHtoD(memory, host, bytes));
    else if (mode == 'D')
      CK(cu.cuMemcpyDtoH(host, memory, bytes));
    else if (mode == 'h')
      CK(cu.cuMemcpyHtoDAsync(memory, host, bytes, stream));
    else if (mode == 'd')
      CK(cu.cuMemcpyDtoHAsync(host, memory, bytes, stream));
    else
      CK(cu.cuMemcpy2D(&plane));
    if (mode == 'h' || mode == 'd') CK(cu.cuStreamSynchronize(stream));
    printf("%.4f\n", now_ms() - start);
    fflush(stdout);
  }
  return 0;
}
