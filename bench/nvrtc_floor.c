/* The floor for bench/compile.js: NVRTC called from C on the same source with the same options,
 * loaded the way cudadrv loads it (CUDADRV_NVRTC_PATH, else libnvrtc.so.13, .12, libnvrtc.so).
 *
 *   nvrtc_floor SOURCE_FILE NAME CUBIN(0|1) [OPTION...]
 *
 * Compiles once for every line read on stdin, and prints that compile's milliseconds on a line
 * of its own, so that the benchmark can alternate C and JS compiles one by one. A compile is one
 * program's whole life (create, compile, log, output, destroy), as in cudadrv. */
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *open_nvrtc(void) {
  const char *override = getenv("CUDADRV_NVRTC_PATH");
  if (override && *override) return dlopen(override, RTLD_NOW | RTLD_LOCAL);
  const char *names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  void *lib = NULL;
  for (int i = 0; i < 3 && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  return lib;
}

#define CHECK(call)                                                                                \
  do {                                                                                             \
    nvrtcResult r_ = (call);                                                                       \
    if (r_ != NVRTC_SUCCESS) {                                                                     \
      fprintf(stderr, "%s failed: %d\n", #call, (int)r_);                                          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s SOURCE_FILE NAME CUBIN(0|1) [OPTION...]\n", argv[0]);
    return 2;
  }
  FILE *file = fopen(argv[1], "rb");
  if (!file) {
    perror(argv[1]);
    return 1;
  }
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *source = calloc(1, (size_t)length + 1);
  if (!source || fread(source, 1, (size_t)length, file) != (size_t)length) return 1;
  fclose(file);
  const char *name = argv[2];
  int cubin = atoi(argv[3]);
  const char *const *options = (const char *const *)(argv + 4);
  int num_options = argc - 4;

  void *lib = open_nvrtc();
  if (!lib) {
    fprintf(stderr, "could not load NVRTC: %s\n", dlerror());
    return 1;
  }
#define LOAD(fn) __typeof__(&fn) p_##fn = (__typeof__(&fn))dlsym(lib, #fn)
  LOAD(nvrtcCreateProgram);
  LOAD(nvrtcCompileProgram);
  LOAD(nvrtcGetProgramLogSize);
  LOAD(nvrtcGetProgramLog);
  LOAD(nvrtcGetPTXSize);
  LOAD(nvrtcGetPTX);
  LOAD(nvrtcGetCUBINSize);
  LOAD(nvrtcGetCUBIN);
  LOAD(nvrtcDestroyProgram);

  for (int c; (c = getchar()) != EOF;) {
    if (c != '\n') continue;
    double start = now_ms();
    nvrtcProgram prog;
    CHECK(p_nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL));
    CHECK(p_nvrtcCompileProgram(prog, num_options, options));
    size_t size;
    CHECK(p_nvrtcGetProgramLogSize(prog, &size));
    char *log = malloc(size);
    CHECK(p_nvrtcGetProgramLog(prog, log));
    CHECK(cubin ? p_nvrtcGetCUBINSize(prog, &size) : p_nvrtcGetPTXSize(prog, &size));
    char *image = malloc(size);
    CHECK(cubin ? p_nvrtcGetCUBIN(prog, image) : p_nvrtcGetPTX(prog, image));
    CHECK(p_nvrtcDestroyProgram(&prog));
    free(log);
    free(image);
    printf("%.3f\n", now_ms() - start);
    fflush(stdout);
  }
  return 0;
}
