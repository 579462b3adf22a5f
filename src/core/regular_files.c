/* regular_files: reading a file that must be a regular one, without waiting: a FIFO or a device
 * put where a file was expected is refused at once, never waited on (the compile cache's reads,
 * module and library files, the driver's DOT output). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

napi_status read_whole(napi_env env, int fd, size_t size, napi_value *result) {
  void *data;
  napi_status status = napi_create_buffer(env, size, &data, result);
  if (status != napi_ok) return status;
  size_t done = 0;
  while (done < size) {
    ssize_t n = read(fd, (char *)data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  char extra;
  if (done != size || read(fd, &extra, 1) != 0) *result = NULL;
  return napi_ok;
}

int open_regular(const char *path, bool follow, size_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) return OPEN_NOTHING;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    *size = (size_t)st.st_size;
    return fd;
  }
  close(fd);
  return OPEN_NOT_REGULAR;
}
