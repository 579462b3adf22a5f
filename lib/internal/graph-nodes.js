'use strict';
// What lib/driver/graph.js and lib/kernel/ share to add a kernel node to a graph: graph.addKernel()
// calls kernel[ADD_KERNEL_NODE](graph, deps, args), which packs the arguments as a call does.
module.exports = { ADD_KERNEL_NODE: Symbol('cudadrv.addKernelNode') };
