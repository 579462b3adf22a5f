/* texref: texture and surface references of a module (CUtexref, CUsurfref; the legacy binding
 * that PyCUDA's TextureReference wraps), with one entry point per driver call. */
#include <stdio.h>
#include <stdlib.h>

#include "module.h"

/* Texture and surface references belong to their module: the driver frees them with it. */
typedef struct ref_h {
  handle_base base;
  void *handle; /* CUtexref or CUsurfref */
  module_h *module;
} ref_h;

static ctx_rec *context_of_ref(const handle_base *base) {
  return ((const ref_h *)base)->module->ctx;
}

static const handle_kind TEXREF_KIND = {.tag = {0x6364727674657872ULL, 0x5465785265663031ULL},
                                        .name = "TextureReference",
                                        .freed = "",
                                        .context = context_of_ref};
static const handle_kind SURFREF_KIND = {.tag = {0x6364727673757266ULL, 0x5375726652656631ULL},
                                         .name = "SurfaceReference",
                                         .freed = "",
                                         .context = context_of_ref};

static void ref_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  ref_h *ref = data;
  module_release(ref->module);
  free(ref);
}

/* The reference in v, or NULL after throwing (a LogicError once its module is freed). */
static ref_h *get_ref(napi_env env, napi_value v, const handle_kind *kind) {
  ref_h *ref = handle_get(env, v, kind);
  if (ref && ref->module->base.freed) {
    char message[160];
    snprintf(message, sizeof message, "the Module of this %s has been freed; load the module again",
             kind->name);
    throw_logic(env, message);
    return NULL;
  }
  return ref;
}

static napi_value wrap_ref(napi_env env, napi_value holder, void *handle, module_h *module,
                           const handle_kind *kind) {
  ref_h *ref = calloc(1, sizeof *ref);
  if (!ref) return throw_oom(env);
  ref->handle = handle;
  ref->module = module;
  module_retain(module);
  if (!handle_wrap(env, holder, &ref->base, kind, ref_finalize)) {
    module_release(module);
    free(ref);
  }
  return NULL;
}

/* moduleGetTexRef(module, name, holder) / moduleGetSurfRef: wraps the reference called name
 * around holder. */
static napi_value get_reference(napi_env env, napi_callback_info info, bool surface) {
  ARGS(env, info, 3);
  module_h *module = get_module(env, argv[0]);
  char name[4096];
  if (!module || !arg_string(env, argv[1], "name", name, sizeof name)) return NULL;
  if (surface) {
    CUsurfref surf;
    CU_CALL_ABOUT(env, ("surface reference '%s'", name), cuModuleGetSurfRef, &surf, module->handle,
                  name);
    return wrap_ref(env, argv[2], surf, module, &SURFREF_KIND);
  }
  CUtexref tex;
  CU_CALL_ABOUT(env, ("texture reference '%s'", name), cuModuleGetTexRef, &tex, module->handle,
                name);
  return wrap_ref(env, argv[2], tex, module, &TEXREF_KIND);
}

static napi_value module_get_tex_ref(napi_env env, napi_callback_info info) {
  return get_reference(env, info, false);
}

static napi_value module_get_surf_ref(napi_env env, napi_callback_info info) {
  return get_reference(env, info, true);
}

/* ---- binding ---- */

/* texrefSetAddress(tex, ptr, bytes): binds linear memory; returns the byte offset the fetches
 * must add (non-zero where ptr is not aligned enough). */
static napi_value texref_set_address(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  ref_h *tex = get_ref(env, argv[0], &TEXREF_KIND);
  CUdeviceptr ptr;
  size_t bytes, offset;
  if (!tex || !arg_ptr(env, argv[1], "ptr", &ptr) || !arg_size(env, argv[2], "bytes", &bytes))
    return NULL;
  CU_CALL(env, cuTexRefSetAddress, &offset, (CUtexref)tex->handle, ptr, bytes);
  return make_uint(env, offset);
}

