// Operator library: elementwise operators and chains, reductions, transpose and pad against plain C++
// references (see oplib_harness.h).
#include <catch2/catch.hpp>
#include <cmath>

#include "oplib_harness.h"

using namespace oplib;
using tessel::ops::OpArgs;

namespace {

double apply(const std::string& f, double x) {
  if (f == "relu") return std::max(x, 0.0);
  if (f == "sigmoid") return 1 / (1 + std::exp(-x));
  if (f == "tanh") return std::tanh(x);
  if (f == "exp") return std::exp(x);
  return x;
}

RefFn unary_ref(const std::string& f) {
  return [f](const OpArgs&, const Inputs& in) {
    std::vector<double> out;
    for (int64_t i = 0; i < in[0]->num_elements(); ++i) out.push_back(apply(f, in[0]->get(i)));
    return out;
  };
}

RefFn binary_ref(bool add) {
  return [add](const OpArgs&, const Inputs& in) {
    std::vector<double> out;
    for (int64_t i = 0; i < in[0]->num_elements(); ++i)
      out.push_back(add ? in[0]->get(i) + in[1]->get(i) : in[0]->get(i) * in[1]->get(i));
    return out;
  };
}

std::vector<double> ref_chain(const OpArgs& a, const Inputs& in) {
  std::vector<double> out;
  for (int64_t i = 0; i < in[0]->num_elements(); ++i)
    out.push_back(apply(a.s("activation"), (in[0]->get(i) + in[1]->get(i)) * (a.i("mul") ? in[2]->get(i) : 1.0)));
  return out;
}

// Reduction of In[D0, D1, D2] over the listed axes; the output enumerates the kept axes in order
// (keepdims does not change that order).
std::vector<double> ref_reduce(const OpArgs& a, const Inputs& in) {
  int64_t D[3] = {a.i("D0"), a.i("D1"), a.i("D2")};
  bool red[3] = {false, false, false};
  for (char c : a.s("axes")) red[c - '0'] = true;
  const std::string& op = a.s("op");
  int64_t E[3], R[3];  // kept extents (1 when reduced), reduced extents (1 when kept)
  for (int d = 0; d < 3; ++d) {
    E[d] = red[d] ? 1 : D[d];
    R[d] = red[d] ? D[d] : 1;
  }
  std::vector<double> out;
  for (int64_t i = 0; i < E[0]; ++i)
    for (int64_t j = 0; j < E[1]; ++j)
      for (int64_t l = 0; l < E[2]; ++l) {
        double acc = op == "max" ? -INFINITY : op == "min" ? INFINITY : 0;
        for (int64_t r0 = 0; r0 < R[0]; ++r0)
          for (int64_t r1 = 0; r1 < R[1]; ++r1)
            for (int64_t r2 = 0; r2 < R[2]; ++r2) {
              double v = at(*in[0], {i + r0, j + r1, l + r2});
              acc = op == "max" ? std::max(acc, v) : op == "min" ? std::min(acc, v) : acc + v;
            }
        if (op == "mean") acc /= double(R[0] * R[1] * R[2]);
        out.push_back(acc);
      }
  return out;
}

std::vector<double> ref_transpose(const OpArgs& a, const Inputs& in) {
  int64_t D[4] = {a.i("D0"), a.i("D1"), a.i("D2"), a.i("D3")};
  int p[4];
  for (int d = 0; d < 4; ++d) p[d] = a.s("perm")[d] - '0';
  std::vector<double> out;
  int64_t v[4], u[4];
  for (v[0] = 0; v[0] < D[p[0]]; ++v[0])
    for (v[1] = 0; v[1] < D[p[1]]; ++v[1])
      for (v[2] = 0; v[2] < D[p[2]]; ++v[2])
        for (v[3] = 0; v[3] < D[p[3]]; ++v[3]) {
          for (int d = 0; d < 4; ++d) u[p[d]] = v[d];
          out.push_back(at(*in[0], {u[0], u[1], u[2], u[3]}));
        }
  return out;
}

// Source index of output index o along an axis of extent n padded by `before`, or -1 for the constant.
int64_t pad_source(int64_t o, int64_t before, int64_t n, const std::string& mode) {
  int64_t t = o - before;
  if (t >= 0 && t < n) return t;
  if (mode == "edge") return t < 0 ? 0 : n - 1;
  if (mode == "reflect") return t < 0 ? -t : 2 * (n - 1) - t;
  return -1;
}

std::vector<double> ref_pad(const OpArgs& a, const Inputs& in) {
  int64_t N = a.i("N"), C = a.i("C"), H = a.i("H"), W = a.i("W"), top = a.i("top"), left = a.i("left");
  int64_t HO = top + H + a.i("bottom"), WO = left + W + a.i("right");
  const std::string& mode = a.s("mode");
  std::vector<double> out;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < HO; ++y)
        for (int64_t x = 0; x < WO; ++x) {
          int64_t sy = pad_source(y, top, H, mode), sx = pad_source(x, left, W, mode);
          out.push_back(sy < 0 || sx < 0 ? double(a.i("value")) : at(*in[0], {n, c, sy, sx}));
        }
  return out;
}

