/* replay-trace: makes the driver calls of a `npm run fuzz -- --trace-driver DIR` trace again,
 * from C, without Node or cudadrv: what a driver crash found by the fuzzer needs to be reported.
 *
 *   cc -O1 -o replay-trace replay-trace.c -I/usr/local/cuda/include -lcuda
 *   ./replay-trace DIR/trace.<pid>
 *
 * Calls of the list below (their arity beside them) are made on one thread, each when its result
 * line comes (so that the handle it made is known; each thread of the trace has its call in
 * waiting); the trace's last call, whose result never came (the crash), is made at the end.
 * Arguments are mapped: a handle or address that an earlier call of the trace gave through its
 * first argument is the one this run's call gave (an address inside a range or allocation, at the
 * same offset, where a call acts on the address); a pointer to a structure the trace wrote after
 * the call (driver-trace.c's shown[], structures holding no pointer) is a buffer of this
 * program's holding it, and any other pointer into a stack a zeroed buffer; a descriptor an
 * export gave is this run's; an import that failed in the trace gets a socket, as the fuzzer's
 * child imported its stdio socket. A call taking a heap address that no replayed call made (a
 * module, a graph, an array), or a handle that a call left out or failing here made, is left
 * out, and so are calls not listed (copies, launches, modules): "skip" lines say which. A result
 * other than the trace's is printed ("differs"), and each call made ("made NAME, line L": the
 * line of the trace where it starts; cut-trace.js cuts a trace down by these, with fault-report.c
 * preloaded to name a faulting instruction). A cut trace keeps, of each call it left out that made
 * something, a line `<thread> - name(first argument) *a0=X`: what X names is lost here, as where
 * a call is left out in the replay, whatever address X is. Repeats seed 1530714724's crash in
 * cuMemPoolDestroy on driver 580 from its trace (test/reliability/fuzz/FINDINGS.md). */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef uint64_t word;
typedef int (*call_fn)(word, word, word, word, word, word);

/* What a call's first argument is: where it writes what it made (in a stack or in cudadrv's
 * heap), an address it acts on (a range's interior maps too), or anything else. */
