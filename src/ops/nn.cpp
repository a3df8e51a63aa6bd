// Neural-network operators: dense (+ bias + relu / gelu), max / avg / global average pooling, softmax,
// layer_norm, and their registration. Reductions are separate stages (a reduction must be a whole
// compute body); the elementwise stages after them are the operators' outputs.
#include "tessel/ops/nn.h"

#include <cmath>

#include "builtin_ops.h"
#include "op_util.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {
const ir::DataType kF32 = ir::DataType::float32();
}

OpTensors dense(int M, int N, int K, bool bias, Activation act) {
  TESSEL_CHECK(M > 0 && N > 0 && K > 0) << "dense: M, N, K must be positive";
  Tensor X = te::placeholder({M, K}, kF32, "X");
  Tensor W = te::placeholder({N, K}, kF32, "W");
  ir::IterVar k = te::reduce_axis(K, "k");
  bool epilogue = bias || act != Activation::kNone;
  Tensor D = te::compute(
      {M, N}, [&](Var i, Var j) { return te::sum(X(i, k->var) * W(j, k->var), {k}); }, epilogue ? "D" : "Out");
  if (!epilogue) return {{X, W}, {D}};
  Tensor B = bias ? te::placeholder({N}, kF32, "Bias") : Tensor();
  Tensor out = te::compute(
      {M, N}, [&](Var i, Var j) { return apply_activation(act, bias ? D(i, j) + B(j) : Expr(D(i, j))); }, "Out");
  if (bias) return {{X, W, B}, {out}};
  return {{X, W}, {out}};
}

int PoolParams::HO() const { return detail::window_out(H, KH, stride, pad); }
int PoolParams::WO() const { return detail::window_out(W, KW, stride, pad); }

namespace {

void check_pool(const PoolParams& p, const char* op) {
  TESSEL_CHECK(p.N > 0 && p.C > 0 && p.H > 0 && p.W > 0 && p.KH > 0 && p.KW > 0 && p.stride > 0 && p.pad >= 0)
      << op << ": extents, kernel and stride must be positive and padding non-negative";
  TESSEL_CHECK(p.pad < p.KH && p.pad < p.KW) << op << ": pad=" << p.pad << " must be smaller than the kernel " << p.KH
                                             << "x" << p.KW << " (otherwise a window can lie entirely in the padding)";
  TESSEL_CHECK(p.HO() > 0 && p.WO() > 0) << op << ": the kernel is larger than the padded input";
}

// In padded by p.pad on both sides of H and W with `fill` ("Ipad"), or In itself when unpadded.
Tensor pad_pool(const Tensor& in, const PoolParams& p, Expr fill) {
  if (p.pad == 0) return in;
  int HP = p.H + 2 * p.pad, WP = p.W + 2 * p.pad;
  auto inside = [&](Expr y, Expr x) { return y >= p.pad && y < p.H + p.pad && x >= p.pad && x < p.W + p.pad; };
  if (p.layout == ConvLayout::kNHWC)
    return te::compute(
        {p.N, HP, WP, p.C},
        [&](Var n, Var y, Var x, Var c) {
          return ir::if_then_else(inside(y, x), in(n, y - p.pad, x - p.pad, c), fill);
        },
        "Ipad");
  return te::compute(
      {p.N, p.C, HP, WP},
      [&](Var n, Var c, Var y, Var x) { return ir::if_then_else(inside(y, x), in(n, c, y - p.pad, x - p.pad), fill); },
      "Ipad");
}

Tensor pool_input(const PoolParams& p) {
  return p.layout == ConvLayout::kNHWC ? te::placeholder({p.N, p.H, p.W, p.C}, kF32, "In")
                                       : te::placeholder({p.N, p.C, p.H, p.W}, kF32, "In");
}

// A compute over the pooled output shape; body(n, c, y, x) in logical coordinates.
Tensor pool_compute(const PoolParams& p, const std::function<Expr(Var, Var, Var, Var)>& body, const std::string& name) {
  if (p.layout == ConvLayout::kNHWC)
    return te::compute(
        {p.N, p.HO(), p.WO(), p.C}, [&](Var n, Var y, Var x, Var c) { return body(n, c, y, x); }, name);
  return te::compute(
      {p.N, p.C, p.HO(), p.WO()}, [&](Var n, Var c, Var y, Var x) { return body(n, c, y, x); }, name);
}

Expr read_nc(const Tensor& t, ConvLayout layout, Expr n, Expr c, Expr y, Expr x) {
  return layout == ConvLayout::kNHWC ? t(n, y, x, c) : t(n, c, y, x);
}

}  // namespace

