/* nvrtc: NVRTC, loaded at run time (never linked), and programs compiled with it, either on the
 * calling thread (nvrtcCompile) or on a thread of its own that settles a Promise on the main
 * thread (nvrtcCompileAsync). A compile is one program's whole life: create, add name
 * expressions, compile, read the log, the output and the lowered names, destroy. Its outcome,
 * failures included, is a plain object that lib/compiler.js turns into a Buffer or a
 * CompileError, with the options and source name it knows. */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudadrv.h"

/* Every entry point used, typed from nvrtc.h's own prototypes. */
// clang-format off
#define NVRTC_FUNCTIONS(X)                                                                     \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs) \
  X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcAddNameExpression) \
  X(nvrtcGetLoweredName) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize)     \
  X(nvrtcGetPTX) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)
// clang-format on

typedef struct {
#define NVRTC_ENTRY(name) __typeof__(&name) name;
  NVRTC_FUNCTIONS(NVRTC_ENTRY)
#undef NVRTC_ENTRY
} nvrtc_api;
static nvrtc_api nv;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool loaded; /* set once, under load_lock, after nv, library_path and loaded_name */
static char load_message[8192] = "NVRTC is loaded by lib/compiler (nvrtcLoad) before use";
static char library_path[PATH_MAX];
static char loaded_name[PATH_MAX];

/* Appends printf-style text to load_message. */
static void note(const char *format, const char *a, const char *b) {
  size_t used = strlen(load_message);
  snprintf(load_message + used, sizeof load_message - used, format, a, b);
}

/* Loads name (a path or a soname) into nv when it is an NVRTC with every entry point cudadrv uses;
 * else notes why not. */
static bool try_load(const char *name, bool first) {
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    note(first ? "%s (%s)" : "; %s (%s)", name, dlerror());
    return false;
  }
  nvrtc_api found;
#define NVRTC_RESOLVE(entry)                                                                       \
  if (!(found.entry = (__typeof__(&entry))dlsym(lib, #entry))) {                                   \
    note(first ? "%s (lacks %s: cudadrv needs NVRTC 12.0 or newer)"                                \
               : "; %s (lacks %s: cudadrv needs NVRTC 12.0 or newer)",                             \
         name, #entry);                                                                            \
    dlclose(lib);                                                                                  \
    return false;                                                                                  \
  }
  NVRTC_FUNCTIONS(NVRTC_RESOLVE)
#undef NVRTC_RESOLVE
  Dl_info info;
  snprintf(library_path, sizeof library_path, "%s",
           dladdr((void *)found.nvrtcVersion, &info) && info.dli_fname ? info.dli_fname : name);
  snprintf(loaded_name, sizeof loaded_name, "%s", name);
  nv = found;
  return true;
}

static bool ready(void) { return atomic_load(&loaded); }
/* Throws the RuntimeError saying why NVRTC could not be loaded; returns NULL. */
static napi_value throw_unloaded(napi_env env) {
  char message[sizeof load_message];
  pthread_mutex_lock(&load_lock);
  memcpy(message, load_message, sizeof message);
  pthread_mutex_unlock(&load_lock);
  return throw_runtime(env, CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "dlopen", message);
}

/* Throws the RuntimeError for an NVRTC query that failed (which no valid NVRTC does); NULL. */
static napi_value throw_nvrtc(napi_env env, const char *api, nvrtcResult result) {
  char message[256];
  snprintf(message, sizeof message, "%s failed: %s", api, nv.nvrtcGetErrorString(result));
  return throw_runtime(env, CUDA_ERROR_UNKNOWN, api, message);
}

static napi_value make_string(napi_env env, const char *text) {
  napi_value result;
  NAPI_CALL(env, napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &result));
  return result;
}

static napi_value make_int_array(napi_env env, const int *values, size_t count) {
  napi_value array;
  NAPI_CALL(env, napi_create_array_with_length(env, count, &array));
  for (size_t i = 0; i < count; i++) {
    napi_value value = make_int(env, values[i]);
    if (!value) return NULL;
    NAPI_CALL(env, napi_set_element(env, array, (uint32_t)i, value));
  }
  return array;
}

/* nvrtcVersion(): [major, minor] of the NVRTC loaded. */
static napi_value nvrtc_version(napi_env env, napi_callback_info info) {
  (void)info;
  if (!ready()) return throw_unloaded(env);
  int version[2];
  nvrtcResult result = nv.nvrtcVersion(&version[0], &version[1]);
  if (result != NVRTC_SUCCESS) return throw_nvrtc(env, "nvrtcVersion", result);
  return make_int_array(env, version, 2);
}

/* nvrtcGetSupportedArchs(): the architectures NVRTC compiles for, as numbers (75, ..., 120). */
static napi_value nvrtc_get_supported_archs(napi_env env, napi_callback_info info) {
  (void)info;
  if (!ready()) return throw_unloaded(env);
  int count = 0, archs[256];
  nvrtcResult result = nv.nvrtcGetNumSupportedArchs(&count);
  if (result == NVRTC_SUCCESS && (count < 0 || count > 256)) result = NVRTC_ERROR_INTERNAL_ERROR;
  if (result == NVRTC_SUCCESS) result = nv.nvrtcGetSupportedArchs(archs);
  if (result != NVRTC_SUCCESS) return throw_nvrtc(env, "nvrtcGetSupportedArchs", result);
  return make_int_array(env, archs, (size_t)count);
}

/* nvrtcLibraryPath(): the file NVRTC was loaded from. */
static napi_value nvrtc_library_path(napi_env env, napi_callback_info info) {
  (void)info;
  if (!ready()) return throw_unloaded(env);
  return make_string(env, library_path);
}

/* ---- compiling ---- */

typedef struct compile_job {
  char *source, *name;
  char **options, **header_names, **header_sources, **expressions;
  uint32_t num_options, num_headers, num_header_sources, num_expressions;
  bool cubin;
  /* the outcome */
  nvrtcResult result;
  const char *api;
  char *log;
  char *image;
  size_t image_size;
  char **lowered; /* one per expression */
} compile_job;

static void free_strings(char **strings, uint32_t count) {
  if (!strings) return;
  for (uint32_t i = 0; i < count; i++) free(strings[i]);
  free(strings);
}

static void compile_free(void *arg) {
  compile_job *job = arg;
  free(job->source);
  free(job->name);
  free_strings(job->options, job->num_options);
  free_strings(job->header_names, job->num_headers);
  free_strings(job->header_sources, job->num_header_sources);
  free_strings(job->expressions, job->num_expressions);
  free(job->log);
  free(job->image);
  free_strings(job->lowered, job->num_expressions);
  free(job);
}

/* A copy of the JS string v; NULL after throwing. */
static char *read_string(napi_env env, napi_value v, const char *name) {
  size_t length;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &length) != napi_ok) {
    char message[160];
    snprintf(message, sizeof message, "%s must be a string", name);
    throw_type(env, message);
    return NULL;
  }
  char *text = malloc(length + 1);
  if (!text) {
    throw_oom(env);
    return NULL;
  }
  napi_status status = napi_get_value_string_utf8(env, v, text, length + 1, &length);
  if (status != napi_ok) {
    free(text);
    napi_fail(env, status);
    return NULL;
  }
  return text;
}

