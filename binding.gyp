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
        "src/loader.c",
        "src/errors.c",
        "src/handles.c",
        "src/args.c",
        "src/wait.c",
        "src/threads.c",
        "src/constants.c",
        "src/device.c",
        "src/context.c",
        "src/stream.c",
        "src/event.c",
        "src/profiler.c",
        "src/memory.c",
        "src/host_memory.c",
        "src/module.c",
        "src/launch.c",
        "src/graph.c",
        "src/nvrtc.c",
        "src/digest.c",
        "src/files.c",
        "src/file_writer.c",
        "src/array.c",
        "src/texobj.c"
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