/* texrefSetAddress2D(tex, ptr, pitch, width, height, format, channels). */
static napi_value texref_set_address_2d(napi_env env, napi_callback_info info) {
  ARGS(env, info, 7);
  ref_h *tex = get_ref(env, argv[0], &TEXREF_KIND);
  CUdeviceptr ptr;
  size_t pitch, width, height;
  uint32_t format, channels;
  if (!tex || !arg_ptr(env, argv[1], "ptr", &ptr) || !arg_size(env, argv[2], "pitch", &pitch) ||
      !arg_size(env, argv[3], "width", &width) || !arg_size(env, argv[4], "height", &height) ||
      !arg_uint32(env, argv[5], "format", &format) ||
      !arg_uint32(env, argv[6], "numChannels", &channels))
    return NULL;
  CUDA_ARRAY_DESCRIPTOR desc = {width, height, (CUarray_format)format, channels};
  CU_CALL(env, cuTexRefSetAddress2D, (CUtexref)tex->handle, &desc, ptr, pitch);
  return NULL;
}

/* The reference of kind in argv[0] and the CudaArray in argv[1]; false after throwing. */
static bool ref_and_array(napi_env env, const napi_value *argv, const handle_kind *kind,
                          ref_h **ref, array_h **array, uint32_t *flags) {
  return (*ref = get_ref(env, argv[0], kind)) && (*array = handle_get(env, argv[1], &ARRAY_KIND)) &&
         arg_uint32(env, argv[2], "flags", flags);
}

/* texrefSetArray(tex, array, flags): binds a CudaArray (flags: CU_TRSA_OVERRIDE_FORMAT). lib/
 * keeps the array alive while it is bound, and answers getArray() with it. */
static napi_value texref_set_array(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  ref_h *ref;
  array_h *array;
  uint32_t flags;
  if (!ref_and_array(env, argv, &TEXREF_KIND, &ref, &array, &flags)) return NULL;
  CU_CALL(env, cuTexRefSetArray, (CUtexref)ref->handle, array->handle, flags);
  return NULL;
}

/* surfrefSetArray(surf, array, flags): binds a CudaArray made for surfaces (flags 0). */
static napi_value surfref_set_array(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  ref_h *ref;
  array_h *array;
  uint32_t flags;
  if (!ref_and_array(env, argv, &SURFREF_KIND, &ref, &array, &flags)) return NULL;
  CU_CALL(env, cuSurfRefSetArray, (CUsurfref)ref->handle, array->handle, flags);
  return NULL;
}

/* ---- settings ---- */

/* The texture reference in argv[0] and count uint32 arguments after it; false after throwing. */
static bool tex_and_values(napi_env env, const napi_value *argv, size_t count, ref_h **tex,
                           uint32_t *values) {
  if (!(*tex = get_ref(env, argv[0], &TEXREF_KIND))) return false;
  for (size_t i = 0; i < count; i++)
    if (!arg_uint32(env, argv[1 + i], "value", &values[i])) return false;
  return true;
}

/* A texture has 3 dimensions, and elements of 1, 2 or 4 channels: the driver indexes by what it
 * is given. */
static bool dim_ok(napi_env env, uint32_t dim) {
  if (dim <= 2) return true;
  throw_range(env, "dim must be 0, 1 or 2");
  return false;
}

/* texrefSetFormat(tex, format, channels). */
static napi_value texref_set_format(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  ref_h *tex;
  uint32_t v[2];
  if (!tex_and_values(env, argv, 2, &tex, v)) return NULL;
  if (v[1] != 1 && v[1] != 2 && v[1] != 4) return throw_range(env, "channels must be 1, 2 or 4");
  CU_CALL(env, cuTexRefSetFormat, (CUtexref)tex->handle, (CUarray_format)v[0], (int)v[1]);
  return NULL;
}