/* Copies of the strings of the JS array v; false after throwing. */
static bool read_strings(napi_env env, napi_value v, const char *name, char ***out,
                         uint32_t *count) {
  bool is_array = false;
  char message[160];
  NAPI_CALL_BOOL(env, napi_is_array(env, v, &is_array));
  if (!is_array) {
    snprintf(message, sizeof message, "%s must be an array of strings", name);
    throw_type(env, message);
    return false;
  }
  uint32_t length;
  if (napi_get_array_length(env, v, &length) != napi_ok || length > INT_MAX) {
    snprintf(message, sizeof message, "%s has too many elements", name);
    throw_range(env, message);
    return false;
  }
  *count = length;
  if (!(*out = calloc(length ? length : 1, sizeof **out))) {
    throw_oom(env);
    return false;
  }
  for (uint32_t i = 0; i < length; i++) {
    napi_value element;
    NAPI_CALL_BOOL(env, napi_get_element(env, v, i, &element));
    if (!((*out)[i] = read_string(env, element, name))) return false;
  }
  return true;
}

/* (source, name, options, headerNames, headerSources, nameExpressions, cubin) → a job, or NULL
 * after throwing. */
static compile_job *read_job(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  compile_job *job = calloc(1, sizeof *job);
  if (!job) {
    throw_oom(env);
    return NULL;
  }
  bool ok =
      (job->source = read_string(env, argv[0], "source")) &&
      (job->name = read_string(env, argv[1], "name")) &&
      read_strings(env, argv[2], "options", &job->options, &job->num_options) &&
      read_strings(env, argv[3], "header names", &job->header_names, &job->num_headers) &&
      read_strings(env, argv[4], "header sources", &job->header_sources, &job->num_header_sources);
  if (ok && job->num_header_sources != job->num_headers) {
    throw_range(env, "header names and header sources must have the same length");
    ok = false;
  }
  ok =
      ok && read_strings(env, argv[5], "nameExpressions", &job->expressions, &job->num_expressions);
  if (ok && napi_get_value_bool(env, argv[6], &job->cubin) != napi_ok) {
    throw_type(env, "cubin must be a boolean");
    ok = false;
  }
  if (ok &&
      !(job->lowered = calloc(job->num_expressions ? job->num_expressions : 1, sizeof(char *)))) {
    throw_oom(env);
    ok = false;
  }
  if (!ok) {
    compile_free(job);
    return NULL;
  }
  return job;
}

