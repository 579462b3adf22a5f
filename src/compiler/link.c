/* link: linking device code into one cubin, with nvJitLink (loaded at run time like NVRTC, never
 * linked) or, where it is missing, with the driver's own linker (cuLink*, which needs a context
 * and does no link-time optimization). A link is one job's whole life: create, add every input,
 * complete, read the logs and the cubin, destroy; on the calling thread (link) or on a thread of
 * its own that settles a Promise (linkAsync). Inputs are copied from JS when the job is made.
 * Its outcome, failures included, is a plain object that lib/compiler/linker.js turns into a
 * Buffer or a LinkError. */
#include <nvJitLink.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolkit.h"

/* Every entry point used, typed from nvJitLink.h's own prototypes (its inline wrappers name the
 * versioned symbols; the library exports the plain names too, from 12.0 on). */
// clang-format off
#define NVJITLINK_FUNCTIONS(X)                                                                     \
  X(nvJitLinkVersion) X(nvJitLinkCreate) X(nvJitLinkDestroy) X(nvJitLinkAddData)                   \
  X(nvJitLinkComplete) X(nvJitLinkGetLinkedCubinSize) X(nvJitLinkGetLinkedCubin)                   \
  X(nvJitLinkGetErrorLogSize) X(nvJitLinkGetErrorLog) X(nvJitLinkGetInfoLogSize)                   \
  X(nvJitLinkGetInfoLog)
// clang-format on

typedef struct {
#define NVJITLINK_ENTRY(name) __typeof__(&name) name;
  NVJITLINK_FUNCTIONS(NVJITLINK_ENTRY)
#undef NVJITLINK_ENTRY
} nvjitlink_api;
static nvjitlink_api nj;

static void adopt(void *const *entries) {
  size_t i = 0;
#define NVJITLINK_ADOPT(name) nj.name = (__typeof__(&name))entries[i++];
  NVJITLINK_FUNCTIONS(NVJITLINK_ADOPT)
#undef NVJITLINK_ADOPT
}

#define NVJITLINK_NAME(name) #name,
static const char *const SYMBOLS[] = {NVJITLINK_FUNCTIONS(NVJITLINK_NAME)};
#undef NVJITLINK_NAME

static toolkit_library nvjitlink = TOOLKIT_LIBRARY(
    "nvJitLink", SYMBOLS, "cudadrv needs nvJitLink 12.3 or newer",
    "install nvJitLink (the CUDA toolkit, pip install nvidia-nvjitlink, or conda install "
    "libnvjitlink), or set CUDADRV_NVJITLINK_PATH to the path of libnvJitLink.so",
    adopt, NULL);

/* nvJitLink has no error strings of its own: nvJitLink.h's names, by value. */
static const char *const NVJITLINK_RESULTS[] = {
    "NVJITLINK_SUCCESS",
    "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
    "NVJITLINK_ERROR_MISSING_ARCH",
    "NVJITLINK_ERROR_INVALID_INPUT",
    "NVJITLINK_ERROR_PTX_COMPILE",
    "NVJITLINK_ERROR_NVVM_COMPILE",
    "NVJITLINK_ERROR_INTERNAL",
    "NVJITLINK_ERROR_THREADPOOL",
    "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
    "NVJITLINK_ERROR_FINALIZE",
    "NVJITLINK_ERROR_NULL_INPUT",
    "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
    "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
    "NVJITLINK_ERROR_ARCH_MISMATCH",
    "NVJITLINK_ERROR_OUTDATED_LIBRARY",
    "NVJITLINK_ERROR_MISSING_FATBIN",
    "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
    "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
    "NVJITLINK_ERROR_LTO_NOT_ENABLED",
};

/* The kinds of input, as lib/ names them, and what each linker calls them. */
typedef struct input_kind {
  const char *name;
  nvJitLinkInputType nvjitlink;
  CUjitInputType driver;
} input_kind;
static const input_kind INPUT_KINDS[] = {
    {"cubin", NVJITLINK_INPUT_CUBIN, CU_JIT_INPUT_CUBIN},
    {"ptx", NVJITLINK_INPUT_PTX, CU_JIT_INPUT_PTX},
    {"ltoir", NVJITLINK_INPUT_LTOIR, CU_JIT_NUM_INPUT_TYPES /* none: lib/ refuses it */},
    {"fatbin", NVJITLINK_INPUT_FATBIN, CU_JIT_INPUT_FATBINARY},
    {"object", NVJITLINK_INPUT_OBJECT, CU_JIT_INPUT_OBJECT},
    {"library", NVJITLINK_INPUT_LIBRARY, CU_JIT_INPUT_LIBRARY},
};
enum { KIND_COUNT = sizeof INPUT_KINDS / sizeof INPUT_KINDS[0], MAX_INPUTS = 4096 };

