/* addon: the module's entry point, above every layer (core, driver, cache, memory, kernel,
 * compiler). Every family registers its functions into one exports object;
 * all state lives in the instance data, so the addon loads in worker_threads and unloads cleanly.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "compiler/toolkit.h"

addon_state *state_of(napi_env env) {
  addon_state *state = NULL;
  if (napi_get_instance_data(env, (void **)&state) != napi_ok) return NULL;
  return state;
}

static void state_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  addon_state *state = data;
  if (state->error_factory) NAPI_UNTHROWN(napi_delete_reference(env, state->error_factory));
  if (state->last_stream) NAPI_UNTHROWN(napi_delete_reference(env, state->last_stream));
  free(state);
}

typedef bool (*family_init)(napi_env env, napi_value exports);

/* Keeps the addon mapped for the process's life. Node unloads an addon (dlclose) when the last
 * worker that loaded it ends, while the addon's threads (a compile, a link, a wait, the reaper)
 * still run its code, and dlclose would run its exit handler under the loader lock, waiting for a
 * thread that needs that lock. Once loaded, it stays, as the driver and NVRTC do. */
static void pin_addon(void) {
  Dl_info info;
  if (dladdr((void *)pin_addon, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

NAPI_MODULE_INIT() {
  addon_state *state = calloc(1, sizeof *state);
  if (!state) return throw_oom(env);
  napi_status status = napi_set_instance_data(env, state, state_finalize, NULL);
  if (status != napi_ok) {
    free(state);
    return napi_fail(env, status);
  }
  static pthread_once_t pinned = PTHREAD_ONCE_INIT, guarded = PTHREAD_ONCE_INIT;
  pthread_once(&pinned, pin_addon);
  pthread_once(&guarded, threads_guard_exit); /* the cache writer needs no library loaded */
  static const family_init families[] = {
      errors_init,
      handles_init,
      threads_init,
      wait_init,
      constants_init,
      device_init,
      context_init,
      context_settings_init,
      stream_init,
      event_init,
      green_context_init,
      profiler_init,
      graph_init,
      graph_nodes_init,
      graph_host_init,
      graph_memory_init,
      graph_params_init,
      graph_exec_init,
      graph_capture_init,
      allocations_init,
      device_memory_init,
      copies_init,
      graph_copy_init,
      mempool_init,
      managed_init,
      virtual_memory_init,
      pointer_attributes_init,
      batch_copies_init,
      host_memory_init,
      array_init,
      texobj_init,
      module_init,
      texref_init,
      launch_init,
      occupancy_init,
      tensor_map_init,
      nvrtc_init,
      link_init,
      library_init,
      digest_init,
      files_init,
      file_writer_init,
      staging_init,
  };
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (!families[i](env, exports)) return NULL;
  return exports;
}
