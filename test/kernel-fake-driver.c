/* A stand-in libcuda.so.1 for the tests of modules and launches on machines without a GPU: it
 * implements the calls those tests reach, and writes each module load, launch and setting it
 * receives as one line to the file named by FAKE_CUDA_LOG, so that a test can compare what the
 * driver received (parameter bytes included) with what it expects.
 *
 * A module image is text, one declaration a line:
 *   entry <name> <size>[@<align>] ...   a kernel and the sizes of its parameters
 *   global <name> <bytes>               a global variable
 *   texref <name> / surfref <name>      references
 *   fail                                the JIT fails, with an error log
 * A fatbin image is taken as a module without kernels, and logged with its size.
 * FAKE_CUDA_MISSING lists calls (comma-separated) that the driver does not provide, and
 * FAKE_CUDA_PROFILER_RESULT the CUresult cuProfilerInitialize returns. With FAKE_CUDA_TRACE set,
 * every call the driver receives is logged too, as "call <symbol>", so that a test can count the
 * calls an operation makes (the file is built with -finstrument-functions for that).
 *
 * Device memory is host memory here (its addresses are host addresses), so copies move real
 * bytes; the calls on it want a current context, as the driver's do.
 *
 * Built by test/stand-in-driver.js: cc -O2 -shared -fPIC -finstrument-functions -I<cuda>/include ... */
#define _GNU_SOURCE /* dladdr */
#define CUDA_ENABLE_DEPRECATED
#include <cuda.h>
#include <cudaProfiler.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#define UNTRACED __attribute__((no_instrument_function))

/* Whether FAKE_CUDA_LOG is set, read once: launches ask at each call (bench/launch-overhead.js
 * times them). */
static UNTRACED int logging(void) {
  static int set = -1;
  if (set < 0) set = getenv("FAKE_CUDA_LOG") != NULL;
  return set;
}

