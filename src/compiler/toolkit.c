/* toolkit: loading a CUDA toolkit library (NVRTC, nvJitLink) at run time, never linked, and the
 * copies of JS values that its jobs take. See toolkit.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolkit.h"

/* Appends text to lib->message. */
static void note(toolkit_library *lib, const char *format, const char *a, const char *b) {
  size_t used = strlen(lib->message);
  snprintf(lib->message + used, sizeof lib->message - used, format, a, b);
}

/* Loads name (a path or a soname) into lib when it has every entry point; else notes why not. */
static bool try_load(toolkit_library *lib, const char *name, bool first) {
  const char *separator = first ? "" : "; ";
  void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    note(lib, "%s%s", separator, name);
    note(lib, " (%s)", dlerror(), "");
    return false;
  }
  void *entries[64];
  if (lib->count > sizeof entries / sizeof entries[0]) abort(); /* a table this file never had */
  for (size_t i = 0; i < lib->count; i++) {
    if (!(entries[i] = dlsym(handle, lib->symbols[i]))) {
      note(lib, "%s%s", separator, name);
      note(lib, " (lacks %s: %s)", lib->symbols[i], lib->requirement);
      dlclose(handle);
      return false;
    }
  }
  signals_keep(handle);
  if (lib->on_load) lib->on_load(handle);
  Dl_info info;
  snprintf(lib->path, sizeof lib->path, "%s",
           dladdr(entries[0], &info) && info.dli_fname ? info.dli_fname : name);
  snprintf(lib->name, sizeof lib->name, "%s", name);
  lib->adopt(entries);
  return true;
}

napi_value toolkit_throw_unloaded(napi_env env, toolkit_library *lib) {
  char message[sizeof lib->message];
  pthread_mutex_lock(&lib->lock);
  memcpy(message, lib->message, sizeof message);
  pthread_mutex_unlock(&lib->lock);
  return throw_runtime(env, CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "dlopen", message);
}

#define MAX_CANDIDATES 256

napi_value toolkit_load(napi_env env, napi_value candidates, toolkit_library *lib) {
  char **names = NULL;
  uint32_t count = 0;
  bool ok = copy_strings(env, candidates, "candidates", &names, &count);
  if (ok && count > MAX_CANDIDATES) {
    throw_range(env, "candidates has more than 256 entries");
    ok = false;
  }
  if (ok) {
    pthread_mutex_lock(&lib->lock);
    if (!atomic_load(&lib->loaded)) {
      snprintf(lib->message, sizeof lib->message, "could not load %s: tried ", lib->label);
      for (uint32_t i = 0; i < count && !atomic_load(&lib->loaded); i++) {
        if (try_load(lib, names[i], i == 0)) {
          threads_guard_exit(); /* before the library's destructors, a job in flight ends */
          atomic_store(&lib->loaded, true);
        }
      }
      if (!atomic_load(&lib->loaded)) note(lib, "%s; %s", count ? "" : "nothing", lib->advice);
    }
    pthread_mutex_unlock(&lib->lock);
  }
  free_strings(names, count);
  if (!ok) return NULL;
  return toolkit_ready(lib) ? make_string(env, lib->name) : toolkit_throw_unloaded(env, lib);
}

napi_value toolkit_path(napi_env env, toolkit_library *lib) {
  return toolkit_ready(lib) ? make_string(env, lib->path) : toolkit_throw_unloaded(env, lib);
}

/* ---- copies of JS values ---- */

char *copy_string(napi_env env, napi_value v, const char *name) {
  size_t length;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &length) != napi_ok) {
    char message[160];
    snprintf(message, sizeof message, "%s must be a string", name);
    throw_type(env, message);
    return NULL;
  }
  char *text = malloc(length + 1);
  if (!text) {
    throw_oom(env);
    return NULL;
  }
  napi_status status = napi_get_value_string_utf8(env, v, text, length + 1, &length);
  if (status != napi_ok) {
    free(text);
    napi_fail(env, status);
    return NULL;
  }
  return text;
}

bool copy_strings(napi_env env, napi_value v, const char *name, char ***out, uint32_t *count) {
  bool is_array = false;
  char message[160];
  NAPI_CALL_BOOL(env, napi_is_array(env, v, &is_array));
  if (!is_array) {
    snprintf(message, sizeof message, "%s must be an array of strings", name);
    throw_type(env, message);
    return false;
  }
  uint32_t length;
  if (napi_get_array_length(env, v, &length) != napi_ok || length > INT_MAX) {
    snprintf(message, sizeof message, "%s has too many elements", name);
    throw_range(env, message);
    return false;
  }
  *count = length;
  if (!(*out = calloc(length ? length : 1, sizeof **out))) {
    throw_oom(env);
    return false;
  }
  for (uint32_t i = 0; i < length; i++) {
    napi_value element;
    NAPI_CALL_BOOL(env, napi_get_element(env, v, i, &element));
    if (!((*out)[i] = copy_string(env, element, name))) return false;
  }
  return true;
}

void free_strings(char **strings, uint32_t count) {
  if (!strings) return;
  for (uint32_t i = 0; i < count; i++) free(strings[i]);
  free(strings);
}

napi_value make_string(napi_env env, const char *text) {
  napi_value result;
  NAPI_CALL(env, napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &result));
  return result;
}

napi_value make_int_array(napi_env env, const int *values, size_t count) {
  napi_value array;
  NAPI_CALL(env, napi_create_array_with_length(env, count, &array));
  for (size_t i = 0; i < count; i++) {
    napi_value value = make_int(env, values[i]);
    if (!value) return NULL;
    NAPI_CALL(env, napi_set_element(env, array, (uint32_t)i, value));
  }
  return array;
}

static void free_bytes(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

napi_value buffer_owning(napi_env env, void *bytes, size_t size) {
  napi_value buffer;
  /* the bytes are the buffer's from here: on a failure the runtime may still call free_bytes */
  napi_status status = napi_create_external_buffer(env, size, bytes, free_bytes, NULL, &buffer);
  if (status == napi_no_external_buffers_allowed) { /* Electron's memory cage */
    status = napi_create_buffer_copy(env, size, bytes, NULL, &buffer);
    free(bytes);
  }
  NAPI_CALL(env, status);
  return buffer;
}