typedef struct link_input {
  const input_kind *kind;
  char *name;
  char *data;  /* a copy, NUL-terminated (PTX is read up to its NUL) */
  size_t size; /* what the linker is told: PTX's counts the NUL */
} link_input;

enum { LOG_BYTES = 65536 };

typedef struct link_job {
  bool driver; /* cuLink in ctx, rather than nvJitLink */
  ctx_rec *ctx;
  char **options; /* nvJitLink's */
  uint32_t num_options;
  CUjit_option jit_keys[MAX_JIT_OPTIONS + 4]; /* cuLink's, and room for the logs */
  void *jit_values[MAX_JIT_OPTIONS + 4];
  uint32_t num_jit;
  link_input *inputs;
  uint32_t num_inputs;
  /* the outcome */
  int result;
  const char *api;
  int64_t failed_input; /* the input an add refused, or -1 */
  char *info_log, *error_log;
  void *image;
  size_t image_size;
} link_job;

static void link_free(void *arg) {
  link_job *job = arg;
  if (job->ctx) ctx_rec_wait_end(job->ctx);
  free_strings(job->options, job->num_options);
  for (uint32_t i = 0; job->inputs && i < job->num_inputs; i++) {
    free(job->inputs[i].name);
    free(job->inputs[i].data);
  }
  free(job->inputs);
  free(job->info_log);
  free(job->error_log);
  free(job->image);
  free(job);
}

static const input_kind *kind_named(const char *name) {
  for (size_t i = 0; i < KIND_COUNT; i++)
    if (strcmp(INPUT_KINDS[i].name, name) == 0) return &INPUT_KINDS[i];
  return NULL;
}

/* inputs[i] = kinds[i], names[i], datas[i] (copied); false after throwing. */
static bool read_inputs(napi_env env, link_job *job, napi_value kinds, napi_value names,
                        napi_value datas) {
  uint32_t count, names_count, datas_count;
  bool is_array = false;
  NAPI_CALL_BOOL(env, napi_is_array(env, kinds, &is_array));
  if (!is_array || napi_get_array_length(env, kinds, &count) != napi_ok ||
      napi_get_array_length(env, names, &names_count) != napi_ok ||
      napi_get_array_length(env, datas, &datas_count) != napi_ok || names_count != count ||
      datas_count != count) {
    throw_type(env, "kinds, names and datas must be arrays of the same length");
    return false;
  }
  if (count > MAX_INPUTS) {
    throw_range(env, "a link takes at most 4096 inputs");
    return false;
  }
  if (!(job->inputs = calloc(count ? count : 1, sizeof *job->inputs))) {
    throw_oom(env);
    return false;
  }
  job->num_inputs = count;
  for (uint32_t i = 0; i < count; i++) {
    link_input *input = &job->inputs[i];
    napi_value kind_value, name_value, data_value;
    char kind[16];
    void *bytes;
    size_t length;
    NAPI_CALL_BOOL(env, napi_get_element(env, kinds, i, &kind_value));
    NAPI_CALL_BOOL(env, napi_get_element(env, names, i, &name_value));
    NAPI_CALL_BOOL(env, napi_get_element(env, datas, i, &data_value));
    if (!arg_string(env, kind_value, "kind", kind, sizeof kind) ||
        !(input->name = copy_string(env, name_value, "name")) ||
        !arg_host(env, data_value, "data", &bytes, &length))
      return false;
    if (!(input->kind = kind_named(kind))) {
      throw_range(env, "kind must be 'cubin', 'ptx', 'ltoir', 'fatbin', 'object' or 'library'");
      return false;
    }
    const char *problem = length == 0 ? "an input must not be empty" : NULL;
    if (!problem && (input->kind->nvjitlink == NVJITLINK_INPUT_CUBIN ||
                     input->kind->nvjitlink == NVJITLINK_INPUT_FATBIN))
      problem = image_problem(bytes, length);
    if (problem) {
      char message[512];
      snprintf(message, sizeof message, "%s: %s", input->name, problem);
      throw_range(env, message);
      return false;
    }
    if (!(input->data = malloc(length + 1))) {
      throw_oom(env);
      return false;
    }
    memcpy(input->data, bytes, length);
    input->data[length] = '\0';
    input->size = input->kind->nvjitlink == NVJITLINK_INPUT_PTX ? length + 1 : length;
  }
  return true;
}

