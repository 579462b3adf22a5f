'use strict';
// What lib/driver/graph.js and lib/kernel/ share for kernel nodes of graphs: graph.addKernel()
// calls kernel[ADD_KERNEL_NODE](graph, deps, args), exec.setKernelArgs() calls
// kernel[SET_KERNEL_NODE](exec, graph, index, args); each packs the arguments as a call does.
// graph.addMemcpy(copy) calls copy[ADD_COPY_NODE](graph, deps) on a Memcpy2D or Memcpy3D, which
// returns [the node's index, what the node uses].
module.exports = {
  ADD_KERNEL_NODE: Symbol('cudadrv.addKernelNode'),
  SET_KERNEL_NODE: Symbol('cudadrv.setKernelNode'),
  ADD_COPY_NODE: Symbol('cudadrv.addCopyNode'),
};
