// Programmatic dependent launch from kernels (cudadrv's programmaticStreamSerialization and
// programmaticEvent launch attributes), for NVRTC, which has not the CUDA runtime's headers that
// declare cudaGridDependencySynchronize() and cudaTriggerProgrammaticLaunchCompletion().
//
//   #include <cudadrv/launch.cuh>
//   extern "C" __global__ void primary(float *out) {
//     out[threadIdx.x] = 1.0f;
//     cudadrv::triggerProgrammaticLaunchCompletion(); // the secondary may start now
//   }
//   extern "C" __global__ void secondary(const float *in, float *out) {
//     // ...what does not read in...
//     cudadrv::gridDependencySynchronize(); // the primary has ended: in is complete
//     out[threadIdx.x] = 2.0f * in[threadIdx.x];
//   }
//
// Both are the PTX instructions griddepcontrol (compute capability 9.0+); on older GPUs they do
// nothing, and the secondary starts after the primary ends, as without the attribute.
#pragma once

namespace cudadrv {

// Lets the kernel launched after this one in the stream with programmaticStreamSerialization start
// once every block of this one has called it (or ended); it counts toward a programmaticEvent too.
__device__ inline void triggerProgrammaticLaunchCompletion() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Waits until the kernels this one depends on programmatically have ended and their writes are
// visible: call it before reading what they wrote.
__device__ inline void gridDependencySynchronize() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// The GPU's nanosecond clock, the same for every SM (%globaltimer): for ordering events across
// blocks and kernels.
__device__ inline unsigned long long globalTimer() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

}  // namespace cudadrv
