#!/usr/bin/env node
'use strict';
// Matrix product C = A × B with a tiled shared-memory kernel: checked against a CPU product,
// then timed with events over prepared launches (the fast path).
const cuda = require('cudadrv');
const { SourceModule } = require('cudadrv/compiler');

const TILE = 16;
const SOURCE = `
#define TILE ${TILE}
__global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  float sum = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[threadIdx.y][threadIdx.x] = row < M && t + threadIdx.x < K ? A[row * K + t + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = col < N && t + threadIdx.y < K ? B[(t + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; k++) sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = sum;
}`;

function random(length) {
  return Float32Array.from({ length }, () => Math.random() * 2 - 1);
}

async function main() {
  if (!cuda.isAvailable() || cuda.Device.count() === 0) {
    console.error('matrix-multiply: no CUDA device here (cuda.isAvailable() is false)');
    process.exit(1);
  }
  const ctx = new cuda.Device(0).makeContext();
  try {
    const matmul = new SourceModule(SOURCE).getFunction('matmul');
    const [M, N, K] = [500, 400, 300]; // not multiples of the tile: the edges are handled
    const A = random(M * K);
    const B = random(K * N);
    const C = new Float32Array(M * N);
    const grid = [Math.ceil(N / TILE), Math.ceil(M / TILE)];
    const block = [TILE, TILE];

    await matmul(cuda.In(A), cuda.In(B), cuda.Out(C), cuda.int32(M), cuda.int32(N), cuda.int32(K), { grid, block });

    // The CPU's product in double precision; the GPU sums in float (with fused multiply-adds),
    // so each element may differ by a few float roundings of its terms' magnitude.
    let worst = 0;
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let sum = 0;
        let magnitude = 0;
        for (let k = 0; k < K; k++) {
          sum += A[i * K + k] * B[k * N + j];
          magnitude += Math.abs(A[i * K + k] * B[k * N + j]);
        }
        worst = Math.max(worst, Math.abs(C[i * N + j] - sum) / magnitude);
      }
    }
    const ok = worst < 1e-4;
    console.log(
      `C = A×B (${M}×${K} · ${K}×${N}): largest error ${worst.toExponential(2)} of the terms' magnitude: ${ok ? 'ok' : 'WRONG'}`,
    );

    // Timing: device memory, a prepared format, events around 20 launches.
    const [dA, dB, dC] = [cuda.toDevice(A), cuda.toDevice(B), cuda.memAlloc(C.byteLength)];
    matmul.prepare('PPPiii');
    const start = new cuda.Event().record();
    const runs = 20;
    for (let r = 0; r < runs; r++) matmul.preparedCall(grid, block, dA, dB, dC, M, N, K);
    const end = new cuda.Event().record();
    await end.synchronize();
    const ms = end.timeSince(start) / runs;
    console.log(
      `${ctx.device.name()}: ${ms.toFixed(3)} ms per product, ${((2 * M * N * K) / ms / 1e6).toFixed(1)} GFLOP/s`,
    );
    [dA, dB, dC].forEach((d) => d.free());
    process.exitCode = ok ? 0 : 1;
  } finally {
    ctx.detach();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
