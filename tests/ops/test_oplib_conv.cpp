// Operator library: conv2d NCHW / NHWC (stride, padding, dilation, groups, int8), depthwise conv2d and
// conv2d_transpose against direct C++ loops (see oplib_harness.h).
#include <catch2/catch.hpp>
#include <cmath>

#include "oplib_harness.h"

using namespace oplib;
using tessel::ops::OpArgs;

namespace {

struct Conv {
  int64_t N, H, W, CI, CO, KH, KW, s, p, d, g;
  int64_t out(int64_t in, int64_t k) const { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }
};

Conv conv_of(const OpArgs& a, const char* ci, int64_t co) {
  return {a.i("N"),
          a.i("H"),
          a.i("W"),
          a.i(ci),
          co,
          a.i("KH"),
          a.i("KW"),
          a.i("stride"),
          a.i("pad"),
          a.i("dilation"),
          a.values().count("groups") ? a.i("groups") : 1};
}

// Grouped / depthwise conv as a gather over the unpadded input. wt(co, rc, kh, kw) reads the weight of
// output channel co and in-group input channel rc; ch(co, rc) is the input channel it multiplies.
template <class Wt, class Ch>
std::vector<double> ref_conv(const Conv& c, int64_t cig, bool nhwc, const NDArray& in, Wt wt, Ch ch) {
  int64_t HO = c.out(c.H, c.KH), WO = c.out(c.W, c.KW);
  std::vector<double> out(size_t(c.N * c.CO * HO * WO));
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t co = 0; co < c.CO; ++co)
      for (int64_t y = 0; y < HO; ++y)
        for (int64_t x = 0; x < WO; ++x) {
          double acc = 0;
          for (int64_t rc = 0; rc < cig; ++rc)
            for (int64_t kh = 0; kh < c.KH; ++kh)
              for (int64_t kw = 0; kw < c.KW; ++kw) {
                int64_t iy = y * c.s + kh * c.d - c.p, ix = x * c.s + kw * c.d - c.p;
                if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.W) continue;
                int64_t ci = ch(co, rc);
                acc += (nhwc ? at(in, {n, iy, ix, ci}) : at(in, {n, ci, iy, ix})) * wt(co, rc, kh, kw);
              }
          size_t o = nhwc ? size_t(((n * HO + y) * WO + x) * c.CO + co) : size_t(((n * c.CO + co) * HO + y) * WO + x);
          out[o] = acc;
        }
  return out;
}

// act(out + Bias[channel]) in place, for specs with bias / activation parameters.
void ref_epilogue(const OpArgs& a, const Inputs& in, std::vector<double>& out, const Conv& c, bool nhwc) {
  bool bias = a.i("bias");
  const std::string& act = a.s("activation");
  int64_t hw = c.out(c.H, c.KH) * c.out(c.W, c.KW);
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t co = nhwc ? int64_t(o) % c.CO : int64_t(o) / hw % c.CO;
    if (bias) out[o] += at(*in[2], {co});
    if (act == "relu") out[o] = std::max(out[o], 0.0);
    if (act == "gelu") out[o] = 0.5 * out[o] * (1 + std::erf(out[o] / std::sqrt(2.0)));
  }
}

std::vector<double> ref_conv2d(const OpArgs& a, const Inputs& in, bool nhwc) {
  Conv c = conv_of(a, "CI", a.i("CO"));
  int64_t cig = c.CI / c.g, cog = c.CO / c.g;
  const NDArray& w = *in[1];
  auto out = ref_conv(
      c, cig, nhwc, *in[0],
      [&](int64_t co, int64_t rc, int64_t kh, int64_t kw) {
        return nhwc ? at(w, {kh, kw, rc, co}) : at(w, {co, rc, kh, kw});
      },
      [&](int64_t co, int64_t rc) { return co / cog * cig + rc; });
  ref_epilogue(a, in, out, c, nhwc);
  return out;
}

