/* What staging.c and parallel_copy.c share. */
#ifndef CUDADRV_STAGING_H
#define CUDADRV_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Host memory of a copy: `slices` slices `slice_pitch` bytes apart, each of `rows` rows `pitch`
 * bytes apart, each row `width` bytes; packed into a buffer, row after row. */
typedef struct region {
  unsigned char *at;
  size_t width, pitch, rows, slice_pitch, slices;
} region;

/* Packs host into packed (or unpacks it, where !pack) over the calling thread and up to `helpers`
 * helper threads, started as needed (fewer where no thread can be had); returns when all is
 * copied. One job at a time: the caller holds staging's lock. */
void parallel_copy(const region *host, unsigned char *packed, bool pack, uint32_t helpers);

#endif
