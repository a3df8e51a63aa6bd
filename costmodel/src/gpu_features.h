// GPU feature group (version 3, features.h kGpuOffset; docs/costmodel.md lists the indices): the launch
// shape, shared/local memory and an sm_90 occupancy estimate of the program, and per store its scope,
// the share of the block's threads that run it and how its accesses vary with threadIdx.x.
// Private to costmodel/src: features.cpp gathers the facts while it walks the loop nest.
#pragma once
#include "tessel/lower/gpu_kernel.h"

namespace tessel::costmodel {

// Indices inside the GPU group (absolute index = kGpuOffset + k).
enum GpuFeature {
  kGpuGridX,       // blockIdx.x extent (then y, z)
  kGpuBlockX = 3,  // threadIdx.x extent (then y, z)
  kGpuThreadsPerBlock = 6,
  kGpuBlocks,          // blocks in the grid
  kGpuSharedBytes,     // shared memory per block
  kGpuLocalBytes,      // local (register) buffers per thread
  kGpuRegisters,       // estimated registers per thread
  kGpuBlocksPerSm,     // resident blocks per SM (threads, shared memory, registers, 32 blocks)
  kGpuOccupancy,       // active warps / 64 (fraction)
  kGpuWaves,           // blocks / (blocks per SM x 132 SMs)
  kGpuStoreShared,     // flag: the store writes a shared buffer (a cooperative fetch)
  kGpuStoreLocal,      // flag: ... a local buffer
  kGpuStoreGlobal,     // flag: ... a global buffer
  kGpuFetchStores,     // program: stores to shared buffers
  kGpuComputeStores,   // program: other stores
  kGpuThreadShare,     // fraction of the block's threads that execute the store
  kGpuWorkPerThread,   // executions of the store per thread (serial, unrolled and vector loops, lanes)
  kGpuGlobalTxStride,  // largest |elements between consecutive threadIdx.x| of a global access
  kGpuUncoalesced,     // fraction of the store's global bytes whose threadIdx.x stride exceeds the lanes
  kGpuSharedTxStride,  // largest |elements between consecutive threadIdx.x| of a shared access (banks)
  kGpuPipelined,       // flag: the program has a software_pipeline pragma (staged shared fetches)
  kGpuMinBlocksPerSm,  // pragma min_blocks_per_sm (ptxas caps registers to fit that many blocks)
  kGpuFeatureCount
};

/** Names of the GPU group, by index. */
extern const char* const kGpuFeatureNames[kGpuFeatureCount];

/** True for the GPU indices that stay unscaled: flags and fractions in [0, 1]. */
bool gpu_feature_is_unscaled(int k);

/** Fills the program-level GPU features (launch, memory, occupancy, store counts) of one row's group `gpu`,
 *  raw (before log2(1 + x)), and turns gpu[kGpuThreadShare], which holds the number of threads that run
 *  the store, into their share of the block. */
void fill_gpu_program_features(const lower::GpuLaunch& launch, int fetch_stores, int compute_stores, bool pipelined,
                               float* gpu);

}  // namespace tessel::costmodel
