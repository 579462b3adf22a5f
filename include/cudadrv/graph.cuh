// Setting the condition of a conditional node of a CUDA graph from a kernel (cudadrv's
// graph.conditionalHandle() and graph.addConditional()). The handle comes to the kernel as a
// 64-bit argument: cuda.uint64(handle.value).
//
//   #include <cudadrv/graph.cuh>
//   extern "C" __global__ void step(unsigned long long handle, int *left) {
//     if (--*left == 0) cudadrv::setConditional(handle, 0); // a WHILE loop ends
//   }
//
// The call is the CUDA runtime's device builtin cudaGraphSetConditional, which the driver resolves
// when it loads the module: a SourceModule or compile() output needs nothing linked. A CUDA 12.3
// driver is needed.
#pragma once

extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(unsigned long long handle,
                                                                     unsigned int value);

namespace cudadrv {

// The handle of a conditional node, as cudadrv passes it.
typedef unsigned long long ConditionalHandle;

// Sets handle's condition: a WHILE node runs its body again while it is not 0, an IF node picks
// its body by it, a SWITCH node runs body number `value`.
__device__ inline void setConditional(ConditionalHandle handle, unsigned int value) {
  cudaGraphSetConditional(handle, value);
}

}  // namespace cudadrv
