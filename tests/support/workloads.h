// Test computations with plain C++ reference implementations, and a checker that builds a schedule,
// runs it on seeded random inputs (outputs poisoned with NaN first) and compares to the reference.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessel/runtime/ndarray.h"
#include "tessel/schedule/schedule.h"
#include "tessel/te/tensor.h"

namespace tessel::testing {

struct Workload {
  std::string name;
  std::vector<te::Tensor> args;  // inputs then output(s)
  size_t num_inputs = 0;
  /** Computes the outputs (args after the inputs) from the inputs, with plain loops in double. */
  std::function<void(std::vector<runtime::NDArray*>&)> reference;
  double tolerance = 1e-4;  // relative to max(1, |reference|)
};

/** C[i, j] = sum_k A[i, k] * B[k, j]. */
Workload matmul(int M, int N, int K);
/** NCHW conv2d with zero padding through an explicit padded stage "Apad" (stride s). */
Workload conv2d(int C, int H, int W, int F, int R, int pad, int stride = 1);
/** Row max then row sum of exp(x - max) (two reductions, softmax denominator). */
Workload row_reduce(int M, int N);
/** D = relu(A * B + 1) * sigmoid(A) through intermediate elementwise stages "T1", "T2". */
Workload elementwise_chain(int M, int N);

/** Softmax of each row of X[M, N] through stages Mx (row max), E = exp(X - Mx), S (row sum of E), Y = E / S. */
Workload softmax(int M, int N);
/** NHWC conv2d, stride 1: O[n, y, x, f] = sum_{ry, rx, c} In[n, y + ry - pad, x + rx - pad, c] * Wt[ry, rx, c, f],
 *  zero padding through an explicit stage "Pad". */
Workload conv2d_nhwc(int N, int H, int W, int C, int F, int R, int pad);

/** The stage names of a workload that may be inlined (elementwise, non-output intermediate). */
std::vector<std::string> inlinable_stages(const Workload& w, const schedule::Schedule& s);

/** Lowers, JIT-compiles and runs sch; compares every output to the reference. Returns an empty string
 *  on success, otherwise a message (with the seed and the first mismatch). */
std::string check_schedule(const Workload& w, const schedule::Schedule& sch, uint64_t seed);

}  // namespace tessel::testing
