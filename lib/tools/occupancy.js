'use strict';
// DeviceData and OccupancyRecord (PyCUDA's), computed from the device's own attributes.
//
// Where the driver reports no attribute, the rules come from NVIDIA's occupancy calculator,
// cuda_occupancy.h of the CUDA 13.0 toolkit (include/cuda_occupancy.h): shared memory is allocated
// in units of 256 bytes up to compute capability 7.x and 128 bytes from 8.0
// (cudaOccSMemAllocationGranularity); registers in units of 256 per warp
// (cudaOccRegAllocationGranularity); at most 255 registers per thread up to 6.x and 256 from 7.0
// (cudaOccRegAllocationMaxPerThread); register files in 4 sub-partitions, 2 on sm_60
// (cudaOccSubPartitionsPerMultiprocessor). OccupancyRecord follows cudaOccMaxActiveBlocksPerMultiprocessor
// with the default cache/carveout preference, as cuOccupancyMaxActiveBlocksPerMultiprocessor does.
// For clusters, only what follows from the blocks per multiprocessor: how many GPCs hold a cluster
// and how many are active the driver knows (kernel.maxActiveClusters()).
const { Device } = require('../driver/device');
const { DeviceAttribute } = require('../driver/constants');
const check = require('../internal/checks');

function attributeReader(source) {
  if (source instanceof Device) return (name) => source.getAttribute(DeviceAttribute[name]);
  if (source !== null && typeof source === 'object') {
    return (name, fallback) => {
      const value = source[name];
      if (value === undefined && fallback !== undefined) return fallback;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
        throw new TypeError(
          `DeviceData: attributes.${name} must be a non-negative integer (the value of ` +
            `DeviceAttribute.${name}, as dev.getAttributes() gives it), not ${check.describe(value)}`,
        );
      }
      return value;
    };
  }
  throw new TypeError(
    'DeviceData needs a Device, an object of attributes keyed by DeviceAttribute name ' +
      `(dev.getAttributes()), or nothing for the current context's device, not ${check.describe(source)}`,
  );
}

function ceilDiv(a, b) {
  return Math.ceil(a / b);
}

function roundUp(a, b) {
  return ceilDiv(a, b) * b;
}

// Blocks in a cluster: portable on every device that launches clusters, and the most any allows.
const PORTABLE_CLUSTER = 8;
const MOST_CLUSTER = 16;

const ALIGN_BYTES = new Map([
  [4, 64],
  [8, 128],
  [16, 128],
]);

/**
 * What occupancy depends on, for one device (PyCUDA's DeviceData). `new DeviceData(dev)` reads the
 * device's attributes; `new DeviceData(attributes)` takes them from an object keyed by
 * DeviceAttribute name (as `dev.getAttributes()` returns); `new DeviceData()` uses the current
 * context's device.
 */
