/* floor: the C side of cudadrv's benchmarks. bench/run.js builds it at bench time
 * (cc -O2 -I<cuda include> bench/floor.c -ldl -lpthread), runs it, and sets what it measures beside
 * what cudadrv does with the same driver calls in the same run.
 *
 * It loads the driver as cudadrv does (dlopen("libcuda.so.1"), every entry point through
 * cuGetProcAddress_v2 at an explicit ABI version, never -lcuda) and NVRTC with dlopen; it runs on
 * the device's primary context and a non-blocking stream, as the JS side does. NVRTC, the kernels
 * and the calls an operation needs are set up by the first operation that needs them, so that
 * the memory operations also run against the stand-in driver of the tests (bench/overhead.js).
 *
 *   floor --list
 *       prints {"operations": [...], "sizes": {...}} without touching the driver: bench/run.js
 *       checks that they are the ones it measures
 *   floor --cuda ROOT --kernels FILE --compile FILE [--compile-name NAME]
 *         [--compile-option OPTION]... OP:WARMUP:REPS:BATCH ...
 *       runs each operation: WARMUP + REPS batches of BATCH steps, each batch timed as a whole,
 *       then its untimed "after" call (a stream synchronize, where the steps enqueue work). Each
 *       of the REPS timed batches is one sample: nanoseconds per step.
 *       Prints {"device", "driver", "sizes", "results": {OP: {"samples": [...]} or {"error"}}}.
 *       ROOT is the CUDA toolkit (its lib64 holds NVRTC when the loader's path does not).
 *   floor --serve --cuda ROOT --kernels FILE --compile FILE [--compile-name NAME]
 *         [--compile-option OPTION]...
 *       sets up the same way, prints {"device", "driver", "sizes"} on a line, then runs each
 *       OP:WARMUP:REPS:BATCH line read from stdin as above and prints its result ({"samples"} or
 *       {"error"}) on a line, until stdin ends: so that bench/run.js can take turns with it, a
 *       round of C, a round of cudadrv, on the same GPU at the same time.
 *       compile.cold compiles the --compile FILE under NAME with the OPTIONs given (bench/run.js
 *       gives those cudadrv gives NVRTC), by default bench.cu for this device's architecture.
 *
 * bench/run.js measures cudadrv the same way, with the same sizes, kernels and sources. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG ((size_t)256 << 20) /* the large copies */
#define SMALL 16                /* the latency copies */
#define MIB ((size_t)1 << 20)   /* the allocations */
#define GRAPH_KERNELS 100       /* launches captured into the graph */
#define WHILE_SHORT 10          /* iterations of the short WHILE loop */
#define WHILE_LONG 1000         /* and of the long one */
#define BATCH_COPIES 1000       /* small copies in one cuMemcpyBatchAsync */

/* ---- the driver, resolved as cudadrv's loader does ---- */

// clang-format off
#define DRIVER_CALLS(X)                                                                        \
  X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuGetErrorString, 6000) X(cuDeviceGet, 2000)     \
  X(cuDeviceGetName, 2000) X(cuDeviceGetAttribute, 2000) X(cuDevicePrimaryCtxRetain, 7000)       \
  X(cuCtxPushCurrent, 4000) X(cuCtxSynchronize, 2000) X(cuStreamCreate, 2000)                    \
  X(cuStreamQuery, 2000) X(cuStreamSynchronize, 2000) X(cuMemAlloc, 3020) X(cuMemFree, 3020)     \
  X(cuMemAllocAsync, 11020) X(cuMemFreeAsync, 11020) X(cuMemHostAlloc, 2020)                     \
  X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020) X(cuMemcpyDtoD, 3020) X(cuModuleLoadData, 2000)    \
  X(cuModuleGetFunction, 2000) X(cuLaunchKernel, 4000) X(cuStreamBeginCapture, 10010)            \
  X(cuStreamEndCapture, 10000) X(cuGraphInstantiateWithFlags, 11040) X(cuGraphLaunch, 10000)  \
  X(cuGraphCreate, 10000) X(cuGraphAddKernelNode, 12000) X(cuGraphExecDestroy, 10000)           \
  X(cuGraphUpload, 11010) X(cuGraphConditionalHandleCreate, 12030) X(cuGraphAddNode, 12030)    \
  X(cuGraphAddMemsetNode, 10000) X(cuCtxGetCurrent, 4000) X(cuMemcpyHtoDAsync, 3020)          \
  X(cuMemcpyBatchAsync, 13000)
