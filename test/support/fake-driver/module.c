/* The stand-in's modules. A module image is text, one declaration a line:
 *   entry <name> <size>[@<align>] ...   a kernel and the sizes of its parameters
 *   global <name> <bytes>               a global variable (real memory, zeroed)
 *   texref <name> / surfref <name>      references
 *   fail                                the JIT fails, with an error log
 * A fatbin image is taken as a module without kernels, and logged with its size. Kernels and
 * globals are registered objects, freed with their module. */
#include "fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 64
struct CUfunc_st {
  char name[64];
  int count;
  size_t offsets[MAX_PARAMS], sizes[MAX_PARAMS];
  int attributes[CU_FUNC_ATTRIBUTE_MAX];
};
struct CUtexref_st {
  CUdeviceptr address;
  CUarray array;
  CUarray_format format;
  int channels;
  CUaddress_mode modes[3];
  CUfilter_mode filter;
  unsigned int flags;
};
struct CUsurfref_st {
  CUarray array;
};
#define MAX_ITEMS 32
#define MAX_REFS 4
struct CUmod_st {
  int id;
  int nfuncs, nglobals, ntex, nsurf;
  CUfunction funcs[MAX_ITEMS];
  char globals[MAX_ITEMS][64];
  size_t global_sizes[MAX_ITEMS];
  void *global_memory[MAX_ITEMS];
  char tex_names[MAX_REFS][64], surf_names[MAX_REFS][64];
  struct CUtexref_st tex[MAX_REFS];
  struct CUsurfref_st surf[MAX_REFS];
};

static int modules_loaded;

/* References live inside their module, registered so that one of an unloaded module is stale. */
static void unregister_references(CUmodule m, int tex, int surf) {
  for (int i = 0; i < tex; i++) obj_remove((uintptr_t)&m->tex[i], OBJ_REFERENCE);
  for (int i = 0; i < surf; i++) obj_remove((uintptr_t)&m->surf[i], OBJ_REFERENCE);
}

static CUresult register_references(CUmodule m) {
  CUresult result = CUDA_SUCCESS;
  int tex = 0, surf = 0;
  while (result == CUDA_SUCCESS && tex < m->ntex)
    if ((result = obj_add((uintptr_t)&m->tex[tex], OBJ_REFERENCE, 0)) == CUDA_SUCCESS) tex++;
  while (result == CUDA_SUCCESS && surf < m->nsurf)
    if ((result = obj_add((uintptr_t)&m->surf[surf], OBJ_REFERENCE, 0)) == CUDA_SUCCESS) surf++;
  if (result != CUDA_SUCCESS) unregister_references(m, tex, surf);
  return result;
}

static void module_free(CUmodule m, bool registered) {
  for (int i = 0; i < m->nfuncs; i++) {
    if (registered) obj_remove((uintptr_t)m->funcs[i], OBJ_FUNCTION);
    free(m->funcs[i]);
  }
  for (int i = 0; i < m->nglobals; i++) {
    if (registered) obj_remove((uintptr_t)m->global_memory[i], OBJ_GLOBAL);
    free(m->global_memory[i]);
  }
  if (registered) unregister_references(m, m->ntex, m->nsurf);
  free(m);
}

/* Parses a kernel's parameter sizes: C's layout, each aligned to its size up to 16 or @align. */
static bool parse_entry(CUfunction f, const char *rest) {
  size_t offset = 0, size, align;
  int n;
  while (*rest != '\n' && *rest && sscanf(rest, " %zu%n", &size, &n) == 1) {
    rest += n;
    align = size < 16 ? size : 16;
    if (*rest == '@' && sscanf(rest + 1, "%zu%n", &align, &n) == 1) rest += n + 1;
    if (f->count == MAX_PARAMS || !align || size > 4096) return false;
    offset = (offset + align - 1) / align * align;
    f->offsets[f->count] = offset;
    f->sizes[f->count++] = size;
    offset += size;
  }
  for (int a = 0; a < CU_FUNC_ATTRIBUTE_MAX; a++) f->attributes[a] = 100 + a;
  return true;
}

