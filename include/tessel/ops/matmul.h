// Matrix multiplication C[i, j] = sum_k A[i, k] * B[k, j] and its hand-written CPU schedules.
// (The operators issue extends this module with the rest of the operator library.)
#pragma once
#include "tessel/schedule/schedule.h"
#include "tessel/te/tensor.h"

namespace tessel::ops {

/** Returns {A, B, C} for an MxK by KxN matmul of dtype (C has the same dtype). */
std::vector<te::Tensor> matmul(int64_t M, int64_t N, int64_t K, ir::DataType dtype = ir::DataType::float32());

/** Register-blocking parameters of the blocked CPU schedule. */
struct MatmulCpuParams {
  int mr = 4;         // rows of C per register block
  int nr = 16;        // columns of C per register block (a multiple of the vector width)
  int kunroll = 4;    // k iterations unrolled in the micro-kernel
  bool parallel = true;  // parallelize the outer row-block loop over the runtime thread pool
};

/** Register-blocked schedule: C.local (mr x nr accumulators) computed per tile, k unrolled,
 *  columns vectorized, row blocks in parallel. Returns the schedule for C. */
schedule::Schedule schedule_matmul_cpu(const te::Tensor& C, const MatmulCpuParams& p = {});

}  // namespace tessel::ops
