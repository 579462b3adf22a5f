/* The stand-in's libraries (cuLibrary*, cuKernelGetFunction) and linker (cuLink*).
 *
 * A library keeps its image's text (module.c's format); a kernel of it becomes a function of a
 * module parsed from that text in each context that asks, one per context, reused while it lives
 * and unloaded with the library. The linker joins its inputs' text, each on lines of its own: the
 * linked image is a module declaring what every input declares. An input with a line "fail" is
 * refused, with an error log naming it. */
#include "fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VIEWS 16
#define MAX_KERNELS 32

struct CUkern_st {
  CUlibrary library;
  char name[64];
};

struct CUlib_st {
  int id;
  char *text;
  int nviews, nkernels;
  struct {
    CUcontext ctx;
    CUmodule module;
    int module_id;
  } views[MAX_VIEWS];
  struct CUkern_st *kernels[MAX_KERNELS];
};

static int libraries_loaded;

void fake_jit_logs(unsigned int n, const CUjit_option *options, void **values, char **info,
                   char **error) {
  *info = *error = NULL;
  for (unsigned int i = 0; i < n; i++) {
    if (options[i] == CU_JIT_INFO_LOG_BUFFER) *info = values[i];
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) *error = values[i];
  }
}

/* Whether text has a line that is exactly word, or starts with word and a space. */
static bool has_line(const char *text, const char *word, const char *name) {
  size_t n = strlen(word);
  for (const char *line = text; line && *line;) {
    if (strncmp(line, word, n) == 0 && (line[n] == '\n' || line[n] == '\0' || line[n] == ' ')) {
      if (!name) return true;
      const char *at = line + n + 1;
      size_t len = strlen(name);
      if (line[n] == ' ' && strncmp(at, name, len) == 0 &&
          (at[len] == ' ' || at[len] == '\n' || at[len] == '\0'))
        return true;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return false;
}

static CUresult library_from_text(CUlibrary *out, const char *text, char *info, char *error) {
  bool fails = has_line(text, "fail", NULL);
  if (info) strcpy(info, "fake JIT: info");
  if (error) strcpy(error, fails ? "fake JIT: syntax error at line 1" : "");
  if (fails) return CUDA_ERROR_INVALID_PTX;
  struct CUlib_st *lib = calloc(1, sizeof *lib);
  if (!lib || !(lib->text = strdup(text))) return free(lib), CUDA_ERROR_OUT_OF_MEMORY;
  CUresult result = obj_add((uintptr_t)lib, OBJ_LIBRARY, 0);
  if (result != CUDA_SUCCESS) return free(lib->text), free(lib), result;
  lib->id = __atomic_add_fetch(&libraries_loaded, 1, __ATOMIC_RELAXED);
  log_line("library load %d %zu", lib->id, strlen(text));
  *out = lib;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jit_options,
                                  void **jit_values, unsigned int n, CUlibraryOption *options,
                                  void **option_values, unsigned int n_options) {
  ENTER();
  (void)options;
  (void)option_values;
  if (!code || n_options) return CUDA_ERROR_INVALID_VALUE;
  const unsigned char *bytes = code;
  bool fatbin = bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 && bytes[3] == 0xba;
  char *info, *error;
  fake_jit_logs(n, jit_options, jit_values, &info, &error);
  return library_from_text(library, fatbin ? "" : code, info, error);
}

EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *path,
                                      CUjit_option *jit_options, void **jit_values, unsigned int n,
                                      CUlibraryOption *options, void **option_values,
                                      unsigned int n_options) {
  ENTER();
  (void)options;
  (void)option_values;
  if (n_options) return CUDA_ERROR_INVALID_VALUE;
  FILE *f = fopen(path, "rb");
  if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
  char *text = malloc(65536);
  if (!text) return fclose(f), CUDA_ERROR_OUT_OF_MEMORY;
  size_t got = fread(text, 1, 65535, f);
  fclose(f);
  text[got] = '\0';
  char *info, *error;
  fake_jit_logs(n, jit_options, jit_values, &info, &error);
  CUresult result = library_from_text(library, text, info, error);
  free(text);
  return result;
}

/* Whether view i of lib is still loaded (its context may have taken it away). */
static bool view_live(CUlibrary lib, int i) {
  return obj_is((uintptr_t)lib->views[i].module, OBJ_MODULE) &&
         fake_module_id(lib->views[i].module) == lib->views[i].module_id;
}

EXPORT CUresult cuLibraryUnload(CUlibrary library) {
  ENTER();
  if (!obj_remove((uintptr_t)library, OBJ_LIBRARY)) return CUDA_ERROR_INVALID_HANDLE;
  log_line("library unload %d", library->id);
  for (int i = 0; i < library->nviews; i++)
    if (view_live(library, i) && obj_remove((uintptr_t)library->views[i].module, OBJ_MODULE))
      fake_module_unload(library->views[i].module);
  for (int i = 0; i < library->nkernels; i++) {
    obj_remove((uintptr_t)library->kernels[i], OBJ_KERNEL);
    free(library->kernels[i]);
  }
  free(library->text);
  free(library);
  return CUDA_SUCCESS;
}

static CUresult get_kernel(CUkernel *kernel, CUlibrary library, const char *name);

EXPORT CUresult cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name) {
  ENTER();
  if (!obj_live((uintptr_t)library, OBJ_LIBRARY)) return CUDA_ERROR_INVALID_HANDLE;
  return get_kernel(kernel, library, name);
}