/* Any thread: the whole life of one program. The outcome stays in job. */
static void compile_run(void *arg) {
  compile_job *job = arg;
  nvrtcProgram prog = NULL;
  job->api = "nvrtcCreateProgram";
  job->result = nv.nvrtcCreateProgram(&prog, job->source, job->name, (int)job->num_headers,
                                      (const char *const *)job->header_sources,
                                      (const char *const *)job->header_names);
  if (job->result != NVRTC_SUCCESS) return;
  for (uint32_t i = 0; i < job->num_expressions; i++) {
    job->api = "nvrtcAddNameExpression";
    if ((job->result = nv.nvrtcAddNameExpression(prog, job->expressions[i])) != NVRTC_SUCCESS)
      goto done;
  }
  job->api = "nvrtcCompileProgram";
  job->result =
      nv.nvrtcCompileProgram(prog, (int)job->num_options, (const char *const *)job->options);
  /* The log holds the errors of a failure and the warnings of a success. */
  size_t size = 0;
  if (nv.nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 1 &&
      (job->log = malloc(size)) && nv.nvrtcGetProgramLog(prog, job->log) != NVRTC_SUCCESS) {
    free(job->log);
    job->log = NULL;
  }
  if (job->result != NVRTC_SUCCESS) goto done;
  job->api = job->cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX";
  job->result = job->cubin ? nv.nvrtcGetCUBINSize(prog, &size) : nv.nvrtcGetPTXSize(prog, &size);
  if (job->result != NVRTC_SUCCESS) goto done;
  if (!(job->image = malloc(size ? size : 1))) {
    job->result = NVRTC_ERROR_OUT_OF_MEMORY;
    goto done;
  }
  job->result = job->cubin ? nv.nvrtcGetCUBIN(prog, job->image) : nv.nvrtcGetPTX(prog, job->image);
  /* PTX comes NUL-terminated: the Buffer holds the text alone */
  job->image_size = !job->cubin && size ? strnlen(job->image, size) : size;
  for (uint32_t i = 0; i < job->num_expressions && job->result == NVRTC_SUCCESS; i++) {
    const char *lowered = NULL;
    job->api = "nvrtcGetLoweredName";
    job->result = nv.nvrtcGetLoweredName(prog, job->expressions[i], &lowered);
    if (job->result == NVRTC_SUCCESS && !(job->lowered[i] = strdup(lowered ? lowered : "")))
      job->result = NVRTC_ERROR_OUT_OF_MEMORY;
  }
done:
  nv.nvrtcDestroyProgram(&prog);
}

