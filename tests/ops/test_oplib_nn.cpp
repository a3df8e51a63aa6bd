// Operator library: max / avg / global average pooling, softmax and layer_norm against plain C++
// references (see oplib_harness.h).
#include <catch2/catch.hpp>
#include <cmath>

#include "oplib_harness.h"

using namespace oplib;
using tessel::ops::OpArgs;

namespace {

// max or mean over each window of the unpadded input; avg divides by the real elements covered
// (or by KH * KW with count_include_pad=1).
std::vector<double> ref_pool(const OpArgs& a, const Inputs& in, bool is_max) {
  int64_t N = a.i("N"), C = a.i("C"), H = a.i("H"), W = a.i("W"), KH = a.i("KH"), KW = a.i("KW");
  int64_t s = a.i("stride"), p = a.i("pad");
  bool nhwc = a.s("layout") == "NHWC", include_pad = !is_max && a.i("count_include_pad");
  int64_t HO = (H + 2 * p - KH) / s + 1, WO = (W + 2 * p - KW) / s + 1;
  std::vector<double> out(size_t(N * C * HO * WO));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < HO; ++y)
        for (int64_t x = 0; x < WO; ++x) {
          double acc = is_max ? -INFINITY : 0;
          int64_t count = 0;
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              int64_t iy = y * s + kh - p, ix = x * s + kw - p;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              double v = nhwc ? at(*in[0], {n, iy, ix, c}) : at(*in[0], {n, c, iy, ix});
              acc = is_max ? std::max(acc, v) : acc + v;
              ++count;
            }
          if (!is_max) acc /= double(include_pad ? KH * KW : count);
          out[size_t(nhwc ? ((n * HO + y) * WO + x) * C + c : ((n * C + c) * HO + y) * WO + x)] = acc;
        }
  return out;
}

std::vector<double> ref_global_avg_pool(const OpArgs& a, const Inputs& in) {
  int64_t N = a.i("N"), C = a.i("C"), H = a.i("H"), W = a.i("W");
  bool nhwc = a.s("layout") == "NHWC";
  std::vector<double> out;  // [N, C, 1, 1] and [N, 1, 1, C] are both n-major, c-minor
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      double acc = 0;
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) acc += nhwc ? at(*in[0], {n, y, x, c}) : at(*in[0], {n, c, y, x});
      out.push_back(acc / double(H * W));
    }
  return out;
}

std::vector<double> ref_softmax(const OpArgs& a, const Inputs& in) {
  int64_t M = a.i("M"), N = a.i("N");
  std::vector<double> out;
  for (int64_t i = 0; i < M; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; ++j) mx = std::max(mx, at(*in[0], {i, j}));
    for (int64_t j = 0; j < N; ++j) sum += std::exp(at(*in[0], {i, j}) - mx);
    for (int64_t j = 0; j < N; ++j) out.push_back(std::exp(at(*in[0], {i, j}) - mx) / sum);
  }
  return out;
}

std::vector<double> ref_layer_norm(const OpArgs& a, const Inputs& in) {
  int64_t M = a.i("M"), N = a.i("N");
  double eps = std::pow(10.0, -double(a.i("eps_exp")));
  std::vector<double> out;
  for (int64_t i = 0; i < M; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < N; ++j) mean += at(*in[0], {i, j});
    mean /= double(N);
    for (int64_t j = 0; j < N; ++j) var += (at(*in[0], {i, j}) - mean) * (at(*in[0], {i, j}) - mean);
    var /= double(N);
    for (int64_t j = 0; j < N; ++j)
      out.push_back((at(*in[0], {i, j}) - mean) / std::sqrt(var + eps) * at(*in[1], {j}) + at(*in[2], {j}));
  }
  return out;
}

const bool kCases = add_cases({
    {"max_pool",
     [](const OpArgs& a, const Inputs& in) { return ref_pool(a, in, true); },
     {"max_pool:N=1,C=3,H=8,W=8", "max_pool:N=2,C=5,H=13,W=7,KH=3,KW=3,stride=2,pad=1",
      "max_pool:N=1,C=1,H=1,W=1,KH=1,KW=1,stride=1", "max_pool:N=1,C=17,H=9,W=11,KH=3,KW=3,stride=1,pad=2,layout=NHWC",
      "max_pool:N=2,C=3,H=10,W=10,KH=5,KW=2,stride=3,pad=1,layout=NHWC"}},
    {"avg_pool",
     [](const OpArgs& a, const Inputs& in) { return ref_pool(a, in, false); },
     {"avg_pool:N=1,C=3,H=8,W=8", "avg_pool:N=2,C=5,H=13,W=7,KH=3,KW=3,stride=2,pad=1",
      "avg_pool:N=1,C=1,H=1,W=1,KH=1,KW=1,stride=1", "avg_pool:N=1,C=17,H=9,W=11,KH=3,KW=3,stride=1,pad=2,layout=NHWC",
      "avg_pool:N=1,C=4,H=7,W=9,KH=3,KW=3,stride=2,pad=1,count_include_pad=1",
      "avg_pool:N=2,C=3,H=10,W=10,KH=5,KW=2,stride=3,pad=1,layout=NHWC"}},
    {"global_avg_pool",
     ref_global_avg_pool,
     {"global_avg_pool:N=1,C=8,H=7,W=7", "global_avg_pool:N=2,C=3,H=1,W=1",
      "global_avg_pool:N=3,C=17,H=5,W=13,layout=NHWC", "global_avg_pool:N=1,C=1,H=31,W=2"}},
    {"softmax",
     ref_softmax,
     {"softmax:M=4,N=16", "softmax:M=1,N=1", "softmax:M=7,N=13", "softmax:M=3,N=1000", "softmax:M=17,N=2"}},
    {"layer_norm",
     ref_layer_norm,
     {"layer_norm:M=4,N=16", "layer_norm:M=1,N=1", "layer_norm:M=7,N=13,eps_exp=3", "layer_norm:M=2,N=768",
      "layer_norm:M=5,N=17,eps_exp=12"}},
});

}  // namespace

TEST_CASE("oplib max_pool: padding, stride, layouts", "[oplib]") { check_op("max_pool"); }
TEST_CASE("oplib avg_pool: count_include_pad, padding, layouts", "[oplib]") { check_op("avg_pool"); }
TEST_CASE("oplib global_avg_pool", "[oplib]") { check_op("global_avg_pool"); }
TEST_CASE("oplib softmax", "[oplib]") { check_op("softmax"); }
TEST_CASE("oplib layer_norm", "[oplib]") { check_op("layer_norm"); }
