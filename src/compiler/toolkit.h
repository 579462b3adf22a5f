/* toolkit.h: what the CUDA toolkit libraries cudadrv loads at run time (NVRTC, nvJitLink) share:
 * loading one, once per process, from the candidates lib/internal/library-search.js lists; and
 * the copies of JS strings their jobs take (a job runs on a thread of its own, where no JS value
 * may be read). */
#ifndef CUDADRV_TOOLKIT_H
#define CUDADRV_TOOLKIT_H

#include <limits.h>
#include <pthread.h>

#include "../cache/cache.h"
#include "../kernel/module.h"

typedef struct toolkit_library {
  const char *label;          /* "NVRTC" */
  const char *const *symbols; /* every entry point used */
  size_t count;
  const char *requirement; /* why a library lacking one is refused: "cudadrv needs NVRTC 12.0..." */
  const char *advice;      /* how to install it, ending the message when none loads */
  /* Called under the lock with the entry points, in symbols' order, before the library counts as
   * loaded: copies them into the caller's typed table. */
  void (*adopt)(void *const *entries);
  /* Called with the library's handle before anything of it runs, or NULL. */
  void (*on_load)(void *handle);
  /* state */
  pthread_mutex_t lock;
  atomic_bool loaded;
  char message[8192];  /* why it is not loaded */
  char path[PATH_MAX]; /* the file loaded */
  char name[PATH_MAX]; /* the candidate loaded */
} toolkit_library;

#define TOOLKIT_LIBRARY(label_, symbols_, requirement_, advice_, adopt_, on_load_)                 \
  {                                                                                                \
    .label = label_, .symbols = symbols_, .count = sizeof(symbols_) / sizeof(symbols_)[0],         \
    .requirement = requirement_, .advice = advice_, .adopt = adopt_, .on_load = on_load_,          \
    .lock = PTHREAD_MUTEX_INITIALIZER, .message = label_ " is loaded by lib/ before use"           \
  }

static inline bool toolkit_ready(toolkit_library *lib) { return atomic_load(&lib->loaded); }
/* Throws the RuntimeError saying why lib could not be loaded; returns NULL. */
napi_value toolkit_throw_unloaded(napi_env env, toolkit_library *lib);
/* Loads lib from the first of candidates (a JS array of paths or sonames) that has every entry
 * point; returns the candidate loaded (by this call or an earlier one), or NULL after throwing a
 * RuntimeError that lists each candidate and why it failed. A later call tries again. */
napi_value toolkit_load(napi_env env, napi_value candidates, toolkit_library *lib);
/* The file lib was loaded from, or NULL after throwing. */
napi_value toolkit_path(napi_env env, toolkit_library *lib);

/* ---- what NVRTC reads (reads.c) ---- */
/* The most bytes of a file NVRTC may read (an #include): larger ones it cannot open. */
#define READS_LIMIT ((uint64_t)256 << 20)
typedef struct reads_log {
  char **files; /* the regular files opened, as named to open() */
  uint32_t count, capacity;
  char *refused; /* "path: why" of the first file refused, or NULL */
} reads_log;
/* Binds NVRTC's open and fopen imports to the guarded ones; NVRTC's on_load. */
void reads_guard(void *handle);
/* Until reads_end, this thread's reads are logged in log. */
void reads_begin(reads_log *log);
void reads_end(void);
void reads_free(reads_log *log);

/* ---- copies of JS values ---- */
/* A copy of the JS string v; NULL after throwing. */
char *copy_string(napi_env env, napi_value v, const char *name);
/* Copies of the strings of the JS array v; false after throwing (what was copied is in *out). */
bool copy_strings(napi_env env, napi_value v, const char *name, char ***out, uint32_t *count);
void free_strings(char **strings, uint32_t count);
napi_value make_string(napi_env env, const char *text);
napi_value make_int_array(napi_env env, const int *values, size_t count);
/* A Buffer that takes over bytes (malloc'd): no copy, except under Electron's memory cage. */
napi_value buffer_owning(napi_env env, void *bytes, size_t size);

/* Each family registers its functions into exports; returns false after throwing. */
bool nvrtc_init(napi_env env, napi_value exports);
bool link_init(napi_env env, napi_value exports);

#endif
