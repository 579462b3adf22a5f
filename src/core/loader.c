#include "core.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

cu_table cu;

/* Every entry's versioned type must be the prototype cuda.h declares now (its macros included):
 * a wrong version in CU_FUNCTIONS fails the build here instead of corrupting a call. */
#define CU_CHECK_ENTRY(name, version)                                                              \
  _Static_assert(__builtin_types_compatible_p(PFN_##name##_v##version, __typeof__(&name)),         \
                 #name " is not resolved at the ABI version cuda.h declares");
CU_FUNCTIONS(CU_CHECK_ENTRY)
#undef CU_CHECK_ENTRY

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static CUresult load_status = CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
static char load_message[1024];
static int opened;

static void load(void) {
  const char *path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(load_message, sizeof load_message,
             "could not load the CUDA driver library libcuda.so.1 (%s); install the NVIDIA "
             "driver, or run on a machine that has one",
             dlerror());
    return;
  }
  opened = 1;
  threads_guard_exit(); /* before the driver's destructors, the addon's threads are done */
  PFN_cuGetProcAddress_v12000 get_proc =
      (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) {
    snprintf(load_message, sizeof load_message,
             "the CUDA driver in libcuda.so.1 is too old: cuGetProcAddress_v2 is missing; "
             "cudadrv needs a driver for CUDA 12.0 or newer");
    return;
  }
  CUdriverProcAddressQueryResult found;
#define CU_RESOLVE_ENTRY(name, version)                                                            \
  if (get_proc(#name, (void **)&cu.name, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found) !=    \
          CUDA_SUCCESS ||                                                                          \
      found != CU_GET_PROC_ADDRESS_SUCCESS)                                                        \
    cu.name = NULL;
  CU_FUNCTIONS(CU_RESOLVE_ENTRY)
  CU_LEGACY_FUNCTIONS(CU_RESOLVE_ENTRY)
#undef CU_RESOLVE_ENTRY
  if (!cu.cuInit || !cu.cuGetErrorName || !cu.cuGetErrorString) {
    snprintf(load_message, sizeof load_message,
             "the CUDA driver in libcuda.so.1 does not provide cuInit");
    return;
  }
  load_status = cu.cuInit(0);
  if (load_status != CUDA_SUCCESS) {
    const char *text = NULL;
    cu.cuGetErrorString(load_status, &text);
    snprintf(load_message, sizeof load_message, "cuInit failed: %s", text ? text : "unknown error");
  }
}

int loader_entry_version(const char *name) {
#define CU_ENTRY_VERSION(entry, version)                                                           \
  if (strcmp(name, #entry) == 0) return version;
  CU_FUNCTIONS(CU_ENTRY_VERSION)
  CU_LEGACY_FUNCTIONS(CU_ENTRY_VERSION)
#undef CU_ENTRY_VERSION
  return 0;
}

void loader_each_missing(void (*fn)(const char *name, int version, void *data), void *data) {
#define CU_EACH_MISSING(entry, version)                                                            \
  if (!cu.entry) fn(#entry, version, data);
  CU_FUNCTIONS(CU_EACH_MISSING)
  CU_LEGACY_FUNCTIONS(CU_EACH_MISSING)
#undef CU_EACH_MISSING
}

CUresult loader_load(void) {
  pthread_once(&load_once, load);
  return load_status;
}

const char *loader_error(void) { return load_message; }

int loader_opened(void) {
  pthread_once(&load_once, load);
  return opened;
}
