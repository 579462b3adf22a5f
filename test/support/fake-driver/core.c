/* A stand-in libcuda.so.1 for tests on machines without a GPU: it implements every call the
 * addon's table names, on host memory, and lets a test see and steer what the driver does:
 *   FAKE_CUDA_LOG=<file>     each module load, launch and setting received, and each stream
 *                            destroyed mid-capture, one line each
 *   FAKE_CUDA_TRACE=1        also "call <symbol>" for every call received
 *   FAKE_CUDA_MISSING=a,b    calls that cuGetProcAddress does not provide
 *   FAKE_CUDA_DRIVER_VERSION=12040  what cuDriverGetVersion reports (13000 by default);
 *                            cuGetProcAddress refuses versions above it, and gives the ABI of
 *                            the version asked for
 *   FAKE_CUDA_FAIL=<symbol>:<nth>[+]:<CUresult>
 *                            the nth call of symbol (every call from the nth with '+') returns
 *                            that result; counted from when the value was set, and read at
 *                            each call, so a process may set it through process.env as it goes
 *                            (where it was set, empty or not, when the driver loaded)
 *   FAKE_CUDA_COUNTS=<file>  the live counts of objects (contexts, memory, streams...) and of
 *                            stale handles received, kept current in that file as
 *                            "<name> <count>" lines (test/support/stand-in-driver.js reads it)
 *   FAKE_CUDA_PROFILER_RESULT=<CUresult>  what cuProfilerInitialize returns
 *   FAKE_CUDA_SYNC_MS=<n>    cuCtxSynchronize takes n ms, as if work were running
 *   FAKE_CUDA_DEFER=1        async copies of page-locked host memory wait until a call waits
 *                            for them (deferred.c)
 *   FAKE_CUDA_FAULT=<symbol> every call of symbol faults (SIGSEGV), as a driver defect does: for
 *                            the test of cut-trace.js, which cuts a crashing trace down
 *   FAKE_CUDA_STALE_ABORT=1  a stale handle received aborts the process, as it may crash the
 *                            driver ("stale <what>" on stderr first): the fuzzer sets it
 *   FAKE_CUDA_OBJECTS=<n>    at most n objects live at once (49152 by default): a call making
 *                            one more returns CUDA_ERROR_OUT_OF_MEMORY, as a full device does
 * Handles are registered: a stale one is an error (and counted), never a crash; tables that fill
 * return CUDA_ERROR_OUT_OF_MEMORY. Built by test/support/stand-in-driver.js. */
#include "fake.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int logging(void) {
  static int set = -1;
  if (set < 0) set = getenv("FAKE_CUDA_LOG") != NULL;
  return set;
}

void log_line(const char *format, ...) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (!path) return;
  pthread_mutex_lock(&lock);
  FILE *f = fopen(path, "a");
  if (f) {
    va_list ap;
    va_start(ap, format);
    vfprintf(f, format, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
  }
  pthread_mutex_unlock(&lock);
}

/* ---- live counts: a file of fixed-width lines, mapped, updated in place ---- */

static const char *count_names[] = {FAKE_COUNT_NAMES, "stale"};
#define COUNTS (sizeof count_names / sizeof *count_names)
#define LINE 32
static long long counts[COUNTS];
static char *counts_map; /* NULL: no FAKE_CUDA_COUNTS */

static void counts_write(int i) {
  if (!counts_map) return;
  char line[64];
  snprintf(line, sizeof line, "%-16s %14lld\n", count_names[i], counts[i] % 100000000000000LL);
  memcpy(counts_map + i * LINE, line, LINE);
}

static void counts_open(void) {
  const char *path = getenv("FAKE_CUDA_COUNTS");
  if (!path) return;
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, COUNTS * LINE) != 0) abort();
  counts_map = mmap(NULL, COUNTS * LINE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (counts_map == MAP_FAILED) abort();
  for (size_t i = 0; i < COUNTS; i++) counts_write((int)i);
}

static void count(int i, int delta) {
  counts[i] += delta;
  counts_write(i);
}

void fake_crash(const char *why) {
  log_line("crash %s", why);
  fprintf(stderr, "stand-in driver: %s\n", why);
  abort();
}

void count_stale(const char *what) {
  pthread_mutex_lock(&lock);
  count(COUNTS - 1, 1);
  pthread_mutex_unlock(&lock);
  log_line("stale %s", what);
  if (getenv("FAKE_CUDA_STALE_ABORT")) {
    fprintf(stderr, "stale %s reached the stand-in driver\n", what);
    abort();
  }
}

/* ---- the object table: open addressing, deletion by backward shift ---- */

