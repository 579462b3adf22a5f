/* nvrtc: NVRTC, loaded at run time (never linked), and programs compiled with it, either on the
 * calling thread (nvrtcCompile) or on a thread of its own that settles a Promise on the main
 * thread (nvrtcCompileAsync). A compile is one program's whole life: create, add name
 * expressions, compile, read the log, the output and the lowered names, destroy. Its outcome,
 * failures included, is a plain object that lib/compiler.js turns into a Buffer or a
 * CompileError, with the options and source name it knows. */
#include <link.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolkit.h"

/* Every entry point used, typed from nvrtc.h's own prototypes. */
// clang-format off
#define NVRTC_FUNCTIONS(X)                                                                     \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs) \
  X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcAddNameExpression) \
  X(nvrtcGetLoweredName) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize)     \
  X(nvrtcGetPTX) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetLTOIRSize) X(nvrtcGetLTOIR)
// clang-format on

typedef struct {
#define NVRTC_ENTRY(name) __typeof__(&name) name;
  NVRTC_FUNCTIONS(NVRTC_ENTRY)
#undef NVRTC_ENTRY
} nvrtc_api;
static nvrtc_api nv;

static void adopt(void *const *entries) {
  size_t i = 0;
#define NVRTC_ADOPT(name) nv.name = (__typeof__(&name))entries[i++];
  NVRTC_FUNCTIONS(NVRTC_ADOPT)
#undef NVRTC_ADOPT
}

#define NVRTC_NAME(name) #name,
static const char *const SYMBOLS[] = {NVRTC_FUNCTIONS(NVRTC_NAME)};
#undef NVRTC_NAME

static toolkit_library nvrtc = TOOLKIT_LIBRARY(
    "NVRTC", SYMBOLS, "cudadrv needs NVRTC 12.0 or newer",
    "install NVRTC (the CUDA toolkit, pip install nvidia-cuda-nvrtc, or conda install cuda-nvrtc), "
    "or set CUDADRV_NVRTC_PATH to the path of libnvrtc.so",
    adopt, reads_guard);

static bool ready(void) { return toolkit_ready(&nvrtc); }
static napi_value throw_unloaded(napi_env env) { return toolkit_throw_unloaded(env, &nvrtc); }

/* Throws the RuntimeError for an NVRTC query that failed (which no valid NVRTC does); NULL. */
static napi_value throw_nvrtc(napi_env env, const char *api, nvrtcResult result) {
  char message[256];
  snprintf(message, sizeof message, "%s failed: %s", api, nv.nvrtcGetErrorString(result));
  return throw_runtime(env, CUDA_ERROR_UNKNOWN, api, message);
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
  return toolkit_path(env, &nvrtc);
}

/* ---- compiling ---- */

/* What a compile gives: lib/compiler/request.js names it ('ptx', 'cubin' or 'ltoir'). */
typedef enum { OUTPUT_PTX, OUTPUT_CUBIN, OUTPUT_LTOIR } output_kind;
static const char *const OUTPUT_NAMES[] = {"ptx", "cubin", "ltoir"};
static const char *const OUTPUT_APIS[] = {"nvrtcGetPTX", "nvrtcGetCUBIN", "nvrtcGetLTOIR"};

typedef struct compile_job {
  char *source, *name;
  char **options, **header_names, **header_sources, **expressions;
  uint32_t num_options, num_headers, num_header_sources, num_expressions;
  output_kind kind;
  /* the outcome */
  nvrtcResult result;
  const char *api;
  char *log;
  char *image;
  size_t image_size;
  char **lowered;  /* one per expression */
  reads_log reads; /* the files NVRTC read */
} compile_job;

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
  reads_free(&job->reads);
  free(job);
}

