// The default schedule of a registered operator: correct for every operator, not fast.
#pragma once
#include "tessel/ops/registry.h"
#include "tessel/schedule/schedule.h"

namespace tessel::ops {

/** Knobs of default_schedule. */
struct DefaultScheduleParams {
  /** Parallelize the leading data-parallel loops of each root stage (fused until at least
   *  min_parallel_extent iterations, or all data axes) when they have more than one iteration. */
  bool parallel = true;
  int64_t min_parallel_extent = 16;
};

/** Schedule(outputs) with every intermediate stage that is neither an output nor a reduction inlined
 *  (padding, elementwise producers), and, when p.parallel, the outer data-parallel loops of every
 *  remaining computed stage run in parallel. Nothing is vectorized, split or reordered. */
schedule::Schedule default_schedule(const OpTensors& t, const DefaultScheduleParams& p = {});

/** Knobs of default_gpu_schedule. */
struct DefaultGpuScheduleParams {
  int threads = 256;  // threads per block for elementwise and reduction outputs
};

/** A correct GPU schedule for one output: elementwise intermediates inlined; a matmul-shaped output
 *  (C[i, j] = sum_k of two inputs) whose sizes tile gets schedule_matmul_gpu; an elementwise output
 *  reading per-row reductions (softmax, layer_norm) gets schedule_row_block_gpu with the fewest warps
 *  that cover a row, at most p.threads; any other output has its
 *  data loops fused and split over blocks and p.threads threads, with its reduction loops (and the other
 *  reductions it reads, computed per thread in registers) inside each thread. Throws UserError for
 *  several outputs. */
schedule::Schedule default_gpu_schedule(const OpTensors& t, const DefaultGpuScheduleParams& p = {});

}  // namespace tessel::ops
