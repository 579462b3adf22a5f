/* replay-trace: makes the driver calls of a `npm run fuzz -- --trace-driver DIR` trace again,
 * from C, without Node or cudadrv: what a driver crash found by the fuzzer needs to be reported.
 *
 *   cc -O1 -o replay-trace replay-trace.c -I/usr/local/cuda/include -lcuda
 *   ./replay-trace DIR/trace.<pid>
 *
 * Calls of the list below (their arity beside them) are made on one thread, each when its result
 * line comes (so that the handle it made is known; each thread of the trace has its call in
 * waiting); the trace's last call,
 * whose result never came (the crash), is made at the end. Arguments are mapped: a handle or
 * address that an earlier call of the trace gave through its first argument is the one this run's
 * call gave (an address inside a range or allocation, at the same offset, where a call acts on
 * the address); a pointer into a stack
 * is a zeroed buffer of this program's, or holds the structure the trace wrote after the call
 * (driver-trace.c's shown[]); a descriptor an export gave is this run's; an import that failed in
 * the trace gets a socket, as the fuzzer's child imported its stdio socket. A call taking a heap
 * address that no replayed call made (a module, a graph, an array) is left out, and so are calls
 * not listed (copies, launches, modules): "skip" lines say which. A result other than the trace's
 * is printed ("differs"). A structure in the heap is not passed: its words may hold pointers of
 * the traced process. Repeats seed 1530714724's crash in cuMemPoolDestroy on driver 580 from its
 * trace (test/reliability/fuzz/FINDINGS.md). */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef uint64_t word;
typedef int (*call_fn)(word, word, word, word, word, word);

static const struct {
  const char *name;
  int arity;
} listed[] = {
    {"cuInit", 1},
    {"cuCtxCreate", 3}, /* cudadrv loads cuCtxCreate_v2: (ctx, flags, device) */
    {"cuCtxDestroy", 1},
    {"cuCtxPushCurrent", 1},
    {"cuCtxPopCurrent", 1},
    {"cuCtxSetCurrent", 1},
    {"cuCtxSynchronize", 0},
    {"cuCtxSetLimit", 2},
    {"cuCtxSetCacheConfig", 1},
    {"cuCtxSetSharedMemConfig", 1},
    {"cuDevicePrimaryCtxRetain", 2},
    {"cuDevicePrimaryCtxRelease", 1},
    {"cuDeviceGetDevResource", 3},
    {"cuDevResourceGenerateDesc", 3},
    {"cuGreenCtxCreate", 4},
    {"cuGreenCtxDestroy", 1},
    {"cuCtxFromGreenCtx", 2},
    {"cuGreenCtxStreamCreate", 4},
    {"cuGreenCtxRecordEvent", 2},
    {"cuGreenCtxWaitEvent", 2},
    {"cuMemPoolCreate", 2},
    {"cuMemPoolDestroy", 1},
    {"cuMemPoolSetAttribute", 3},
    {"cuMemPoolGetAttribute", 3},
    {"cuMemPoolSetAccess", 3},
    {"cuMemPoolGetAccess", 3},
    {"cuMemPoolTrimTo", 2},
    {"cuMemPoolExportToShareableHandle", 4},
    {"cuMemPoolImportFromShareableHandle", 4},
    {"cuMemPoolExportPointer", 2},
    {"cuDeviceSetMemPool", 2},
    {"cuDeviceGetMemPool", 2},
    {"cuDeviceGetDefaultMemPool", 2},
    {"cuMemAllocFromPoolAsync", 4},
    {"cuMemAllocAsync", 3},
    {"cuMemFreeAsync", 2},
    {"cuMemAlloc", 2},
    {"cuMemFree", 1},
    {"cuMemAllocPitch", 5},
    {"cuMemAllocManaged", 3},
    {"cuMemHostAlloc", 3},
    {"cuMemFreeHost", 1},
    {"cuMemsetD8", 3},
    {"cuStreamCreateWithPriority", 3},
    {"cuStreamDestroy", 1},
    {"cuStreamSynchronize", 1},
    {"cuStreamQuery", 1},
    {"cuEventCreate", 2},
    {"cuEventDestroy", 1},
    {"cuEventRecord", 2},
    {"cuEventSynchronize", 1},
    {"cuEventQuery", 1},
    {"cuMemCreate", 4},
    {"cuMemRelease", 1},
    {"cuMemAddressReserve", 5},
    {"cuMemAddressFree", 2},
    {"cuMemMap", 5},
    {"cuMemUnmap", 2},
    {"cuMemSetAccess", 4},
    {"cuMemExportToShareableHandle", 4},
    {"cuMemImportFromShareableHandle", 3},
    {"cuMemGetAllocationGranularity", 3},
    {"cuIpcGetMemHandle", 2},
    {"cuIpcGetEventHandle", 2},
};
/* calls whose first argument is an address they act on, not where they write */
static const char *const addressed[] = {"cuMemMap",         "cuMemUnmap",     "cuMemSetAccess",
                                        "cuMemFree",        "cuMemFreeAsync", "cuMemsetD8",
                                        "cuMemAddressFree", "cuMemFreeHost"};
