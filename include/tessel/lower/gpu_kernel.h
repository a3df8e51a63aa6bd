// Passes and checks that turn a lowered function into one GPU kernel (see docs/gpu-codegen.md).
// Loops bound to blockIdx/threadIdx stay For nodes (the code generator reads the special registers);
// these passes add barriers, derive the launch shape and check it against the device's limits.
#pragma once
#include <array>
#include <cstdint>

#include "tessel/ir/stmt.h"
#include "tessel/support/error.h"

namespace tessel::lower {

/** Launch shape and memory of a kernel, derived from its bound loops and allocations. */
struct GpuLaunch {
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t shared_bytes = 0;  // all shared-scope allocations of the kernel
  int64_t local_bytes = 0;   // per-thread local-scope allocations (registers or local memory)
  int64_t min_blocks_per_sm = 0;  // pragma min_blocks_per_sm (ptxas launch bound .minnctapersm); 0 = none
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

/** Device limits a candidate is checked against before it is launched (H200 / sm_90 defaults). */
struct GpuLimits {
  int64_t max_threads_per_block = 1024;
  std::array<int64_t, 3> max_block{1024, 1024, 64};
  std::array<int64_t, 3> max_grid{2147483647, 65535, 65535};
  int64_t max_static_shared_bytes = 48 * 1024;   // above this, shared memory becomes dynamic (opt-in)
  int64_t max_shared_bytes = 227 * 1024;         // with cudaFuncAttributeMaxDynamicSharedMemorySize
  int64_t max_local_bytes = 64 * 1024;           // per thread, before it spills to a slow stack
  int64_t max_registers_per_thread = 255;        // checked only when a register count is known
};

/** Inserts sync_threads() where a shared buffer written by one statement of a sequence is read (or
 *  rewritten) by a later one, and at the top of a loop whose body writes a shared buffer it also reads
 *  (so the next iteration's writes wait for this iteration's reads). A buffer indexed only by the variable
 *  of an enclosing thread loop (each thread its own slot) needs none there. */
ir::Stmt insert_gpu_barriers(const ir::Stmt& s);

/** The launch shape of a kernel body; throws UserError naming the loop for illegal bindings: blocks
 *  inside threads, one blockIdx tag with two extents, a thread loop re-bound with a larger extent, parallel
 *  loops, global-memory intermediates, several root loop nests, no bound loop at all, or a barrier under a
 *  thread-dependent condition. */
GpuLaunch infer_gpu_launch(const ir::Stmt& body);

/** Checks launch against limits (registers when registers >= 0); the error names the limit. */
Status check_gpu_launch(const GpuLaunch& launch, const GpuLimits& limits = {}, int registers = -1);

}  // namespace tessel::lower
