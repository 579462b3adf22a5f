/* files: the compile cache's reads, in one call each. A cache hit in a new process reads an entry,
 * a record and the state of a few files; through Node's fs each of those first calls costs a few
 * hundred microseconds of JS set-up (option parsing, validators, Stats objects), a third of the
 * 2 ms a whole hit may take. (Writes are in file_writer.c.) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"

#define PATH_LIMIT 4096

/* A path argument; one that no file can have (too long, or holding a NUL) becomes "", which
 * names nothing. */
static bool arg_path(napi_env env, napi_value v, char *path) {
  size_t length;
  if (napi_get_value_string_utf8(env, v, path, PATH_LIMIT, &length) != napi_ok) {
    throw_type(env, "expected a path (a string)");
    return false;
  }
  if (length >= PATH_LIMIT - 1 || strlen(path) != length) path[0] = '\0';
  return true;
}

/* readFile(path, followLink, limit): the file's bytes in a Buffer, or null where it cannot be
 * read whole (absent, unreadable, not a regular file, changing size; a symbolic link unless
 * followLink). A file of more than limit bytes is a RangeError naming both, read no further.
 * Never blocks: a FIFO put where a file was expected is opened without waiting for a writer. */
static napi_value files_read(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  char path[PATH_LIMIT];
  bool follow = false;
  double limit = 0;
  if (!arg_path(env, argv[0], path)) return NULL;
  if (napi_get_value_bool(env, argv[1], &follow) != napi_ok) follow = false; /* not true: false */
  if (napi_get_value_double(env, argv[2], &limit) != napi_ok || !(limit >= 0))
    return throw_type(env, "readFile needs a limit (a number of bytes)");
  napi_value result = NULL;
  size_t size;
  int fd = open_regular(path, follow, &size);
  if (fd >= 0 && (double)size > limit) {
    close(fd);
    char message[PATH_LIMIT + 128];
    snprintf(message, sizeof message, "%s is %zu bytes, more than the %.0f cudadrv reads of it",
             path, size, limit);
    return throw_range(env, message);
  }
  if (fd >= 0) {
    napi_status status = read_whole(env, fd, size, &result);
    close(fd);
    if (status != napi_ok) return napi_fail(env, status);
  }
  if (result) return result;
  NAPI_CALL(env, napi_get_null(env, &result));
  return result;
}

const char *path_problem(const char *path, char *message, size_t size) {
  char prefix[PATH_LIMIT];
  size_t length = strlen(path);
  if (path[0] != '/' || length >= sizeof prefix) {
    snprintf(message, size, "'%s' is not an absolute path", path);
    return message;
  }
  memcpy(prefix, path, length + 1);
  /* path itself, then each directory above it, up to / */
  for (;;) {
    struct stat st;
    if (stat(prefix, &st) == 0) {
      bool owner_ok = st.st_uid == 0 || st.st_uid == geteuid();
      bool others_write = st.st_mode & (S_IWGRP | S_IWOTH);
      if (!owner_ok || (others_write && !(S_ISDIR(st.st_mode) && st.st_mode & S_ISVTX))) {
        snprintf(message, size, "'%s' %s (owner %ld, mode %04o)", prefix,
                 owner_ok ? "can be written by other users" : "belongs to another user",
                 (long)st.st_uid, (unsigned)(st.st_mode & 07777));
        return message;
      }
    }
    char *slash = strrchr(prefix, '/');
    if (slash == prefix) {
      if (prefix[1] == '\0') return NULL;
      prefix[1] = '\0';
    } else {
      *slash = '\0';
    }
  }
}

/* pathProblem(path): why another user could replace what path names (path_problem), or null. */
static napi_value files_path_problem(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  char path[PATH_LIMIT], message[PATH_LIMIT + 128];
  if (!arg_path(env, argv[0], path)) return NULL;
  if (!path[0]) snprintf(path, sizeof path, "(no path)");
  const char *problem = path_problem(path, message, sizeof message);
  napi_value result;
  if (problem)
    NAPI_CALL(env, napi_create_string_utf8(env, problem, NAPI_AUTO_LENGTH, &result));
  else
    NAPI_CALL(env, napi_get_null(env, &result));
  return result;
}

static double milliseconds(struct timespec t) {
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6; /* as Node's Stats.mtimeMs */
}

/* stat(path): [dev, ino, mode, size, mtimeMs, ctimeMs] as Node's fs.statSync gives them, or null
 * where there is nothing (or nothing that can be looked at). */
static napi_value files_stat(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  char path[PATH_LIMIT];
  if (!arg_path(env, argv[0], path)) return NULL;
  napi_value result;
  struct stat st;
  if (stat(path, &st) != 0) {
    NAPI_CALL(env, napi_get_null(env, &result));
    return result;
  }
  const double fields[] = {(double)st.st_dev,  (double)st.st_ino,        (double)st.st_mode,
                           (double)st.st_size, milliseconds(st.st_mtim), milliseconds(st.st_ctim)};
  NAPI_CALL(env, napi_create_array_with_length(env, 6, &result));
  for (uint32_t i = 0; i < 6; i++) {
    napi_value value;
    NAPI_CALL(env, napi_create_double(env, fields[i], &value));
    NAPI_CALL(env, napi_set_element(env, result, i, value));
  }
  return result;
}

bool files_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"readFile", files_read},
      {"stat", files_stat},
      {"pathProblem", files_path_problem},
  };
  return EXPORTS(env, exports, fns);
}
