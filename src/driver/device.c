/* device: CUdevice is a plain ordinal; lib/ wraps it in Device. */
#include <string.h>

#include "driver.h"

static bool arg_device(napi_env env, napi_value v, CUdevice *out) {
  int32_t ordinal;
  if (!arg_int32(env, v, "device", &ordinal) || !driver_ready(env)) return false;
  *out = (CUdevice)ordinal;
  return true;
}

/* deviceGet(ordinal): the CUdevice for an ordinal (RangeError-worthy ordinals are the driver's). */
static napi_value device_get(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  int32_t ordinal;
  if (!arg_int32(env, argv[0], "ordinal", &ordinal) || !driver_ready(env)) return NULL;
  CUdevice device;
  CU_CALL(env, cuDeviceGet, &device, ordinal);
  return make_int(env, device);
}

static napi_value device_get_count(napi_env env, napi_callback_info info) {
  (void)info;
  if (!driver_ready(env)) return NULL;
  int count;
  CU_CALL(env, cuDeviceGetCount, &count);
  return make_int(env, count);
}

static napi_value device_get_name(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUdevice device;
  if (!arg_device(env, argv[0], &device)) return NULL;
  char name[256];
  CU_CALL(env, cuDeviceGetName, name, sizeof name, device);
  napi_value result;
  NAPI_CALL(env, napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &result));
  return result;
}

static napi_value device_get_attribute(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  CUdevice device;
  uint32_t attribute;
  if (!arg_uint32(env, argv[0], "attribute", &attribute) || !arg_device(env, argv[1], &device))
    return NULL;
  int value;
  CU_CALL(env, cuDeviceGetAttribute, &value, (CUdevice_attribute)attribute, device);
  return make_int(env, value);
}

static napi_value device_total_mem(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUdevice device;
  if (!arg_device(env, argv[0], &device)) return NULL;
  size_t bytes;
  CU_CALL(env, cuDeviceTotalMem, &bytes, device);
  return make_uint(env, bytes);
}

static napi_value device_get_pci_bus_id(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUdevice device;
  if (!arg_device(env, argv[0], &device)) return NULL;
  char id[64];
  CU_CALL(env, cuDeviceGetPCIBusId, id, sizeof id, device);
  napi_value result;
  NAPI_CALL(env, napi_create_string_utf8(env, id, NAPI_AUTO_LENGTH, &result));
  return result;
}

static napi_value device_get_by_pci_bus_id(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  char id[64];
  if (!arg_string(env, argv[0], "pciBusId", id, sizeof id) || !driver_ready(env)) return NULL;
  CUdevice device;
  CU_CALL(env, cuDeviceGetByPCIBusId, &device, id);
  return make_int(env, device);
}

static napi_value device_can_access_peer(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  CUdevice device, peer;
  if (!arg_device(env, argv[0], &device) || !arg_device(env, argv[1], &peer)) return NULL;
  int can;
  CU_CALL(env, cuDeviceCanAccessPeer, &can, device, peer);
  return make_bool(env, can != 0);
}

/* deviceGetUuid(device): the 16 bytes as a Buffer. */
static napi_value device_get_uuid(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUdevice device;
  if (!arg_device(env, argv[0], &device)) return NULL;
  CUuuid uuid;
  CU_CALL(env, cuDeviceGetUuid, &uuid, device);
  napi_value result;
  NAPI_CALL(env, napi_create_buffer_copy(env, sizeof uuid.bytes, uuid.bytes, NULL, &result));
  return result;
}

/* The device v and its primary context's flags and state; false after throwing. */
static bool primary_state(napi_env env, napi_value v, CUdevice *device, unsigned int *flags,
                          int *active) {
  if (!arg_device(env, v, device)) return false;
  CUresult result = DRV(cuDevicePrimaryCtxGetState, *device, flags, active);
  if (result != CUDA_SUCCESS) throw_cu(env, result, "cuDevicePrimaryCtxGetState");
  return result == CUDA_SUCCESS;
}

/* devicePrimaryCtxGetState(device): { flags, active }. */
static napi_value device_primary_ctx_get_state(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUdevice device;
  unsigned int flags;
  int active;
  if (!primary_state(env, argv[0], &device, &flags, &active)) return NULL;
  napi_value result;
  NAPI_CALL(env, napi_create_object(env, &result));
  NAPI_CALL(env, napi_set_named_property(env, result, "flags", make_int(env, flags)));
  NAPI_CALL(env, napi_set_named_property(env, result, "active", make_bool(env, active != 0)));
  return result;
}

/* deviceGetP2PAttribute(device, peer, attribute): cuDeviceGetP2PAttribute's value. */
static napi_value device_get_p2p_attribute(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  CUdevice device, peer;
  uint32_t attribute;
  if (!arg_device(env, argv[0], &device) || !arg_device(env, argv[1], &peer) ||
      !arg_uint32(env, argv[2], "attribute", &attribute))
    return NULL;
  int value;
  CU_CALL(env, cuDeviceGetP2PAttribute, &value, (CUdevice_P2PAttribute)attribute, device, peer);
  return make_int(env, value);
}

/* devicePrimaryCtxSetFlags(device, flags): the flags the primary context is made with, or has. */
static napi_value device_primary_ctx_set_flags(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  CUdevice device;
  uint32_t flags;
  if (!arg_device(env, argv[0], &device) || !arg_uint32(env, argv[1], "flags", &flags)) return NULL;
  CU_CALL(env, cuDevicePrimaryCtxSetFlags, device, flags);
  return NULL;
}

/* devicePrimaryCtxReset(device): destroys the primary context's memory and state. Refused while
 * cudadrv uses it (primary_in_use): cudadrv would free addresses the driver hands out again. */
static napi_value device_primary_ctx_reset(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  CUdevice device;
  unsigned int flags;
  int active;
  if (!primary_state(env, argv[0], &device, &flags, &active)) return NULL;
  if (active) {
    CUcontext primary; /* active: retaining it makes nothing */
    CU_CALL(env, cuDevicePrimaryCtxRetain, &primary, device);
    DRV(cuDevicePrimaryCtxRelease, device);
    if (primary_in_use(primary, device))
      return throw_logic(env, "resetPrimaryContext(): cudadrv still uses this device's primary "
                              "context (a Context on it, a green context of the device, or what "
                              "was made in them); detach() them and drop what was made in them "
                              "first");
  }
  CU_CALL(env, cuDevicePrimaryCtxReset, device);
  return NULL;
}

bool device_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"deviceGet", device_get},
      {"deviceGetCount", device_get_count},
      {"deviceGetName", device_get_name},
      {"deviceGetAttribute", device_get_attribute},
      {"deviceTotalMem", device_total_mem},
      {"deviceGetPCIBusId", device_get_pci_bus_id},
      {"deviceGetByPCIBusId", device_get_by_pci_bus_id},
      {"deviceCanAccessPeer", device_can_access_peer},
      {"deviceGetUuid", device_get_uuid},
      {"devicePrimaryCtxGetState", device_primary_ctx_get_state},
      {"deviceGetP2PAttribute", device_get_p2p_attribute},
      {"devicePrimaryCtxSetFlags", device_primary_ctx_set_flags},
      {"devicePrimaryCtxReset", device_primary_ctx_reset},
  };
  return EXPORTS(env, exports, fns);
}
