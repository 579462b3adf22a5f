/* driver-trace: a libcuda.so.1 in front of the driver (DRIVER_TRACE_REAL, its path) for
 * `npm run fuzz -- --only LIST --trace-driver DIR` (run.js builds it with cc). Every entry point
 * cuGetProcAddress_v2 hands out goes through a wrapper that appends to DIR/trace.<pid> a line
 * before the call and one after it:
 *   <thread> > cuMemPoolDestroy(3e0cd170, 1, ...)      the first six arguments, in hex
 *   <thread>   *a1: 100000001 1 0 10000 ...           for the calls in shown[], the structure
 *                                                      an argument points to, in 64-bit words
 *   <thread> < cuMemPoolDestroy = 0 *a0=...            its result; the word at the first
 *                                                      argument where that is a readable address
 *                                                      (the handle a cuXxxCreate made)
 * and the fuzzer's child writes each call's label ("#35981: cuda.MemoryPool.importHandle(...)")
 * to the same file, so that a replay shows which driver calls each JavaScript call made: what a
 * C program needs to repeat a driver crash without Node.
 *
 * The wrappers forward sixteen integer words, the registers' six and ten of the stack: every
 * entry point cudadrv loads takes integers, pointers and structures passed in them or in memory
 * (CUipcMemHandle's 64 bytes), none floating point, and none more than sixteen words. The log's
 * descriptor is moved above the fuzzer's: a replay's values name descriptors by number. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

typedef uint64_t word;
typedef int (*entry_fn)(word, word, word, word, word, word, word, word, word, word, word, word,
                        word, word, word, word);
typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

enum { SLOTS = 400, FIRST = 100 /* the number of wrappers[0]'s slot */ };
static entry_fn reals[SLOTS];
static signed char shows[SLOTS]; /* the slot's entry in shown[], or -1 */
static char names[SLOTS][64];    /* not strdup's: the heap as without the trace */
static int used;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;

static void say(const char *text, int n) {
  if (log_fd >= 0 && n > 0) (void)!write(log_fd, text, (size_t)n);
}

/* Calls whose argument arg points to a structure the driver reads (count_arg: how many, or -1 for
 * one): what a C program must pass to make the same call. */
static const struct {
  const char *name;
  int arg, count_arg;
  size_t bytes;
} shown[] = {
    {"cuMemPoolCreate", 1, -1, sizeof(CUmemPoolProps)},
    {"cuMemCreate", 2, -1, sizeof(CUmemAllocationProp)},
    {"cuMemGetAllocationGranularity", 1, -1, sizeof(CUmemAllocationProp)},
    {"cuMemPoolSetAccess", 1, 2, sizeof(CUmemAccessDesc)},
    {"cuMemSetAccess", 2, 3, sizeof(CUmemAccessDesc)},
    {"cuMemPoolGetAccess", 2, -1, sizeof(CUmemLocation)},
    {"cuMemPoolSetAttribute", 2, -1, sizeof(cuuint64_t)},
    {"cuDevResourceGenerateDesc", 1, 2, sizeof(CUdevResource)},
};

/* The structure shown[k]'s call reads, as words (an int attribute value: its low half), read so
 * that a bad address cannot fault. */
static void show(long thread, int k, const word *args) {
  word at[64] = {0};
  word count = shown[k].count_arg < 0 ? 1 : args[shown[k].count_arg];
  size_t bytes = shown[k].bytes * (count < 4 ? count : 4);
  if (bytes > sizeof at) bytes = sizeof at;
  struct iovec local = {at, bytes}, remote = {(void *)(uintptr_t)args[shown[k].arg], bytes};
  if (!bytes || process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)bytes) return;
  char line[64 * 18 + 64];
  int n = snprintf(line, sizeof line, "%ld   *a%d:", thread, shown[k].arg);
  for (size_t w = 0; w < (bytes + 7) / 8; w++) /* a last part-word is read whole: at[] is zeroed */
    n += snprintf(line + n, sizeof line - (size_t)n, " %" PRIx64, at[w]);
  say(line, n + snprintf(line + n, sizeof line - (size_t)n, "\n"));
}