static UNTRACED void log_line(const char *format, ...) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (!path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  va_list ap;
  va_start(ap, format);
  vfprintf(f, format, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

/* The call trace: the compiler calls this on entry to every function of this file (hidden, so
 * that libc's empty one is not called instead); the calls that other code makes are those of
 * exported cu* symbols (helpers are static). */
#define HOOK UNTRACED __attribute__((visibility("hidden")))
static int tracing = -1;
HOOK void __cyg_profile_func_enter(void *fn, void *caller) {
  (void)caller;
  if (tracing < 0) tracing = getenv("FAKE_CUDA_TRACE") != NULL;
  Dl_info info;
  if (tracing && dladdr(fn, &info) && info.dli_saddr == fn && info.dli_sname &&
      strncmp(info.dli_sname, "cu", 2) == 0)
    log_line("call %s", info.dli_sname);
}
HOOK void __cyg_profile_func_exit(void *fn, void *caller) { (void)fn; (void)caller; }

/* ---- objects ---- */

struct CUctx_st { int device; };
struct CUfunc_st {
  char name[64];
  int count;
  size_t offsets[64], sizes[64];
  int attributes[CU_FUNC_ATTRIBUTE_MAX];
};
struct CUtexref_st {
  CUdeviceptr address;
  CUarray_format format;
  int channels;
  CUaddress_mode modes[3];
  CUfilter_mode filter;
  unsigned int flags;
};
struct CUsurfref_st { int unused; };
struct CUmod_st {
  int id;
  int nfuncs, nglobals, ntex, nsurf;
  struct CUfunc_st funcs[16];
  char globals[16][64];
  size_t global_sizes[16];
  char tex_names[4][64], surf_names[4][64];
  struct CUtexref_st tex[4];
  struct CUsurfref_st surf[4];
};
struct CUstream_st { int id; };
struct CUevent_st { int recorded; };

static struct CUctx_st the_context;
static _Thread_local CUcontext stack[16];
static _Thread_local int depth;
static int modules_loaded;

/* ---- the calls ---- */

EXPORT CUresult cuInit(unsigned int flags) { (void)flags; return CUDA_SUCCESS; }
EXPORT CUresult cuDriverGetVersion(int *version) { *version = 13000; return CUDA_SUCCESS; }
EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = error == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
  switch (error) {
    case CUDA_ERROR_INVALID_VALUE: *text = "invalid argument"; break;
    case CUDA_ERROR_INVALID_PTX: *text = "a PTX JIT compilation failed"; break;
    case CUDA_ERROR_NOT_FOUND: *text = "named symbol not found"; break;
    case CUDA_ERROR_FILE_NOT_FOUND: *text = "file not found"; break;
    case CUDA_ERROR_PROFILER_DISABLED: *text = "profiler disabled while using external profiling tool"; break;
    case CUDA_ERROR_INVALID_CLUSTER_SIZE: *text = "cluster misconfiguration"; break;
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: *text = "too many blocks in cooperative launch"; break;
    default: *text = "fake error"; break;
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetCount(int *count) { *count = 1; return CUDA_SUCCESS; }
EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  (void)device;
  snprintf(name, (size_t)length, "stand-in driver");
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device) {
  (void)device;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = 1; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

EXPORT CUresult cuCtxCreate(CUcontext *ctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev) {
  (void)params; (void)flags; (void)dev;
  *ctx = &the_context;
  stack[depth++] = *ctx;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxDestroy(CUcontext ctx) { (void)ctx; return CUDA_SUCCESS; }
/* The primary context: a second context, so that tests can tell it from one made by cuCtxCreate. */
static struct CUctx_st the_primary_context;
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  (void)dev;
  *ctx = &the_primary_context;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { (void)dev; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxPushCurrent(CUcontext ctx) { stack[depth++] = ctx; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxPopCurrent(CUcontext *ctx) {
  if (depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  *ctx = stack[--depth];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (depth == 0) depth = 1;
  stack[depth - 1] = ctx;
  if (!ctx) depth--;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx) { *ctx = depth ? stack[depth - 1] : NULL; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxGetDevice(CUdevice *device) { *device = 0; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }

/* Modules: the text format above. */
static CUresult parse_module(CUmodule *out, const char *text) {
  struct CUmod_st *m = calloc(1, sizeof *m);
  m->id = ++modules_loaded;
  const char *line = text;
  while (line && *line) {
    char word[16] = "", name[64] = "";
    int used = 0;
    if (sscanf(line, "%15s %63s%n", word, name, &used) >= 1) {
      const char *rest = line + used;
      if (strcmp(word, "fail") == 0) {
        free(m);
        return CUDA_ERROR_INVALID_PTX;
      } else if (strcmp(word, "entry") == 0) {
        struct CUfunc_st *f = &m->funcs[m->nfuncs++];
        strcpy(f->name, name);
        size_t offset = 0, size, align;
        int n;
        while (*rest != '\n' && *rest && sscanf(rest, " %zu%n", &size, &n) == 1) {
          rest += n;
          align = size < 16 ? size : 16;
          if (*rest == '@' && sscanf(rest + 1, "%zu%n", &align, &n) == 1) rest += n + 1;
          offset = (offset + align - 1) / align * align;
          f->offsets[f->count] = offset;
          f->sizes[f->count++] = size;
          offset += size;
        }
        for (int a = 0; a < CU_FUNC_ATTRIBUTE_MAX; a++) f->attributes[a] = 100 + a;
      } else if (strcmp(word, "global") == 0) {
        strcpy(m->globals[m->nglobals], name);
        sscanf(rest, " %zu", &m->global_sizes[m->nglobals++]);
      } else if (strcmp(word, "texref") == 0) {
        strcpy(m->tex_names[m->ntex++], name);
      } else if (strcmp(word, "surfref") == 0) {
        strcpy(m->surf_names[m->nsurf++], name);
      }
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  *out = m;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n,
                                   CUjit_option *options, void **values) {
  char *info = NULL, *error = NULL;
  char line[1024];
  const unsigned char *bytes = image;
  /* a fatbin (it holds no kernels here): its size as its header gives it */
  bool fatbin = bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 && bytes[3] == 0xba;
  int at = fatbin ? snprintf(line, sizeof line, "load fatbin %llu",
                             (unsigned long long)(bytes[6] | bytes[7] << 8) + *(const unsigned long long *)(bytes + 8))
                  : snprintf(line, sizeof line, "load %zu", strlen(image));
  for (unsigned int i = 0; i < n; i++) {
    if (options[i] == CU_JIT_INFO_LOG_BUFFER) info = values[i];
    else if (options[i] == CU_JIT_ERROR_LOG_BUFFER) error = values[i];
    else if (options[i] != CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES && options[i] != CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      at += snprintf(line + at, sizeof line - at, " %d=%zu", (int)options[i], (size_t)(uintptr_t)values[i]);
  }
  log_line("%s", line);
  CUresult result = parse_module(module, fatbin ? "" : image);
  if (info) strcpy(info, "fake JIT: info");
  if (error) strcpy(error, result == CUDA_SUCCESS ? "" : "fake JIT: syntax error at line 1");
  return result;
}

EXPORT CUresult cuModuleLoad(CUmodule *module, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
  static char text[65536];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  log_line("load file %zu", n);
  return parse_module(module, text);
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
  log_line("unload %d", module->id);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name) {
  for (int i = 0; i < module->nfuncs; i++)
    if (strcmp(module->funcs[i].name, name) == 0) {
      *fn = &module->funcs[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuModuleGetGlobal(CUdeviceptr *ptr, size_t *bytes, CUmodule module, const char *name) {
  for (int i = 0; i < module->nglobals; i++)
    if (strcmp(module->globals[i], name) == 0) {
      *ptr = 0x7000000000ULL + 0x1000ULL * module->id + 0x100ULL * i;
      *bytes = module->global_sizes[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuModuleGetTexRef(CUtexref *ref, CUmodule module, const char *name) {
  for (int i = 0; i < module->ntex; i++)
    if (strcmp(module->tex_names[i], name) == 0) {
      *ref = &module->tex[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuModuleGetSurfRef(CUsurfref *ref, CUmodule module, const char *name) {
  for (int i = 0; i < module->nsurf; i++)
    if (strcmp(module->surf_names[i], name) == 0) {
      *ref = &module->surf[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuFuncGetParamInfo(CUfunction fn, size_t index, size_t *offset, size_t *size) {
  if (index >= (size_t)fn->count) return CUDA_ERROR_INVALID_VALUE;
  *offset = fn->offsets[index];
  if (size) *size = fn->sizes[index];
  return CUDA_SUCCESS;
}

/* A launch: checks what the driver would, then logs the kernel, its configuration and its
 * parameter bytes; attrs describes the launch attributes (cuLaunchKernelEx), or is NULL. */
static CUresult launch(CUfunction f, const CUlaunchConfig *c, void **params, void **extra,
                       const char *attrs) {
  if (params) return CUDA_ERROR_INVALID_VALUE;
  if (c->gridDimX > 2147483647u || c->gridDimY > 65535 || c->gridDimZ > 65535 ||
      c->blockDimX * c->blockDimY * c->blockDimZ > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  const unsigned char *buffer = NULL;
  size_t size = 0;
  for (int i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = extra[i + 1];
    else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *(size_t *)extra[i + 1];
  }
  size_t want = f->count ? f->offsets[f->count - 1] + f->sizes[f->count - 1] : 0;
  if (size != want || (size && !buffer)) return CUDA_ERROR_INVALID_VALUE;
  if (!logging()) return CUDA_SUCCESS;
  char hex[2 * 4096 + 1] = "";
  for (size_t i = 0; i < size && i < 4096; i++) sprintf(hex + 2 * i, "%02x", buffer[i]);
  log_line("launch%s %s grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%d%s%s params=%s",
           attrs ? "ex" : "", f->name, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
           c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream ? c->hStream->id : 0,
           attrs ? " attrs=" : "", attrs ? attrs : "", hex);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                               CUstream stream, void **params, void **extra) {
  CUlaunchConfig config = {gx, gy, gz, bx, by, bz, shared, stream, NULL, 0};
  return launch(f, &config, params, extra, NULL);
}

/* Attributes are logged as id:values, comma-separated: "4:2,1,1;2:1" for a cluster of 2x1x1 and a
 * cooperative launch. A cluster must divide the grid; a cooperative grid must fit at once (132
 * multiprocessors of 2048 threads). */
EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
  char attrs[256] = "";
  int at = 0;
  for (unsigned int i = 0; i < c->numAttrs; i++) {
    const CUlaunchAttribute *a = &c->attrs[i];
    const char *sep = i ? ";" : "";
    switch (a->id) {
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
        unsigned int x = a->value.clusterDim.x, y = a->value.clusterDim.y, z = a->value.clusterDim.z;
        if (!x || !y || !z || c->gridDimX % x || c->gridDimY % y || c->gridDimZ % z || x * y * z > 8)
          return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        at += snprintf(attrs + at, sizeof attrs - at, "%s%d:%u,%u,%u", sep, (int)a->id, x, y, z);
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: {
        unsigned long long blocks = (unsigned long long)c->gridDimX * c->gridDimY * c->gridDimZ;
        unsigned int threads = c->blockDimX * c->blockDimY * c->blockDimZ;
        if (a->value.cooperative && threads && blocks > 132ULL * (2048 / threads))
          return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
        at += snprintf(attrs + at, sizeof attrs - at, "%s%d:%d", sep, (int)a->id, a->value.cooperative);
        break;
      }
      default:
        at += snprintf(attrs + at, sizeof attrs - at, "%s%d:?", sep, (int)a->id);
    }
  }
  return launch(f, c, params, extra, attrs);
}

EXPORT CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction f) {
  if ((int)attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  *value = f->attributes[attribute];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  if ((int)attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  f->attributes[attribute] = value;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache config) {
  log_line("cache %s %d", f->name, (int)config);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetSharedMemConfig(CUfunction f, CUsharedconfig config) {
  log_line("sharedconfig %s %d", f->name, (int)config);
  return CUDA_SUCCESS;
}

/* Occupancy: 2048 threads and 64 KiB of shared memory per multiprocessor, 132 of them. */
static int blocks_per_sm(int block_size, size_t smem) {
  int by_threads = 2048 / block_size, by_smem = smem ? (int)(65536 / smem) : by_threads;
  return by_threads < by_smem ? by_threads : by_smem;
}
EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, CUfunction f,
                                                                     int block_size, size_t smem,
                                                                     unsigned int flags) {
  (void)f; (void)flags;
  if (block_size < 1 || block_size > 1024) return CUDA_ERROR_INVALID_VALUE;
  *blocks = blocks_per_sm(block_size, smem);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block_size, CUfunction f,
                                                          CUoccupancyB2DSize smem_of, size_t smem,
                                                          int limit, unsigned int flags) {
  (void)f; (void)flags;
  int best = 0, best_threads = -1;
  for (int b = 32; b <= (limit ? limit : 1024); b += 32) {
    int threads = b * blocks_per_sm(b, smem_of ? smem_of(b) : smem);
    if (threads > best_threads) best = b, best_threads = threads;
  }
  *block_size = best;
  *min_grid = 132 * blocks_per_sm(best, smem_of ? smem_of(best) : smem);
  return CUDA_SUCCESS;
}

/* Texture references: alignment 256, so an address off it gets an offset. */
EXPORT CUresult cuTexRefSetAddress(size_t *offset, CUtexref t, CUdeviceptr ptr, size_t bytes) {
  log_line("texaddress %llx %zu", (unsigned long long)ptr, bytes);
  t->address = ptr & ~(CUdeviceptr)255;
  *offset = (size_t)(ptr & 255);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetAddress2D(CUtexref t, const CUDA_ARRAY_DESCRIPTOR *d, CUdeviceptr ptr, size_t pitch) {
  log_line("texaddress2d %llx %zu %zu %d %u %zu", (unsigned long long)ptr, d->Width, d->Height,
           (int)d->Format, d->NumChannels, pitch);
  t->address = ptr;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetFormat(CUtexref t, CUarray_format format, int channels) {
  t->format = format;
  t->channels = channels;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetAddressMode(CUtexref t, int dim, CUaddress_mode mode) {
  if (dim < 0 || dim > 2) return CUDA_ERROR_INVALID_VALUE;
  t->modes[dim] = mode;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetFilterMode(CUtexref t, CUfilter_mode mode) { t->filter = mode; return CUDA_SUCCESS; }
EXPORT CUresult cuTexRefSetFlags(CUtexref t, unsigned int flags) { t->flags = flags; return CUDA_SUCCESS; }
EXPORT CUresult cuTexRefGetAddress(CUdeviceptr *ptr, CUtexref t) { *ptr = t->address; return CUDA_SUCCESS; }
EXPORT CUresult cuTexRefGetFormat(CUarray_format *format, int *channels, CUtexref t) {
  *format = t->format;
  *channels = t->channels;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefGetAddressMode(CUaddress_mode *mode, CUtexref t, int dim) {
  if (dim < 0 || dim > 2) return CUDA_ERROR_INVALID_VALUE;
  *mode = t->modes[dim];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefGetFilterMode(CUfilter_mode *mode, CUtexref t) { *mode = t->filter; return CUDA_SUCCESS; }
EXPORT CUresult cuTexRefGetFlags(unsigned int *flags, CUtexref t) { *flags = t->flags; return CUDA_SUCCESS; }

/* Device memory: malloc'd host memory. */
static CUresult in_context(void) { return depth && stack[depth - 1] ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
static CUresult allocate(CUdeviceptr *ptr, size_t bytes) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  void *memory = malloc(bytes);
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  *ptr = (CUdeviceptr)(uintptr_t)memory;
  return CUDA_SUCCESS;
}
static CUresult release(CUdeviceptr ptr) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  free((void *)(uintptr_t)ptr);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemAlloc(CUdeviceptr *ptr, size_t bytes) { return allocate(ptr, bytes); }
EXPORT CUresult cuMemFree(CUdeviceptr ptr) { return release(ptr); }
EXPORT CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream stream) {
  (void)stream;
  return allocate(ptr, bytes);
}
EXPORT CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  (void)stream;
  return release(ptr);
}
/* Copies: at once, on a stream too. */
static CUresult copy(void *dst, const void *src, size_t bytes) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  memcpy(dst, src, bytes);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  return copy((void *)(uintptr_t)dst, src, bytes);
}
EXPORT CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  return copy(dst, (const void *)(uintptr_t)src, bytes);
}
EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
  (void)stream;
  return copy((void *)(uintptr_t)dst, src, bytes);
}
EXPORT CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  (void)stream;
  return copy(dst, (const void *)(uintptr_t)src, bytes);
}

/* Streams and events, enough for waits and timing: all work is done at once. */
static CUresult new_stream(CUstream *stream) {
  static int streams;
  *stream = calloc(1, sizeof **stream);
  (*stream)->id = ++streams;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamCreateWithPriority(CUstream *stream, unsigned int flags, int priority) {
  (void)flags; (void)priority;
  return new_stream(stream);
}
EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
  (void)flags;
  return new_stream(stream);
}
EXPORT CUresult cuStreamDestroy(CUstream stream) { free(stream); return CUDA_SUCCESS; }
EXPORT CUresult cuStreamQuery(CUstream stream) { (void)stream; return CUDA_SUCCESS; }
EXPORT CUresult cuStreamSynchronize(CUstream stream) { (void)stream; return CUDA_SUCCESS; }
EXPORT CUresult cuEventCreate(CUevent *event, unsigned int flags) {
  (void)flags;
  *event = calloc(1, sizeof **event);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuEventDestroy(CUevent event) { free(event); return CUDA_SUCCESS; }
EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  (void)stream;
  event->recorded = 1;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuEventQuery(CUevent event) { (void)event; return CUDA_SUCCESS; }
EXPORT CUresult cuEventSynchronize(CUevent event) { (void)event; return CUDA_SUCCESS; }
EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  if (!start->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
  *ms = 1.5f;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuProfilerInitialize(const char *config, const char *output, CUoutput_mode mode) {
  log_line("profiler %s %s %d", config, output, (int)mode);
  const char *result = getenv("FAKE_CUDA_PROFILER_RESULT");
  return result ? (CUresult)atoi(result) : CUDA_SUCCESS;
}

EXPORT CUresult cuProfilerStart(void) { log_line("profiler start"); return CUDA_SUCCESS; }
EXPORT CUresult cuProfilerStop(void) { log_line("profiler stop"); return CUDA_SUCCESS; }

/* NVRTC looks this up in a libcuda.so.1 that the loader's path finds, and fails without it. */
EXPORT CUresult cuGetExportTable(const void **table, const CUuuid *id) {
  (void)id;
  *table = NULL;
  return CUDA_ERROR_NOT_SUPPORTED;
}

/* cuGetProcAddress: every call above by its name (cuda.h's macros give some a _v2.. suffix),
 * unless FAKE_CUDA_MISSING lists it. */
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status) {
  (void)version; (void)flags;
  const char *missing = getenv("FAKE_CUDA_MISSING");
  size_t length = strlen(symbol);
  for (const char *p = missing; p && (p = strstr(p, symbol)); p += length) {
    if ((p == missing || p[-1] == ',') && (p[length] == ',' || p[length] == '\0')) {
      *pfn = NULL;
      *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      return CUDA_ERROR_NOT_FOUND;
    }
  }
  void *self = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  static const char *suffixes[] = {"_v4", "_v3", "_v2", ""};
  *pfn = NULL;
  for (int i = 0; i < 4 && !*pfn; i++) {
    char name[128];
    snprintf(name, sizeof name, "%s%s", symbol, suffixes[i]);
    *pfn = dlsym(self, name);
  }
  if (self) dlclose(self);
  *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