/* calls whose first argument is where they write what they made (in a stack or in cudadrv's heap)
 */
static const char *const writers[] = {"cuCtxCreate",
                                      "cuCtxPopCurrent",
                                      "cuDevicePrimaryCtxRetain",
                                      "cuDevResourceGenerateDesc",
                                      "cuGreenCtxCreate",
                                      "cuCtxFromGreenCtx",
                                      "cuGreenCtxStreamCreate",
                                      "cuMemPoolCreate",
                                      "cuMemPoolGetAccess",
                                      "cuMemPoolExportToShareableHandle",
                                      "cuMemPoolImportFromShareableHandle",
                                      "cuMemPoolExportPointer",
                                      "cuDeviceGetMemPool",
                                      "cuDeviceGetDefaultMemPool",
                                      "cuMemAllocFromPoolAsync",
                                      "cuMemAllocAsync",
                                      "cuMemAlloc",
                                      "cuMemAllocPitch",
                                      "cuMemAllocManaged",
                                      "cuMemHostAlloc",
                                      "cuStreamCreateWithPriority",
                                      "cuEventCreate",
                                      "cuMemCreate",
                                      "cuMemAddressReserve",
                                      "cuMemExportToShareableHandle",
                                      "cuMemImportFromShareableHandle",
                                      "cuMemGetAllocationGranularity",
                                      "cuIpcGetMemHandle",
                                      "cuIpcGetEventHandle"};

/* what the trace's calls gave, and what this run's gave in their place */
#define MOST 100000
static struct {
  word was, now;
  int range; /* an address range or allocation: addresses inside it map too */
} made[MOST];
static int count;
#define DESCRIPTOR (1ull << 63) /* marks a descriptor's entry: an int, whose high half is junk */

static int arity_of(const char *name) {
  for (size_t k = 0; k < sizeof listed / sizeof *listed; k++)
    if (!strcmp(listed[k].name, name)) return listed[k].arity;
  return -1;
}

static int among(const char *name, const char *const *names, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (!strcmp(names[k], name)) return 1;
  return 0;
}
#define AMONG(name, names) among(name, names, sizeof names / sizeof *names)

static int mapped(word was, word *now) {
  for (int i = count - 1; i >= 0; i--)
    if (made[i].was == was) return *now = made[i].now, 1;
  return 0;
}

/* an address within 1 GiB past the start of a range made: the same offset in this run's (only
 * for the address a call of addressed[] acts on: a handle may lie near a range too) */
static int inside(word was, word *now) {
  int best = -1;
  for (int i = 0; i < count; i++)
    if (made[i].range && made[i].was <= was && was - made[i].was < (1ull << 30) &&
        (best < 0 || made[i].was > made[best].was))
      best = i;
  if (best < 0) return 0;
  *now = made[best].now + (was - made[best].was);
  return 1;
}

static void remember(word was, word now, int range) {
  if (count < MOST) made[count].was = was, made[count].now = now, made[count++].range = range;
}

/* A call whose line came and whose result has not, on one of the trace's threads. */
typedef struct {
  long thread; /* 0: a free slot */
  long order;  /* when its line came */
  char name[128];
  word was[6];
  word buffers[6][512]; /* the stack pointers' stand-ins, one per argument */
  int filled[6];        /* the trace wrote the structure this argument points to */
} call;
#define THREADS 32
static call calls[THREADS];

static call *call_of(long thread, int take) {
  for (int i = 0; i < THREADS; i++)
    if (calls[i].thread == thread) return &calls[i];
  for (int i = 0; take && i < THREADS; i++)
    if (!calls[i].thread) return &calls[i];
  return NULL;
}

static int is_stack(word v) { return v >= 0x7f0000000000ull && v < 0x800000000000ull; }
static int is_heap(word v) { return v >= 0x1000000 && v < 0xf0000000; } /* above: a negative int */

/* Makes the call the trace's line `<tid> < name = result [*a0=X]` ended; 0 where it was left out.
 */
