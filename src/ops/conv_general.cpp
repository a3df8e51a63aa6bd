// The general conv2d family: grouped / dilated conv2d in NCHW and NHWC, depthwise conv2d and
// conv2d_transpose, fp32 or int8 (accumulated in int32), and their registration.
//   conv2d_general    padding stage "Ipad" (if_then_else, only when pad > 0) + one reduction "Out" (or
//                     "Conv" followed by "Out" = act(Conv + Bias));
//                     fp32 with groups == 1 and dilation == 1 delegates to ops::conv2d, so the
//                     registry's conv2d_* workloads are the very computations the benchmarks time.
//   depthwise_conv2d  "Ipad" + "Out" reducing over (kh, kw) only.
//   conv2d_transpose  one reduction whose input reads are guarded (no dilated copy of the input).
#include "tessel/ops/conv_general.h"

#include "builtin_ops.h"
#include "op_util.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

int ConvParams::HO() const { return detail::window_out(H, KH, stride, pad, dilation); }
int ConvParams::WO() const { return detail::window_out(W, KW, stride, pad, dilation); }

namespace {

void check_params(const ConvParams& p, const char* op) {
  TESSEL_CHECK(p.N > 0 && p.H > 0 && p.W > 0 && p.CI > 0 && p.CO > 0 && p.KH > 0 && p.KW > 0)
      << op << ": extents, channels and kernel sizes must be positive";
  TESSEL_CHECK(p.stride > 0 && p.dilation > 0 && p.pad >= 0 && p.groups > 0)
      << op << ": stride, dilation and groups must be positive and padding non-negative";
  TESSEL_CHECK(p.dtype == ir::DataType::float32() || p.dtype == ir::DataType::int8())
      << op << ": dtype must be float32 or int8, got " << p.dtype.to_string();
  TESSEL_CHECK(!(p.act == Activation::kGelu && p.dtype.is_integer()))
      << op << ": activation gelu needs float32 (the int8 convolution produces int32); use relu or none";
}

// In zero-padded by p.pad on both sides of H and W ("Ipad"), or In itself when there is no padding.
Tensor pad_hw(const Tensor& in, const ConvParams& p, bool nhwc) {
  if (p.pad == 0) return in;
  int HP = p.H + 2 * p.pad, WP = p.W + 2 * p.pad, C = p.CI;
  auto inside = [&](Expr y, Expr x) { return y >= p.pad && y < p.H + p.pad && x >= p.pad && x < p.W + p.pad; };
  if (nhwc)
    return te::compute(
        {p.N, HP, WP, C},
        [&](Var n, Var y, Var x, Var c) {
          return detail::read_or_zero(inside(y, x), in, {n, y - p.pad, x - p.pad, c});
        },
        "Ipad");
  return te::compute(
      {p.N, C, HP, WP},
      [&](Var n, Var c, Var y, Var x) {
        return detail::read_or_zero(inside(y, x), in, {n, c, y - p.pad, x - p.pad});
      },
      "Ipad");
}

// y * stride + k * dilation, without multiplications by 1.
Expr window_index(Expr y, Expr k, int stride, int dilation) {
  Expr a = stride == 1 ? y : y * stride;
  return a + (dilation == 1 ? k : k * dilation);
}

// The convolution's output stage name: "Out" unless a bias / activation stage follows it.
const char* conv_stage_name(const ConvParams& p) { return p.bias || p.act != Activation::kNone ? "Conv" : "Out"; }

// {In, W(, Bias)} -> act(conv + Bias[channel]) as stage "Out", or conv itself when there is nothing to add.
OpTensors with_epilogue(const Tensor& in, const Tensor& w, const Tensor& conv, const ConvParams& p, bool nhwc) {
  if (!p.bias && p.act == Activation::kNone) return {{in, w}, {conv}};
  Tensor b = p.bias ? te::placeholder({p.CO}, conv.dtype(), "Bias") : Tensor();
  Tensor out = te::compute(
      conv.shape(),
      [&](const std::vector<Var>& v) {
        Expr x = conv(std::vector<Expr>(v.begin(), v.end()));
        if (p.bias) x = x + b(v[nhwc ? 3 : 1]);
        return apply_activation(p.act, x);
      },
      "Out");
  if (p.bias) return {{in, w, b}, {out}};
  return {{in, w}, {out}};
}

}  // namespace