std::vector<double> ref_depthwise(const OpArgs& a, const Inputs& in) {
  int64_t mult = a.i("multiplier");
  Conv c = conv_of(a, "C", a.i("C") * mult);
  bool nhwc = a.s("layout") == "NHWC";
  const NDArray& w = *in[1];
  auto out = ref_conv(
      c, 1, nhwc, *in[0],
      [&](int64_t co, int64_t, int64_t kh, int64_t kw) {
        return nhwc ? at(w, {kh, kw, co / mult, co % mult}) : at(w, {co / mult, co % mult, kh, kw});
      },
      [&](int64_t co, int64_t) { return co / mult; });
  ref_epilogue(a, in, out, c, nhwc);
  return out;
}

// conv2d_transpose as a scatter: every input pixel adds its weighted kernel into the output.
std::vector<double> ref_conv2d_transpose(const OpArgs& a, const Inputs& in) {
  Conv c = conv_of(a, "CI", a.i("CO"));
  int64_t op = a.i("output_padding");
  int64_t HO = (c.H - 1) * c.s - 2 * c.p + c.d * (c.KH - 1) + op + 1;
  int64_t WO = (c.W - 1) * c.s - 2 * c.p + c.d * (c.KW - 1) + op + 1;
  std::vector<double> out(size_t(c.N * c.CO * HO * WO), 0.0);
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t ci = 0; ci < c.CI; ++ci)
      for (int64_t iy = 0; iy < c.H; ++iy)
        for (int64_t ix = 0; ix < c.W; ++ix)
          for (int64_t co = 0; co < c.CO; ++co)
            for (int64_t kh = 0; kh < c.KH; ++kh)
              for (int64_t kw = 0; kw < c.KW; ++kw) {
                int64_t y = iy * c.s + kh * c.d - c.p, x = ix * c.s + kw * c.d - c.p;
                if (y < 0 || y >= HO || x < 0 || x >= WO) continue;
                out[size_t(((n * c.CO + co) * HO + y) * WO + x)] +=
                    at(*in[0], {n, ci, iy, ix}) * at(*in[1], {ci, co, kh, kw});
              }
  return out;
}

// Shapes shared by both layouts: 3x3 pad 1, primes, stride 2, dilation 2, groups, large padding,
// 1x1, extent 1, channels not divisible by the vector width, int8.
std::vector<std::string> conv_specs(const std::string& op) {
  std::vector<std::string> shapes = {
      "N=1,H=8,W=8,CI=4,CO=8,KH=3,KW=3,stride=1,pad=1",
      "N=1,H=1,W=1,CI=1,CO=1,KH=1,KW=1",
      "N=2,H=7,W=13,CI=3,CO=5,KH=3,KW=3,pad=1",
      "N=1,H=17,W=11,CI=6,CO=10,KH=3,KW=5,stride=2,pad=2",
      "N=1,H=13,W=13,CI=5,CO=7,KH=3,KW=3,dilation=2,pad=2",
      "N=1,H=9,W=10,CI=8,CO=12,KH=3,KW=3,pad=1,groups=4",
      "N=1,H=5,W=6,CI=6,CO=6,KH=3,KW=3,pad=1,groups=6",
      "N=1,H=4,W=3,CI=3,CO=4,KH=2,KW=2,pad=5",
      "N=1,H=9,W=9,CI=17,CO=19,KH=1,KW=1",
      "N=1,H=11,W=7,CI=4,CO=6,KH=3,KW=3,stride=2,pad=3,dilation=2,groups=2",
      "N=2,H=9,W=9,CI=7,CO=9,KH=3,KW=3,pad=1,dtype=int8",
      "N=1,H=10,W=9,CI=6,CO=4,KH=5,KW=3,stride=2,pad=2,dilation=2,groups=2,dtype=int8",
      "N=1,H=3,W=5,CI=2,CO=3,KH=1,KW=1,stride=3,pad=4,dtype=int8",
      "N=1,H=6,W=7,CI=3,CO=5,KH=3,KW=3,pad=1,bias=1,activation=relu",
      "N=2,H=5,W=5,CI=4,CO=4,KH=3,KW=3,stride=2,pad=1,groups=2,bias=1,activation=gelu",
      "N=1,H=7,W=7,CI=3,CO=17,KH=1,KW=1,activation=relu",
      "N=1,H=8,W=6,CI=5,CO=3,KH=3,KW=3,pad=2,dilation=2,bias=1",
      "N=1,H=9,W=8,CI=6,CO=7,KH=3,KW=3,pad=1,dtype=int8,bias=1,activation=relu",
  };
  std::vector<std::string> out;
  for (auto& s : shapes) out.push_back(op + ":" + s);
  return out;
}

