// The row-block GPU schedule of softmax-like operators: an elementwise output Out[i.., j..] that reads
// reductions P[i..] of its leading ("row") axes (softmax: Max, Sum; layer_norm: Sum, VarSum). One block
// per row; every reduction is a cross-thread reduction of that row computed at the block loop.
#pragma once
#include <string>
#include <vector>

#include "tessel/schedule/schedule.h"
#include "tessel/support/error.h"

namespace tessel::ops {

/** The reductions that the elementwise output `out` reads per row (through elementwise intermediates,
 *  and through each other), producers first: each has the data shape of out's first p axes (the same p
 *  for all, 0 < p < rank of out), is read only by out and the stages in between, and every read of it or
 *  of an intermediate indexes its first p dimensions by the reader's first p axes. Empty when `out`
 *  does not have this form (or reads no reduction). */
std::vector<std::string> row_reductions(const schedule::Schedule& s, const std::string& out);

/** Knobs of schedule_row_block_gpu. */
struct RowBlockGpuParams {
  int64_t threads = 256;  // threads per block (per row)
  int64_t vector = 1;     // vector width of out's row loop (must divide the row length)
};

/** Schedules `out` (a stage row_reductions finds reductions for, with untouched loops) on a GPU:
 *  - elementwise intermediates inlined;
 *  - out: the row axes fused -> blockIdx.x; the rest of the row fused, split by vector (vectorized) and
 *    then by threads, the inner part -> threadIdx.x (coalesced: j = (jo * threads + jt) * vector + jv);
 *  - each reduction P: its innermost reduction axis k split as k = ko * threads + ki, rfactor over ki
 *    into P.rf (shared, bound to threadIdx.x: each thread reduces its strided slice over ko), then P
 *    (local: every thread reduces the partial results of P.rf), both computed at out's block loop, in
 *    producer order. Barriers come from lower::insert_gpu_barriers.
 *  Returns the error (naming the stage) when the choice is illegal; s may then be partly scheduled. */
Status schedule_row_block_gpu(schedule::Schedule& s, const std::string& out, const RowBlockGpuParams& p = {});

}  // namespace tessel::ops
