{
  "variables": {
    "cuda_include": "<!(node scripts/find-cuda.js)",
    "sanitize%": "false"
  },
  "targets": [
    {
      "target_name": "cudadrv",
      "sources": [
        "src/addon.c",
        "src/core/args.c",
        "src/core/errors.c",
        "src/core/external_buffer.c",
        "src/core/imports.c",
        "src/core/loader.c",
        "src/core/regular_files.c",
        "src/core/signals.c",
        "src/core/threads.c",
        "src/driver/constants.c",
        "src/driver/context.c",
        "src/driver/context_settings.c",
        "src/driver/device.c",
        "src/driver/event.c",
        "src/driver/green_context.c",
        "src/driver/graph.c",
        "src/driver/graph_capture.c",
        "src/driver/graph_exec.c",
        "src/driver/graph_host.c",
        "src/driver/graph_memory.c",
        "src/driver/graph_params.c",
        "src/driver/graph_nodes.c",
        "src/driver/handles.c",
        "src/driver/live_handles.c",
        "src/driver/profiler.c",
        "src/driver/stream.c",
        "src/driver/wait.c",
        "src/memory/array.c",
        "src/memory/host_memory.c",
        "src/memory/host_views.c",
        "src/memory/allocations.c",
        "src/memory/copies.c",
        "src/memory/graph_copy.c",
        "src/memory/device_memory.c",
        "src/memory/mempool.c",
        "src/memory/managed.c",
        "src/memory/virtual_memory.c",
        "src/memory/pointer_attributes.c",
        "src/memory/batch_copies.c",
        "src/memory/reaper.c",
        "src/memory/parallel_copy.c",
        "src/memory/staging.c",
        "src/memory/texobj.c",
        "src/kernel/graph_kernel.c",
        "src/kernel/launch.c",
        "src/kernel/launch_attributes.c",
        "src/kernel/occupancy.c",
        "src/kernel/tensor_map.c",
        "src/kernel/module.c",
        "src/kernel/library.c",
        "src/kernel/texref.c",
        "src/compiler/nvrtc.c",
        "src/compiler/toolkit.c",
        "src/compiler/link.c",
        "src/compiler/reads.c",
        "src/cache/digest.c",
        "src/cache/file_writer.c",
        "src/cache/files.c"
      ],
      "include_dirs": ["<(cuda_include)", "<(INTERMEDIATE_DIR)"],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE"],
      "cflags_c": ["-std=c11", "-Wall", "-Wextra", "-O2"],
      "libraries": ["-ldl", "-lpthread"],
      "conditions": [
        ["sanitize=='true'", {
          "cflags_c": ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g"],
          "ldflags": ["-fsanitize=address,undefined"]
        }]
      ],
      "actions": [
        {
          "action_name": "cuda_constants",
          "inputs": ["scripts/gen-constants.js", "scripts/cuda-header.js", "<(cuda_include)/cuda.h"],
          "outputs": ["<(INTERMEDIATE_DIR)/cuda_constants.h"],
          "action": ["node", "scripts/gen-constants.js", "<(cuda_include)", "<@(_outputs)"]
        }
      ]
    }
  ]
}