enum first { OTHER, WRITES, ACTS_ON };
static const struct {
  const char *name;
  int arity;
  enum first first;
} listed[] = {
    {"cuInit", 1, OTHER},
    {"cuCtxCreate", 3, WRITES}, /* cudadrv loads cuCtxCreate_v2: (ctx, flags, device) */
    {"cuCtxDestroy", 1, OTHER},
    {"cuCtxPushCurrent", 1, OTHER},
    {"cuCtxPopCurrent", 1, WRITES},
    {"cuCtxSetCurrent", 1, OTHER},
    {"cuCtxSynchronize", 0, OTHER},
    {"cuCtxSetLimit", 2, OTHER},
    {"cuCtxSetCacheConfig", 1, OTHER},
    {"cuCtxSetSharedMemConfig", 1, OTHER},
    {"cuDevicePrimaryCtxRetain", 2, WRITES},
    {"cuDevicePrimaryCtxRelease", 1, OTHER},
    {"cuDeviceGetDevResource", 3, OTHER},
    {"cuDevResourceGenerateDesc", 3, WRITES},
    {"cuGreenCtxCreate", 4, WRITES},
    {"cuGreenCtxDestroy", 1, OTHER},
    {"cuCtxFromGreenCtx", 2, WRITES},
    {"cuGreenCtxStreamCreate", 4, WRITES},
    {"cuGreenCtxRecordEvent", 2, OTHER},
    {"cuGreenCtxWaitEvent", 2, OTHER},
    {"cuMemPoolCreate", 2, WRITES},
    {"cuMemPoolDestroy", 1, OTHER},
    {"cuMemPoolSetAttribute", 3, OTHER},
    {"cuMemPoolGetAttribute", 3, OTHER},
    {"cuMemPoolSetAccess", 3, OTHER},
    {"cuMemPoolGetAccess", 3, WRITES},
    {"cuMemPoolTrimTo", 2, OTHER},
    {"cuMemPoolExportToShareableHandle", 4, WRITES},
    {"cuMemPoolImportFromShareableHandle", 4, WRITES},
    {"cuMemPoolExportPointer", 2, WRITES},
    {"cuDeviceSetMemPool", 2, OTHER},
    {"cuDeviceGetMemPool", 2, WRITES},
    {"cuDeviceGetDefaultMemPool", 2, WRITES},
    {"cuMemAllocFromPoolAsync", 4, WRITES},
    {"cuMemAllocAsync", 3, WRITES},
    {"cuMemFreeAsync", 2, ACTS_ON},
    {"cuMemAlloc", 2, WRITES},
    {"cuMemFree", 1, ACTS_ON},
    {"cuMemAllocPitch", 5, WRITES},
    {"cuMemAllocManaged", 3, WRITES},
    {"cuMemHostAlloc", 3, WRITES},
    {"cuMemFreeHost", 1, ACTS_ON},
    {"cuMemsetD8", 3, ACTS_ON},
    {"cuStreamCreateWithPriority", 3, WRITES},
    {"cuStreamDestroy", 1, OTHER},
    {"cuStreamSynchronize", 1, OTHER},
    {"cuStreamQuery", 1, OTHER},
    {"cuEventCreate", 2, WRITES},
    {"cuEventDestroy", 1, OTHER},
    {"cuEventRecord", 2, OTHER},
    {"cuEventSynchronize", 1, OTHER},
    {"cuEventQuery", 1, OTHER},
    {"cuMemCreate", 4, WRITES},
    {"cuMemRelease", 1, OTHER},
    {"cuMemAddressReserve", 5, WRITES},
    {"cuMemAddressFree", 2, ACTS_ON},
    {"cuMemMap", 5, ACTS_ON},
    {"cuMemUnmap", 2, ACTS_ON},
    {"cuMemSetAccess", 4, ACTS_ON},
    {"cuMemExportToShareableHandle", 4, WRITES},
    {"cuMemImportFromShareableHandle", 3, WRITES},
    {"cuMemGetAllocationGranularity", 3, WRITES},
    {"cuIpcGetMemHandle", 2, WRITES},
    {"cuIpcGetEventHandle", 2, WRITES},
};

/* what the trace's calls gave, and what this run's gave in their place */
#define MOST 100000
static struct {
  word was, now;
  int range; /* an address range or allocation: addresses inside it map too */
  int lost;  /* a handle the trace's call made and this run's did not (left out, or failed) */
} made[MOST];
static int count;
#define DESCRIPTOR (1ull << 63) /* marks a descriptor's entry: an int, whose high half is junk */

/* name's entry in listed[], or -1 */
static int listed_as(const char *name) {
  for (size_t k = 0; k < sizeof listed / sizeof *listed; k++)
    if (!strcmp(listed[k].name, name)) return (int)k;
  return -1;
}

/* 1 where this run made what the trace's `was` was (now: this run's), -1 where it did not
 * (made[].lost), 0 where the trace did not make it either */
static int mapped(word was, word *now) {
  for (int i = count - 1; i >= 0; i--)
    if (made[i].was == was) return made[i].lost ? -1 : (*now = made[i].now, 1);
  return 0;
}

/* an address within 1 GiB past the start of a range made: the same offset in this run's (only
 * for the address an ACTS_ON call acts on: a handle may lie near a range too); as mapped() */
static int inside(word was, word *now) {
  int best = -1;
  for (int i = 0; i < count; i++)
    if (made[i].range && made[i].was <= was && was - made[i].was < (1ull << 30) &&
        (best < 0 || made[i].was >= made[best].was)) /* the latest of equal starts */
      best = i;
  if (best < 0) return 0;
  if (made[best].lost) return -1;
  *now = made[best].now + (was - made[best].was);
  return 1;
}

/* what a call of this name makes through its first argument is a range: addresses inside map */
static int makes_range(const char *name) {
  return strstr(name, "Alloc") || strstr(name, "AddressReserve");
}

static void remember(word was, word now, int range, int lost) {
  if (count < MOST)
    made[count].was = was, made[count].now = now, made[count].lost = lost,
    made[count++].range = range;
}