OpTensors conv2d_general(const ConvParams& p, ConvLayout layout) {
  check_params(p, "conv2d");
  TESSEL_CHECK(p.CI % p.groups == 0 && p.CO % p.groups == 0)
      << "conv2d: groups=" << p.groups << " must divide CI=" << p.CI << " and CO=" << p.CO;
  TESSEL_CHECK(p.HO() > 0 && p.WO() > 0) << "conv2d: the (dilated) kernel " << p.KH << "x" << p.KW
                                         << " is larger than the padded input " << p.H + 2 * p.pad << "x"
                                         << p.W + 2 * p.pad;
  bool nhwc = layout == ConvLayout::kNHWC;
  bool plain = !p.bias && p.act == Activation::kNone;
  if (p.dtype == ir::DataType::float32() && p.groups == 1 && p.dilation == 1 && plain) {
    auto t = conv2d(Conv2dShape{p.N, p.H, p.W, p.CI, p.CO, p.KH, p.KW, p.stride, p.pad}, layout);
    return {{t[0], t[1]}, {t[2]}};
  }
  int CIg = p.CI / p.groups, COg = p.CO / p.groups;
  ir::DataType acc = detail::accum_type(p.dtype);
  Tensor in = nhwc ? te::placeholder({p.N, p.H, p.W, p.CI}, p.dtype, "In")
                   : te::placeholder({p.N, p.CI, p.H, p.W}, p.dtype, "In");
  Tensor w = nhwc ? te::placeholder({p.KH, p.KW, CIg, p.CO}, p.dtype, "W")
                  : te::placeholder({p.CO, CIg, p.KH, p.KW}, p.dtype, "W");
  Tensor ip = pad_hw(in, p, nhwc);
  auto kh = te::reduce_axis(p.KH, "kh"), kw = te::reduce_axis(p.KW, "kw"), rc = te::reduce_axis(CIg, "ci");
  // The input channel read for output channel co: its group's first channel plus rc.
  auto in_channel = [&](Expr co) -> Expr { return p.groups == 1 ? Expr(rc->var) : (co / COg) * CIg + rc->var; };
  Tensor out;
  if (nhwc) {
    out = te::compute(
        {p.N, p.HO(), p.WO(), p.CO},
        [&](Var n, Var y, Var x, Var co) {
          Expr a = ip(n, window_index(y, kh->var, p.stride, p.dilation), window_index(x, kw->var, p.stride, p.dilation),
                      in_channel(co));
          return te::sum(detail::to(acc, a) * detail::to(acc, w(kh->var, kw->var, rc->var, co)), {kh, kw, rc});
        },
        conv_stage_name(p));
  } else {
    out = te::compute(
        {p.N, p.CO, p.HO(), p.WO()},
        [&](Var n, Var co, Var y, Var x) {
          Expr a = ip(n, in_channel(co), window_index(y, kh->var, p.stride, p.dilation),
                      window_index(x, kw->var, p.stride, p.dilation));
          return te::sum(detail::to(acc, a) * detail::to(acc, w(co, rc->var, kh->var, kw->var)), {rc, kh, kw});
        },
        conv_stage_name(p));
  }
  return with_epilogue(in, w, out, p, nhwc);
}