/* (source, name, options, headerNames, headerSources, nameExpressions, kind) → a job, or NULL
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
      (job->source = copy_string(env, argv[0], "source")) &&
      (job->name = copy_string(env, argv[1], "name")) &&
      copy_strings(env, argv[2], "options", &job->options, &job->num_options) &&
      copy_strings(env, argv[3], "header names", &job->header_names, &job->num_headers) &&
      copy_strings(env, argv[4], "header sources", &job->header_sources, &job->num_header_sources);
  if (ok && job->num_header_sources != job->num_headers) {
    throw_range(env, "header names and header sources must have the same length");
    ok = false;
  }
  ok =
      ok && copy_strings(env, argv[5], "nameExpressions", &job->expressions, &job->num_expressions);
  char kind[8] = "";
  ok = ok && arg_string(env, argv[6], "kind", kind, sizeof kind);
  for (job->kind = OUTPUT_PTX; ok && strcmp(kind, OUTPUT_NAMES[job->kind]) != 0;) {
    if (++job->kind > OUTPUT_LTOIR) {
      throw_range(env, "kind must be 'ptx', 'cubin' or 'ltoir'");
      ok = false;
    }
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
  reads_begin(&job->reads);
  job->result =
      nv.nvrtcCompileProgram(prog, (int)job->num_options, (const char *const *)job->options);
  reads_end();
  /* The log holds the errors of a failure and the warnings of a success. */
  size_t size = 0;
  if (nv.nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 1 &&
      (job->log = malloc(size)) && nv.nvrtcGetProgramLog(prog, job->log) != NVRTC_SUCCESS) {
    free(job->log);
    job->log = NULL;
  }
  if (job->result != NVRTC_SUCCESS) goto done;
  job->api = OUTPUT_APIS[job->kind];
  job->result = job->kind == OUTPUT_CUBIN   ? nv.nvrtcGetCUBINSize(prog, &size)
                : job->kind == OUTPUT_LTOIR ? nv.nvrtcGetLTOIRSize(prog, &size)
                                            : nv.nvrtcGetPTXSize(prog, &size);
  if (job->result != NVRTC_SUCCESS) goto done;
  if (!(job->image = malloc(size ? size : 1))) {
    job->result = NVRTC_ERROR_OUT_OF_MEMORY;
    goto done;
  }
  job->result = job->kind == OUTPUT_CUBIN   ? nv.nvrtcGetCUBIN(prog, job->image)
                : job->kind == OUTPUT_LTOIR ? nv.nvrtcGetLTOIR(prog, job->image)
                                            : nv.nvrtcGetPTX(prog, job->image);
  /* PTX comes NUL-terminated: the Buffer holds the text alone */
  job->image_size = job->kind == OUTPUT_PTX && size ? strnlen(job->image, size) : size;
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

/* Main thread: { code, codeName, api, log, files (what NVRTC read), refused ("path: why" of a
 * file it was refused, where one was), image (a Buffer over the output, which it owns from then
 * on: no copy), loweredNames }. */
static napi_value compile_outcome(napi_env env, void *arg) {
  compile_job *job = arg;
  napi_value outcome, image, lowered;
  NAPI_CALL(env, napi_create_object(env, &outcome));
  if (!set_named(env, outcome, "code", make_int(env, job->result)) ||
      !set_named(env, outcome, "codeName", make_string(env, nv.nvrtcGetErrorString(job->result))) ||
      !set_named(env, outcome, "api", make_string(env, job->api)) ||
      !set_named(env, outcome, "log", make_string(env, job->log ? job->log : "")))
    return NULL;
  napi_value files;
  NAPI_CALL(env, napi_create_array_with_length(env, job->reads.count, &files));
  for (uint32_t i = 0; i < job->reads.count; i++) {
    napi_value file = make_string(env, job->reads.files[i]);
    if (!file) return NULL;
    NAPI_CALL(env, napi_set_element(env, files, i, file));
  }
  if (!set_named(env, outcome, "files", files) ||
      (job->reads.refused &&
       !set_named(env, outcome, "refused", make_string(env, job->reads.refused))))
    return NULL;
  if (job->result != NVRTC_SUCCESS) return outcome;
  void *bytes = job->image;
  job->image = NULL; /* the buffer's, whatever happens */
  if (!(image = buffer_owning(env, bytes, job->image_size))) return NULL;
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

/* NVRTC's parser recurses about 3.5 KiB a level of nesting, and has no limit of its own: 8 MiB
 * (a main thread's) crashed at 5,000 nested parentheses, 1 GiB holds 300,000 (measured with NVRTC
 * 13.0). It is address space, committed only as it is touched. Deeper nesting, which macros can
 * make from a short source, still overflows: the isolated mode contains that. */
static const size_t COMPILE_STACK = (size_t)1 << 30;

static void *compile_thread(void *job) {
  compile_run(job);
  return NULL;
}

/* nvrtcCompile(source, name, options, headerNames, headerSources, nameExpressions, kind): the
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

/* nvrtcLoad(candidates): loads NVRTC (toolkit_load) from candidates, paths or sonames in the
 * order lib/internal/library-search.js gives; the candidate loaded. */
static napi_value nvrtc_load(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  return toolkit_load(env, argv[0], &nvrtc);
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
  napi_value limit;
  NAPI_CALL_BOOL(env, napi_create_double(env, (double)READS_LIMIT, &limit));
  return EXPORTS(env, exports, fns) && set_named(env, exports, "readsLimit", limit);
}