/* (driver, options, jitKeys, jitValues, kinds, names, datas) → a job, or NULL after throwing.
 * driver: link with cuLink in the current context (jitKeys/jitValues its options), else with
 * nvJitLink (options its option strings). */
static link_job *read_job(napi_env env, napi_callback_info info) {
  ARGS(env, info, 7);
  link_job *job = calloc(1, sizeof *job);
  if (!job) {
    throw_oom(env);
    return NULL;
  }
  job->failed_input = -1;
  bool ok =
      arg_bool(env, argv[0], &job->driver) &&
      copy_strings(env, argv[1], "options", &job->options, &job->num_options) &&
      jit_options_read(env, argv[2], argv[3], job->jit_keys, job->jit_values, &job->num_jit) &&
      read_inputs(env, job, argv[4], argv[5], argv[6]);
  if (ok && !job->driver && !toolkit_ready(&nvjitlink)) {
    toolkit_throw_unloaded(env, &nvjitlink);
    ok = false;
  }
  if (ok && job->driver) {
    ok = driver_ready(env) && (job->ctx = ctx_rec_current(env)) != NULL;
    if (ok) {
      ctx_rec_wait_begin(job->ctx); /* its own reference, which the job lets go of */
      ctx_rec_release(job->ctx);
    }
  }
  if (!ok) {
    link_free(job);
    return NULL;
  }
  return job;
}

/* A copy of nvJitLink's log; NULL where there is none. */
static char *nvjitlink_log(nvJitLinkHandle handle, bool error) {
  size_t size = 0;
  nvJitLinkResult result = error ? nj.nvJitLinkGetErrorLogSize(handle, &size)
                                 : nj.nvJitLinkGetInfoLogSize(handle, &size);
  char *log = result == NVJITLINK_SUCCESS && size > 1 ? malloc(size) : NULL;
  if (log && (error ? nj.nvJitLinkGetErrorLog(handle, log) : nj.nvJitLinkGetInfoLog(handle, log)) !=
                 NVJITLINK_SUCCESS) {
    free(log);
    log = NULL;
  }
  if (log) log[size - 1] = '\0';
  return log;
}

static void nvjitlink_run(link_job *job) {
  nvJitLinkHandle handle = NULL;
  job->api = "nvJitLinkCreate";
  job->result = nj.nvJitLinkCreate(&handle, job->num_options, (const char **)job->options);
  if (job->result != NVJITLINK_SUCCESS) {
    if (handle) { /* the log says which option was refused */
      job->error_log = nvjitlink_log(handle, true);
      nj.nvJitLinkDestroy(&handle);
    }
    return;
  }
  for (uint32_t i = 0; i < job->num_inputs && job->result == NVJITLINK_SUCCESS; i++) {
    const link_input *input = &job->inputs[i];
    job->api = "nvJitLinkAddData";
    job->result =
        nj.nvJitLinkAddData(handle, input->kind->nvjitlink, input->data, input->size, input->name);
    if (job->result != NVJITLINK_SUCCESS) job->failed_input = i;
  }
  if (job->result == NVJITLINK_SUCCESS) {
    job->api = "nvJitLinkComplete";
    job->result = nj.nvJitLinkComplete(handle);
  }
  job->info_log = nvjitlink_log(handle, false);
  job->error_log = nvjitlink_log(handle, true);
  size_t size = 0;
  if (job->result == NVJITLINK_SUCCESS) {
    job->api = "nvJitLinkGetLinkedCubin";
    job->result = nj.nvJitLinkGetLinkedCubinSize(handle, &size);
  }
  if (job->result == NVJITLINK_SUCCESS) {
    if (!(job->image = malloc(size ? size : 1)))
      job->result = NVJITLINK_ERROR_INTERNAL;
    else
      job->result = nj.nvJitLinkGetLinkedCubin(handle, job->image);
    job->image_size = size;
  }
  nj.nvJitLinkDestroy(&handle);
}