const bool kCases = add_cases({
    {"conv2d_nchw", [](const OpArgs& a, const Inputs& in) { return ref_conv2d(a, in, false); },
     conv_specs("conv2d_nchw")},
    {"conv2d_nhwc", [](const OpArgs& a, const Inputs& in) { return ref_conv2d(a, in, true); },
     conv_specs("conv2d_nhwc")},
    {"depthwise_conv2d",
     ref_depthwise,
     {"depthwise_conv2d:N=1,H=8,W=8,C=8,KH=3,KW=3,pad=1",
      "depthwise_conv2d:N=1,H=8,W=8,C=8,KH=3,KW=3,pad=1,layout=NHWC",
      "depthwise_conv2d:N=2,H=13,W=7,C=5,multiplier=2,KH=3,KW=3,stride=2,pad=1",
      "depthwise_conv2d:N=1,H=11,W=11,C=3,multiplier=3,KH=5,KW=5,pad=4,dilation=2,layout=NHWC",
      "depthwise_conv2d:N=1,H=1,W=1,C=1,KH=1,KW=1", "depthwise_conv2d:N=1,H=9,W=6,C=17,KH=3,KW=3,pad=1,dtype=int8",
      "depthwise_conv2d:N=1,H=7,W=7,C=4,multiplier=2,KH=3,KW=3,stride=2,pad=3,layout=NHWC,dtype=int8",
      "depthwise_conv2d:N=1,H=12,W=12,C=32,KH=3,KW=3,stride=2,pad=1,bias=1,activation=relu",
      "depthwise_conv2d:N=1,H=6,W=9,C=5,multiplier=2,KH=3,KW=3,pad=1,layout=NHWC,bias=1,activation=gelu",
      "depthwise_conv2d:N=1,H=6,W=5,C=3,KH=3,KW=3,pad=1,dtype=int8,bias=1,activation=relu"}},
    {"conv2d_transpose",
     ref_conv2d_transpose,
     {"conv2d_transpose:N=1,H=4,W=4,CI=3,CO=5,KH=3,KW=3,stride=2,pad=1",
      "conv2d_transpose:N=1,H=5,W=7,CI=4,CO=2,KH=3,KW=3,stride=1,pad=1",
      "conv2d_transpose:N=2,H=3,W=5,CI=2,CO=3,KH=4,KW=4,stride=2,pad=1,output_padding=1",
      "conv2d_transpose:N=1,H=1,W=1,CI=1,CO=1,KH=1,KW=1",
      "conv2d_transpose:N=1,H=6,W=5,CI=3,CO=4,KH=3,KW=2,stride=3,pad=0,dilation=2",
      "conv2d_transpose:N=1,H=7,W=4,CI=5,CO=3,KH=5,KW=3,stride=2,pad=2,dtype=int8",
      "conv2d_transpose:N=1,H=3,W=3,CI=2,CO=2,KH=3,KW=3,stride=1,pad=4,dilation=3,dtype=int8"}},
});

}  // namespace

TEST_CASE("oplib conv2d_nchw: stride, padding, dilation, groups, int8", "[oplib]") { check_op("conv2d_nchw"); }
TEST_CASE("oplib conv2d_nhwc: stride, padding, dilation, groups, int8", "[oplib]") { check_op("conv2d_nhwc"); }
TEST_CASE("oplib depthwise_conv2d: both layouts, multiplier, int8", "[oplib]") { check_op("depthwise_conv2d"); }
TEST_CASE("oplib conv2d_transpose: stride, output_padding, dilation, int8", "[oplib]") { check_op("conv2d_transpose"); }
