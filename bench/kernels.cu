// The kernels of cudadrv's benchmarks, compiled from this one file by both sides: bench/run.js
// through cudadrv's SourceModule, bench/floor.c through NVRTC.

// Launch cost: does nothing.
extern "C" __global__ void empty() {}

// Launch cost with four arguments; n is never negative in the benchmarks.
extern "C" __global__ void args4(float *a, const float *b, int n, float x) {
  if (n < 0) a[0] = b[0] * x;
}

// Occupies a stream for us microseconds of the GPU's global timer.
extern "C" __global__ void spin(int us) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < 1000ull * (unsigned long long)us);
}