CUresult fake_module_parse(CUmodule *out, const char *text) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  struct CUmod_st *m = calloc(1, sizeof *m);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult result = CUDA_SUCCESS;
  for (const char *line = text; line && *line && result == CUDA_SUCCESS;) {
    char word[16] = "", name[64] = "";
    int used = 0;
    if (sscanf(line, "%15s %63s%n", word, name, &used) >= 1) {
      const char *rest = line + used;
      if (strcmp(word, "fail") == 0) {
        result = CUDA_ERROR_INVALID_PTX;
      } else if (strcmp(word, "entry") == 0) {
        CUfunction f = m->nfuncs < MAX_ITEMS ? calloc(1, sizeof *f) : NULL;
        if (!f)
          result = CUDA_ERROR_INVALID_IMAGE;
        else {
          m->funcs[m->nfuncs++] = f;
          strcpy(f->name, name);
          if (!parse_entry(f, rest)) result = CUDA_ERROR_INVALID_IMAGE;
        }
      } else if (strcmp(word, "global") == 0) {
        size_t size = 0;
        if (m->nglobals == MAX_ITEMS || sscanf(rest, " %zu", &size) != 1 || !size ||
            size > (1 << 24)) {
          result = CUDA_ERROR_INVALID_IMAGE;
        } else {
          strcpy(m->globals[m->nglobals], name);
          m->global_sizes[m->nglobals] = size;
          if (!(m->global_memory[m->nglobals++] = calloc(1, size)))
            result = CUDA_ERROR_OUT_OF_MEMORY;
        }
      } else if (strcmp(word, "texref") == 0) {
        if (m->ntex == MAX_REFS)
          result = CUDA_ERROR_INVALID_IMAGE;
        else
          strcpy(m->tex_names[m->ntex++], name);
      } else if (strcmp(word, "surfref") == 0) {
        if (m->nsurf == MAX_REFS)
          result = CUDA_ERROR_INVALID_IMAGE;
        else
          strcpy(m->surf_names[m->nsurf++], name);
      }
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  if (result != CUDA_SUCCESS) return module_free(m, false), result;
  /* registered last, all or nothing */
  int funcs = 0, globals = 0;
  while (result == CUDA_SUCCESS && funcs < m->nfuncs)
    if ((result = obj_add((uintptr_t)m->funcs[funcs], OBJ_FUNCTION, 0)) == CUDA_SUCCESS) funcs++;
  while (result == CUDA_SUCCESS && globals < m->nglobals)
    if ((result = obj_add((uintptr_t)m->global_memory[globals], OBJ_GLOBAL,
                          m->global_sizes[globals])) == CUDA_SUCCESS)
      globals++;
  bool references = result == CUDA_SUCCESS && (result = register_references(m)) == CUDA_SUCCESS;
  if (result == CUDA_SUCCESS) result = obj_add((uintptr_t)m, OBJ_MODULE, 0);
  if (result != CUDA_SUCCESS) {
    for (int i = 0; i < funcs; i++) obj_remove((uintptr_t)m->funcs[i], OBJ_FUNCTION);
    for (int i = 0; i < globals; i++) obj_remove((uintptr_t)m->global_memory[i], OBJ_GLOBAL);
    if (references) unregister_references(m, m->ntex, m->nsurf);
    return module_free(m, false), result;
  }
  m->id = __atomic_add_fetch(&modules_loaded, 1, __ATOMIC_RELAXED);
  *out = m;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n,
                                   CUjit_option *options, void **values) {
  ENTER();
  char *info = NULL, *error = NULL;
  char line[1024];
  const unsigned char *bytes = image;
  if (!image) return CUDA_ERROR_INVALID_VALUE;
  /* a fatbin (it holds no kernels here): its size as its header gives it */
  bool fatbin = bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 && bytes[3] == 0xba;
  int at = fatbin ? snprintf(line, sizeof line, "load fatbin %llu",
                             (unsigned long long)(bytes[6] | bytes[7] << 8) +
                                 *(const unsigned long long *)(bytes + 8))
                  : snprintf(line, sizeof line, "load %zu", strlen(image));
  for (unsigned int i = 0; i < n; i++) {
    if (options[i] == CU_JIT_INFO_LOG_BUFFER)
      info = values[i];
    else if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      error = values[i];
    else if (options[i] != CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES &&
             options[i] != CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES && at < (int)sizeof line)
      at += snprintf(line + at, sizeof line - at, " %d=%zu", (int)options[i],
                     (size_t)(uintptr_t)values[i]);
  }
  log_line("%s", line);
  CUresult result = fake_module_parse(module, fatbin ? "" : image);
  if (info) strcpy(info, "fake JIT: info");
  if (error) strcpy(error, result == CUDA_SUCCESS ? "" : "fake JIT: syntax error at line 1");
  return result;
}

EXPORT CUresult cuModuleLoad(CUmodule *module, const char *path) {
  ENTER();
  FILE *f = fopen(path, "rb");
  if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
  char *text = malloc(65536);
  if (!text) return fclose(f), CUDA_ERROR_OUT_OF_MEMORY;
  size_t n = fread(text, 1, 65535, f);
  fclose(f);
  text[n] = '\0';
  log_line("load file %zu", n);
  CUresult result = fake_module_parse(module, text);
  free(text);
  return result;
}

static bool module_ok(CUmodule m) { return obj_live((uintptr_t)m, OBJ_MODULE); }
static bool function_ok(CUfunction f) { return obj_live((uintptr_t)f, OBJ_FUNCTION); }

int fake_module_id(CUmodule module) { return module->id; }

void fake_module_unload(CUmodule module) {
  log_line("unload %d", module->id);
  module_free(module, true);
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
  ENTER();
  if (!obj_remove((uintptr_t)module, OBJ_MODULE)) return CUDA_ERROR_INVALID_HANDLE;
  fake_module_unload(module);
  return CUDA_SUCCESS;
}

CUresult fake_module_function(CUfunction *fn, CUmodule module, const char *name) {
  for (int i = 0; i < module->nfuncs; i++)
    if (strcmp(module->funcs[i]->name, name) == 0) return *fn = module->funcs[i], CUDA_SUCCESS;
  return CUDA_ERROR_NOT_FOUND;
}

CUresult fake_module_global(CUdeviceptr *ptr, size_t *bytes, CUmodule module, const char *name) {
  for (int i = 0; i < module->nglobals; i++)
    if (strcmp(module->globals[i], name) == 0) {
      if (ptr) *ptr = (CUdeviceptr)(uintptr_t)module->global_memory[i];
      if (bytes) *bytes = module->global_sizes[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name) {
  ENTER();
  if (!module_ok(module)) return CUDA_ERROR_INVALID_HANDLE;
  return fake_module_function(fn, module, name);
}
EXPORT CUresult cuModuleGetGlobal(CUdeviceptr *ptr, size_t *bytes, CUmodule module,
                                  const char *name) {
  ENTER();
  if (!module_ok(module)) return CUDA_ERROR_INVALID_HANDLE;
  return fake_module_global(ptr, bytes, module, name);
}
EXPORT CUresult cuModuleGetTexRef(CUtexref *ref, CUmodule module, const char *name) {
  ENTER();
  if (!module_ok(module)) return CUDA_ERROR_INVALID_HANDLE;
  for (int i = 0; i < module->ntex; i++)
    if (strcmp(module->tex_names[i], name) == 0) return *ref = &module->tex[i], CUDA_SUCCESS;
  return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult cuModuleGetSurfRef(CUsurfref *ref, CUmodule module, const char *name) {
  ENTER();
  if (!module_ok(module)) return CUDA_ERROR_INVALID_HANDLE;
  for (int i = 0; i < module->nsurf; i++)
    if (strcmp(module->surf_names[i], name) == 0) return *ref = &module->surf[i], CUDA_SUCCESS;
  return CUDA_ERROR_NOT_FOUND;
}

/* ---- kernels ---- */

EXPORT CUresult cuFuncGetParamInfo(CUfunction fn, size_t index, size_t *offset, size_t *size) {
  ENTER();
  if (!function_ok(fn)) return CUDA_ERROR_INVALID_HANDLE;
  if (index >= (size_t)fn->count) return CUDA_ERROR_INVALID_VALUE;
  *offset = fn->offsets[index];
  if (size) *size = fn->sizes[index];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction f) {
  ENTER();
  if (!function_ok(f)) return CUDA_ERROR_INVALID_HANDLE;
  if ((int)attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  *value = f->attributes[attribute];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  ENTER();
  if (!function_ok(f)) return CUDA_ERROR_INVALID_HANDLE;
  if ((int)attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  f->attributes[attribute] = value;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache config) {
  ENTER();
  if (!function_ok(f)) return CUDA_ERROR_INVALID_HANDLE;
  log_line("cache %s %d", f->name, (int)config);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetSharedMemConfig(CUfunction f, CUsharedconfig config) {
  ENTER();
  if (!function_ok(f)) return CUDA_ERROR_INVALID_HANDLE;
  log_line("sharedconfig %s %d", f->name, (int)config);
  return CUDA_SUCCESS;
}
/* The parameter layout a launch must match (launch.c). */
size_t function_params(CUfunction f, const char **name) {
  *name = f->name;
  return f->count ? f->offsets[f->count - 1] + f->sizes[f->count - 1] : 0;
}

/* Occupancy: 2048 threads and 64 KiB of shared memory per multiprocessor, 132 of them. */
static int blocks_per_sm(int block_size, size_t smem) {
  int by_threads = 2048 / block_size, by_smem = smem ? (int)(65536 / smem) : by_threads;
  return by_threads < by_smem ? by_threads : by_smem;
}
EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, CUfunction f,
                                                                     int block_size, size_t smem,
                                                                     unsigned int flags) {
  ENTER();
  (void)flags;
  if (!function_ok(f)) return CUDA_ERROR_INVALID_HANDLE;
  if (block_size < 1 || block_size > 1024) return CUDA_ERROR_INVALID_VALUE;
  *blocks = blocks_per_sm(block_size, smem);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block_size,
                                                          CUfunction f, CUoccupancyB2DSize smem_of,
                                                          size_t smem, int limit,
                                                          unsigned int flags) {
  ENTER();
  (void)flags;
  if (!function_ok(f)) return CUDA_ERROR_INVALID_HANDLE;
  if (limit < 0) return CUDA_ERROR_INVALID_VALUE;
  int best = 0, best_threads = -1;
  for (int b = 32; b <= (limit && limit < 1024 ? limit : 1024); b += 32) {
    int threads = b * blocks_per_sm(b, smem_of ? smem_of(b) : smem);
    if (threads > best_threads) best = b, best_threads = threads;
  }
  *block_size = best;
  *min_grid = best ? 132 * blocks_per_sm(best, smem_of ? smem_of(best) : smem) : 0;
  return CUDA_SUCCESS;
}

/* Clusters: at most 8 blocks (portable), a shape that divides the grid; the 132 multiprocessors
 * hold as many whole clusters as their blocks make. Each query is logged. */
static CUresult cluster_blocks(const CUlaunchConfig *c, int *size) {
  const CUlaunchAttribute *cluster = NULL;
  for (unsigned int i = 0; i < c->numAttrs; i++)
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) cluster = &c->attrs[i];
  if (!cluster) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  unsigned int x = cluster->value.clusterDim.x, y = cluster->value.clusterDim.y,
               z = cluster->value.clusterDim.z;
  if (!x || !y || !z || c->gridDimX % x || c->gridDimY % y || c->gridDimZ % z ||
      (unsigned long long)x * y * z > 8)
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  *size = (int)(x * y * z);
  return CUDA_SUCCESS;
}
static CUresult block_size_of(const CUlaunchConfig *c, int *threads) {
  unsigned long long t = (unsigned long long)c->blockDimX * c->blockDimY * c->blockDimZ;
  if (!t || t > 1024) return CUDA_ERROR_INVALID_VALUE;
  *threads = (int)t;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuOccupancyMaxActiveClusters(int *clusters, CUfunction f, const CUlaunchConfig *c) {
  ENTER();
  if (!function_ok(f)) return CUDA_ERROR_INVALID_HANDLE;
  int size, threads;
  CUresult result = block_size_of(c, &threads);
  if (result == CUDA_SUCCESS) result = cluster_blocks(c, &size);
  if (result != CUDA_SUCCESS) return result;
  *clusters = 132 * blocks_per_sm(threads, c->sharedMemBytes) / size;
  log_line("occupancy clusters %s block=%d shared=%u cluster=%d", f->name, threads,
           c->sharedMemBytes, size);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int *size, CUfunction f,
                                                   const CUlaunchConfig *c) {
  ENTER();
  if (!function_ok(f)) return CUDA_ERROR_INVALID_HANDLE;
  int threads;
  CUresult result = block_size_of(c, &threads);
  if (result != CUDA_SUCCESS) return result;
  *size = blocks_per_sm(threads, c->sharedMemBytes) ? 8 : 0;
  log_line("occupancy cluster size %s block=%d shared=%u", f->name, threads, c->sharedMemBytes);
  return CUDA_SUCCESS;
}
/* What each of blocks blocks of block_size threads may have of the 64 KiB, in 256-byte units. */
EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *bytes, CUfunction f, int blocks,
                                                        int block_size) {
  ENTER();
  if (!function_ok(f)) return CUDA_ERROR_INVALID_HANDLE;
  if (blocks < 1 || block_size < 1 || block_size > 1024) return CUDA_ERROR_INVALID_VALUE;
  *bytes = (long long)blocks * block_size > 2048 ? 0 : (size_t)(65536 / blocks) / 256 * 256;
  return CUDA_SUCCESS;
}

/* ---- texture and surface references: alignment 256, so an address off it gets an offset ---- */

#define REF_OK(r)                                                                                  \
  if (!obj_live((uintptr_t)(r), OBJ_REFERENCE)) return CUDA_ERROR_INVALID_HANDLE

EXPORT CUresult cuTexRefSetAddress(size_t *offset, CUtexref t, CUdeviceptr ptr, size_t bytes) {
  ENTER();
  REF_OK(t);
  CUresult result = device_range(ptr, bytes);
  if (result != CUDA_SUCCESS) return result;
  log_line("texaddress %llx %zu", (unsigned long long)ptr, bytes);
  t->address = ptr & ~(CUdeviceptr)255;
  *offset = (size_t)(ptr & 255);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetAddress2D(CUtexref t, const CUDA_ARRAY_DESCRIPTOR *d, CUdeviceptr ptr,
                                     size_t pitch) {
  ENTER();
  REF_OK(t);
  if (pitch < d->Width || (d->Height && pitch > SIZE_MAX / d->Height))
    return CUDA_ERROR_INVALID_VALUE;
  CUresult result = device_range(ptr, pitch * d->Height);
  if (result != CUDA_SUCCESS) return result;
  log_line("texaddress2d %llx %zu %zu %d %u %zu", (unsigned long long)ptr, d->Width, d->Height,
           (int)d->Format, d->NumChannels, pitch);
  t->address = ptr;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetArray(CUtexref t, CUarray array, unsigned int flags) {
  ENTER();
  REF_OK(t);
  if (flags > CU_TRSA_OVERRIDE_FORMAT) return CUDA_ERROR_INVALID_VALUE;
  if (!obj_live((uintptr_t)array, OBJ_ARRAY)) return CUDA_ERROR_INVALID_HANDLE;
  t->array = array;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuSurfRefSetArray(CUsurfref s, CUarray array, unsigned int flags) {
  ENTER();
  REF_OK(s);
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  if (!obj_live((uintptr_t)array, OBJ_ARRAY)) return CUDA_ERROR_INVALID_HANDLE;
  s->array = array;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetFormat(CUtexref t, CUarray_format format, int channels) {
  ENTER();
  REF_OK(t);
  t->format = format;
  t->channels = channels;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetAddressMode(CUtexref t, int dim, CUaddress_mode mode) {
  ENTER();
  REF_OK(t);
  if (dim < 0 || dim > 2) return CUDA_ERROR_INVALID_VALUE;
  t->modes[dim] = mode;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetFilterMode(CUtexref t, CUfilter_mode mode) {
  ENTER();
  REF_OK(t);
  t->filter = mode;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefSetFlags(CUtexref t, unsigned int flags) {
  ENTER();
  REF_OK(t);
  t->flags = flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefGetAddress(CUdeviceptr *ptr, CUtexref t) {
  ENTER();
  REF_OK(t);
  *ptr = t->address;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefGetFormat(CUarray_format *format, int *channels, CUtexref t) {
  ENTER();
  REF_OK(t);
  *format = t->format;
  *channels = t->channels;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefGetAddressMode(CUaddress_mode *mode, CUtexref t, int dim) {
  ENTER();
  REF_OK(t);
  if (dim < 0 || dim > 2) return CUDA_ERROR_INVALID_VALUE;
  *mode = t->modes[dim];
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefGetFilterMode(CUfilter_mode *mode, CUtexref t) {
  ENTER();
  REF_OK(t);
  *mode = t->filter;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuTexRefGetFlags(unsigned int *flags, CUtexref t) {
  ENTER();
  REF_OK(t);
  *flags = t->flags;
  return CUDA_SUCCESS;
}