/* A call whose line came and whose result has not, on one of the trace's threads. */
typedef struct {
  long thread; /* 0: a free slot */
  long order;  /* the trace's line where it starts */
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
/* a handle's or an address's value, not a count (a handle's word can be an int with junk above) */
static int is_pointer(word v) { return v >= 0x1000000 && v < 0x800000000000ull; }

/* After a call that remembered nothing (left out, failing here, or a cut's left-out line):
 * what the trace's call wrote through a stack pointer (line's "*a0=X", a handle, most often) is
 * one that the calls taking it cannot have in this run. A handle that is an address among the
 * mappings (the stand-in's green-context descriptors, in its data) is told from a pointer only so:
 * passed on, it was an address of the traced process, which the stand-in read and faulted on where
 * the library lay below is_stack()'s range. */
static void remember_lost(const char *name, word first, const char *line) {
  const char *gave = strstr(line, "*a0=");
  word was = gave ? strtoull(gave + 4, NULL, 16) : 0, now;
  if (gave && is_stack(first) && is_pointer(was) && !mapped(was, &now))
    remember(was, 0, makes_range(name), 1);
}

/* Makes the call the trace's line `<tid> < name = result [*a0=X]` ended; 0 where it was left out.
 */
static int make(call *c, int result, const char *line, int socket_fd) {
  const char *name = c->name;
  const word *was = c->was;
  word(*buffers)[512] = c->buffers;
  int k = listed_as(name);
  if (k < 0) return 0;
  word now[6] = {0};
  for (int i = 0; i < listed[k].arity; i++) {
    word v = was[i];
    int writes = i == 0 && listed[k].first == WRITES,
        in_range = i == 0 && listed[k].first == ACTS_ON;
    /* a structure dumped is passed from a buffer: its address may be a lost handle's, reused */
    int known = writes || c->filled[i] ? 0 : mapped(v, &now[i]);
    if (!known && in_range) known = inside(v, &now[i]);
    if (known > 0) continue;
    if (known < 0) {
      printf("skip %s", line); /* a handle, or an address in a range, this run lacks */
      return 0;
    }
    if (writes || is_stack(v) || c->filled[i]) {
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
    now[1] = result == CUDA_SUCCESS && mapped((was[1] & 0xffffffff) | DESCRIPTOR, &fd) > 0
                 ? fd
                 : (word)socket_fd;
  }
  void *fn = NULL;
  CUdriverProcAddressQueryResult found;
  if (cuGetProcAddress(name, &fn, 13000, 0, &found) != CUDA_SUCCESS || !fn) return 0;
  printf("made %s, line %ld\n", name, c->order);
  fflush(stdout);
  int got = ((call_fn)fn)(now[0], now[1], now[2], now[3], now[4], now[5]);
  if (got != result) printf("differs: %s trace %d now %d\n", name, result, got);
  const char *gave = strstr(line, "*a0=");
  if (got == CUDA_SUCCESS && result == CUDA_SUCCESS && gave &&
      now[0] == (word)(uintptr_t)buffers[0]) {
    word before = strtoull(gave + 4, NULL, 16);
    if (strstr(name, "ExportToShareableHandle"))
      remember((before & 0xffffffff) | DESCRIPTOR, buffers[0][0] & 0xffffffff, 0, 0);
    else
      remember(before, buffers[0][0], makes_range(name), 0);
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
  for (;; lines++) {
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
      c->order = lines + 1;
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
      int before = count;
      if (make(c, result, line, sockets[0]))
        made_calls++;
      else
        left_out++;
      if (count == before && result == CUDA_SUCCESS) remember_lost(c->name, c->was[0], line);
      c->thread = 0;
      fflush(stdout);
    } else if (sscanf(line, "%ld - %127[^(](%lx)", &thread, name, &a[0]) == 3) {
      remember_lost(name, a[0], line); /* a call that a cut left out */
    }
  }
  printf("end: %ld calls made, %ld left out\n", made_calls, left_out);
  return 0;
}