#define CAPACITY 65536u
#define MOST (CAPACITY / 4 * 3)
static obj table[CAPACITY];
static unsigned live;

/* the most objects live at once: MOST, or FAKE_CUDA_OBJECTS where lower */
static unsigned most_live(void) {
  static unsigned most;
  if (!most) {
    const char *set = getenv("FAKE_CUDA_OBJECTS");
    unsigned long n = set ? strtoul(set, NULL, 10) : 0;
    most = n && n < MOST ? (unsigned)n : MOST;
  }
  return most;
}

static unsigned slot_of(uintptr_t key) {
  return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 48) & (CAPACITY - 1);
}

/* The slot holding key, or the empty one where it would go. */
static unsigned probe(uintptr_t key) {
  unsigned i = slot_of(key);
  while (table[i].key && table[i].key != key) i = (i + 1) & (CAPACITY - 1);
  return i;
}

CUresult obj_add(uintptr_t key, obj_kind kind, size_t size) {
  /* contexts, and what lives outside any context (libraries, linker states, graphs), have no
   * owner */
  CUcontext owner = kind == OBJ_CONTEXT || kind == OBJ_PRIMARY || kind == OBJ_LIBRARY ||
                            kind == OBJ_GRAPH || kind == OBJ_KERNEL || kind == OBJ_LINK ||
                            kind == OBJ_USER_OBJECT || kind == OBJ_GRAPH_MEMORY ||
                            kind == OBJ_POOL || kind == OBJ_MAPPED
                        ? NULL
                        : current_context();
  return obj_add_in(key, kind, size, owner);
}

CUresult obj_add_in(uintptr_t key, obj_kind kind, size_t size, CUcontext owner) {
  if (!key) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  unsigned i = probe(key);
  CUresult result = CUDA_SUCCESS;
  if (table[i].key)
    result = CUDA_ERROR_ALREADY_MAPPED;
  else if (live >= most_live())
    result = CUDA_ERROR_OUT_OF_MEMORY;
  else {
    table[i] = (obj){key, kind, size, owner};
    live++;
    count(kind, 1);
  }
  pthread_mutex_unlock(&lock);
  return result;
}

bool obj_is(uintptr_t key, obj_kind kind) {
  pthread_mutex_lock(&lock);
  unsigned i = probe(key);
  bool found = key && table[i].key && table[i].kind == kind;
  pthread_mutex_unlock(&lock);
  return found;
}

CUcontext obj_owner(uintptr_t key) {
  pthread_mutex_lock(&lock);
  unsigned i = probe(key);
  CUcontext owner = key && table[i].key ? table[i].owner : NULL;
  pthread_mutex_unlock(&lock);
  return owner;
}

bool obj_live(uintptr_t key, obj_kind kind) {
  if (obj_is(key, kind)) return true;
  count_stale("handle");
  return false;
}

/* Empties slot i (the lock held), moving up every later entry of its run that the hole would
 * cut off from its home slot. */
static void remove_at(unsigned i) {
  count(table[i].kind, -1);
  live--;
  table[i].key = 0;
  for (unsigned hole = i, j = (i + 1) & (CAPACITY - 1); table[j].key;
       j = (j + 1) & (CAPACITY - 1)) {
    unsigned home = slot_of(table[j].key);
    if (((j - home) & (CAPACITY - 1)) >= ((j - hole) & (CAPACITY - 1))) {
      table[hole] = table[j];
      table[j].key = 0;
      hole = j;
    }
  }
}

bool obj_remove(uintptr_t key, obj_kind kind) {
  pthread_mutex_lock(&lock);
  unsigned i = probe(key);
  bool found = key && table[i].key && table[i].kind == kind;
  if (found) remove_at(i);
  pthread_mutex_unlock(&lock);
  if (!found) count_stale("handle");
  return found;
}

void obj_disown(CUcontext ctx, obj_kind kind, void (*each)(uintptr_t key)) {
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < CAPACITY; i++)
    if (table[i].key && table[i].owner == ctx && table[i].kind == kind) {
      table[i].owner = NULL;
      each(table[i].key);
    }
  pthread_mutex_unlock(&lock);
}

void obj_rehome(CUcontext from, CUcontext to) {
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < CAPACITY; i++)
    if (table[i].key && table[i].owner == from) table[i].owner = to;
  pthread_mutex_unlock(&lock);
}