static int make(call *c, int result, const char *line, int socket_fd) {
  const char *name = c->name;
  const word *was = c->was;
  word(*buffers)[512] = c->buffers;
  int arity = arity_of(name);
  if (arity < 0) return 0;
  word now[6] = {0};
  for (int i = 0; i < arity; i++) {
    word v = was[i];
    int writes = i == 0 && AMONG(name, writers), in_range = i == 0 && AMONG(name, addressed);
    if (!writes && mapped(v, &now[i])) continue;
    if (in_range && inside(v, &now[i])) continue;
    if (writes || is_stack(v)) {
      if (!c->filled[i]) memset(buffers[i], 0, sizeof buffers[i]);
      now[i] = (word)(uintptr_t)buffers[i];
    } else if (is_heap(v)) {
      printf("skip %s", line); /* a handle no replayed call made */
      return 0;
    } else {
      now[i] = v;
    }
  }
  if (strstr(name, "ImportFromShareableHandle")) {
    word fd;
    now[1] = result == CUDA_SUCCESS && mapped((was[1] & 0xffffffff) | DESCRIPTOR, &fd)
                 ? fd
                 : (word)socket_fd;
  }
  void *fn = NULL;
  CUdriverProcAddressQueryResult found;
  if (cuGetProcAddress(name, &fn, 13000, 0, &found) != CUDA_SUCCESS || !fn) return 0;
  int got = ((call_fn)fn)(now[0], now[1], now[2], now[3], now[4], now[5]);
  if (got != result) printf("differs: %s trace %d now %d\n", name, result, got);
  const char *gave = strstr(line, "*a0=");
  if (got == CUDA_SUCCESS && result == CUDA_SUCCESS && gave &&
      now[0] == (word)(uintptr_t)buffers[0]) {
    word before = strtoull(gave + 4, NULL, 16);
    if (strstr(name, "ExportToShareableHandle"))
      remember((before & 0xffffffff) | DESCRIPTOR, buffers[0][0] & 0xffffffff, 0);
    else
      remember(before, buffers[0][0], strstr(name, "Alloc") || strstr(name, "AddressReserve"));
  }
  return 1;
}

int main(int argc, char **argv) {
  int sockets[2];
  FILE *trace = argc == 2 ? fopen(argv[1], "r") : NULL;
  if (!trace || socketpair(AF_UNIX, SOCK_STREAM, 0, sockets)) {
    fprintf(stderr, "usage: replay-trace DIR/trace.<pid> (a --trace-driver trace)\n");
    return 2;
  }
  cuInit(0);
  char line[4096];
  long made_calls = 0, left_out = 0, lines = 0;
  for (;;) {
    char name[128];
    word a[6];
    long thread;
    int result, n;
    call *c;
    if (!fgets(line, sizeof line, trace)) {
      call *last = NULL; /* the call that never returned: the latest one left */
      for (int i = 0; i < THREADS; i++)
        if (calls[i].thread && (!last || calls[i].order > last->order)) last = &calls[i];
      if (!last) break;
      printf("the trace's last call, which never returned: %s\n", last->name);
      fflush(stdout);
      snprintf(line, sizeof line, "%ld < %s = 0\n", last->thread, last->name);
      for (int i = 0; i < THREADS; i++) /* the others waited on it */
        if (&calls[i] != last) calls[i].thread = 0;
    }
    if (sscanf(line, "%ld > %127[^(](%lx, %lx, %lx, %lx, %lx, %lx)", &thread, name, &a[0], &a[1],
               &a[2], &a[3], &a[4], &a[5]) == 8 &&
        (c = call_of(thread, 1))) {
      c->thread = thread;
      c->order = ++lines;
      snprintf(c->name, sizeof c->name, "%s", name);
      memcpy(c->was, a, sizeof a);
      memset(c->filled, 0, sizeof c->filled);
    } else if (sscanf(line, "%ld   *a%d:%n", &thread, &result, &n) == 2 && result >= 0 &&
               result < 6 && (c = call_of(thread, 0))) {
      word *to = c->buffers[result];
      memset(to, 0, sizeof c->buffers[result]);
      c->filled[result] = 1;
      char *at = line + n, *end;
      for (int w = 0; w < 512; w++, at = end) {
        to[w] = strtoull(at, &end, 16);
        if (end == at) break;
      }
    } else if (sscanf(line, "%ld < %127s = %d", &thread, name, &result) == 3 &&
               (c = call_of(thread, 0)) && !strcmp(name, c->name)) {
      if (make(c, result, line, sockets[0]))
        made_calls++;
      else
        left_out++;
      c->thread = 0;
      fflush(stdout);
    }
  }
  printf("end: %ld calls made, %ld left out\n", made_calls, left_out);
  return 0;
}