class DeviceData {
  constructor(dev) {
    const attr = attributeReader(dev === undefined ? require('../driver/context').Context.getDevice() : dev);
    const major = attr('COMPUTE_CAPABILITY_MAJOR');
    const minor = attr('COMPUTE_CAPABILITY_MINOR');
    /** [major, minor] */
    this.computeCapability = [major, minor];
    /** Threads per block, at most. */
    this.maxThreads = attr('MAX_THREADS_PER_BLOCK');
    this.warpSize = attr('WARP_SIZE');
    /** Threads per multiprocessor, at most. */
    this.maxThreadsPerMp = attr('MAX_THREADS_PER_MULTIPROCESSOR');
    /** Resident warps per multiprocessor, at most. */
    this.warpsPerMp = Math.floor(this.maxThreadsPerMp / this.warpSize);
    /** Resident blocks per multiprocessor, at most. */
    this.threadBlocksPerMp = attr('MAX_BLOCKS_PER_MULTIPROCESSOR');
    /** 32-bit registers per multiprocessor. */
    this.registers = attr('MAX_REGISTERS_PER_MULTIPROCESSOR');
    /** 32-bit registers one block may use. */
    this.registersPerBlock = attr('MAX_REGISTERS_PER_BLOCK');
    /** Bytes of shared memory per multiprocessor. */
    this.sharedMemory = attr('MAX_SHARED_MEMORY_PER_MULTIPROCESSOR');
    /** Bytes of shared memory one block may use without opting in. */
    this.sharedMemoryPerBlock = attr('MAX_SHARED_MEMORY_PER_BLOCK');
    /** Bytes of shared memory one block may use when its kernel opts in (MAX_DYNAMIC_SHARED_SIZE_BYTES). */
    this.sharedMemoryPerBlockOptin = attr('MAX_SHARED_MEMORY_PER_BLOCK_OPTIN', this.sharedMemoryPerBlock);
    /** Bytes of shared memory the driver reserves in every block (1 KiB from compute capability 8.0). */
    this.reservedSharedMemoryPerBlock = attr('RESERVED_SHARED_MEMORY_PER_BLOCK', 0);
    /** Shared memory banks. */
    this.smemGranularity = 32;
    /** Shared memory is allocated to blocks in units of this many bytes. */
    this.smemAllocGranularity = major >= 8 ? 128 : 256;
    /** Registers are allocated to each warp... */
    this.registerAllocationUnit = 'warp';
    /** ...in units of this many registers. */
    this.registerGranularity = 256;
    /** Registers one thread may use, at most. */
    this.maxRegistersPerThread = major >= 7 ? 256 : 255;
    /** Register file partitions of a multiprocessor; each warp's registers lie in one. */
    this.registerSubPartitions = major === 6 && minor === 0 ? 2 : 4;
    /** Multiprocessors on the device. */
    this.multiprocessorCount = attr('MULTIPROCESSOR_COUNT', 0);
    /** Whether kernels can launch in thread block clusters (compute capability 9.0+). */
    this.clusterLaunch = attr('CLUSTER_LAUNCH', 0) !== 0;
    /** Blocks in a cluster that every such device allows (more, up to 16, where a kernel opts in
     * with FunctionAttribute.NON_PORTABLE_CLUSTER_SIZE_ALLOWED and the device has them). */
    this.maxPortableClusterSize = this.clusterLaunch ? PORTABLE_CLUSTER : 1;
  }

  /** Bytes to align fetches of word_size bytes to for coalescing: 64 for 4, 128 for 8 and 16. */
  alignBytes(wordSize = 4) {
    const bytes = ALIGN_BYTES.get(wordSize);
    if (bytes === undefined) {
      throw new RangeError(
        `no alignment possible for fetches of size ${typeof wordSize === 'number' ? wordSize : check.describe(wordSize)}: ` +
          'wordSize must be 4, 8 or 16',
      );
    }
    return bytes;
  }

  /** bytes rounded up to a multiple of alignBytes(wordSize). */
  align(bytes, wordSize = 4) {
    check.integer('bytes', bytes);
    return roundUp(bytes, this.alignBytes(wordSize));
  }

  /** alignBytes(wordSize) in words. */
  alignWords(wordSize) {
    return this.alignBytes(wordSize) / wordSize;
  }

  /** elements rounded up to a multiple of alignWords(dtypeSize). */
  alignDtype(elements, dtypeSize) {
    check.integer('elements', elements);
    return roundUp(elements, this.alignWords(dtypeSize));
  }

  /** threadCount rounded up to a multiple of 16 (a half warp). */
  coalesce(threadCount) {
    check.integer('threadCount', threadCount);
    return roundUp(threadCount, 16);
  }

  /** The smallest texture channel count (1, 2 or 4) that holds size channels. */
  static makeValidTexChannelCount(size) {
    check.integer('size', size);
    for (const valid of [1, 2, 4]) if (size <= valid) return valid;
    throw new RangeError(`could not enlarge ${size} to a valid texture channel count (1, 2 or 4)`);
  }

  makeValidTexChannelCount(size) {
    return DeviceData.makeValidTexChannelCount(size);
  }
}