/* A copy of a cuLink log buffer, NULL where it is empty. */
static char *driver_log(char *buffer) {
  buffer[LOG_BYTES - 1] = '\0';
  return buffer[0] ? strdup(buffer) : NULL;
}

static void driver_run(link_job *job) {
  char *logs = calloc(2, LOG_BYTES);
  if (!logs) {
    job->api = "cuLinkCreate";
    job->result = CUDA_ERROR_OUT_OF_MEMORY;
    return;
  }
  uint32_t n = job->num_jit;
  job->jit_keys[n] = CU_JIT_INFO_LOG_BUFFER;
  job->jit_values[n++] = logs;
  job->jit_keys[n] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES;
  job->jit_values[n++] = (void *)(uintptr_t)(LOG_BYTES - 1);
  job->jit_keys[n] = CU_JIT_ERROR_LOG_BUFFER;
  job->jit_values[n++] = logs + LOG_BYTES;
  job->jit_keys[n] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
  job->jit_values[n++] = (void *)(uintptr_t)(LOG_BYTES - 1);
  CUlinkState state = NULL;
  bool pushed = (job->result = DRV(cuCtxPushCurrent, job->ctx->handle)) == CUDA_SUCCESS;
  job->api = pushed ? "cuLinkCreate" : "cuCtxPushCurrent";
  if (pushed) job->result = DRV(cuLinkCreate, n, job->jit_keys, job->jit_values, &state);
  for (uint32_t i = 0; i < job->num_inputs && job->result == CUDA_SUCCESS; i++) {
    const link_input *input = &job->inputs[i];
    job->api = "cuLinkAddData";
    job->result = DRV(cuLinkAddData, state, input->kind->driver, input->data, input->size,
                      input->name, 0, NULL, NULL);
    if (job->result != CUDA_SUCCESS) job->failed_input = i;
  }
  void *cubin = NULL;
  size_t size = 0;
  if (job->result == CUDA_SUCCESS) {
    job->api = "cuLinkComplete";
    job->result = DRV(cuLinkComplete, state, &cubin, &size);
  }
  if (job->result == CUDA_SUCCESS) { /* the state owns cubin */
    if ((job->image = malloc(size ? size : 1)))
      memcpy(job->image, cubin, size);
    else
      job->result = CUDA_ERROR_OUT_OF_MEMORY;
    job->image_size = size;
  }
  if (state) DRV(cuLinkDestroy, state);
  if (pushed) {
    CUcontext popped;
    DRV(cuCtxPopCurrent, &popped);
  }
  job->info_log = driver_log(logs);
  job->error_log = driver_log(logs + LOG_BYTES);
  free(logs);
}

/* Any thread: the whole life of one link. The outcome stays in job. */
static void link_run(void *arg) {
  link_job *job = arg;
  if (job->driver)
    driver_run(job);
  else
    nvjitlink_run(job);
}

/* nvJitLink's name for the job's result; "" for the driver's (lib/ names CUresults). */
static const char *result_name(const link_job *job) {
  if (job->driver) return "";
  return job->result >= 0 &&
                 (size_t)job->result < sizeof NVJITLINK_RESULTS / sizeof NVJITLINK_RESULTS[0]
             ? NVJITLINK_RESULTS[job->result]
             : "NVJITLINK_ERROR_UNKNOWN";
}

/* Main thread: { code, codeName, api, infoLog, errorLog, input (the index of the input refused,
 * or -1), image (a Buffer that owns the cubin: no copy), error (a driver entry point missing: its
 * RuntimeError) }. */
