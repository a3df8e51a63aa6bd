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

/** Matmul whose B is re-laid-out inside the computation into column panels of width nr:
 *  Bp[jo, k, ji] = B[k, jo*nr + ji] (zero past N), C[i, j] = sum_k A[i, k] * Bp[j / nr, k, j % nr].
 *  Returns {A, B, C}; the panel stage is named "Bp". */
std::vector<te::Tensor> matmul_packed(int64_t M, int64_t N, int64_t K, int nr,
                                      ir::DataType dtype = ir::DataType::float32());

/** Parameters for CPUs with vectors of vector_bytes (32: AVX2, 64: AVX-512): an mr x nr tile of
 *  accumulators that fits the register file with room for the B row and the broadcast. */
MatmulCpuParams matmul_cpu_params(int vector_bytes);

/** Schedule for matmul_packed (GotoBLAS-style, without K blocking): B panels packed in parallel;
 *  for each panel (parallel) and each mr-row block of A, the full-K dot products of an mr x nr tile
 *  accumulate in registers (k unrolled by kunroll, rows unrolled, columns vectorized) and are stored
 *  once. The Bp panel (K x nr) stays in L2 across the row blocks. */
schedule::Schedule schedule_matmul_packed_cpu(const std::vector<te::Tensor>& t, const MatmulCpuParams& p);

/** Tiling of the GPU schedule: a bm x bn tile of C per block, tm x tn per thread (so (bm/tm) x (bn/tn)
 *  threads), bk-deep slices of A and B staged in shared memory, fetched cooperatively with vec-wide loads. */
struct MatmulGpuParams {
  int bm = 128, bn = 128, bk = 8;
  int tm = 8, tn = 8;
  int vec = 4;
  bool pipeline = false;  // software-pipeline the shared fetches (pragma software_pipeline on k.o)
  int min_blocks_per_sm = 0;  // pragma min_blocks_per_sm on the block loop (0: none)
  int vt = 1;  // virtual threads per dimension: the tm x tn tile is vt x vt sub-tiles bm/vt, bn/vt apart
};

/** GPU schedule (fp32 FFMA): blocks over bm x bn tiles (blockIdx.y, blockIdx.x), threads over tm x tn
 *  sub-tiles (threadIdx.y, threadIdx.x) accumulated in registers (C.local); per bk step the A and B
 *  slices are fetched into shared memory by all threads (vectorized), then each thread runs the
 *  unrolled tm x tn x bk outer products. With vt > 1 a thread's tile is vt x vt interleaved sub-tiles
 *  (virtual threads), so a warp's shared-memory reads are consecutive (no bank conflicts). Throws UserError when the sizes do not tile (each of M, N, K
 *  must be a multiple of bm, bn, bk) or vec does not divide bk and bn. */
schedule::Schedule schedule_matmul_gpu(const te::Tensor& C, const MatmulGpuParams& p = {});

}  // namespace tessel::ops
