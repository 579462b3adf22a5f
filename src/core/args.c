/* args: readers for the arguments lib/ passes down. lib/ checks first and explains; these
 * checks remain because memory safety depends on them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

static napi_value throw_arg(napi_env env, bool range, const char *name, const char *what) {
  char message[256];
  snprintf(message, sizeof message, "%s must be %s", name, what);
  return range ? throw_range(env, message) : throw_type(env, message);
}

/* d, a JS number, is an integer within [lo, hi]; else a RangeError. */
static bool integer_in(napi_env env, double d, const char *name, double lo, double hi) {
  if (isfinite(d) && floor(d) == d && d >= lo && d <= hi) return true;
  throw_arg(env, true, name, "an integer in range");
  return false;
}

/* A JS number that is an integer within [lo, hi]. */
static bool arg_integer(napi_env env, napi_value v, const char *name, double lo, double hi,
                        double *out) {
  if (napi_get_value_double(env, v, out) != napi_ok) { /* one call: no napi_typeof first */
    throw_arg(env, false, name, "a number");
    return false;
  }
  return integer_in(env, *out, name, lo, hi);
}

bool arg_int32(napi_env env, napi_value v, const char *name, int32_t *out) {
  double d;
  if (!arg_integer(env, v, name, -2147483648.0, 2147483647.0, &d)) return false;
  *out = (int32_t)d;
  return true;
}

bool arg_uint32(napi_env env, napi_value v, const char *name, uint32_t *out) {
  double d;
  if (!arg_integer(env, v, name, 0, 4294967295.0, &d)) return false;
  *out = (uint32_t)d;
  return true;
}

/* A non-negative safe integer number, or a bigint from 0 to 2**64 - 1. */
static bool arg_u64(napi_env env, napi_value v, const char *name, uint64_t *out) {
  double d;
  if (napi_get_value_double(env, v, &d) == napi_ok) { /* one call for a number, two for a bigint */
    if (!integer_in(env, d, name, 0, 9007199254740991.0)) return false;
    *out = (uint64_t)d;
    return true;
  }
  bool lossless;
  int64_t low;
  if (napi_get_value_bigint_int64(env, v, &low, &lossless) != napi_ok) {
    throw_arg(env, false, name, "a number or a bigint");
    return false;
  }
  bool negative = lossless && low < 0; /* past -2**63, both conversions below are lossy */
  if (!negative) NAPI_CALL_BOOL(env, napi_get_value_bigint_uint64(env, v, out, &lossless));
  if (negative || !lossless) {
    throw_arg(env, true, name, "from 0 to 2**64 - 1");
    return false;
  }
  return true;
}

bool arg_size(napi_env env, napi_value v, const char *name, size_t *out) {
  uint64_t u;
  if (!arg_u64(env, v, name, &u)) return false;
  *out = (size_t)u;
  return true;
}

bool arg_ptr(napi_env env, napi_value v, const char *name, CUdeviceptr *out) {
  uint64_t u;
  if (!arg_u64(env, v, name, &u)) return false;
  *out = (CUdeviceptr)u;
  return true;
}

bool arg_string(napi_env env, napi_value v, const char *name, char *buf, size_t size) {
  size_t length;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &length) != napi_ok) {
    throw_arg(env, false, name, "a string");
    return false;
  }
  if (length + 1 > size) {
    throw_arg(env, true, name, "shorter");
    return false;
  }
  NAPI_CALL_BOOL(env, napi_get_value_string_utf8(env, v, buf, size, &length));
  if (strlen(buf) != length) { /* C would read only up to the NUL: a different name or path */
    throw_arg(env, false, name, "a string without NUL characters (\\0)");
    return false;
  }
  return true;
}

bool arg_bool(napi_env env, napi_value v, bool *out) {
  if (napi_get_value_bool(env, v, out) == napi_ok) return true;
  throw_type(env, "expected a boolean");
  return false;
}

napi_value make_int(napi_env env, int64_t v) {
  napi_value result;
  NAPI_CALL(env, napi_create_int64(env, v, &result));
  return result;
}