OpTensors max_pool(const PoolParams& p) {
  check_pool(p, "max_pool");
  Tensor in = pool_input(p);
  Tensor ip = pad_pool(in, p, ir::min_value(kF32));
  auto kh = te::reduce_axis(p.KH, "kh"), kw = te::reduce_axis(p.KW, "kw");
  Tensor out = pool_compute(
      p,
      [&](Var n, Var c, Var y, Var x) {
        return te::reduce_max(read_nc(ip, p.layout, n, c, y * p.stride + kh->var, x * p.stride + kw->var), {kh, kw});
      },
      "Out");
  return {{in}, {out}};
}

OpTensors avg_pool(const PoolParams& p, bool count_include_pad) {
  check_pool(p, "avg_pool");
  Tensor in = pool_input(p);
  Tensor ip = pad_pool(in, p, ir::make_zero(kF32));
  auto kh = te::reduce_axis(p.KH, "kh"), kw = te::reduce_axis(p.KW, "kw");
  Tensor s = pool_compute(
      p,
      [&](Var n, Var c, Var y, Var x) {
        return te::sum(read_nc(ip, p.layout, n, c, y * p.stride + kh->var, x * p.stride + kw->var), {kh, kw});
      },
      "S");
  Tensor out = pool_compute(
      p,
      [&](Var n, Var c, Var y, Var x) -> Expr {
        Expr sum = read_nc(s, p.layout, n, c, y, x);
        if (count_include_pad || p.pad == 0) return sum * float(1.0 / (p.KH * p.KW));
        // Rows [y*stride, y*stride + KH) of the padded input, of which [pad, H + pad) are real.
        Expr y0 = y * p.stride, x0 = x * p.stride;
        Expr rows = ir::min(y0 + p.KH, p.H + p.pad) - ir::max(y0, p.pad);
        Expr cols = ir::min(x0 + p.KW, p.W + p.pad) - ir::max(x0, p.pad);
        return sum / ir::cast(kF32, rows * cols);
      },
      "Out");
  return {{in}, {out}};
}

OpTensors global_avg_pool(int N, int C, int H, int W, ConvLayout layout) {
  TESSEL_CHECK(N > 0 && C > 0 && H > 0 && W > 0) << "global_avg_pool: extents must be positive";
  bool nhwc = layout == ConvLayout::kNHWC;
  Tensor in = nhwc ? te::placeholder({N, H, W, C}, kF32, "In") : te::placeholder({N, C, H, W}, kF32, "In");
  auto rh = te::reduce_axis(H, "rh"), rw = te::reduce_axis(W, "rw");
  float scale = float(1.0 / (double(H) * W));
  Tensor s, out;
  if (nhwc) {
    s = te::compute(
        {N, 1, 1, C},
        [&](Var n, Var, Var, Var c) {
          return te::sum(in(n, rh->var, rw->var, c), {rh, rw});
        },
        "S");
    out = te::compute(
        {N, 1, 1, C}, [&](Var n, Var y, Var x, Var c) { return s(n, y, x, c) * scale; }, "Out");
  } else {
    s = te::compute(
        {N, C, 1, 1},
        [&](Var n, Var c, Var, Var) {
          return te::sum(in(n, c, rh->var, rw->var), {rh, rw});
        },
        "S");
    out = te::compute(
        {N, C, 1, 1}, [&](Var n, Var c, Var y, Var x) { return s(n, c, y, x) * scale; }, "Out");
  }
  return {{in}, {out}};
}

OpTensors softmax(int M, int N) {
  TESSEL_CHECK(M > 0 && N > 0) << "softmax: M, N must be positive";
  Tensor X = te::placeholder({M, N}, kF32, "X");
  auto k = te::reduce_axis(N, "k");
  Tensor mx = te::compute(
      {M}, [&](Var i) { return te::reduce_max(X(i, k->var), {k}); }, "Max");
  Tensor e = te::compute(
      {M, N}, [&](Var i, Var j) { return ir::exp(X(i, j) - mx(i)); }, "E");
  auto k2 = te::reduce_axis(N, "k");
  Tensor sum = te::compute(
      {M}, [&](Var i) { return te::sum(e(i, k2->var), {k2}); }, "Sum");
  Tensor out = te::compute(
      {M, N}, [&](Var i, Var j) { return e(i, j) / sum(i); }, "Out");
  return {{X}, {out}};
}

