// The source that the compile benchmarks give NVRTC: a tiled matrix multiply, a reduction and a
// stencil, each instantiated for several types and sizes, so that a compile takes long enough to
// time (and to see whether it stops the event loop).

template <typename T, int TILE>
__device__ void matmul_tile(const T *a, const T *b, T *c, int n) {
  __shared__ T sa[TILE][TILE];
  __shared__ T sb[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  T acc = 0;
  for (int t = 0; t < n; t += TILE) {
    sa[threadIdx.y][threadIdx.x] = row < n && t + threadIdx.x < n ? a[row * n + t + threadIdx.x] : T(0);
    sb[threadIdx.y][threadIdx.x] = col < n && t + threadIdx.y < n ? b[(t + threadIdx.y) * n + col] : T(0);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; k++) acc += sa[threadIdx.y][k] * sb[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = acc;
}

template <typename T, int BLOCK>
__device__ void reduce_sum(const T *in, T *out, int n) {
  __shared__ T partial[BLOCK];
  T sum = 0;
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) sum += in[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

template <typename T, int R>
__device__ void stencil(const T *in, T *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < R || i >= n - R) return;
  T acc = 0;
#pragma unroll
  for (int k = -R; k <= R; k++) acc += in[i + k] * T(1.0 / (2 * R + 1)) * sin(T(k));
  out[i] = acc;
}

#define KERNELS(T, NAME)                                                                        \
  extern "C" __global__ void matmul8_##NAME(const T *a, const T *b, T *c, int n) { matmul_tile<T, 8>(a, b, c, n); }    \
  extern "C" __global__ void matmul16_##NAME(const T *a, const T *b, T *c, int n) { matmul_tile<T, 16>(a, b, c, n); }  \
  extern "C" __global__ void matmul32_##NAME(const T *a, const T *b, T *c, int n) { matmul_tile<T, 32>(a, b, c, n); }  \
  extern "C" __global__ void reduce128_##NAME(const T *in, T *out, int n) { reduce_sum<T, 128>(in, out, n); }          \
  extern "C" __global__ void reduce512_##NAME(const T *in, T *out, int n) { reduce_sum<T, 512>(in, out, n); }          \
  extern "C" __global__ void stencil4_##NAME(const T *in, T *out, int n) { stencil<T, 4>(in, out, n); }                \
  extern "C" __global__ void stencil16_##NAME(const T *in, T *out, int n) { stencil<T, 16>(in, out, n); }

KERNELS(float, f32)
KERNELS(double, f64)