std::vector<std::string> shapes(const std::string& op) {
  std::vector<std::string> out;
  for (const char* s : {"M=4,N=16", "M=1,N=1", "M=7,N=13", "N=1000", "M=3,N=17"}) out.push_back(op + ":" + s);
  return out;
}

const bool kCases = add_cases({
    {"add", binary_ref(true), shapes("add")},
    {"mul", binary_ref(false), shapes("mul")},
    {"relu", unary_ref("relu"), shapes("relu")},
    {"sigmoid", unary_ref("sigmoid"), shapes("sigmoid")},
    {"tanh", unary_ref("tanh"), shapes("tanh")},
    {"exp", unary_ref("exp"), shapes("exp")},
    {"elementwise_chain",
     ref_chain,
     {"elementwise_chain:M=4,N=16", "elementwise_chain:M=1,N=1,activation=none",
      "elementwise_chain:M=7,N=13,mul=1,activation=sigmoid", "elementwise_chain:M=3,N=17,mul=1,activation=tanh",
      "elementwise_chain:N=33,activation=exp", "elementwise_chain:M=1,N=1,mul=1,activation=none",
      "elementwise_chain:M=256,N=49,activation=relu"}},
    {"reduce",
     ref_reduce,
     {"reduce:D0=4,D1=5,D2=16", "reduce:D0=1", "reduce:D0=7,D1=13,D2=3,op=max,axes=1",
      "reduce:D0=7,D1=13,D2=3,op=min,axes=0,keepdims=1", "reduce:D0=5,D1=3,D2=17,op=mean,axes=02",
      "reduce:D0=5,D1=3,D2=17,op=mean,axes=012", "reduce:D0=2,D1=9,D2=11,op=sum,axes=12,keepdims=1",
      "reduce:D0=31,D1=1,D2=2,op=max,axes=01", "reduce:D0=1,D1=1,D2=1,op=mean,axes=012,keepdims=1"}},
    {"transpose",
     ref_transpose,
     {"transpose:D0=3,D1=5", "transpose:D0=1,D1=1", "transpose:D0=2,D1=3,D2=7,D3=13,perm=0231",
      "transpose:D0=2,D1=7,D2=13,D3=3,perm=0312", "transpose:D0=5,D1=1,D2=17,D3=2,perm=3210,dtype=int8",
      "transpose:D0=4,D1=3,D2=2,D3=5,perm=2013"}},
    {"pad",
     ref_pad,
     {"pad:H=4,W=4", "pad:N=2,C=3,H=7,W=5,top=0,bottom=2,left=3,right=0",
      "pad:H=1,W=1,top=5,bottom=6,left=7,right=8,value=3",
      "pad:N=1,C=2,H=5,W=6,top=2,bottom=3,left=1,right=4,mode=edge",
      "pad:N=1,C=2,H=5,W=6,top=4,bottom=3,left=5,right=2,mode=reflect",
      "pad:C=3,H=3,W=13,top=2,bottom=2,left=1,right=1,dtype=int8,value=-7", "pad:H=9,W=2,top=0,bottom=0,left=0,right=0",
      "pad:H=4,W=3,top=3,bottom=1,left=2,right=2,mode=reflect,dtype=int8"}},
});

}  // namespace

TEST_CASE("oplib elementwise: add, mul", "[oplib]") {
  check_op("add");
  check_op("mul");
}
TEST_CASE("oplib elementwise: relu, sigmoid, tanh, exp", "[oplib]") {
  for (auto op : {"relu", "sigmoid", "tanh", "exp"}) check_op(op);
}
TEST_CASE("oplib elementwise_chain", "[oplib]") { check_op("elementwise_chain"); }
TEST_CASE("oplib reduce: sum, max, min, mean over axes, keepdims", "[oplib]") { check_op("reduce"); }
TEST_CASE("oplib transpose", "[oplib]") { check_op("transpose"); }
TEST_CASE("oplib pad: constant, edge, reflect", "[oplib]") { check_op("pad"); }