void obj_drop_context(CUcontext ctx) {
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < CAPACITY; i++)
    while (table[i].key && table[i].owner == ctx) {
      obj o = table[i];
      remove_at(i);
      if (o.kind == OBJ_STREAM) fake_stream_forget((CUstream)o.key);
      /* every object is one malloc'd block at its key, but registrations, texture ids and the
       * references inside their module */
      if (o.kind != OBJ_REGISTERED && o.kind != OBJ_TEXTURE && o.kind != OBJ_REFERENCE &&
          o.kind != OBJ_POOL_MEMORY && o.kind != OBJ_MAPPED)
        free((void *)o.key);
    }
  pthread_mutex_unlock(&lock);
}

static bool is_memory(obj_kind kind) {
  return kind >= OBJ_DEVICE_MEMORY && kind <= OBJ_GRAPH_MEMORY;
}

static bool holds(const obj *o, uintptr_t address, size_t bytes) {
  return o->key && is_memory(o->kind) && address >= o->key && address - o->key <= o->size &&
         bytes <= o->size - (address - o->key);
}

/* An allocation's start is found by its key, else the last object found is tried, else all are
 * scanned (copies reach here often: bench/overhead.js times them). */
bool obj_memory(uintptr_t address, size_t bytes, obj *out) {
  static unsigned last;
  pthread_mutex_lock(&lock);
  unsigned i = probe(address);
  if (!holds(&table[i], address, bytes)) i = last;
  if (!holds(&table[i], address, bytes))
    for (i = 0; i < CAPACITY && !holds(&table[i], address, bytes); i++) continue;
  bool found = i < CAPACITY;
  if (found) {
    last = i;
    if (out) *out = table[i];
  }
  pthread_mutex_unlock(&lock);
  return found;
}