napi_value make_uint(napi_env env, uint64_t v) {
  napi_value result;
  NAPI_CALL(env, napi_create_double(env, (double)v, &result));
  return result;
}

napi_value make_ptr(napi_env env, CUdeviceptr v) {
  napi_value result;
  NAPI_CALL(env, napi_create_bigint_uint64(env, (uint64_t)v, &result));
  return result;
}

bool set_named(napi_env env, napi_value obj, const char *key, napi_value value) {
  if (!value) return false; /* making it threw */
  NAPI_CALL_BOOL(env, napi_set_named_property(env, obj, key, value));
  return true;
}

napi_value make_pair(napi_env env, napi_value a, napi_value b) {
  napi_value pair;
  if (!a || !b) return NULL;
  NAPI_CALL(env, napi_create_array_with_length(env, 2, &pair));
  NAPI_CALL(env, napi_set_element(env, pair, 0, a));
  NAPI_CALL(env, napi_set_element(env, pair, 1, b));
  return pair;
}

napi_value make_bool(napi_env env, bool v) {
  napi_value result;
  NAPI_CALL(env, napi_get_boolean(env, v, &result));
  return result;
}

napi_value make_null(napi_env env) {
  napi_value result;
  NAPI_CALL(env, napi_get_null(env, &result));
  return result;
}

napi_value make_undefined(napi_env env) {
  napi_value result;
  NAPI_CALL(env, napi_get_undefined(env, &result));
  return result;
}

bool arg_type(napi_env env, napi_value v, napi_valuetype *type) {
  NAPI_CALL_BOOL(env, napi_typeof(env, v, type));
  return true;
}

bool is_undefined(napi_env env, napi_value v) {
  napi_valuetype type;
  return napi_typeof(env, v, &type) == napi_ok && type == napi_undefined;
}

/* The bytes of one element of a TypedArray of type; 0 for a type unknown here. */
static size_t element_size(napi_typedarray_type type) {
  switch (type) {
  case napi_int8_array:
  case napi_uint8_array:
  case napi_uint8_clamped_array: return 1;
  case napi_int16_array:
  case napi_uint16_array: return 2;
  case napi_int32_array:
  case napi_uint32_array:
  case napi_float32_array: return 4;
  case napi_float64_array:
  case napi_bigint64_array:
  case napi_biguint64_array: return 8;
  default: return 0; /* Float16Array where node_api.h names it, and any later kind */
  }
}

bool arg_host(napi_env env, napi_value v, const char *name, void **data, size_t *length) {
  char message[200];
  bool is = false;
  napi_status status = napi_is_typedarray(env, v, &is);
  if (status == napi_ok && is) {
    napi_typedarray_type type;
    size_t count;
    status = napi_get_typedarray_info(env, v, &type, &count, data, NULL, NULL);
    if (status != napi_ok) return napi_fail(env, status), false;
    size_t element = element_size(type);
    if (!element) {
      snprintf(message, sizeof message,
               "%s: this kind of TypedArray (Node-API type %d) is not supported; "
               "pass a Uint8Array over its buffer",
               name, (int)type);
      return throw_type(env, message), false;
    }
    *length = count * element;
    return true;
  }
  if (status == napi_ok) status = napi_is_dataview(env, v, &is);
  if (status == napi_ok && is) {
    status = napi_get_dataview_info(env, v, length, data, NULL, NULL);
    if (status == napi_ok) return true;
  }
  if (status != napi_ok) return napi_fail(env, status), false;
  snprintf(message, sizeof message, "%s must be a TypedArray, DataView or Buffer", name);
  throw_type(env, message);
  return false;
}

bool arg_ipc_handle(napi_env env, napi_value v, char reserved[CU_IPC_HANDLE_SIZE]) {
  void *data;
  size_t length;
  if (!arg_host(env, v, "handle", &data, &length)) return false;
  if (length != CU_IPC_HANDLE_SIZE) {
    throw_range(env, "handle must be 64 bytes long");
    return false;
  }
  memcpy(reserved, data, CU_IPC_HANDLE_SIZE);
  return true;
}