static void free_image(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

/* Main thread: { code, codeName, api, log, image (a Buffer over the output, which it owns from
 * then on: no copy), loweredNames }. */
static napi_value compile_outcome(napi_env env, void *arg) {
  compile_job *job = arg;
  napi_value outcome, image, lowered;
  NAPI_CALL(env, napi_create_object(env, &outcome));
  if (!set_named(env, outcome, "code", make_int(env, job->result)) ||
      !set_named(env, outcome, "codeName", make_string(env, nv.nvrtcGetErrorString(job->result))) ||
      !set_named(env, outcome, "api", make_string(env, job->api)) ||
      !set_named(env, outcome, "log", make_string(env, job->log ? job->log : "")))
    return NULL;
  if (job->result != NVRTC_SUCCESS) return outcome;
  /* The bytes are the buffer's from here: on a failure the runtime may still call free_image. */
  void *bytes = job->image;
  job->image = NULL;
  napi_status status =
      napi_create_external_buffer(env, job->image_size, bytes, free_image, NULL, &image);
  if (status == napi_no_external_buffers_allowed) { /* Electron's memory cage */
    status = napi_create_buffer_copy(env, job->image_size, bytes, NULL, &image);
    free(bytes);
  }
  NAPI_CALL(env, status);
  NAPI_CALL(env, napi_create_array_with_length(env, job->num_expressions, &lowered));
  for (uint32_t i = 0; i < job->num_expressions; i++) {
    napi_value name = make_string(env, job->lowered[i]);
    if (!name) return NULL;
    NAPI_CALL(env, napi_set_element(env, lowered, i, name));
  }
  if (!set_named(env, outcome, "image", image) || !set_named(env, outcome, "loweredNames", lowered))
    return NULL;
  return outcome;
}

/* As much stack as a main thread gets: the compiler recurses deeply on some sources. */
static const size_t COMPILE_STACK = 8 * 1024 * 1024;

static void *compile_thread(void *job) {
  compile_run(job);
  return NULL;
}

/* nvrtcCompile(source, name, options, headerNames, headerSources, nameExpressions, cubin): the
 * outcome of compiling, waited for. The compile runs on a thread of its own all the same: NVRTC
 * gets the stack it needs (a worker's is smaller), and a malloc arena of its own rather than the
 * main thread's, crowded by V8 (measured about 5% faster). */
static napi_value nvrtc_compile(napi_env env, napi_callback_info info) {
  if (!ready()) return throw_unloaded(env);
  compile_job *job = read_job(env, info);
  if (!job) return NULL;
  if (!thread_run(compile_thread, job, COMPILE_STACK)) compile_run(job);
  napi_value outcome = compile_outcome(env, job);
  compile_free(job);
  return outcome;
}

/* nvrtcCompileAsync(same arguments): a Promise of the outcome, compiled on a thread of its own. */
static napi_value nvrtc_compile_async(napi_env env, napi_callback_info info) {
  if (!ready()) return throw_unloaded(env);
  compile_job *job = read_job(env, info);
  if (!job) return NULL;
  return run_on_thread(env, compile_run, compile_outcome, compile_free, job, COMPILE_STACK);
}

/* ---- loading ---- */

#define MAX_CANDIDATES 256

/* nvrtcLoad(candidates): loads NVRTC, once per process, from the first of candidates (paths or
 * sonames, in the order lib/internal/library-search.js gives) that is a usable NVRTC; returns the
 * candidate that was loaded, by this call or an earlier one. A RuntimeError lists each candidate
 * tried and why it failed; a later call tries again. */
static napi_value nvrtc_load(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  char **names = NULL;
  uint32_t count = 0;
  bool ok = read_strings(env, argv[0], "candidates", &names, &count);
  if (ok && count > MAX_CANDIDATES) {
    throw_range(env, "candidates has more than 256 entries");
    ok = false;
  }
  if (ok) {
    pthread_mutex_lock(&load_lock);
    if (!atomic_load(&loaded)) {
      snprintf(load_message, sizeof load_message, "could not load NVRTC: tried ");
      for (uint32_t i = 0; i < count && !atomic_load(&loaded); i++) {
        if (try_load(names[i], i == 0)) {
          threads_guard_exit(); /* before NVRTC's destructors, a compile in flight ends */
          atomic_store(&loaded, true);
        }
      }
      if (!atomic_load(&loaded))
        note("%s; install NVRTC (the CUDA toolkit, pip install nvidia-cuda-nvrtc, or conda install "
             "cuda-nvrtc), or set CUDADRV_NVRTC_PATH to the path of libnvrtc.so",
             count ? "" : "nothing", "");
    }
    pthread_mutex_unlock(&load_lock);
  }
  free_strings(names, count);
  if (!ok) return NULL;
  return ready() ? make_string(env, loaded_name) : throw_unloaded(env);
}

/* ---- the default target ---- */

static atomic_bool driver_held;

static int find_libcuda(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  return slash && strncmp(slash + 1, "libcuda.so", 10) == 0;
}

/* currentComputeCapability(): [major, minor] of the current context's device, or null when no
 * context is current. Never loads the driver: a process where libcuda is not loaded yet has no
 * current context, and loading it (cuInit) would cost more than a cached compile. */
static napi_value current_compute_capability(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value null;
  NAPI_CALL(env, napi_get_null(env, &null));
  if (!atomic_load(&driver_held)) {
    /* whoever loaded it (cudadrv, or another library in the process) */
    if (!dl_iterate_phdr(find_libcuda, NULL) || loader_load() != CUDA_SUCCESS) return null;
    atomic_store(&driver_held, true); /* the loader keeps libcuda open from now on */
  }
  CUcontext ctx = NULL;
  CUdevice device;
  int capability[2];
  if (DRV(cuCtxGetCurrent, &ctx) != CUDA_SUCCESS || !ctx) return null;
  CU_CALL(env, cuCtxGetDevice, &device);
  CU_CALL(env, cuDeviceGetAttribute, &capability[0], CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
          device);
  CU_CALL(env, cuDeviceGetAttribute, &capability[1], CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
          device);
  return make_int_array(env, capability, 2);
}

bool nvrtc_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"nvrtcLoad", nvrtc_load},
      {"nvrtcVersion", nvrtc_version},
      {"nvrtcGetSupportedArchs", nvrtc_get_supported_archs},
      {"nvrtcLibraryPath", nvrtc_library_path},
      {"nvrtcCompile", nvrtc_compile},
      {"nvrtcCompileAsync", nvrtc_compile_async},
      {"currentComputeCapability", current_compute_capability},
  };
  return EXPORTS(env, exports, fns);
}