CUresult device_range(CUdeviceptr ptr, size_t bytes) {
  if (in_context() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  if (obj_memory((uintptr_t)ptr, bytes, NULL)) return CUDA_SUCCESS;
  /* mappings of virtual memory (vmm.c) side by side are one range of addresses */
  obj o;
  while (obj_memory((uintptr_t)ptr, 1, &o) && o.kind == OBJ_MAPPED) {
    size_t here = o.key + o.size - (uintptr_t)ptr;
    if (here >= bytes) return CUDA_SUCCESS;
    ptr += here;
    bytes -= here;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

/* ---- tracing and failure injection ---- */

static int tracing = -1, injecting = -1;
static const char *faulting;
static int *volatile unmapped; /* NULL, which the compiler cannot see: FAKE_CUDA_FAULT writes it */

/* symbol without the _v2.. suffix that cuda.h's macros add */
static bool same_symbol(const char *symbol, const char *wanted, size_t length) {
  if (strncmp(symbol, wanted, length) != 0) return false;
  const char *rest = symbol + length;
  if (!*rest) return true;
  if (rest[0] != '_' || rest[1] != 'v') return false;
  for (rest += 2; *rest; rest++)
    if (*rest < '0' || *rest > '9') return false;
  return true;
}

CUresult fake_enter(const char *symbol) {
  if (tracing < 0) {
    injecting = getenv("FAKE_CUDA_FAIL") != NULL;
    faulting = getenv("FAKE_CUDA_FAULT");
    tracing = getenv("FAKE_CUDA_TRACE") != NULL; /* last: it says the others are read */
  }
  if (faulting && same_symbol(symbol, faulting, strlen(faulting))) *unmapped = 0;
  if (tracing) log_line("call %s", symbol);
  static int deferring = -1;
  if (deferring < 0) deferring = getenv("FAKE_CUDA_DEFER") != NULL;
  if (deferring && !fake_defer_holds(symbol)) fake_defer_run(UINT64_MAX);
  if (!injecting) return CUDA_SUCCESS;
  static char armed[256];
  static long calls;
  CUresult result = CUDA_SUCCESS;
  pthread_mutex_lock(&lock);
  const char *fail = getenv("FAKE_CUDA_FAIL");
  if (!fail) fail = "";
  if (strncmp(fail, armed, sizeof armed) != 0) { /* a new setting: count afresh */
    snprintf(armed, sizeof armed, "%s", fail);
    calls = 0;
  }
  const char *colon = strchr(armed, ':');
  if (colon && same_symbol(symbol, armed, (size_t)(colon - armed))) {
    char *end;
    long nth = strtol(colon + 1, &end, 10);
    bool onwards = *end == '+';
    if (onwards) end++;
    calls++;
    if (*end == ':' && (calls == nth || (onwards && calls >= nth)))
      result = (CUresult)atoi(end + 1);
  }
  pthread_mutex_unlock(&lock);
  return result;
}

/* ---- initialization, versions, errors ---- */

EXPORT CUresult cuInit(unsigned int flags) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, counts_open);
  ENTER();
  return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
/* The driver's CUDA version: FAKE_CUDA_DRIVER_VERSION (12000, 12040...), 13000 by default. */
static int driver_version(void) {
  const char *v = getenv("FAKE_CUDA_DRIVER_VERSION");
  return v && atoi(v) > 0 ? atoi(v) : 13000;
}

EXPORT CUresult cuDriverGetVersion(int *version) {
  ENTER();
  *version = driver_version();
  return CUDA_SUCCESS;
}

static const struct {
  CUresult code;
  const char *name, *text;
} errors[] = {
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
    {CUDA_ERROR_PROFILER_DISABLED, "CUDA_ERROR_PROFILER_DISABLED",
     "profiler disabled while using external profiling tool"},
    {CUDA_ERROR_INVALID_CLUSTER_SIZE, "CUDA_ERROR_INVALID_CLUSTER_SIZE",
     "cluster misconfiguration"},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
     "peer access is already enabled"},
    {CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
     "peer access has not been enabled"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  ENTER();
  for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
    if (errors[i].code == error) return *name = errors[i].name, CUDA_SUCCESS;
  *name = "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
  ENTER();
  for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
    if (errors[i].code == error) return *text = errors[i].text, CUDA_SUCCESS;
  *text = "fake error";
  return CUDA_SUCCESS;
}

EXPORT CUresult cuProfilerInitialize(const char *config, const char *output, CUoutput_mode mode) {
  ENTER();
  log_line("profiler %s %s %d", config, output, (int)mode);
  const char *result = getenv("FAKE_CUDA_PROFILER_RESULT");
  return result ? (CUresult)atoi(result) : CUDA_SUCCESS;
}
EXPORT CUresult cuProfilerStart(void) {
  ENTER();
  log_line("profiler start");
  return CUDA_SUCCESS;
}
EXPORT CUresult cuProfilerStop(void) {
  ENTER();
  log_line("profiler stop");
  return CUDA_SUCCESS;
}

/* NVRTC looks this up in a libcuda.so.1 that the loader's path finds, and fails without it. */
EXPORT CUresult cuGetExportTable(const void **table, const CUuuid *id) {
  (void)id;
  *table = NULL;
  return CUDA_ERROR_NOT_SUPPORTED;
}

/* ABI versions of a call newer than its plain name's, by the CUDA version that brought them: a
 * request for an older version gets the older one, as from the driver. */
static const struct {
  const char *symbol;
  int since;
} NEWER_ABI[] = {{"cuCtxCreate_v4", 12050},
                 {"cuEventElapsedTime_v2", 12080},
                 {"cuStreamGetCaptureInfo_v3", 12030},
                 {"cuMemPrefetchAsync_v2", 12020},
                 {"cuMemAdvise_v2", 12020},
                 {"cuMemcpyBatchAsync_v2", 13000},
                 {"cuMemcpy3DBatchAsync_v2", 13000}};

static bool too_new(const char *name, int version) {
  for (size_t i = 0; i < sizeof NEWER_ABI / sizeof NEWER_ABI[0]; i++)
    if (strcmp(name, NEWER_ABI[i].symbol) == 0) return version < NEWER_ABI[i].since;
  return false;
}

/* cuGetProcAddress: every call by its name (cuda.h's macros give some a _v2.. suffix) at the ABI
 * version asked for, unless FAKE_CUDA_MISSING lists it; a version past the driver's is refused. */
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status) {
  (void)flags;
  if (version > driver_version()) {
    *pfn = NULL;
    *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_ERROR_NOT_FOUND;
  }
  const char *missing = getenv("FAKE_CUDA_MISSING");
  size_t length = strlen(symbol);
  for (const char *p = missing; p && (p = strstr(p, symbol)); p += length) {
    if ((p == missing || p[-1] == ',') && (p[length] == ',' || p[length] == '\0')) {
      *pfn = NULL;
      *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      return CUDA_ERROR_NOT_FOUND;
    }
  }
  /* itself by its own path: under another libcuda.so.1 in front of it (bench/call_timer.c) */
  Dl_info mine;
  void *self = dladdr((void *)cuGetProcAddress_v2, &mine) && mine.dli_fname
                   ? dlopen(mine.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
                   : NULL;
  static const char *suffixes[] = {"_v4", "_v3", "_v2", ""};
  *pfn = NULL;
  for (int i = 0; i < 4 && !*pfn; i++) {
    char name[128];
    snprintf(name, sizeof name, "%s%s", symbol, suffixes[i]);
    if (!too_new(name, version)) *pfn = dlsym(self, name);
  }
  if (self) dlclose(self);
  *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
