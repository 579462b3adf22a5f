// Reading float64 and complex values from the CUDA arrays that cudadrv's toArray(),
// matrixToArray() and deviceToArray() make (as PyCUDA's pycuda-helpers.hpp does for its arrays).
// Textures cannot hold 64-bit floats, so those arrays store each float64 as two int32 channels
// (int2) and each complex128 as four (int4); complex64 values are float2, which textures read
// as they are. Fetches here take element coordinates, with point filtering: an interpolation of
// the int32 halves of a double would mean nothing.
//
//   #include <cudadrv/texture.cuh>
//   double v = cudadrv::tex2D_double(tex, x, y);
#pragma once

namespace cudadrv {

__device__ inline double int2_as_double(int2 v) { return __hiloint2double(v.y, v.x); }

__device__ inline double2 int4_as_double2(int4 v) {
  return make_double2(__hiloint2double(v.y, v.x), __hiloint2double(v.w, v.z));
}

// float64 arrays (two int32 channels per value)
__device__ inline double tex1Dfetch_double(cudaTextureObject_t t, int i) { return int2_as_double(tex1Dfetch<int2>(t, i)); }
__device__ inline double tex1D_double(cudaTextureObject_t t, int x) { return int2_as_double(tex1D<int2>(t, x + 0.5f)); }
__device__ inline double tex2D_double(cudaTextureObject_t t, int x, int y) {
  return int2_as_double(tex2D<int2>(t, x + 0.5f, y + 0.5f));
}
__device__ inline double tex3D_double(cudaTextureObject_t t, int x, int y, int z) {
  return int2_as_double(tex3D<int2>(t, x + 0.5f, y + 0.5f, z + 0.5f));
}

// complex128 arrays (four int32 channels per value): (re, im) as a double2
__device__ inline double2 tex2D_cdouble(cudaTextureObject_t t, int x, int y) {
  return int4_as_double2(tex2D<int4>(t, x + 0.5f, y + 0.5f));
}
__device__ inline double2 tex3D_cdouble(cudaTextureObject_t t, int x, int y, int z) {
  return int4_as_double2(tex3D<int4>(t, x + 0.5f, y + 0.5f, z + 0.5f));
}

// surfaces over float64 arrays: x counts values, not bytes
__device__ inline double surf2Dread_double(cudaSurfaceObject_t s, int x, int y) {
  return int2_as_double(surf2Dread<int2>(s, x * (int)sizeof(int2), y));
}
__device__ inline void surf2Dwrite_double(double v, cudaSurfaceObject_t s, int x, int y) {
  surf2Dwrite(make_int2(__double2loint(v), __double2hiint(v)), s, x * (int)sizeof(int2), y);
}
__device__ inline double surf3Dread_double(cudaSurfaceObject_t s, int x, int y, int z) {
  return int2_as_double(surf3Dread<int2>(s, x * (int)sizeof(int2), y, z));
}
__device__ inline void surf3Dwrite_double(double v, cudaSurfaceObject_t s, int x, int y, int z) {
  surf3Dwrite(make_int2(__double2loint(v), __double2hiint(v)), s, x * (int)sizeof(int2), y, z);
}

}  // namespace cudadrv
