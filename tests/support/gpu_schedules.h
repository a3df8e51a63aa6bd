// Hand-written GPU schedules of the support workloads, shared by the GPU tests (tests/gpu) and the
// benchmark kernel generator (bench/gpu/gen_codegen_kernels.cpp).
#pragma once
#include "workloads.h"

namespace tessel::testing {

/** softmax(M, N): Y's rows split over blocks of `threads` threads, one row per thread; E inlined, Mx and S
 *  computed in each thread's registers. */
schedule::Schedule softmax_row_per_thread_gpu(const Workload& softmax, int threads);

/** conv2d_nhwc: Pad inlined; output pixels fused over blocks of `pixels_per_block` (threadIdx.y), filters
 *  over threadIdx.x with `filters_per_thread` each (vectorized) in a local tile; per slice of `rc_slice`
 *  input channels the filter slice is fetched into shared memory by all threads of the block. */
schedule::Schedule conv2d_nhwc_shared_filter_gpu(const Workload& conv, int pixels_per_block, int filters_per_thread,
                                                 int rc_slice);

}  // namespace tessel::testing
