/* occupancy: what the driver computes of a kernel's occupancy: active blocks per multiprocessor,
 * the block size that maximizes it, the dynamic shared memory that still lets blocks fit, and for
 * clusters (compute capability 9.0+) the active clusters and the largest cluster size. */
#include <math.h>
#include <string.h>

#include "launcher.h"

/* occupancyMaxActiveBlocks(kernel, blockSize, dynamicSmem, flags). */
static napi_value occupancy_max_active_blocks(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  func_h *fn = func_get(env, argv[0]);
  int32_t block_size;
  size_t smem;
  uint32_t flags;
  if (!fn || !arg_int32(env, argv[1], "blockSize", &block_size) ||
      !arg_size(env, argv[2], "dynamicSmem", &smem) || !arg_uint32(env, argv[3], "flags", &flags))
    return NULL;
  int blocks;
  CU_CALL(env, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, &blocks, fn->handle,
          block_size, smem, flags);
  return make_int(env, blocks);
}

/* The JS function that gives dynamic shared memory per block size, during one occupancy call on
 * this thread (the driver calls back synchronously and passes no user data). */
typedef struct smem_fn {
  napi_env env;
  napi_value fn;
  bool failed;
} smem_fn;
static _Thread_local smem_fn smem_callback;

static size_t CUDA_CB smem_for_block_size(int block_size) {
  napi_env env = smem_callback.env;
  napi_value global, arg, result;
  double bytes;
  if (smem_callback.failed) return 0;
  napi_status status = napi_get_global(env, &global);
  if (status == napi_ok) status = napi_create_int32(env, block_size, &arg);
  if (status == napi_ok)
    status = napi_call_function(env, global, smem_callback.fn, 1, &arg, &result);
  if (status != napi_ok) {
    smem_callback.failed = true;
    napi_fail(env, status); /* where the function threw, that stays the exception */
    return 0;
  }
  if (napi_get_value_double(env, result, &bytes) != napi_ok || !isfinite(bytes) || bytes < 0 ||
      floor(bytes) != bytes) {
    smem_callback.failed = true;
    throw_type(env, "dynamicSmem(blockSize) must return a non-negative integer number of bytes");
    return 0;
  }
  return (size_t)bytes;
}

/* occupancyMaxPotentialBlockSize(kernel, dynamicSmem (bytes, or a function of the block size),
 * blockSizeLimit, flags): [minGridSize, blockSize]. */
static napi_value occupancy_max_potential_block_size(napi_env env, napi_callback_info info) {
  ARGS(env, info, 4);
  func_h *fn = func_get(env, argv[0]);
  napi_valuetype type;
  size_t smem = 0;
  int32_t limit;
  uint32_t flags;
  if (!fn || !arg_type(env, argv[1], &type) ||
      (type != napi_function && !arg_size(env, argv[1], "dynamicSmem", &smem)) ||
      !arg_int32(env, argv[2], "blockSizeLimit", &limit) ||
      !arg_uint32(env, argv[3], "flags", &flags))
    return NULL;
  smem_fn outer = smem_callback; /* the callback may itself ask for occupancy */
  smem_callback = (smem_fn){env, argv[1], false};
  int min_grid, block_size;
  CUresult status =
      DRV(cuOccupancyMaxPotentialBlockSizeWithFlags, &min_grid, &block_size, fn->handle,
          type == napi_function ? smem_for_block_size : NULL, smem, limit, flags);
  bool failed = smem_callback.failed;
  smem_callback = outer;
  if (failed) return NULL;
  if (status != CUDA_SUCCESS)
    return throw_cu(env, status, "cuOccupancyMaxPotentialBlockSizeWithFlags");
  return make_pair(env, make_int(env, min_grid), make_int(env, block_size));
}

/* The launch configuration lib/ passes as a Uint32Array of OCC_CONFIG_WORDS (grid x y z, block x y
 * z, shared bytes, cluster x y z; a cluster of 0 0 0: none), into config and its one attribute;
 * false after throwing. */
