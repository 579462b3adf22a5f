/* The floor for bench/link.js: nvJitLink called from C on the same inputs with the same options.
 *
 *   nvjitlink_floor LIBRARY OPTION... -- INPUT...
 *
 * Loads nvJitLink from LIBRARY (the file cudadrv loaded), reads each INPUT (LTO-IR) whole, then
 * links them once for every line read on stdin and prints that link's milliseconds and the
 * cubin's size on a line of their own, so that the benchmark can alternate C and JS links one by
 * one. A link is one handle's whole life (create, add each input, complete, the logs, the cubin,
 * destroy), as in cudadrv. */
#include <dlfcn.h>
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define CHECK(call)                                                                                \
  do {                                                                                             \
    nvJitLinkResult r_ = (call);                                                                   \
    if (r_ != NVJITLINK_SUCCESS) {                                                                 \
      fprintf(stderr, "%s failed: %d\n", #call, (int)r_);                                          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

typedef struct {
  const char *name;
  char *data;
  size_t size;
} input;

static input read_input(const char *path) {
  input in = {strrchr(path, '/') ? strrchr(path, '/') + 1 : path, NULL, 0};
  FILE *file = fopen(path, "rb");
  if (!file) {
    perror(path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  in.size = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  in.data = malloc(in.size ? in.size : 1);
  if (!in.data || fread(in.data, 1, in.size, file) != in.size) exit(1);
  fclose(file);
  return in;
}

int main(int argc, char **argv) {
  int dashes = 2;
  while (dashes < argc && strcmp(argv[dashes], "--") != 0) dashes++;
  if (argc < 2 || dashes >= argc - 1) {
    fprintf(stderr, "usage: %s LIBRARY OPTION... -- INPUT...\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "could not load nvJitLink: %s\n", dlerror());
    return 1;
  }
  const char **options = (const char **)(argv + 2);
  uint32_t num_options = (uint32_t)(dashes - 2);
  int num_inputs = argc - dashes - 1;
  input *inputs = calloc((size_t)num_inputs, sizeof *inputs);
  if (!inputs) return 1;
  for (int i = 0; i < num_inputs; i++) inputs[i] = read_input(argv[dashes + 1 + i]);

#define LOAD(fn) __typeof__(&fn) p_##fn = (__typeof__(&fn))dlsym(lib, #fn)
  LOAD(nvJitLinkCreate);
  LOAD(nvJitLinkAddData);
  LOAD(nvJitLinkComplete);
  LOAD(nvJitLinkGetInfoLogSize);
  LOAD(nvJitLinkGetInfoLog);
  LOAD(nvJitLinkGetErrorLogSize);
  LOAD(nvJitLinkGetErrorLog);
  LOAD(nvJitLinkGetLinkedCubinSize);
  LOAD(nvJitLinkGetLinkedCubin);
  LOAD(nvJitLinkDestroy);

  for (int c; (c = getchar()) != EOF;) {
    if (c != '\n') continue;
    double start = now_ms();
    nvJitLinkHandle handle;
    CHECK(p_nvJitLinkCreate(&handle, num_options, options));
    for (int i = 0; i < num_inputs; i++)
      CHECK(p_nvJitLinkAddData(handle, NVJITLINK_INPUT_LTOIR, inputs[i].data, inputs[i].size,
                               inputs[i].name));
    CHECK(p_nvJitLinkComplete(handle));
    size_t size;
    CHECK(p_nvJitLinkGetInfoLogSize(handle, &size));
    char *info = malloc(size);
    CHECK(p_nvJitLinkGetInfoLog(handle, info));
    CHECK(p_nvJitLinkGetErrorLogSize(handle, &size));
    char *error = malloc(size);
    CHECK(p_nvJitLinkGetErrorLog(handle, error));
    CHECK(p_nvJitLinkGetLinkedCubinSize(handle, &size));
    char *cubin = malloc(size);
    CHECK(p_nvJitLinkGetLinkedCubin(handle, cubin));
    CHECK(p_nvJitLinkDestroy(&handle));
    free(info);
    free(error);
    free(cubin);
    printf("%.3f %zu\n", now_ms() - start, size);
    fflush(stdout);
  }
  return 0;
}
