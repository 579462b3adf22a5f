#!/usr/bin/env node
'use strict';
// Textures and surfaces: a 3×3 box blur of a random image. The image goes into a CUDA array;
// a texture object reads it with clamped edges, the kernel averages each pixel's neighbourhood
// and writes the result through a surface object into a second array, which comes back to the
// host and is checked against the same blur on the CPU.
const cuda = require('cudadrv');
const { SourceModule } = require('cudadrv/compiler');

function main() {
  if (!cuda.isAvailable() || cuda.Device.count() === 0) {
    console.error('textures: no CUDA device here (cuda.isAvailable() is false)');
    process.exit(1);
  }
  const ctx = new cuda.Device(0).makeContext();
  try {
    const module = new SourceModule(`
      __global__ void blur(cudaTextureObject_t image, cudaSurfaceObject_t out, int width, int height)
      {
        int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
        if (x >= width || y >= height) return;
        float sum = 0;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++)
            sum += tex2D<float>(image, x + dx + 0.5f, y + dy + 0.5f); // clamped at the edges
        surf2Dwrite(sum / 9.0f, out, x * sizeof(float), y);
      }`);

    const [width, height] = [640, 480];
    const pixels = Float32Array.from({ length: width * height }, () => Math.random());
    const image = cuda.matrixToArray(pixels, [height, width]); // rows of `width` pixels
    const blurred = new cuda.CudaArray(
      new cuda.ArrayDescriptor3D({
        width,
        height,
        format: cuda.ArrayFormat.FLOAT,
        numChannels: 1,
        flags: cuda.Array3DFlags.SURFACE_LDST,
      }),
    );
    const texture = new cuda.TextureObject(image, { addressMode: cuda.AddressMode.CLAMP });
    const surface = new cuda.SurfaceObject(blurred);

    module.getFunction('blur')(texture, surface, cuda.int32(width), cuda.int32(height), {
      block: [16, 16],
      grid: [Math.ceil(width / 16), Math.ceil(height / 16)],
    });

    // the blurred array back to the host, one row of width * 4 bytes at a time
    const result = new Float32Array(width * height);
    const copy = new cuda.Memcpy2D();
    copy.setSrcArray(blurred);
    copy.setDstHost(result);
    copy.widthInBytes = copy.dstPitch = width * 4;
    copy.height = height;
    copy.run();

    const at = (x, y) => pixels[Math.min(height - 1, Math.max(0, y)) * width + Math.min(width - 1, Math.max(0, x))];
    let worst = 0;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        let sum = 0;
        for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) sum += at(x + dx, y + dy);
        worst = Math.max(worst, Math.abs(result[y * width + x] - sum / 9));
      }
    }
    console.log(
      `${width}×${height} box blur through a texture and a surface: largest difference ` +
        `from the CPU ${worst.toExponential(2)}`,
    );
    process.exitCode = worst < 1e-5 ? 0 : 1;
  } finally {
    ctx.detach();
  }
}

main();