enum { OCC_CONFIG_WORDS = 10 };
static bool arg_occupancy_config(napi_env env, napi_value v, CUlaunchConfig *config,
                                 CUlaunchAttribute *cluster) {
  napi_typedarray_type type;
  size_t length;
  void *data;
  bool is_typed;
  NAPI_CALL_BOOL(env, napi_is_typedarray(env, v, &is_typed));
  if (is_typed)
    NAPI_CALL_BOOL(env, napi_get_typedarray_info(env, v, &type, &length, &data, NULL, NULL));
  if (!is_typed || type != napi_uint32_array || length != OCC_CONFIG_WORDS) {
    throw_type(env, "expected a Uint32Array of the 10 words of a launch configuration");
    return false;
  }
  const uint32_t *w = data;
  for (int i = 0; i < 6; i++)
    if (!w[i]) return throw_range(env, "grid and block dimensions must be at least 1"), false;
  memset(cluster, 0, sizeof *cluster);
  cluster->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster->value.clusterDim.x = w[7];
  cluster->value.clusterDim.y = w[8];
  cluster->value.clusterDim.z = w[9];
  bool has_cluster = w[7] || w[8] || w[9];
  *config = (CUlaunchConfig){w[0],
                             w[1],
                             w[2],
                             w[3],
                             w[4],
                             w[5],
                             w[6],
                             NULL,
                             has_cluster ? cluster : NULL,
                             has_cluster ? 1 : 0};
  return true;
}

/* occupancyMaxActiveClusters(kernel, config): clusters that can be resident on the device at once
 * (cuOccupancyMaxActiveClusters). occupancyMaxPotentialClusterSize(kernel, config): the largest
 * cluster size the kernel can launch with (cuOccupancyMaxPotentialClusterSize). */
static napi_value occupancy_clusters(napi_env env, napi_callback_info info, bool active) {
  ARGS(env, info, 2);
  func_h *fn = func_get(env, argv[0]);
  CUlaunchConfig config;
  CUlaunchAttribute cluster;
  if (!fn || !arg_occupancy_config(env, argv[1], &config, &cluster)) return NULL;
  int value;
  if (active)
    CU_CALL(env, cuOccupancyMaxActiveClusters, &value, fn->handle, &config);
  else
    CU_CALL(env, cuOccupancyMaxPotentialClusterSize, &value, fn->handle, &config);
  return make_int(env, value);
}
static napi_value occupancy_max_active_clusters(napi_env env, napi_callback_info info) {
  return occupancy_clusters(env, info, true);
}
static napi_value occupancy_max_potential_cluster_size(napi_env env, napi_callback_info info) {
  return occupancy_clusters(env, info, false);
}

/* occupancyAvailableDynamicSmem(kernel, numBlocks, blockSize): the dynamic shared memory each block
 * may use for numBlocks blocks of blockSize threads to fit on one multiprocessor. */
static napi_value occupancy_available_dynamic_smem(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  func_h *fn = func_get(env, argv[0]);
  int32_t blocks, block_size;
  if (!fn || !arg_int32(env, argv[1], "numBlocks", &blocks) ||
      !arg_int32(env, argv[2], "blockSize", &block_size))
    return NULL;
  size_t bytes;
  CU_CALL(env, cuOccupancyAvailableDynamicSMemPerBlock, &bytes, fn->handle, blocks, block_size);
  return make_uint(env, bytes);
}

bool occupancy_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"occupancyMaxActiveBlocks", occupancy_max_active_blocks},
      {"occupancyMaxPotentialBlockSize", occupancy_max_potential_block_size},
      {"occupancyMaxActiveClusters", occupancy_max_active_clusters},
      {"occupancyMaxPotentialClusterSize", occupancy_max_potential_cluster_size},
      {"occupancyAvailableDynamicSmem", occupancy_available_dynamic_smem},
  };
  return EXPORTS(env, exports, fns);
}