OpTensors depthwise_conv2d(const ConvParams& p, ConvLayout layout) {
  check_params(p, "depthwise_conv2d");
  TESSEL_CHECK(p.CO % p.CI == 0) << "depthwise_conv2d: CO=" << p.CO << " must be a multiple of CI=" << p.CI
                                 << " (the channel multiplier is CO / CI)";
  TESSEL_CHECK(p.HO() > 0 && p.WO() > 0) << "depthwise_conv2d: the (dilated) kernel is larger than the padded input";
  bool nhwc = layout == ConvLayout::kNHWC;
  int mult = p.CO / p.CI;
  ir::DataType acc = detail::accum_type(p.dtype);
  Tensor in = nhwc ? te::placeholder({p.N, p.H, p.W, p.CI}, p.dtype, "In")
                   : te::placeholder({p.N, p.CI, p.H, p.W}, p.dtype, "In");
  Tensor w = nhwc ? te::placeholder({p.KH, p.KW, p.CI, mult}, p.dtype, "W")
                  : te::placeholder({p.CI, mult, p.KH, p.KW}, p.dtype, "W");
  Tensor ip = pad_hw(in, p, nhwc);
  auto kh = te::reduce_axis(p.KH, "kh"), kw = te::reduce_axis(p.KW, "kw");
  auto chan = [&](Expr co) -> Expr { return mult == 1 ? co : co / mult; };
  auto sub = [&](Expr co) -> Expr { return mult == 1 ? Expr(0) : co % mult; };
  Tensor out;
  if (nhwc) {
    out = te::compute(
        {p.N, p.HO(), p.WO(), p.CO},
        [&](Var n, Var y, Var x, Var co) {
          Expr a = ip(n, window_index(y, kh->var, p.stride, p.dilation), window_index(x, kw->var, p.stride, p.dilation),
                      chan(co));
          return te::sum(detail::to(acc, a) * detail::to(acc, w(kh->var, kw->var, chan(co), sub(co))), {kh, kw});
        },
        conv_stage_name(p));
  } else {
    out = te::compute(
        {p.N, p.CO, p.HO(), p.WO()},
        [&](Var n, Var co, Var y, Var x) {
          Expr a = ip(n, chan(co), window_index(y, kh->var, p.stride, p.dilation),
                      window_index(x, kw->var, p.stride, p.dilation));
          return te::sum(detail::to(acc, a) * detail::to(acc, w(chan(co), sub(co), kh->var, kw->var)), {kh, kw});
        },
        conv_stage_name(p));
  }
  return with_epilogue(in, w, out, p, nhwc);
}

OpTensors conv2d_transpose(const ConvParams& p, int output_padding) {
  check_params(p, "conv2d_transpose");
  TESSEL_CHECK(output_padding >= 0 && (output_padding < p.stride || output_padding < p.dilation))
      << "conv2d_transpose: output_padding=" << output_padding << " must be smaller than stride or dilation";
  int HO = (p.H - 1) * p.stride - 2 * p.pad + p.dilation * (p.KH - 1) + output_padding + 1;
  int WO = (p.W - 1) * p.stride - 2 * p.pad + p.dilation * (p.KW - 1) + output_padding + 1;
  TESSEL_CHECK(HO > 0 && WO > 0) << "conv2d_transpose: padding " << p.pad << " leaves an empty output (" << HO << "x"
                                 << WO << ")";
  ir::DataType acc = detail::accum_type(p.dtype);
  Tensor in = te::placeholder({p.N, p.CI, p.H, p.W}, p.dtype, "In");
  Tensor w = te::placeholder({p.CI, p.CO, p.KH, p.KW}, p.dtype, "W");
  auto ci = te::reduce_axis(p.CI, "ci"), kh = te::reduce_axis(p.KH, "kh"), kw = te::reduce_axis(p.KW, "kw");
  Tensor out = te::compute(
      {p.N, p.CO, HO, WO},
      [&](Var n, Var co, Var y, Var x) {
        // Input row iy contributes to y when iy * stride == y + pad - kh * dilation.
        Expr ty = y + p.pad - kh->var * p.dilation, tx = x + p.pad - kw->var * p.dilation;
        Expr ok = ty >= 0 && tx >= 0;
        Expr iy = ty, ix = tx;
        if (p.stride > 1) {
          ok = ok && ir::eq(ty % p.stride, 0) && ir::eq(tx % p.stride, 0);
          iy = ty / p.stride;
          ix = tx / p.stride;
        }
        ok = ok && iy < p.H && ix < p.W;
        Expr a = detail::read_or_zero(ok, in, {n, ci->var, iy, ix});
        return te::sum(detail::to(acc, a) * detail::to(acc, w(ci->var, co, kh->var, kw->var)), {ci, kh, kw});
      },
      "Out");
  return {{in, w}, {out}};
}

