// TMA (the Tensor Memory Accelerator, compute capability 9.0+) from kernels compiled with NVRTC,
// which has not cuda.h: the tensor map type cudadrv's TensorMap objects are passed as, and the
// bulk tensor copy of a 2D tile into shared memory with the barrier that says it has arrived.
//
//   #include <cudadrv/tma.cuh>
//   extern "C" __global__ void k(const __grid_constant__ cudadrv::TensorMap map, float *out) {
//     __shared__ alignas(128) float tile[8][16];
//     __shared__ unsigned long long arrived;
//     if (threadIdx.x == 0) cudadrv::barrierInit(&arrived, 1);
//     __syncthreads();
//     if (threadIdx.x == 0) cudadrv::loadTile2D(tile, &map, 16 * blockIdx.x, 8 * blockIdx.y, &arrived, sizeof tile);
//     cudadrv::barrierWait(&arrived, 0);
//     ...
//   }
//
// Compile for sm_90 or newer (the copy and the barriers do not exist before).
#pragma once

namespace cudadrv {

// A tensor map as kernels take it: `const __grid_constant__ cudadrv::TensorMap map` (the layout
// and alignment of cuda.h's CUtensorMap).
struct alignas(128) TensorMap {
  unsigned long long opaque[16];
};

__device__ inline unsigned sharedAddress(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Sets up the barrier at bar (in shared memory) for count arrivals, and makes it visible to the
// TMA unit. One thread calls it; __syncthreads() before the others use it.
__device__ inline void barrierInit(unsigned long long *bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sharedAddress(bar)), "r"(count));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// Starts the copy of the tile at element (x, y) of map's tensor into smem (shared memory, aligned
// to 128 bytes), and tells the barrier to expect bytes: the tile's size. One thread calls it.
__device__ inline void loadTile2D(void *smem, const TensorMap *map, int x, int y,
                                  unsigned long long *bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sharedAddress(bar)),
               "r"(bytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(sharedAddress(smem)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(sharedAddress(bar))
      : "memory");
#endif
}

// Waits until the barrier's phase `phase` (0, then 1, alternating) has completed: the tile is in
// shared memory.
__device__ inline void barrierWait(unsigned long long *bar, unsigned phase) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(sharedAddress(bar)), "r"(phase)
        : "memory");
  }
#endif
}

}  // namespace cudadrv