// clang-format on

#define DRIVER_ENTRY(name, version) PFN_##name##_v##version name;
static struct {
  DRIVER_CALLS(DRIVER_ENTRY)
} cu;
#undef DRIVER_ENTRY

// clang-format off
#define NVRTC_CALLS(X)                                                                         \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcCompileProgram)           \
  X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog)          \
  X(nvrtcDestroyProgram)
// clang-format on

#define NVRTC_ENTRY(name) __typeof__(&name) name;
static struct {
  NVRTC_CALLS(NVRTC_ENTRY)
} rtc;
#undef NVRTC_ENTRY

static void fatal(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("floor: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  exit(1);
}

/* A call the driver lacks stays NULL: the operations that make it fail (CK), the others run. */
static void load_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) fatal("could not load libcuda.so.1: %s", dlerror());
  PFN_cuGetProcAddress_v12000 get_proc =
      (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) fatal("libcuda.so.1 has no cuGetProcAddress_v2 (a driver older than CUDA 12)");
  CUdriverProcAddressQueryResult found;
#define DRIVER_RESOLVE(name, version)                                                              \
  if (get_proc(#name, (void **)&cu.name, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found) !=    \
          CUDA_SUCCESS ||                                                                          \
      found != CU_GET_PROC_ADDRESS_SUCCESS)                                                        \
    cu.name = NULL;
  DRIVER_CALLS(DRIVER_RESOLVE)
#undef DRIVER_RESOLVE
}

/* NVRTC as cudadrv finds it: CUDADRV_NVRTC_PATH, else the known sonames (newest first) through
 * the loader's path, then in the toolkit's lib64. */