/* texrefSetAddressMode(tex, dim, mode). */
static napi_value texref_set_address_mode(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  ref_h *tex;
  uint32_t v[2];
  if (!tex_and_values(env, argv, 2, &tex, v) || !dim_ok(env, v[0])) return NULL;
  CU_CALL(env, cuTexRefSetAddressMode, (CUtexref)tex->handle, (int)v[0], (CUaddress_mode)v[1]);
  return NULL;
}

/* texrefSetFilterMode(tex, mode). */
static napi_value texref_set_filter_mode(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  ref_h *tex;
  uint32_t v[1];
  if (!tex_and_values(env, argv, 1, &tex, v)) return NULL;
  CU_CALL(env, cuTexRefSetFilterMode, (CUtexref)tex->handle, (CUfilter_mode)v[0]);
  return NULL;
}

/* texrefSetFlags(tex, flags). */
static napi_value texref_set_flags(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  ref_h *tex;
  uint32_t v[1];
  if (!tex_and_values(env, argv, 1, &tex, v)) return NULL;
  CU_CALL(env, cuTexRefSetFlags, (CUtexref)tex->handle, v[0]);
  return NULL;
}

/* texrefGetFormat(tex): [ArrayFormat, channels]. */
static napi_value texref_get_format(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  ref_h *tex;
  if (!tex_and_values(env, argv, 0, &tex, NULL)) return NULL;
  CUarray_format format;
  int channels;
  CU_CALL(env, cuTexRefGetFormat, &format, &channels, (CUtexref)tex->handle);
  return make_pair(env, make_int(env, format), make_int(env, channels));
}

/* texrefGetAddressMode(tex, dim). */
static napi_value texref_get_address_mode(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  ref_h *tex;
  uint32_t v[1];
  if (!tex_and_values(env, argv, 1, &tex, v) || !dim_ok(env, v[0])) return NULL;
  CUaddress_mode mode;
  CU_CALL(env, cuTexRefGetAddressMode, &mode, (CUtexref)tex->handle, (int)v[0]);
  return make_int(env, mode);
}

/* texrefGetFilterMode(tex). */
static napi_value texref_get_filter_mode(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  ref_h *tex;
  if (!tex_and_values(env, argv, 0, &tex, NULL)) return NULL;
  CUfilter_mode mode;
  CU_CALL(env, cuTexRefGetFilterMode, &mode, (CUtexref)tex->handle);
  return make_int(env, mode);
}

/* texrefGetFlags(tex). */
static napi_value texref_get_flags(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  ref_h *tex;
  if (!tex_and_values(env, argv, 0, &tex, NULL)) return NULL;
  unsigned int flags;
  CU_CALL(env, cuTexRefGetFlags, &flags, (CUtexref)tex->handle);
  return make_int(env, flags);
}

/* texrefGetAddress(tex): the bound address, a bigint. */
static napi_value texref_get_address(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  ref_h *tex;
  if (!tex_and_values(env, argv, 0, &tex, NULL)) return NULL;
  CUdeviceptr ptr;
  CU_CALL(env, cuTexRefGetAddress, &ptr, (CUtexref)tex->handle);
  return make_ptr(env, ptr);
}

bool texref_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"moduleGetTexRef", module_get_tex_ref},
      {"moduleGetSurfRef", module_get_surf_ref},
      {"texrefSetAddress", texref_set_address},
      {"texrefSetAddress2D", texref_set_address_2d},
      {"texrefSetArray", texref_set_array},
      {"surfrefSetArray", surfref_set_array},
      {"texrefSetFormat", texref_set_format},
      {"texrefSetAddressMode", texref_set_address_mode},
      {"texrefSetFilterMode", texref_set_filter_mode},
      {"texrefSetFlags", texref_set_flags},
      {"texrefGetFormat", texref_get_format},
      {"texrefGetAddressMode", texref_get_address_mode},
      {"texrefGetFilterMode", texref_get_filter_mode},
      {"texrefGetFlags", texref_get_flags},
      {"texrefGetAddress", texref_get_address},
  };
  return EXPORTS(env, exports, fns);
}
