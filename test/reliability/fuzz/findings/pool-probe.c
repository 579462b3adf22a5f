/* pool-probe: the calls of seed 1530714724's 57-call cut (seed-1530714724.cut.trace) that touch
 * pools, as a plain C program, each step chosen on the command line, to find which the crash in
 * the last cuMemPoolDestroy needs (FINDINGS.md). Not yet run on a GPU.
 *
 *   cc -O1 -o /tmp/pool-probe pool-probe.c -I/usr/local/cuda/include -lcuda
 *   GLIBC_TUNABLES=glibc.malloc.perturb=165:glibc.malloc.tcache_count=0 /tmp/pool-probe ADIFSNIX
 *
 * Steps, in the order given:
 *   A  a pool allocates 256 bytes on a stream (cuMemAllocFromPoolAsync)
 *   D  that pool is destroyed while the allocation is out (its release waits for the free)
 *   F  the allocation is freed on its stream (cuMemFreeAsync)
 *   S  the context is synchronized
 *   E  a pool is made and exported (posix-fd), then destroyed
 *   N  a pool is made, kept to the end
 *   I  a pool import of a socket's descriptor, which fails (999 in the trace)
 *   X  cuInit(3), which fails (1)
 * then a pool is made and destroyed: the trace's last call. Every pool is the set-up's:
 * posix-fd, device 0, maxSize 64 KiB. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

static void check(CUresult r, const char *what, CUresult wanted) {
  if (r != wanted) {
    fprintf(stderr, "%s: %d, not %d\n", what, r, wanted);
    exit(1);
  }
}

static CUmemoryPool pool_made(void) {
  CUmemPoolProps props = {0};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  props.maxSize = 1 << 16;
  CUmemoryPool pool;
  check(cuMemPoolCreate(&pool, &props), "cuMemPoolCreate", CUDA_SUCCESS);
  return pool;
}

int main(int argc, char **argv) {
  const char *steps = argc > 1 ? argv[1] : "";
  CUdevice device;
  CUcontext context;
  CUstream stream;
  CUmemoryPool allocating = NULL;
  CUdeviceptr out = 0;
  int sockets[2];
  check(cuInit(0), "cuInit", CUDA_SUCCESS);
  check(cuDeviceGet(&device, 0), "cuDeviceGet", CUDA_SUCCESS);
  check(cuCtxCreate(&context, NULL, 0, device), "cuCtxCreate", CUDA_SUCCESS);
  check(cuStreamCreateWithPriority(&stream, 0, 0), "cuStreamCreate", CUDA_SUCCESS);
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sockets)) return 2;
  for (const char *s = steps; *s; s++) {
    CUmemoryPool pool;
    switch (*s) {
    case 'A':
      allocating = pool_made();
      check(cuMemAllocFromPoolAsync(&out, 256, allocating, stream), "cuMemAllocFromPoolAsync",
            CUDA_SUCCESS);
      break;
    case 'D':
      check(cuMemPoolDestroy(allocating), "cuMemPoolDestroy (allocation out)", CUDA_SUCCESS);
      break;
    case 'F': check(cuMemFreeAsync(out, stream), "cuMemFreeAsync", CUDA_SUCCESS); break;
    case 'S': check(cuCtxSynchronize(), "cuCtxSynchronize", CUDA_SUCCESS); break;
    case 'E': {
      int fd;
      pool = pool_made();
      check(
          cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "cuMemPoolExportToShareableHandle", CUDA_SUCCESS);
      check(cuMemPoolDestroy(pool), "cuMemPoolDestroy (exported)", CUDA_SUCCESS);
      break;
    }
    case 'N': pool_made(); break;
    case 'I':
      cuMemPoolImportFromShareableHandle(&pool, (void *)(long)sockets[0],
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
      break;
    case 'X': cuInit(3); break;
    default: fprintf(stderr, "steps: A D F S E N I X\n"); return 2;
    }
  }
  CUmemoryPool last = pool_made();
  printf("destroying the last pool\n");
  fflush(stdout);
  check(cuMemPoolDestroy(last), "cuMemPoolDestroy (last)", CUDA_SUCCESS);
  printf("returned\n");
  return 0;
}