static void load_nvrtc(const char *cuda_root) {
  static const char *names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  void *lib = NULL;
  const char *forced = getenv("CUDADRV_NVRTC_PATH");
  if (forced && *forced) lib = dlopen(forced, RTLD_NOW | RTLD_LOCAL);
  for (size_t i = 0; !lib && i < sizeof names / sizeof names[0]; i++) {
    char path[4096];
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib && snprintf(path, sizeof path, "%s/lib64/%s", cuda_root, names[i]) < (int)sizeof path)
      lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  if (!lib) fatal("could not load NVRTC (libnvrtc.so.13, .12 or libnvrtc.so)");
#define NVRTC_RESOLVE(name)                                                                        \
  if (!(*(void **)&rtc.name = dlsym(lib, #name))) fatal("NVRTC does not provide %s", #name);
  NVRTC_CALLS(NVRTC_RESOLVE)
#undef NVRTC_RESOLVE
}

/* ---- failures: each step returns NULL or a message ---- */

static char failure[1024];

static const char *cu_failed(const char *api, CUresult result) {
  const char *text = NULL;
  if (!cu.cuGetErrorString || cu.cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = "unknown error";
  snprintf(failure, sizeof failure, "%s failed: %s", api, text);
  return failure;
}

#define CK(fn, ...)                                                                                \
  do {                                                                                             \
    if (!cu.fn) return "the driver does not provide " #fn;                                         \
    CUresult ck_ = cu.fn(__VA_ARGS__);                                                             \
    if (ck_ != CUDA_SUCCESS) return cu_failed(#fn, ck_);                                           \
  } while (0)

/* ---- state shared by the operations, set up on first use ---- */

static CUdevice device;
static CUstream stream;
static const char *toolkit, *kernels_file, *compile_file; /* from the command line */
static CUfunction empty_fn, args4_fn, count_down_fn;
static CUdeviceptr big, big2, small, args_a, args_b;
static void *pinned, *pageable;
static unsigned char small_host[SMALL];
static char arch[64];
static char *compile_source;
static size_t compile_length;
static int compile_serial;
static const char *compile_name = "bench.cu";
static const char *compile_options[64];
static int compile_option_count;
static CUgraphExec graph_exec;
static CUgraph explicit_graph; /* GRAPH_KERNELS empty kernels in a chain, built node by node */
static CUgraphExec explicit_exec;
static CUgraphExec while_exec[2]; /* WHILE loops of WHILE_SHORT and WHILE_LONG iterations */
/* BATCH_COPIES copies of SMALL bytes from page-locked memory to device memory, as cudadrv's
 * memcpyBatchAsync passes them: one attribute a copy (stream order, no hints) */
static CUdeviceptr batch_dsts[BATCH_COPIES], batch_srcs[BATCH_COPIES];
static size_t batch_sizes[BATCH_COPIES], batch_idxs[BATCH_COPIES];
static CUmemcpyAttributes batch_attrs[BATCH_COPIES];
/* args4's parameters (two pointers, an int and a float) as cudadrv passes them: one buffer laid
 * out as the kernel's parameter space, through cuLaunchKernel's extra. */
static struct {
  CUdeviceptr a, b;
  int n;
  float x;
} args4_buffer;
static size_t args4_size = sizeof args4_buffer;
static void *args4_extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args4_buffer,
                              CU_LAUNCH_PARAM_BUFFER_SIZE, &args4_size, CU_LAUNCH_PARAM_END};

static char *read_file(const char *path, size_t *length) {
  FILE *file = fopen(path, "rb");
  if (!file) fatal("could not open %s", path);
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  rewind(file);
  char *text = malloc((size_t)size + 64); /* room for a sample's comment */
  if (!text || fread(text, 1, (size_t)size, file) != (size_t)size) fatal("could not read %s", path);
  fclose(file);
  text[size] = '\0';
  *length = (size_t)size;
  return text;
}

/* Compiles source with NVRTC, making the calls cudadrv makes for a compile (src/compiler/nvrtc.c):
 * create, compile, the log (a failure's errors, a success's warnings), the cubin, destroy. The
 * cubin in *cubin (malloc'd) when wanted. */
static const char *nvrtc_compile(const char *source, const char *name, const char *const *options,
                                 int num_options, void **cubin) {
  nvrtcProgram program;
  nvrtcResult result = rtc.nvrtcCreateProgram(&program, source, name, 0, NULL, NULL);
  if (result != NVRTC_SUCCESS) {
    snprintf(failure, sizeof failure, "nvrtcCreateProgram failed: %s",
             rtc.nvrtcGetErrorString(result));
    return failure;
  }
  result = rtc.nvrtcCompileProgram(program, num_options, options);
  size_t size = 0;
  char *log = NULL;
  if (rtc.nvrtcGetProgramLogSize(program, &size) == NVRTC_SUCCESS && size > 1 &&
      (log = malloc(size)) && rtc.nvrtcGetProgramLog(program, log) != NVRTC_SUCCESS) {
    free(log);
    log = NULL;
  }
  if (result != NVRTC_SUCCESS) {
    snprintf(failure, sizeof failure, "nvrtcCompileProgram failed: %s",
             log ? log : rtc.nvrtcGetErrorString(result));
    free(log);
    rtc.nvrtcDestroyProgram(&program);
    return failure;
  }
  free(log);
  result = rtc.nvrtcGetCUBINSize(program, &size);
  void *image = result == NVRTC_SUCCESS ? malloc(size) : NULL;
  if (image) result = rtc.nvrtcGetCUBIN(program, image);
  rtc.nvrtcDestroyProgram(&program);
  if (!image || result != NVRTC_SUCCESS) {
    free(image);
    snprintf(failure, sizeof failure, "nvrtcGetCUBIN failed");
    return failure;
  }
  if (cubin)
    *cubin = image;
  else
    free(image);
  return NULL;
}

/* NVRTC, and the architecture it compiles for. */
static const char *setup_nvrtc(void) {
  if (arch[0]) return NULL;
  load_nvrtc(toolkit);
  int major = 0, minor = 0;
  CK(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  CK(cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
  if (!compile_option_count) compile_options[compile_option_count++] = arch;
  return NULL;
}

static const char *setup_kernels(void) {
  if (empty_fn) return NULL;
  const char *failed = setup_nvrtc();
  if (failed) return failed;
  size_t length;
  char *source = read_file(kernels_file, &length);
  void *cubin = NULL;
  const char *options[] = {arch};
  failed = nvrtc_compile(source, "bench.cu", options, 1, &cubin);
  free(source);
  if (failed) return failed;
  CUmodule module;
  CK(cuModuleLoadData, &module, cubin);
  free(cubin);
  CK(cuModuleGetFunction, &empty_fn, module, "empty");
  CK(cuModuleGetFunction, &count_down_fn, module, "count_down");
  CK(cuModuleGetFunction, &args4_fn, module, "args4");
  CK(cuMemAlloc, &args_a, 1024);
  CK(cuMemAlloc, &args_b, 1024);
  args4_buffer.a = args_a;
  args4_buffer.b = args_b;
  args4_buffer.n = 1000;
  args4_buffer.x = 2.5f;
  return NULL;
}

static const char *setup_big(void) {
  if (pageable) return NULL; /* the last one made */
  CK(cuMemAlloc, &big, BIG);
  CK(cuMemAlloc, &big2, BIG);
  CK(cuMemHostAlloc, &pinned, BIG, 0);
  memset(pinned, 1, BIG);
  pageable = malloc(BIG);
  if (!pageable) return "out of host memory";
  memset(pageable, 1, BIG);
  return NULL;
}

static const char *setup_small(void) {
  if (small) return NULL;
  CK(cuMemAlloc, &small, SMALL);
  memset(small_host, 1, SMALL);
  return NULL;
}

static const char *setup_batch(void) {
  if (batch_sizes[0]) return NULL;
  CUdeviceptr device;
  void *host;
  CK(cuMemAlloc, &device, BATCH_COPIES * SMALL);
  CK(cuMemHostAlloc, &host, BATCH_COPIES * SMALL, 0);
  memset(host, 1, BATCH_COPIES * SMALL);
  for (size_t i = 0; i < BATCH_COPIES; i++) {
    batch_dsts[i] = device + i * SMALL;
    batch_srcs[i] = (CUdeviceptr)(uintptr_t)host + i * SMALL;
    batch_sizes[i] = SMALL;
    batch_idxs[i] = i;
    batch_attrs[i] = (CUmemcpyAttributes){.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
  }
  return NULL;
}

/* ---- the steps ---- */

/* A step that is one driver call. */
#define STEP(name, fn, ...)                                                                        \
  static const char *name(void) {                                                                  \
    CK(fn, __VA_ARGS__);                                                                           \
    return NULL;                                                                                   \
  }

STEP(launch_empty, cuLaunchKernel, empty_fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL)
STEP(launch_args4, cuLaunchKernel, args4_fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, args4_extra)
STEP(synchronize, cuStreamSynchronize, stream)
STEP(query, cuStreamQuery, stream)
STEP(htod_pinned, cuMemcpyHtoD, big, pinned, BIG)
STEP(dtoh_pinned, cuMemcpyDtoH, pinned, big, BIG)
STEP(htod_pageable, cuMemcpyHtoD, big, pageable, BIG)
STEP(dtoh_pageable, cuMemcpyDtoH, pageable, big, BIG)
STEP(htod_small, cuMemcpyHtoD, small, small_host, SMALL)
STEP(dtoh_small, cuMemcpyDtoH, small_host, small, SMALL)
STEP(graph_launch, cuGraphLaunch, graph_exec, stream)
STEP(explicit_launch, cuGraphLaunch, explicit_exec, stream)
STEP(while_short, cuGraphLaunch, while_exec[0], stream)
STEP(while_long, cuGraphLaunch, while_exec[1], stream)

static const char *instantiate_destroy(void) {
  CUgraphExec exec;
  CK(cuGraphInstantiateWithFlags, &exec, explicit_graph, 0);
  CK(cuGraphExecDestroy, exec);
  return NULL;
}

static const char *launch_synchronize(void) {
  const char *failed = launch_empty();
  return failed ? failed : synchronize();
}

static const char *dtod(void) {
  CK(cuMemcpyDtoD, big2, big, BIG);
  CK(cuCtxSynchronize);
  return NULL;
}

static const char *copy_batch(void) {
  CK(cuMemcpyBatchAsync, batch_dsts, batch_srcs, batch_sizes, BATCH_COPIES, batch_attrs, batch_idxs,
     BATCH_COPIES, stream);
  CK(cuStreamSynchronize, stream);
  return NULL;
}

static const char *copy_calls(void) {
  for (size_t i = 0; i < BATCH_COPIES; i++)
    CK(cuMemcpyHtoDAsync, batch_dsts[i], (void *)(uintptr_t)batch_srcs[i], SMALL, stream);
  CK(cuStreamSynchronize, stream);
  return NULL;
}

static const char *alloc_free(void) {
  CUdeviceptr p;
  CK(cuMemAlloc, &p, MIB);
  CK(cuMemFree, p);
  return NULL;
}

static const char *alloc_free_async(void) {
  CUdeviceptr p;
  CK(cuMemAllocAsync, &p, MIB, stream);
  CK(cuMemFreeAsync, p, stream);
  return NULL;
}

static const char *setup_compile(void) {
  const char *failed = setup_nvrtc();
  if (!failed && !compile_source) compile_source = read_file(compile_file, &compile_length);
  return failed;
}

/* The compile source with a comment of its own, so that nothing can answer from a cache. */
static const char *compile_cold(void) {
  snprintf(compile_source + compile_length, 64, "\n// sample %d\n", compile_serial++);
  return nvrtc_compile(compile_source, compile_name, compile_options, compile_option_count, NULL);
}

static const char *setup_graph(void) {
  if (graph_exec) return NULL;
  const char *failed = setup_kernels();
  if (failed) return failed;
  CK(cuStreamBeginCapture, stream, CU_STREAM_CAPTURE_MODE_RELAXED);
  for (int i = 0; i < GRAPH_KERNELS && !failed; i++) failed = launch_empty();
  if (failed) return failed;
  CUgraph graph;
  CK(cuStreamEndCapture, stream, &graph);
  CK(cuGraphInstantiateWithFlags, &graph_exec, graph, 0);
  return NULL;
}

/* The chain of GRAPH_KERNELS kernel nodes that cudadrv's graph.addKernel() makes, instantiated
 * and uploaded. */
static const char *setup_explicit(void) {
  if (explicit_exec) return NULL;
  const char *failed = setup_kernels();
  if (failed) return failed;
  CK(cuGraphCreate, &explicit_graph, 0);
  CUgraphNode last = NULL;
  CUDA_KERNEL_NODE_PARAMS params = {.func = empty_fn,
                                    .gridDimX = 1,
                                    .gridDimY = 1,
                                    .gridDimZ = 1,
                                    .blockDimX = 1,
                                    .blockDimY = 1,
                                    .blockDimZ = 1};
  for (int i = 0; i < GRAPH_KERNELS; i++)
    CK(cuGraphAddKernelNode, &last, explicit_graph, last ? &last : NULL, last ? 1 : 0, &params);
  CK(cuGraphInstantiateWithFlags, &explicit_exec, explicit_graph, 0);
  CK(cuGraphUpload, explicit_exec, stream);
  return NULL;
}

/* What cudadrv's bench/run.js builds for its WHILE lines: a memset of the count, then a WHILE node
 * (condition 1 at each launch) whose body counts it down and clears the condition at 0. */
static const char *setup_while_loop(int which, int iterations) {
  if (while_exec[which]) return NULL;
  const char *failed = setup_kernels();
  if (failed) return failed;
  CUcontext ctx;
  CK(cuCtxGetCurrent, &ctx);
  CUdeviceptr left;
  CK(cuMemAlloc, &left, 4);
  CUgraph graph;
  CK(cuGraphCreate, &graph, 0);
  CUDA_MEMSET_NODE_PARAMS set = {
      .dst = left, .value = (unsigned)iterations, .elementSize = 4, .width = 1, .height = 1};
  CUgraphNode reset, loop, body_node;
  CK(cuGraphAddMemsetNode, &reset, graph, NULL, 0, &set, ctx);
  CUgraphConditionalHandle handle;
  CK(cuGraphConditionalHandleCreate, &handle, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
  CUgraphNodeParams params = {.type = CU_GRAPH_NODE_TYPE_CONDITIONAL};
  params.conditional = (CUDA_CONDITIONAL_NODE_PARAMS){
      .handle = handle, .type = CU_GRAPH_COND_TYPE_WHILE, .size = 1, .ctx = ctx};
  CK(cuGraphAddNode, &loop, graph, &reset, NULL, 1, &params);
  void *args[] = {&handle, &left};
  CUDA_KERNEL_NODE_PARAMS kernel = {.func = count_down_fn,
                                    .gridDimX = 1,
                                    .gridDimY = 1,
                                    .gridDimZ = 1,
                                    .blockDimX = 1,
                                    .blockDimY = 1,
                                    .blockDimZ = 1,
                                    .kernelParams = args};
  CK(cuGraphAddKernelNode, &body_node, params.conditional.phGraph_out[0], NULL, 0, &kernel);
  CK(cuGraphInstantiateWithFlags, &while_exec[which], graph, 0);
  CK(cuGraphUpload, while_exec[which], stream);
  return NULL;
}

static const char *setup_while_short(void) { return setup_while_loop(0, WHILE_SHORT); }
static const char *setup_while_long(void) { return setup_while_loop(1, WHILE_LONG); }

/* The device's primary context, current, and the non-blocking stream. */
static const char *setup_device(char *name, size_t size, int *driver) {
  CUcontext context;
  CK(cuInit, 0);
  CK(cuDeviceGet, &device, 0);
  CK(cuDeviceGetName, name, (int)size, device);
  CK(cuDevicePrimaryCtxRetain, &context, device);
  CK(cuCtxPushCurrent, context);
  CK(cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING);
  CK(cuDriverGetVersion, driver);
  return NULL;
}

/* ---- the operations ---- */

typedef const char *(*step_fn)(void);

typedef struct operation {
  const char *name;
  step_fn setup; /* once, before the first batch (may be NULL) */
  step_fn step;  /* BATCH times per timed batch */
  step_fn after; /* after each batch, untimed (may be NULL) */
} operation;

static const operation operations[] = {
    {"launch.empty", setup_kernels, launch_empty, synchronize},
    {"launch.args4", setup_kernels, launch_args4, synchronize},
    {"launch.sync", setup_kernels, launch_synchronize, NULL},
    {"stream.query", NULL, query, NULL},
    {"copy.htod.pinned", setup_big, htod_pinned, NULL},
    {"copy.dtoh.pinned", setup_big, dtoh_pinned, NULL},
    {"copy.htod.pageable", setup_big, htod_pageable, NULL},
    {"copy.dtoh.pageable", setup_big, dtoh_pageable, NULL},
    {"copy.htod.small", setup_small, htod_small, NULL},
    {"copy.dtoh.small", setup_small, dtoh_small, NULL},
    {"copy.dtod", setup_big, dtod, NULL},
    {"copy.batch", setup_batch, copy_batch, NULL},
    {"copy.calls", setup_batch, copy_calls, NULL},
    {"alloc", NULL, alloc_free, NULL},
    {"alloc.async", NULL, alloc_free_async, synchronize},
    {"compile.cold", setup_compile, compile_cold, NULL},
    {"graph.launch", setup_graph, graph_launch, synchronize},
    {"graph.explicit.launch", setup_explicit, explicit_launch, synchronize},
    {"graph.instantiate", setup_explicit, instantiate_destroy, NULL},
    {"graph.while.short", setup_while_short, while_short, synchronize},
    {"graph.while.long", setup_while_long, while_long, synchronize},
};
#define OPERATION_COUNT (sizeof operations / sizeof operations[0])

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void print_json_string(const char *text) {
  putchar('"');
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == '"' || *c == '\\')
      printf("\\%c", *c);
    else if (*c < 0x20)
      printf("\\u%04x", *c);
    else
      putchar(*c);
  }
  putchar('"');
}

/* Runs op as the spec says; prints its samples, or returns the failure. */
static const char *run(const operation *op, int warmup, int reps, int batch) {
  const char *failed = op->setup ? op->setup() : NULL;
  if (failed) return failed;
  double *samples = malloc(sizeof *samples * (size_t)reps);
  if (!samples) return "out of host memory";
  for (int i = 0; i < warmup + reps && !failed; i++) {
    double start = now_ns();
    for (int j = 0; j < batch && !failed; j++) failed = op->step();
    double elapsed = now_ns() - start;
    if (!failed && op->after) failed = op->after();
    if (i >= warmup) samples[i - warmup] = elapsed / batch;
  }
  if (!failed) {
    printf("{\"samples\":[");
    for (int i = 0; i < reps; i++) printf("%s%.9g", i ? "," : "", samples[i]);
    printf("]}");
  }
  free(samples);
  return failed;
}

static void print_sizes(void) {
  printf("\"sizes\":{\"big\":%zu,\"small\":%d,\"alloc\":%zu,\"graphKernels\":%d,"
         "\"whileShort\":%d,\"whileLong\":%d,\"batchCopies\":%d}",
         BIG, SMALL, MIB, GRAPH_KERNELS, WHILE_SHORT, WHILE_LONG, BATCH_COPIES);
}

static const operation *find(const char *name, size_t length) {
  for (size_t i = 0; i < OPERATION_COUNT; i++)
    if (strlen(operations[i].name) == length && !strncmp(operations[i].name, name, length))
      return &operations[i];
  return NULL;
}

/* OP:WARMUP:REPS:BATCH, read. */
typedef struct spec {
  const operation *op;
  int warmup, reps, batch;
} spec;

static bool parse_spec(const char *text, spec *out) {
  int end = 0;
  const char *colon = strchr(text, ':');
  if (!colon || !(out->op = find(text, (size_t)(colon - text))) ||
      sscanf(colon, ":%d:%d:%d%n", &out->warmup, &out->reps, &out->batch, &end) != 3 ||
      colon[end] || out->warmup < 0 || out->reps < 1 || out->batch < 1)
    return false;
  return true;
}

/* Runs what sp says; prints {"samples": [...]} or {"error": ...}. */
static void run_and_print(const spec *sp) {
  const char *failed = run(sp->op, sp->warmup, sp->reps, sp->batch);
  if (failed) {
    printf("{\"error\":");
    print_json_string(failed);
    printf("}");
  }
}

/* --serve: one OP:WARMUP:REPS:BATCH a line from stdin, its result a line on stdout. */
static void serve(void) {
  char line[256];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\r\n")] = '\0';
    spec sp;
    if (parse_spec(line, &sp)) {
      run_and_print(&sp);
    } else {
      printf("{\"error\":");
      print_json_string("bad operation: want OP:WARMUP:REPS:BATCH with OP from --list");
      printf("}");
    }
    putchar('\n');
    fflush(stdout);
  }
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--list")) {
    printf("{\"operations\":[");
    for (size_t i = 0; i < OPERATION_COUNT; i++) {
      printf("%s", i ? "," : "");
      print_json_string(operations[i].name);
    }
    printf("],");
    print_sizes();
    printf("}\n");
    return 0;
  }
  const char *cuda_root = NULL, *kernels = NULL, *compile = NULL;
  bool serving = false;
  int first = 1;
  while (first < argc && !strncmp(argv[first], "--", 2)) {
    if (!strcmp(argv[first], "--serve")) {
      serving = true;
      first++;
      continue;
    }
    if (first + 1 >= argc) break;
    if (!strcmp(argv[first], "--cuda"))
      cuda_root = argv[first + 1];
    else if (!strcmp(argv[first], "--kernels"))
      kernels = argv[first + 1];
    else if (!strcmp(argv[first], "--compile"))
      compile = argv[first + 1];
    else if (!strcmp(argv[first], "--compile-name"))
      compile_name = argv[first + 1];
    else if (!strcmp(argv[first], "--compile-option")) {
      if (compile_option_count == (int)(sizeof compile_options / sizeof compile_options[0]))
        fatal("too many --compile-option");
      compile_options[compile_option_count++] = argv[first + 1];
    } else
      fatal("unknown option %s", argv[first]);
    first += 2;
  }
  if (!cuda_root || !kernels || !compile || (serving && first < argc))
    fatal("usage: floor --list | floor --cuda ROOT --kernels FILE --compile FILE "
          "OP:WARMUP:REPS:BATCH... | "
          "floor --serve --cuda ROOT --kernels FILE --compile FILE [--compile-name NAME] "
          "[--compile-option OPTION]...");
  /* Every spec is checked before anything runs. */
  for (int i = first; i < argc; i++) {
    spec sp;
    if (!parse_spec(argv[i], &sp))
      fatal("bad operation %s: want OP:WARMUP:REPS:BATCH with OP from --list", argv[i]);
  }

  toolkit = cuda_root, kernels_file = kernels, compile_file = compile;
  load_driver();
  char name[256];
  int driver = 0;
  const char *failed = setup_device(name, sizeof name, &driver);
  if (failed) fatal("%s", failed);

  printf("{\"device\":");
  print_json_string(name);
  printf(",\"driver\":%d,", driver);
  print_sizes();
  if (serving) {
    printf("}\n");
    fflush(stdout);
    serve();
    return 0;
  }
  printf(",\"results\":{");
  for (int i = first; i < argc; i++) {
    spec sp;
    parse_spec(argv[i], &sp);
    printf("%s\"%s\":", i > first ? "," : "", sp.op->name);
    fflush(stdout);
    run_and_print(&sp);
  }
  printf("}}\n");
  return 0;
}
