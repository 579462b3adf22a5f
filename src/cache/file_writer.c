/* file_writer: the caches' writes, atomic (a temporary file in the same directory, then rename:
 * a reader never sees half a file), either at once (writeFileAtomic) or on a background thread
 * (writeFileAtomicLater). A cold compile's cache entry is some 70 KB: the kernel's page-cache
 * write alone costs about 0.2 ms on an H100 host, 1% of a typical compile, which the caller need
 * not wait for. lib/ waits for the queue at process exit (flushWrites), and reads the failures
 * of background writes back (writeFailures) to warn about them. A failure is [errno, message]:
 * lib/ names the errno as Node's fs errors do. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"

#define PATH_LIMIT 4096
#define MESSAGE_LIMIT (PATH_LIMIT + 128)

typedef struct write_job {
  char *dir, *name;
  size_t size;
  char data[]; /* a copy: the caller's Buffer stays the caller's */
} write_job;

typedef struct write_failure {
  struct write_failure *next;
  int error; /* errno */
  char *dir, *message;
} write_failure;

/* One writer for the process, started on the first background write. */
static service writer = SERVICE(256 * 1024, NULL);
/* The failures of background writes not yet read back, newest first, under failures_lock. */
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;
static write_failure *failures;

static atomic_uint temporaries; /* numbers temporary files where no random number is had */

/* mkdir -p dir, new directories mode 0700: 0, or an errno (and a message in message). */
static int make_dirs(const char *dir, char *message) {
  char path[PATH_LIMIT];
  snprintf(path, sizeof path, "%s", dir);
  for (char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
    if (slash) *slash = '\0';
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
      int error = errno;
      snprintf(message, MESSAGE_LIMIT, "%s, mkdir '%s'", strerror(error), path);
      return error;
    }
    if (!slash) break;
    *slash = '/';
  }
  return 0;
}

/* false with errno set when not all of data could be written */
static bool write_all(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) return false;
    data += n;
    size -= (size_t)n;
  }
  return true;
}

/* Whether dir may hold the cache: a directory of this user's that no one else can write (others
 * could plant entries, which are loaded as code). 0, ENOENT where it is missing, EPERM where it
 * is not safe, or another errno; each with a message. */
static int dir_check(const char *dir, char *message) {
  struct stat st;
  char parents[MESSAGE_LIMIT - 64];
  if (stat(dir, &st) != 0) {
    int error = errno;
    if (error == ENOENT && path_problem(dir, parents, sizeof parents)) {
      snprintf(message, MESSAGE_LIMIT, "%s, above it, so another user could replace it", parents);
      return EPERM; /* not made where another user could swap it */
    }
    snprintf(message, MESSAGE_LIMIT, "%s, stat '%s'", strerror(error), dir);
    return error;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(message, MESSAGE_LIMIT, "%s, '%s'", strerror(ENOTDIR), dir);
    return ENOTDIR;
  }
  const char *problem = st.st_uid != geteuid()               ? "belongs to another user"
                        : (st.st_mode & (S_IWGRP | S_IWOTH)) ? "can be written by other users"
                                                             : NULL;
  if (problem) {
    snprintf(message, MESSAGE_LIMIT,
             "'%s' %s (owner %ld, mode %03o); it must be this user's (%ld) "
             "and writable by no one else",
             dir, problem, (long)st.st_uid, (unsigned)(st.st_mode & 0777), (long)geteuid());
    return EPERM;
  }
  /* and no directory above it may be one where another user could swap it for theirs */
  if (!path_problem(dir, parents, sizeof parents)) return 0;
  snprintf(message, MESSAGE_LIMIT, "%s, above it, so another user could replace it", parents);
  return EPERM;
}

/* A temporary file's name beside name in dir that others cannot guess: random, else pid and a
 * counter (the file is created exclusively either way). */