/**
 * The occupancy of blocks of `threads` threads, each block using `sharedMem` bytes of shared memory
 * (static and dynamic together) and each thread `registers` registers (PyCUDA's OccupancyRecord).
 * `tbPerMp` agrees with cuOccupancyMaxActiveBlocksPerMultiprocessor for a kernel with those
 * numbers (kernel.numRegs, its static shared memory plus the dynamic) that opted in to the shared
 * memory it uses. A block that cannot run at all is a RangeError saying why.
 */
class OccupancyRecord {
  constructor(devdata, threads, sharedMem = 0, registers = 0, clusterSize = 1) {
    check.instance('devdata', devdata, DeviceData);
    check.integer('threads', threads, 1);
    check.integer('sharedMem', sharedMem);
    check.integer('registers', registers);
    check.integer('clusterSize', clusterSize, 1, MOST_CLUSTER);
    if (clusterSize > 1 && !devdata.clusterLaunch) {
      throw new RangeError(
        `clusters of ${clusterSize} blocks: this device cannot launch clusters (compute capability 9.0 or newer can)`,
      );
    }
    const d = devdata;
    if (threads > d.maxThreads) {
      throw new RangeError(`too many threads: ${threads} in a block, where the device allows ${d.maxThreads}`);
    }
    const warps = ceilDiv(threads, d.warpSize);
    const limits = { device: d.threadBlocksPerMp, warps: Math.floor(d.warpsPerMp / warps) };

    if (registers > 0) {
      const perWarp = roundUp(registers * d.warpSize, d.registerGranularity);
      // The hardware checks a block as if its warps filled 4 sub-partitions equally (sm_60, with
      // 2, is held to the check of the other Pascals, as cuda_occupancy.h does).
      const perBlock = perWarp * roundUp(warps, 4);
      if (registers > d.maxRegistersPerThread || perBlock > d.registersPerBlock) {
        throw new RangeError(
          `too many registers: ${threads} threads of ${registers} registers take ` +
            `${perBlock} of a block's ${d.registersPerBlock} (at most ${d.maxRegistersPerThread} a thread)`,
        );
      }
      const warpsPerSubPartition = Math.floor(Math.floor(d.registers / d.registerSubPartitions) / perWarp);
      limits.regs = Math.floor((warpsPerSubPartition * d.registerSubPartitions) / warps);
    }

    const smem = roundUp(sharedMem + d.reservedSharedMemoryPerBlock, d.smemAllocGranularity);
    if (smem > 0) {
      const perBlock = Math.max(d.sharedMemoryPerBlock, d.sharedMemoryPerBlockOptin) + d.reservedSharedMemoryPerBlock;
      if (smem > perBlock) {
        throw new RangeError(
          `too much shared memory: ${sharedMem} bytes in a block (${smem} allocated), ` +
            `where the device allows ${perBlock - d.reservedSharedMemoryPerBlock}`,
        );
      }
      limits.smem = Math.floor(d.sharedMemory / smem);
    }

    // The smallest limit; ties go to the first name in alphabetical order, as PyCUDA's min() does.
    let limitedBy = 'device';
    for (const name of ['regs', 'smem', 'warps']) {
      if (limits[name] !== undefined && limits[name] < limits[limitedBy]) limitedBy = name;
    }
    /** Blocks per multiprocessor that each factor allows: device, warps, and regs and smem where used. */
    this.tbPerMpLimits = limits;
    /** Resident blocks per multiprocessor. */
    this.tbPerMp = limits[limitedBy];
    /** What limits them: 'device', 'warps', 'regs' or 'smem'. */
    this.limitedBy = limitedBy;
    /** Resident warps per multiprocessor. */
    this.warpsPerMp = this.tbPerMp * warps;
    /** Resident warps as a fraction of the most the multiprocessor holds. */
    this.occupancy = this.warpsPerMp / d.warpsPerMp;
    /** Blocks in a cluster. */
    this.clusterSize = clusterSize;
    /** The fewest multiprocessors one cluster's blocks, all resident at once, take (of one GPC). */
    this.multiprocessorsPerCluster = Math.ceil(clusterSize / this.tbPerMp);
  }
}

module.exports = { DeviceData, OccupancyRecord };