namespace {

ConvParams conv_params(const OpArgs& a, const std::string& ci, const std::string& co) {
  ConvParams p;
  p.N = a.ii("N");
  p.H = a.ii("H");
  p.W = a.ii("W");
  p.CI = a.ii(ci);
  p.CO = co.empty() ? p.CI * a.ii("multiplier") : a.ii(co);
  p.KH = a.ii("KH");
  p.KW = a.ii("KW");
  p.stride = a.ii("stride");
  p.pad = a.ii("pad");
  p.dilation = a.ii("dilation");
  p.groups = a.values().count("groups") ? a.ii("groups") : 1;
  p.dtype = a.dtype();
  if (a.values().count("bias")) {
    p.bias = a.i("bias") != 0;
    p.act = parse_activation(a.s("activation"));
  }
  return p;
}

ConvLayout layout_of(const OpArgs& a) { return a.s("layout") == "NHWC" ? ConvLayout::kNHWC : ConvLayout::kNCHW; }

// The parameters every convolution shares (after its channel parameters).
std::vector<OpParam> window_params() {
  return {{"KH", "3", "kernel height", {}, 1, 1024},
          {"KW", "3", "kernel width", {}, 1, 1024},
          {"stride", "1", "stride along H and W", {}, 1, 64},
          {"pad", "0", "zero padding on each side of H and W", {}, 0, 4096},
          {"dilation", "1", "kernel dilation along H and W", {}, 1, 64}};
}

std::vector<OpParam> concat(std::vector<OpParam> a, const std::vector<OpParam>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Bias and activation after the convolution (conv2d and depthwise conv2d).
std::vector<OpParam> epilogue_params() {
  return {{"bias", "0", "add Bias[CO] (int32 for int8)", {}, 0, 1},
          {"activation", "none", "applied after the bias (gelu: float32 only)", {"none", "relu", "gelu"}}};
}

OpParam dtype_param() {
  return {"dtype", "float32", "input and weight type (int8 accumulates into an int32 output)", {"float32", "int8"}};
}

void register_conv(const char* name, ConvLayout layout, const char* summary) {
  std::vector<OpParam> ps = {{"N", "1", "batch", {}, 1},
                             {"H", "", "input height", {}, 1},
                             {"W", "", "input width", {}, 1},
                             {"CI", "", "input channels", {}, 1},
                             {"CO", "", "output channels", {}, 1}};
  ps = concat(ps, window_params());
  ps.push_back({"groups", "1", "channel groups (divides CI and CO)", {}, 1});
  ps.push_back(dtype_param());
  ps = concat(ps, epilogue_params());
  register_op(
      {name, summary, ps, [layout](const OpArgs& a) { return conv2d_general(conv_params(a, "CI", "CO"), layout); }});
}

}  // namespace

void register_conv_general_ops() {
  register_conv("conv2d_nchw", ConvLayout::kNCHW,
                "Out[N, CO, HO, WO] = act(conv2d(In[N, CI, H, W], W[CO, CI/groups, KH, KW]) + Bias[CO]) (stride, pad, "
                "dilation, groups)");
  register_conv("conv2d_nhwc", ConvLayout::kNHWC,
                "Out[N, HO, WO, CO] = act(conv2d(In[N, H, W, CI], W[KH, KW, CI/groups, CO]) + Bias[CO]) (stride, pad, "
                "dilation, groups)");
  register_op(
      {"depthwise_conv2d",
       "depthwise conv2d: NCHW W[C, multiplier, KH, KW] or NHWC W[KH, KW, C, multiplier]; C * multiplier outputs",
       concat({{"N", "1", "batch", {}, 1},
               {"H", "", "input height", {}, 1},
               {"W", "", "input width", {}, 1},
               {"C", "", "input channels", {}, 1},
               {"multiplier", "1", "output channels per input channel", {}, 1, 1024}},
              concat(window_params(),
                     concat({{"layout", "NCHW", "data layout", {"NCHW", "NHWC"}}, dtype_param()}, epilogue_params()))),
       [](const OpArgs& a) { return depthwise_conv2d(conv_params(a, "C", ""), layout_of(a)); }});
  register_op(
      {"conv2d_transpose",
       "Out[N, CO, HO, WO] = conv2d_transpose(In[N, CI, H, W], W[CI, CO, KH, KW]), "
       "HO = (H-1) stride - 2 pad + dilation (KH-1) + output_padding + 1",
       concat({{"N", "1", "batch", {}, 1},
               {"H", "", "input height", {}, 1},
               {"W", "", "input width", {}, 1},
               {"CI", "", "input channels", {}, 1},
               {"CO", "", "output channels", {}, 1}},
              concat(window_params(), {{"output_padding", "0", "extra rows / columns at the bottom / right", {}, 0, 63},
                                       dtype_param()})),
       [](const OpArgs& a) { return conv2d_transpose(conv_params(a, "CI", "CO"), a.ii("output_padding")); }});
}

}  // namespace tessel::ops
