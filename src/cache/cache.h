/* cache/: digests, bounded and checked file reads, and the writer of cache files. Includes only
 * core/. */
#ifndef CUDADRV_CACHE_H
#define CUDADRV_CACHE_H

#include "../core/core.h"

/* Why another user could replace what path names, or NULL: path and each directory above it must
 * belong to root or this user, and only a sticky directory (/tmp) may be writable by others.
 * message (at least 512 bytes) says which and why. */
const char *path_problem(const char *path, char *message, size_t size);

/* Each family registers its functions into exports; returns false after throwing. */
bool digest_init(napi_env env, napi_value exports);
bool files_init(napi_env env, napi_value exports);
bool file_writer_init(napi_env env, napi_value exports);

#endif
