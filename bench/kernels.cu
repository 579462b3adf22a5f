// The kernels of cudadrv's benchmarks, compiled from this one file by both sides: bench/run.js
// through cudadrv's SourceModule, bench/floor.c through NVRTC.

// Launch cost: does nothing.
extern "C" __global__ void empty() {}

// Launch cost with four arguments; n is never negative in the benchmarks.
extern "C" __global__ void args4(float *a, const float *b, int n, float x) {
  if (n < 0) a[0] = b[0] * x;
}

// A WHILE loop's body: counts *left down and ends the loop at 0 (the device builtin that
// include/cudadrv/graph.cuh wraps, declared here so that NVRTC needs no include path).
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(unsigned long long handle,
                                                                     unsigned int value);
extern "C" __global__ void count_down(unsigned long long handle, int *left) {
  if (--*left <= 0) cudaGraphSetConditional(handle, 0);
}

// Occupies a stream for us microseconds of the GPU's global timer.
extern "C" __global__ void spin(int us) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < 1000ull * (unsigned long long)us);
}