static int temporary_name(char *out, size_t size, const char *dir, const char *name) {
  uint64_t nonce;
  if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != (ssize_t)sizeof nonce)
    nonce = ((uint64_t)getpid() << 32) ^ atomic_fetch_add(&temporaries, 1);
  return snprintf(out, size, "%s/.%s.%016llx.tmp", dir, name, (unsigned long long)nonce);
}

/* Writes dir/name atomically, making dir (mode 0700) where it is missing: 0, or an errno with a
 * message saying what failed. */
static int write_atomic(const char *dir, const char *name, const char *data, size_t size,
                        char *message) {
  char temporary[PATH_LIMIT], target[PATH_LIMIT];
  int length = temporary_name(temporary, sizeof temporary, dir, name);
  if (length < 0 || (size_t)length >= sizeof temporary ||
      (size_t)snprintf(target, sizeof target, "%s/%s", dir, name) >= sizeof target) {
    snprintf(message, MESSAGE_LIMIT, "%s, open '%s/%s'", strerror(ENAMETOOLONG), dir, name);
    return ENAMETOOLONG;
  }
  int error = dir_check(dir, message);
  if (error == ENOENT && !(error = make_dirs(dir, message))) error = dir_check(dir, message);
  if (error) return error;
  int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = errno;
    snprintf(message, MESSAGE_LIMIT, "%s, open '%s'", strerror(error), temporary);
    return error;
  }
  const char *failed = NULL;
  if (!write_all(fd, data, size)) failed = "write", error = errno;
  if (close(fd) != 0 && !failed) failed = "close", error = errno;
  if (!failed && rename(temporary, target) != 0) failed = "rename", error = errno;
  if (!failed) return 0;
  snprintf(message, MESSAGE_LIMIT, "%s, %s '%s'", strerror(error), failed, temporary);
  unlink(temporary);
  return error;
}

/* Under failures_lock: keeps a failure for writeFailures. */
static void record_failure(const char *dir, int error, const char *message) {
  write_failure *failure = malloc(sizeof *failure);
  if (!failure) return;
  failure->error = error;
  failure->dir = strdup(dir);
  failure->message = strdup(message);
  if (!failure->dir || !failure->message) {
    free(failure->dir);
    free(failure->message);
    free(failure);
    return;
  }
  failure->next = failures;
  failures = failure;
}

static void free_job(write_job *job) {
  free(job->dir);
  free(job->name);
  free(job);
}

/* The writer's work: one write, its failure recorded. */
static void write_later(void *arg) {
  write_job *job = arg;
  char message[MESSAGE_LIMIT];
  int error = write_atomic(job->dir, job->name, job->data, job->size, message);
  if (error) {
    pthread_mutex_lock(&failures_lock);
    record_failure(job->dir, error, message);
    pthread_mutex_unlock(&failures_lock);
  }
  free_job(job);
}

/* (dir, name, data: a Buffer), as lib/ passes them; false after throwing. */
static bool read_write_args(napi_env env, napi_callback_info info, char *dir, char *name,
                            const char **data, size_t *size) {
  ARGS(env, info, 3);
  bool is_buffer = false;
  if (!arg_string(env, argv[0], "dir", dir, PATH_LIMIT) ||
      !arg_string(env, argv[1], "name", name, PATH_LIMIT))
    return false;
  if (napi_is_buffer(env, argv[2], &is_buffer) != napi_ok || !is_buffer) {
    throw_type(env, "data must be a Buffer");
    return false;
  }
  void *bytes;
  NAPI_CALL_BOOL(env, napi_get_buffer_info(env, argv[2], &bytes, size));
  *data = bytes;
  return true;
}

/* [errno, message] */
static napi_value make_failure(napi_env env, int error, const char *message) {
  napi_value text;
  NAPI_CALL(env, napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text));
  return make_pair(env, make_int(env, error), text);
}