static napi_value link_outcome(napi_env env, void *arg) {
  link_job *job = arg;
  napi_value outcome, image;
  NAPI_CALL(env, napi_create_object(env, &outcome));
  if (!set_named(env, outcome, "code", make_int(env, job->result)) ||
      !set_named(env, outcome, "codeName", make_string(env, result_name(job))) ||
      !set_named(env, outcome, "api", make_string(env, job->api)) ||
      !set_named(env, outcome, "infoLog", make_string(env, job->info_log ? job->info_log : "")) ||
      !set_named(env, outcome, "errorLog",
                 make_string(env, job->error_log ? job->error_log : "")) ||
      !set_named(env, outcome, "input", make_int(env, job->failed_input)))
    return NULL;
  /* a driver without the cuLink entry point: the error every missing one is (its name, the
   * driver's version and the one needed) */
  if (job->result == (int)CUDADRV_ERROR_MISSING &&
      !set_named(env, outcome, "error", make_cu_error(env, CUDADRV_ERROR_MISSING, job->api)))
    return NULL;
  if (job->result != 0) return outcome;
  void *bytes = job->image;
  job->image = NULL; /* the buffer's, whatever happens */
  if (!(image = buffer_owning(env, bytes, job->image_size))) return NULL;
  return set_named(env, outcome, "image", image) ? outcome : NULL;
}

/* ---- the linking thread ----
 * Every nvJitLink call is made on one thread, which runs the links in turn: nvJitLink 13.0 leaves
 * a lock held by a thread whose nvJitLinkAddData failed (a cubin of another architecture), and
 * every later link from any other thread then waits for it for ever (the same thread takes it
 * again). The thread lives as long as the process; exit waits for the link it is running. */

/* As much stack as a main thread gets: LTO runs the optimizer, which recurses deeply. */
#define LINK_STACK ((size_t)8 << 20)

static service linker = SERVICE(LINK_STACK, NULL);

/* run_posted's post: run(arg) queued on the linking thread. */
static bool post_link(void (*run)(void *), void *arg) { return service_post(&linker, run, arg); }

/* link(driver, options, jitKeys, jitValues, kinds, names, datas): the outcome of the link,
 * waited for: nvJitLink's on the linking thread, cuLink's here. */
static napi_value link_sync(napi_env env, napi_callback_info info) {
  link_job *job = read_job(env, info);
  if (!job) return NULL;
  if (job->driver) {
    link_run(job);
  } else if (!service_run_waited(&linker, link_run, job)) {
    link_free(job);
    return throw_runtime(env, CUDA_ERROR_OPERATING_SYSTEM, "pthread_create",
                         "could not start the thread that links; the system is out of threads or "
                         "memory");
  }
  napi_value outcome = link_outcome(env, job);
  link_free(job);
  return outcome;
}

/* linkAsync(same arguments): a Promise of the outcome: nvJitLink's linked on the linking thread,
 * cuLink's on a thread of its own. */
static napi_value link_async(napi_env env, napi_callback_info info) {
  link_job *job = read_job(env, info);
  if (!job) return NULL;
  return run_posted(env, link_run, link_outcome, link_free, job, job->driver ? NULL : post_link,
                    LINK_STACK);
}

/* nvJitLinkLoad(candidates): loads nvJitLink (toolkit_load); the candidate loaded. */
static napi_value nvjitlink_load(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  return toolkit_load(env, argv[0], &nvjitlink);
}

/* nvJitLinkVersion(): [major, minor] of the nvJitLink loaded. */
static napi_value nvjitlink_version(napi_env env, napi_callback_info info) {
  (void)info;
  if (!toolkit_ready(&nvjitlink)) return toolkit_throw_unloaded(env, &nvjitlink);
  unsigned int major = 0, minor = 0;
  nvJitLinkResult result = nj.nvJitLinkVersion(&major, &minor);
  if (result != NVJITLINK_SUCCESS)
    return throw_runtime(env, CUDA_ERROR_UNKNOWN, "nvJitLinkVersion", "nvJitLinkVersion failed");
  int version[2] = {(int)major, (int)minor};
  return make_int_array(env, version, 2);
}

/* nvJitLinkLibraryPath(): the file nvJitLink was loaded from. */
static napi_value nvjitlink_library_path(napi_env env, napi_callback_info info) {
  (void)info;
  return toolkit_path(env, &nvjitlink);
}

bool link_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"nvJitLinkLoad", nvjitlink_load},
      {"nvJitLinkVersion", nvjitlink_version},
      {"nvJitLinkLibraryPath", nvjitlink_library_path},
      {"link", link_sync},
      {"linkAsync", link_async},
  };
  return EXPORTS(env, exports, fns);
}