/* Calls each(name, data) for the name of every "entry" line of text, in order, until it fails. */
static CUresult each_entry(const char *text, CUresult (*each)(const char *name, void *data),
                           void *data) {
  for (const char *line = text; line && *line;) {
    if (strncmp(line, "entry ", 6) == 0) {
      char name[64];
      size_t n = strcspn(line + 6, " \n");
      if (n >= sizeof name) return CUDA_ERROR_INVALID_IMAGE;
      memcpy(name, line + 6, n);
      name[n] = '\0';
      CUresult result = each(name, data);
      if (result != CUDA_SUCCESS) return result;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return CUDA_SUCCESS;
}

static CUresult count_one(const char *name, void *data) {
  (void)name;
  ++*(unsigned int *)data;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary library) {
  ENTER();
  if (!obj_live((uintptr_t)library, OBJ_LIBRARY)) return CUDA_ERROR_INVALID_HANDLE;
  *count = 0;
  return each_entry(library->text, count_one, count);
}

typedef struct {
  CUlibrary library;
  CUkernel *kernels;
  unsigned int room, filled;
} kernel_list;
static CUresult list_one(const char *name, void *data) {
  kernel_list *list = data;
  if (list->filled == list->room) return CUDA_SUCCESS;
  return get_kernel(&list->kernels[list->filled++], list->library, name);
}
EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int count,
                                          CUlibrary library) {
  ENTER();
  if (!obj_live((uintptr_t)library, OBJ_LIBRARY)) return CUDA_ERROR_INVALID_HANDLE;
  if (!kernels && count) return CUDA_ERROR_INVALID_VALUE;
  kernel_list list = {library, kernels, count, 0};
  return each_entry(library->text, list_one, &list);
}

EXPORT CUresult cuKernelGetName(const char **name, CUkernel kernel) {
  ENTER();
  if (!obj_live((uintptr_t)kernel, OBJ_KERNEL)) return CUDA_ERROR_INVALID_HANDLE;
  *name = kernel->name;
  return CUDA_SUCCESS;
}

static CUresult get_kernel(CUkernel *kernel, CUlibrary library, const char *name) {
  if (!has_line(library->text, "entry", name) || strlen(name) >= 64) return CUDA_ERROR_NOT_FOUND;
  for (int i = 0; i < library->nkernels; i++)
    if (strcmp(library->kernels[i]->name, name) == 0) return *kernel = library->kernels[i], 0;
  struct CUkern_st *k = library->nkernels < MAX_KERNELS ? calloc(1, sizeof *k) : NULL;
  if (!k) return CUDA_ERROR_OUT_OF_MEMORY;
  k->library = library;
  strcpy(k->name, name);
  CUresult result = obj_add((uintptr_t)k, OBJ_KERNEL, 0);
  if (result != CUDA_SUCCESS) return free(k), result;
  library->kernels[library->nkernels++] = k;
  *kernel = k;
  return CUDA_SUCCESS;
}

/* The library's module in the current context, loaded there on first use. */
static CUresult view_of(CUlibrary library, CUmodule *out) {
  CUcontext ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  int free_slot = -1;
  for (int i = 0; i < library->nviews; i++) {
    if (!view_live(library, i)) {
      free_slot = i;
    } else if (library->views[i].ctx == ctx) {
      *out = library->views[i].module;
      return CUDA_SUCCESS;
    }
  }
  if (free_slot < 0 && library->nviews == MAX_VIEWS) return CUDA_ERROR_OUT_OF_MEMORY;
  int slot = free_slot >= 0 ? free_slot : library->nviews++;
  CUresult result = fake_module_parse(&library->views[slot].module, library->text);
  if (result != CUDA_SUCCESS) {
    library->views[slot].module = NULL;
    return result;
  }
  library->views[slot].ctx = ctx;
  library->views[slot].module_id = fake_module_id(library->views[slot].module);
  log_line("library %d in context, module %d", library->id, library->views[slot].module_id);
  *out = library->views[slot].module;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuKernelGetFunction(CUfunction *fn, CUkernel kernel) {
  ENTER();
  if (!obj_live((uintptr_t)kernel, OBJ_KERNEL)) return CUDA_ERROR_INVALID_HANDLE;
  CUmodule module;
  CUresult result = view_of(kernel->library, &module);
  return result == CUDA_SUCCESS ? fake_module_function(fn, module, kernel->name) : result;
}

static CUresult library_global(CUdeviceptr *ptr, size_t *bytes, CUlibrary library,
                               const char *name) {
  if (!obj_live((uintptr_t)library, OBJ_LIBRARY)) return CUDA_ERROR_INVALID_HANDLE;
  CUmodule module;
  CUresult result = view_of(library, &module);
  return result == CUDA_SUCCESS ? fake_module_global(ptr, bytes, module, name) : result;
}

EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *ptr, size_t *bytes, CUlibrary library,
                                   const char *name) {
  ENTER();
  return library_global(ptr, bytes, library, name);
}

/* A managed variable: here a global of the library in the current context. */
EXPORT CUresult cuLibraryGetManaged(CUdeviceptr *ptr, size_t *bytes, CUlibrary library,
                                    const char *name) {
  ENTER();
  return library_global(ptr, bytes, library, name);
}

/* ---- the linker ---- */

struct CUlinkState_st {
  char *text;
  size_t length;
  char *info, *error;
  int inputs;
};

EXPORT CUresult cuLinkCreate(unsigned int n, CUjit_option *options, void **values,
                             CUlinkState *out) {
  ENTER();
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  struct CUlinkState_st *state = calloc(1, sizeof *state);
  if (!state || !(state->text = calloc(1, 1))) return free(state), CUDA_ERROR_OUT_OF_MEMORY;
  fake_jit_logs(n, options, values, &state->info, &state->error);
  CUresult result = obj_add((uintptr_t)state, OBJ_LINK, 0);
  if (result != CUDA_SUCCESS) return free(state->text), free(state), result;
  char line[512];
  int at = snprintf(line, sizeof line, "link create");
  for (unsigned int i = 0; i < n && at < (int)sizeof line; i++)
    if (options[i] != CU_JIT_INFO_LOG_BUFFER && options[i] != CU_JIT_ERROR_LOG_BUFFER &&
        options[i] != CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES &&
        options[i] != CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      at += snprintf(line + at, sizeof line - at, " %d=%zu", (int)options[i],
                     (size_t)(uintptr_t)values[i]);
  log_line("%s", line);
  *out = state;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
                              const char *name, unsigned int n, CUjit_option *options,
                              void **values) {
  ENTER();
  (void)n;
  (void)options;
  (void)values;
  if (!obj_live((uintptr_t)state, OBJ_LINK)) return CUDA_ERROR_INVALID_HANDLE;
  if (!data || !size || type >= CU_JIT_NUM_INPUT_TYPES) return CUDA_ERROR_INVALID_VALUE;
  log_line("link add %d %zu %s", (int)type, size, name ? name : "");
  state->inputs++;
  if (type != CU_JIT_INPUT_PTX && type != CU_JIT_INPUT_CUBIN) return CUDA_SUCCESS;
  size_t length = strnlen(data, size);
  char *text = realloc(state->text, state->length + length + 2);
  if (!text) return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy(text + state->length, data, length);
  text[state->length + length] = '\n';
  text[state->length + length + 1] = '\0';
  state->text = text;
  if (has_line(text + state->length, "fail", NULL)) {
    text[state->length] = '\0';
    if (state->error) snprintf(state->error, 256, "fake link: %s: syntax error", name ? name : "");
    return CUDA_ERROR_INVALID_PTX;
  }
  state->length += length + 1;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLinkComplete(CUlinkState state, void **cubin, size_t *size) {
  ENTER();
  if (!obj_live((uintptr_t)state, OBJ_LINK)) return CUDA_ERROR_INVALID_HANDLE;
  if (!state->inputs) return CUDA_ERROR_INVALID_VALUE;
  if (state->info) snprintf(state->info, 256, "fake link: %d inputs", state->inputs);
  log_line("link complete %zu", state->length);
  *cubin = state->text;
  *size = state->length + 1;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLinkDestroy(CUlinkState state) {
  ENTER();
  if (!obj_remove((uintptr_t)state, OBJ_LINK)) return CUDA_ERROR_INVALID_HANDLE;
  log_line("link destroy");
  free(state->text);
  free(state);
  return CUDA_SUCCESS;
}
