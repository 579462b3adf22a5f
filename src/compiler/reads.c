/* reads: what NVRTC reads of the file system, guarded and recorded.
 *
 * NVRTC opens the files a source includes itself, with open() and fopen(), wherever the
 * preprocessor's search (and macros: #include H) leads: a FIFO there blocked the compile for ever,
 * /dev/zero read without end, and the cache could not know which files a computed include read.
 * So NVRTC's imports of open, fopen and fopen64 are bound (imports.c) to functions that open a
 * file for reading without waiting (O_NONBLOCK), admit only a regular file of at most
 * READS_LIMIT bytes, and, on a thread inside reads_begin/reads_end, add its name to the thread's
 * log: the files NVRTC read, which the compile's outcome reports. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toolkit.h"

static _Thread_local reads_log *current;

void reads_begin(reads_log *log) { current = log; }
void reads_end(void) { current = NULL; }

void reads_free(reads_log *log) {
  free_strings(log->files, log->count);
  free(log->refused);
  *log = (reads_log){0};
}

static void note_file(const char *path) {
  reads_log *log = current;
  if (!log) return;
  for (uint32_t i = 0; i < log->count; i++)
    if (strcmp(log->files[i], path) == 0) return;
  if (log->count == log->capacity) {
    uint32_t capacity = log->capacity ? 2 * log->capacity : 16;
    char **files = realloc(log->files, capacity * sizeof *files);
    if (!files) return;
    log->files = files;
    log->capacity = capacity;
  }
  if ((log->files[log->count] = strdup(path))) log->count++;
}

static void note_refusal(const char *path, const char *why) {
  reads_log *log = current;
  if (!log || log->refused) return;
  size_t size = strlen(path) + strlen(why) + 3;
  if ((log->refused = malloc(size))) snprintf(log->refused, size, "%s: %s", path, why);
}

static const char *kind_of(mode_t mode) {
  return S_ISFIFO(mode)   ? "a FIFO"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISSOCK(mode) ? "a socket"
                          : "not a regular file";
}

/* Opens path for reading as NVRTC asked (flags), admitting only a regular file within the limit;
 * -1 with errno set otherwise. */
static int open_admitted(const char *path, int flags) {
  int fd = open(path, flags | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st;
  const char *refusal = NULL;
  char too_large[64];
  if (fstat(fd, &st) != 0)
    refusal = "it cannot be looked at";
  else if (S_ISDIR(st.st_mode))
    refusal = NULL; /* the front end opens directories it searches */
  else if (!S_ISREG(st.st_mode))
    refusal = kind_of(st.st_mode);
  else if ((uint64_t)st.st_size > READS_LIMIT) {
    snprintf(too_large, sizeof too_large, "it is %lld bytes, more than the %llu read of it",
             (long long)st.st_size, (unsigned long long)READS_LIMIT);
    refusal = too_large;
  }
  if (refusal) {
    note_refusal(path, refusal);
    close(fd);
    errno = EACCES;
    return -1;
  }
  if (!(flags & O_NONBLOCK)) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (S_ISREG(st.st_mode)) note_file(path);
  return fd;
}

static int guarded_open(const char *path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list args;
    va_start(args, flags);
    mode = (mode_t)va_arg(args, int);
    va_end(args);
  }
  if ((flags & O_ACCMODE) != O_RDONLY || flags & (O_CREAT | O_TMPFILE))
    return open(path, flags, mode);
  return open_admitted(path, flags);
}

static FILE *guarded_fopen(const char *path, const char *mode) {
  if (mode[0] != 'r' || strchr(mode, '+')) return fopen(path, mode);
  int fd = open_admitted(path, O_RDONLY | (strchr(mode, 'e') ? O_CLOEXEC : 0));
  if (fd < 0) return NULL;
  FILE *file = fdopen(fd, mode);
  if (!file) close(fd);
  return file;
}

static const import_binding GUARDED[] = {
    {"open", (void *)guarded_open},
    {"open64", (void *)guarded_open},
    {"fopen", (void *)guarded_fopen},
    {"fopen64", (void *)guarded_fopen},
};

void reads_guard(void *handle) {
  imports_rebind(handle, GUARDED, sizeof GUARDED / sizeof GUARDED[0]);
}
