/* cudadrv's version, for kernels compiled through cudadrv/compiler: this directory is always on
 * NVRTC's include path, so `#include <cudadrv/version.h>` works in any source. */
#ifndef CUDADRV_VERSION_H
#define CUDADRV_VERSION_H

#define CUDADRV_VERSION_MAJOR 0
#define CUDADRV_VERSION_MINOR 1
#define CUDADRV_VERSION_PATCH 0

#endif
