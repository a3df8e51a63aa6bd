// Program-level GPU features: the launch shape and memory gathered by features.cpp, and an occupancy
// estimate for sm_90 (H200: 132 SMs; per SM 65536 registers, 228 KiB shared memory with 1 KiB reserved
// per block, 2048 threads, 32 blocks; at most 227 KiB shared memory and 1024 threads per block).
// Registers are not known before ptxas runs; they are estimated as local bytes / 4 plus a base for
// addresses, indices and loop counters.
#include "gpu_features.h"

#include <algorithm>
#include <cmath>

namespace tessel::costmodel {

namespace {

constexpr double kSms = 132;
constexpr double kWarp = 32;
constexpr double kMaxWarpsPerSm = 64;  // 2048 threads
constexpr double kMaxBlocksPerSm = 32;
constexpr double kRegistersPerSm = 65536;
constexpr double kRegisterUnit = 256;  // registers are allocated per warp in units of 256
constexpr double kMaxRegistersPerThread = 255;
constexpr double kBaseRegisters = 32;
constexpr double kSharedPerSm = 228 * 1024;
constexpr double kSharedReservedPerBlock = 1024;

}  // namespace

const char* const kGpuFeatureNames[kGpuFeatureCount] = {
    "gpu_grid_x",          "gpu_grid_y",           "gpu_grid_z",       "gpu_block_x",         "gpu_block_y",
    "gpu_block_z",         "gpu_threads",          "gpu_blocks",       "gpu_shared_bytes",    "gpu_local_bytes",
    "gpu_registers",       "gpu_blocks_per_sm",    "gpu_occupancy",    "gpu_waves",           "gpu_store_shared",
    "gpu_store_local",     "gpu_store_global",     "gpu_fetch_stores", "gpu_compute_stores",  "gpu_thread_share",
    "gpu_work_per_thread", "gpu_global_tx_stride", "gpu_uncoalesced",  "gpu_shared_tx_stride",
    "gpu_pipelined",       "gpu_min_blocks_per_sm"};

bool gpu_feature_is_unscaled(int k) {
  switch (k) {
    case kGpuOccupancy:
    case kGpuStoreShared:
    case kGpuStoreLocal:
    case kGpuStoreGlobal:
    case kGpuThreadShare:
    case kGpuUncoalesced:
    case kGpuPipelined:
      return true;
    default:
      return false;
  }
}

void fill_gpu_program_features(const lower::GpuLaunch& launch, int fetch_stores, int compute_stores, bool pipelined,
                               float* gpu) {
  const lower::GpuLimits limits;
  double threads = double(launch.threads_per_block());
  double blocks = double(launch.grid[0]) * double(launch.grid[1]) * double(launch.grid[2]);
  for (int d = 0; d < 3; ++d) {
    gpu[kGpuGridX + d] = float(launch.grid[size_t(d)]);
    gpu[kGpuBlockX + d] = float(launch.block[size_t(d)]);
  }
  gpu[kGpuThreadsPerBlock] = float(threads);
  gpu[kGpuBlocks] = float(blocks);
  gpu[kGpuSharedBytes] = float(launch.shared_bytes);
  gpu[kGpuLocalBytes] = float(launch.local_bytes);

  double registers = std::min(kMaxRegistersPerThread, kBaseRegisters + std::ceil(double(launch.local_bytes) / 4));
  double warps = std::ceil(threads / kWarp);
  if (launch.min_blocks_per_sm > 0)  // ptxas fits that many blocks (spilling if it must)
    registers = std::min(registers, std::floor(kRegistersPerSm / (double(launch.min_blocks_per_sm) * warps * kWarp)));
  double by_threads = std::floor(kMaxWarpsPerSm / warps);
  double by_shared = std::floor(kSharedPerSm / (double(launch.shared_bytes) + kSharedReservedPerBlock));
  double warp_registers = std::ceil(registers * kWarp / kRegisterUnit) * kRegisterUnit;
  double by_registers = std::floor(std::floor(kRegistersPerSm / warp_registers) / warps);
  double per_sm = std::min({kMaxBlocksPerSm, by_threads, by_shared, by_registers});
  if (threads > double(limits.max_threads_per_block) || launch.shared_bytes > limits.max_shared_bytes) per_sm = 0;
  gpu[kGpuRegisters] = float(registers);
  gpu[kGpuBlocksPerSm] = float(per_sm);
  gpu[kGpuOccupancy] = float(per_sm * warps / kMaxWarpsPerSm);
  gpu[kGpuWaves] = float(blocks / (std::max(1.0, per_sm) * kSms));  // an unlaunchable block counts as one per SM

  gpu[kGpuFetchStores] = float(fetch_stores);
  gpu[kGpuComputeStores] = float(compute_stores);
  gpu[kGpuPipelined] = pipelined ? 1.0f : 0.0f;
  gpu[kGpuMinBlocksPerSm] = float(launch.min_blocks_per_sm);
  gpu[kGpuThreadShare] = float(std::min(1.0, double(gpu[kGpuThreadShare]) / std::max(1.0, threads)));
}

}  // namespace tessel::costmodel
