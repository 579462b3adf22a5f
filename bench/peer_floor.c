/* The floor for bench/peer.js: peer copies between two devices from C, with the driver loaded as
 * cudadrv loads it (dlopen("libcuda.so.1"), each entry point through cuGetProcAddress_v2).
 *
 *   peer_floor BYTES
 *
 * Allocates BYTES on each device, in its primary context, then for every line read on stdin,
 * "FROM TO PEER" (devices 0 or 1, PEER 0 or 1), sets peer access between the two contexts both
 * ways to PEER (untimed), copies BYTES from FROM's memory to TO's (cuMemcpyPeer, then
 * cuCtxSynchronize) and prints the copy's milliseconds on a line of its own. */
// clang-format off
#define DRIVER_CALLS(X)                                                                        \
  X(cuInit, 2000) X(cuGetErrorString, 6000) X(cuDeviceGet, 2000)                                 \
  X(cuDevicePrimaryCtxRetain, 7000) X(cuCtxSetCurrent, 4000) X(cuCtxSynchronize, 2000)           \
  X(cuMemAlloc, 3020) X(cuMemcpyPeer, 4000) X(cuCtxEnablePeerAccess, 4000)                       \
  X(cuCtxDisablePeerAccess, 4000)
// clang-format on
#define FLOOR_NAME "peer_floor"
#include "floor_driver.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s BYTES\n", argv[0]);
    return 2;
  }
  size_t bytes = strtoull(argv[1], NULL, 10);
  load_driver();
  CK(cu.cuInit(0));
  CUcontext ctx[2];
  CUdeviceptr memory[2];
  for (int d = 0; d < 2; d++) {
    CUdevice device;
    CK(cu.cuDeviceGet(&device, d));
    CK(cu.cuDevicePrimaryCtxRetain(&ctx[d], device));
    CK(cu.cuCtxSetCurrent(ctx[d]));
    CK(cu.cuMemAlloc(&memory[d], bytes));
  }
  int peer = 0;
  for (int from, to, want; scanf("%d %d %d", &from, &to, &want) == 3;) {
    if (from < 0 || from > 1 || to < 0 || to > 1) return 2;
    if (want != peer) { /* both ways, each from its own context */
      for (int d = 0; d < 2; d++) {
        CK(cu.cuCtxSetCurrent(ctx[d]));
        CK(want ? cu.cuCtxEnablePeerAccess(ctx[1 - d], 0) : cu.cuCtxDisablePeerAccess(ctx[1 - d]));
      }
      peer = want;
    }
    CK(cu.cuCtxSetCurrent(ctx[from]));
    double start = now_ms();
    CK(cu.cuMemcpyPeer(memory[to], ctx[to], memory[from], ctx[from], bytes));
    CK(cu.cuCtxSynchronize());
    printf("%.4f\n", now_ms() - start);
    fflush(stdout);
  }
  return 0;
}