OpTensors layer_norm(int M, int N, double eps) {
  TESSEL_CHECK(M > 0 && N > 0) << "layer_norm: M, N must be positive";
  TESSEL_CHECK(eps > 0) << "layer_norm: eps must be positive";
  Tensor X = te::placeholder({M, N}, kF32, "X");
  Tensor gamma = te::placeholder({N}, kF32, "Gamma");
  Tensor beta = te::placeholder({N}, kF32, "Beta");
  float inv_n = float(1.0 / N);
  auto k = te::reduce_axis(N, "k");
  Tensor sum = te::compute(
      {M}, [&](Var i) { return te::sum(X(i, k->var), {k}); }, "Sum");
  Tensor mean = te::compute(
      {M}, [&](Var i) { return sum(i) * inv_n; }, "Mean");
  auto k2 = te::reduce_axis(N, "k");
  Tensor var_sum = te::compute(
      {M},
      [&](Var i) {
        Expr d = X(i, k2->var) - mean(i);
        return te::sum(d * d, {k2});
      },
      "VarSum");
  Tensor out = te::compute(
      {M, N},
      [&](Var i, Var j) {
        Expr rstd = Expr(1.0f) / ir::sqrt(var_sum(i) * inv_n + float(eps));
        return (X(i, j) - mean(i)) * rstd * gamma(j) + beta(j);
      },
      "Out");
  return {{X, gamma, beta}, {out}};
}

namespace {

OpParam layout_param() { return {"layout", "NCHW", "data layout", {"NCHW", "NHWC"}}; }

ConvLayout layout_of(const OpArgs& a) { return a.s("layout") == "NHWC" ? ConvLayout::kNHWC : ConvLayout::kNCHW; }

PoolParams pool_params(const OpArgs& a) {
  PoolParams p;
  p.N = a.ii("N");
  p.C = a.ii("C");
  p.H = a.ii("H");
  p.W = a.ii("W");
  p.KH = a.ii("KH");
  p.KW = a.ii("KW");
  p.stride = a.ii("stride");
  p.pad = a.ii("pad");
  p.layout = layout_of(a);
  return p;
}

std::vector<OpParam> pool_param_list(bool avg) {
  std::vector<OpParam> ps = {{"N", "1", "batch", {}, 1},
                             {"C", "", "channels", {}, 1},
                             {"H", "", "input height", {}, 1},
                             {"W", "", "input width", {}, 1},
                             {"KH", "2", "window height", {}, 1, 1024},
                             {"KW", "2", "window width", {}, 1, 1024},
                             {"stride", "2", "stride along H and W", {}, 1, 64},
                             {"pad", "0", "padding on each side (smaller than the window)", {}, 0, 1023},
                             layout_param()};
  if (avg) ps.push_back({"count_include_pad", "0", "1: divide by KH*KW; 0: by the real elements covered", {}, 0, 1});
  return ps;
}

}  // namespace

void register_nn_ops() {
  register_op({"dense",
               "Out[M, N] = act(X[M, K] W[N, K]^T + bias[N]), act = none|relu|gelu",
               {{"M", "", "rows (batch)", {}, 1},
                {"N", "", "output features", {}, 1},
                {"K", "", "input features", {}, 1},
                {"bias", "1", "add a bias vector", {}, 0, 1},
                {"activation", "none", "applied after the bias", {"none", "relu", "gelu"}}},
               [](const OpArgs& a) {
                 return dense(a.ii("M"), a.ii("N"), a.ii("K"), a.i("bias") != 0, parse_activation(a.s("activation")));
               }});
  register_op({"max_pool", "max over KHxKW windows (padding never wins)", pool_param_list(false),
               [](const OpArgs& a) { return max_pool(pool_params(a)); }});
  register_op({"avg_pool", "mean over KHxKW windows (by default of the real elements only)", pool_param_list(true),
               [](const OpArgs& a) { return avg_pool(pool_params(a), a.i("count_include_pad") != 0); }});
  register_op(
      {"global_avg_pool",
       "mean over H and W: [N, C, 1, 1] (NCHW) or [N, 1, 1, C] (NHWC)",
       {{"N", "1", "batch", {}, 1},
        {"C", "", "channels", {}, 1},
        {"H", "", "height", {}, 1},
        {"W", "", "width", {}, 1},
        layout_param()},
       [](const OpArgs& a) { return global_avg_pool(a.ii("N"), a.ii("C"), a.ii("H"), a.ii("W"), layout_of(a)); }});
  register_op({"softmax",
               "softmax of each row of X[M, N] (max subtracted first)",
               {{"M", "", "rows", {}, 1}, {"N", "", "row length (the softmax axis)", {}, 1}},
               [](const OpArgs& a) { return softmax(a.ii("M"), a.ii("N")); }});
  register_op(
      {"layer_norm",
       "layer normalization of each row of X[M, N] with Gamma[N], Beta[N], eps = 10^-eps_exp",
       {{"M", "", "rows", {}, 1},
        {"N", "", "row length (the normalized axis)", {}, 1},
        {"eps_exp", "5", "eps = 10^-eps_exp", {}, 1, 12}},
       [](const OpArgs& a) { return layer_norm(a.ii("M"), a.ii("N"), std::pow(10.0, -double(a.i("eps_exp")))); }});
}

}  // namespace tessel::ops