/* writeFileAtomic(dir, name, data): null once written, else [errno, message]. */
static napi_value write_file_atomic(napi_env env, napi_callback_info info) {
  char dir[PATH_LIMIT], name[PATH_LIMIT], message[MESSAGE_LIMIT];
  const char *data;
  size_t size;
  if (!read_write_args(env, info, dir, name, &data, &size)) return NULL;
  int error = write_atomic(dir, name, data, size, message);
  if (error) return make_failure(env, error, message);
  napi_value null;
  NAPI_CALL(env, napi_get_null(env, &null));
  return null;
}

/* writeFileAtomicLater(dir, name, data): queues a copy of data for the background writer. */
static napi_value write_file_atomic_later(napi_env env, napi_callback_info info) {
  char dir[PATH_LIMIT], name[PATH_LIMIT];
  const char *data;
  size_t size;
  if (!read_write_args(env, info, dir, name, &data, &size)) return NULL;
  write_job *job = malloc(sizeof *job + size);
  if (!job || !(job->dir = strdup(dir)) || !(job->name = strdup(name))) {
    if (job) free(job->dir);
    free(job);
    return throw_oom(env);
  }
  memcpy(job->data, data, size);
  job->size = size;
  if (!service_post(&writer, write_later, job)) write_later(job); /* no thread to be had: now */
  return make_undefined(env);
}

/* flushWrites(): returns once every queued write is done. */
static napi_value flush_writes(napi_env env, napi_callback_info info) {
  (void)info;
  service_until_idle(&writer);
  return make_undefined(env);
}

/* cacheDirProblem(dir): [EPERM, message] where dir is not safe to hold the cache, else null (a
 * missing one is made 0700 by the first write, which reports any other failure itself). */
static napi_value cache_dir_problem(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  char dir[PATH_LIMIT], message[MESSAGE_LIMIT];
  if (!arg_string(env, argv[0], "dir", dir, PATH_LIMIT)) return NULL;
  int error = dir_check(dir, message);
  if (error == EPERM) return make_failure(env, error, message);
  napi_value null;
  NAPI_CALL(env, napi_get_null(env, &null));
  return null;
}

/* [dir, errno, message] */
static napi_value make_dir_failure(napi_env env, const write_failure *f) {
  napi_value entry, dir, failure = make_failure(env, f->error, f->message);
  if (!failure) return NULL;
  NAPI_CALL(env, napi_create_string_utf8(env, f->dir, NAPI_AUTO_LENGTH, &dir));
  NAPI_CALL(env, napi_create_array_with_length(env, 2, &entry));
  NAPI_CALL(env, napi_set_element(env, entry, 0, dir));
  NAPI_CALL(env, napi_set_element(env, entry, 1, failure));
  return entry;
}

/* writeFailures(): [[dir, [errno, message]], ...] of the background writes that failed since the
 * last call, newest first. */
static napi_value write_failures(napi_env env, napi_callback_info info) {
  (void)info;
  pthread_mutex_lock(&failures_lock);
  write_failure *taken = failures;
  failures = NULL;
  pthread_mutex_unlock(&failures_lock);
  napi_value result = NULL, entry;
  napi_status status = napi_create_array(env, &result);
  bool ok = status == napi_ok;
  uint32_t i = 0;
  for (write_failure *f = taken; f && ok; f = f->next)
    ok = (entry = make_dir_failure(env, f)) &&
         (status = napi_set_element(env, result, i++, entry)) == napi_ok;
  while (taken) {
    write_failure *next = taken->next;
    free(taken->dir);
    free(taken->message);
    free(taken);
    taken = next;
  }
  if (status != napi_ok) return napi_fail(env, status);
  return ok ? result : NULL; /* else make_dir_failure threw */
}

bool file_writer_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"writeFileAtomic", write_file_atomic}, {"writeFileAtomicLater", write_file_atomic_later},
      {"flushWrites", flush_writes},          {"writeFailures", write_failures},
      {"cacheDirProblem", cache_dir_problem},
  };
  return EXPORTS(env, exports, fns);
}
