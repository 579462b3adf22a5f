/* external_buffer: napi_create_external_arraybuffer made safe to fail (core.h says how). */
#include <stdio.h>
#include <stdlib.h>

#include "core.h"

typedef struct external_guard {
  napi_finalize finalize;
  void *hint;
  bool made;
} external_guard;

static void guarded_finalize(napi_env env, void *data, void *hint) {
  external_guard *guard = hint;
  if (guard->made) guard->finalize(env, data, guard->hint);
  free(guard);
}

bool external_arraybuffer(napi_env env, void *data, size_t size, napi_finalize finalize, void *hint,
                          napi_value *result, bool *refused) {
  *refused = false;
  external_guard *guard = malloc(sizeof *guard);
  if (!guard) {
    throw_oom(env);
    return false;
  }
  *guard = (external_guard){.finalize = finalize, .hint = hint};
  napi_status status =
      napi_create_external_arraybuffer(env, data, size, guarded_finalize, guard, result);
  if (status == napi_ok) {
    guard->made = true;
    return true;
  }
  if (status == napi_no_external_buffers_allowed) { /* refused before anything was made */
    free(guard);
    *refused = true;
    return false;
  }
  /* the guard is the finalizer's to free, if the runtime calls it. Node's own exception (a plain
   * Error, ERR_BUFFER_TOO_LARGE) becomes a RangeError that keeps its words. */
  char why[256] = "";
  napi_value error, text;
  size_t length;
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending &&
      napi_get_and_clear_last_exception(env, &error) == napi_ok &&
      napi_coerce_to_string(env, error, &text) == napi_ok &&
      napi_get_value_string_utf8(env, text, why, sizeof why, &length) != napi_ok)
    why[0] = '\0';
  char message[400];
  snprintf(message, sizeof message,
           "cannot make an ArrayBuffer of %zu bytes in this JavaScript runtime%s%s%s", size,
           *why ? " (" : "", why, *why ? ")" : "");
  throw_range(env, message);
  return false;
}