/* The call in slot FIRST + i, logged around. */
static int traced(int i, word a0, word a1, word a2, word a3, word a4, word a5, word a6, word a7,
                  word a8, word a9, word a10, word a11, word a12, word a13, word a14, word a15) {
  char line[320];
  long thread = syscall(SYS_gettid);
  say(line, snprintf(line, sizeof line,
                     "%ld > %s(%" PRIx64 ", %" PRIx64 ", %" PRIx64 ", %" PRIx64 ", %" PRIx64
                     ", %" PRIx64 ")\n",
                     thread, names[i], a0, a1, a2, a3, a4, a5));
  if (shows[i] >= 0) show(thread, shows[i], (const word[]){a0, a1, a2, a3, a4, a5});
  int result = reals[i](a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15);
  word out;
  struct iovec local = {&out, sizeof out}, remote = {(void *)(uintptr_t)a0, sizeof out};
  int n = snprintf(line, sizeof line, "%ld < %s = %d", thread, names[i], result);
  if (result == 0 && a0 >= 4096 && process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 8)
    n += snprintf(line + n, sizeof line - (size_t)n, " *a0=%" PRIx64, out);
  say(line, n + snprintf(line + n, sizeof line - (size_t)n, "\n"));
  return result;
}

/* SLOTS wrappers, wrapper_<FIRST + i> calling traced(i, ...). */
#define WRAPPER(i)                                                                                 \
  static int wrapper_##i(word a0, word a1, word a2, word a3, word a4, word a5, word a6, word a7,   \
                         word a8, word a9, word a10, word a11, word a12, word a13, word a14,       \
                         word a15) {                                                               \
    return traced(i - FIRST, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,      \
                  a15);                                                                            \
  }
// clang-format off
#define TEN(m, d) m(d##0) m(d##1) m(d##2) m(d##3) m(d##4) m(d##5) m(d##6) m(d##7) m(d##8) m(d##9)
#define HUNDRED(m, d) \
  TEN(m, d##0) TEN(m, d##1) TEN(m, d##2) TEN(m, d##3) TEN(m, d##4) \
  TEN(m, d##5) TEN(m, d##6) TEN(m, d##7) TEN(m, d##8) TEN(m, d##9)
/* slots 100 to 499: the numbers need no leading zero */
HUNDRED(WRAPPER, 1) HUNDRED(WRAPPER, 2) HUNDRED(WRAPPER, 3) HUNDRED(WRAPPER, 4)
#define ADDRESS(i) (void *)wrapper_##i,
static void *const wrappers[SLOTS] = {
  HUNDRED(ADDRESS, 1) HUNDRED(ADDRESS, 2) HUNDRED(ADDRESS, 3) HUNDRED(ADDRESS, 4)
};
// clang-format on

__attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                    CUdriverProcAddressQueryResult *status) {
  static get_proc_fn real;
  if (!real) {
    const char *path = getenv("DRIVER_TRACE_REAL");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    real = lib ? (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    if (!real) {
      fprintf(stderr, "driver-trace: no driver at DRIVER_TRACE_REAL (%s)\n", path ? path : "unset");
      return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
    }
    char file[4096];
    const char *dir = getenv("CUDADRV_FUZZ_TRACE");
    if (dir && snprintf(file, sizeof file, "%s/trace.%d", dir, (int)getpid()) < (int)sizeof file) {
      int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      log_fd = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 900);
      if (fd >= 0) close(fd);
    }
  }
  CUresult result = real(symbol, pfn, version, flags, status);
  if (result != CUDA_SUCCESS || !*pfn || !strcmp(symbol, "cuGetProcAddress")) return result;
  pthread_mutex_lock(&slots_lock);
  if (used < SLOTS) {
    reals[used] = (entry_fn)*pfn;
    snprintf(names[used], sizeof names[used], "%s", symbol);
    shows[used] = -1;
    for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
      if (!strcmp(symbol, shown[k].name)) shows[used] = (signed char)k;
    *pfn = wrappers[used++];
  }
  pthread_mutex_unlock(&slots_lock);
  return result;
}
