// Operator library: matmul (transposes, int8), batch_matmul, dense (+ bias + relu / gelu) against plain
// C++ references (see oplib_harness.h).
#include <catch2/catch.hpp>
#include <cmath>

#include "oplib_harness.h"

using namespace oplib;
using tessel::ops::OpArgs;

namespace {

// C[b, i, j] = sum_k A[b, i, k] B[b, k, j] with the stored layouts of the transposes (batch 1 when the
// arrays are 2-D).
std::vector<double> ref_matmul(const OpArgs& a, const Inputs& in) {
  bool batched = a.values().count("batch") != 0;
  int64_t nb = batched ? a.i("batch") : 1, M = a.i("M"), N = a.i("N"), K = a.i("K");
  bool ta = a.i("transpose_a"), tb = a.i("transpose_b");
  const NDArray &A = *in[0], &B = *in[1];
  auto get = [&](const NDArray& x, int64_t b, int64_t r, int64_t c) {
    return batched ? at(x, {b, r, c}) : at(x, {r, c});
  };
  std::vector<double> out;
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (ta ? get(A, b, k, i) : get(A, b, i, k)) * (tb ? get(B, b, j, k) : get(B, b, k, j));
        out.push_back(acc);
      }
  return out;
}

std::vector<double> ref_dense(const OpArgs& a, const Inputs& in) {
  int64_t M = a.i("M"), N = a.i("N"), K = a.i("K");
  bool bias = a.i("bias");
  const std::string& act = a.s("activation");
  std::vector<double> out;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += at(*in[0], {i, k}) * at(*in[1], {j, k});
      if (bias) acc += at(*in[2], {j});
      if (act == "relu") acc = std::max(acc, 0.0);
      if (act == "gelu") acc = 0.5 * acc * (1 + std::erf(acc / std::sqrt(2.0)));
      out.push_back(acc);
    }
  return out;
}

const bool kCases = add_cases({
    {"matmul",
     ref_matmul,
     {"matmul:M=16,N=16,K=16", "matmul:M=1,N=1,K=1", "matmul:M=7,N=13,K=17", "matmul:M=33,N=1,K=65",
      "matmul:M=5,N=19,K=3,transpose_a=1", "matmul:M=9,N=10,K=11,transpose_b=1",
      "matmul:M=12,N=7,K=23,transpose_a=1,transpose_b=1", "matmul:M=17,N=31,K=29,dtype=int8",
      "matmul:M=8,N=9,K=130,transpose_a=1,transpose_b=1,dtype=int8", "matmul:M=1,N=100,K=1,dtype=int8"}},
    {"batch_matmul",
     ref_matmul,
     {"batch_matmul:batch=3,M=5,N=7,K=9", "batch_matmul:batch=1,M=1,N=1,K=1",
      "batch_matmul:batch=2,M=13,N=17,K=4,transpose_a=1", "batch_matmul:batch=4,M=3,N=33,K=16,transpose_b=1",
      "batch_matmul:batch=5,M=6,N=6,K=31,dtype=int8",
      "batch_matmul:batch=2,M=7,N=3,K=5,transpose_a=1,transpose_b=1,dtype=int8"}},
    {"dense",
     ref_dense,
     {"dense:M=4,N=8,K=16", "dense:M=1,N=1,K=1", "dense:M=7,N=13,K=17,activation=relu",
      "dense:M=3,N=33,K=19,activation=gelu", "dense:M=5,N=9,K=31,bias=0", "dense:M=2,N=11,K=5,bias=0,activation=relu",
      "dense:M=16,N=17,K=64,activation=gelu,bias=0"}},
});

}  // namespace

TEST_CASE("oplib matmul: transposes, int8 -> int32, awkward shapes", "[oplib]") { check_op("matmul"); }
TEST_CASE("oplib batch_matmul", "[oplib]") { check_op("batch_matmul"); }
TEST_CASE("oplib dense: bias, relu, gelu", "[oplib]") { check_op("dense"); }
