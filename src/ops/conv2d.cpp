// Conv2d definitions (plain and weight-packed) and the register-tiled CPU schedule.
#include "tessel/ops/conv2d.h"

#include "builtin_ops.h"
#include "tessel/ops/registry.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

const char* layout_name(ConvLayout l) { return l == ConvLayout::kNHWC ? "NHWC" : "NCHW"; }

namespace {

void check_shape(const Conv2dShape& s) {
  TESSEL_CHECK(s.N > 0 && s.H > 0 && s.W > 0 && s.CI > 0 && s.CO > 0 && s.KH > 0 && s.KW > 0 && s.stride > 0 &&
               s.pad >= 0)
      << "conv2d: extents, kernel and stride must be positive and padding non-negative";
  TESSEL_CHECK(s.HO() > 0 && s.WO() > 0) << "conv2d: the kernel is larger than the padded input";
}

// Zero-padded input: Ipad in the same layout as In.
Tensor pad_input(const Tensor& in, const Conv2dShape& s, ConvLayout layout) {
  int HP = s.H + 2 * s.pad, WP = s.W + 2 * s.pad;
  auto inside = [&](Expr y, Expr x) { return y >= s.pad && y < s.H + s.pad && x >= s.pad && x < s.W + s.pad; };
  auto zero = ir::make_zero(in.dtype());
  if (s.pad == 0) {
    if (layout == ConvLayout::kNHWC)
      return te::compute({s.N, HP, WP, s.CI}, [&](Var n, Var y, Var x, Var c) { return in(n, y, x, c); }, "Ipad");
    return te::compute({s.N, s.CI, HP, WP}, [&](Var n, Var c, Var y, Var x) { return in(n, c, y, x); }, "Ipad");
  }
  if (layout == ConvLayout::kNHWC)
    return te::compute(
        {s.N, HP, WP, s.CI},
        [&](Var n, Var y, Var x, Var c) { return ir::if_then_else(inside(y, x), in(n, y - s.pad, x - s.pad, c), zero); },
        "Ipad");
  return te::compute(
      {s.N, s.CI, HP, WP},
      [&](Var n, Var c, Var y, Var x) { return ir::if_then_else(inside(y, x), in(n, c, y - s.pad, x - s.pad), zero); },
      "Ipad");
}

}  // namespace

std::vector<Tensor> conv2d(const Conv2dShape& s, ConvLayout layout) {
  check_shape(s);
  auto f32 = ir::DataType::float32();
  bool nhwc = layout == ConvLayout::kNHWC;
  Tensor in = nhwc ? te::placeholder({s.N, s.H, s.W, s.CI}, f32, "In") : te::placeholder({s.N, s.CI, s.H, s.W}, f32, "In");
  Tensor w = nhwc ? te::placeholder({s.KH, s.KW, s.CI, s.CO}, f32, "W") : te::placeholder({s.CO, s.CI, s.KH, s.KW}, f32, "W");
  Tensor ip = pad_input(in, s, layout);
  auto kh = te::reduce_axis(s.KH, "kh"), kw = te::reduce_axis(s.KW, "kw"), ci = te::reduce_axis(s.CI, "ci");
  Tensor out = nhwc ? te::compute({s.N, s.HO(), s.WO(), s.CO},
                                  [&](Var n, Var y, Var x, Var co) {
                                    return te::sum(ip(n, y * s.stride + kh->var, x * s.stride + kw->var, ci->var) *
                                                       w(kh->var, kw->var, ci->var, co),
                                                   {kh, kw, ci});
                                  },
                                  "Out")
                    : te::compute({s.N, s.CO, s.HO(), s.WO()},
                                  [&](Var n, Var co, Var y, Var x) {
                                    return te::sum(ip(n, ci->var, y * s.stride + kh->var, x * s.stride + kw->var) *
                                                       w(co, ci->var, kh->var, kw->var),
                                                   {ci, kh, kw});
                                  },
                                  "Out");
  return {in, w, out};
}

std::vector<Tensor> conv2d_packed(const Conv2dShape& s, ConvLayout layout, int nr) {
  check_shape(s);
  TESSEL_CHECK(nr > 0 && s.CO % nr == 0) << "conv2d_packed: CO=" << s.CO << " must be a multiple of nr=" << nr;
  auto f32 = ir::DataType::float32();
  bool nhwc = layout == ConvLayout::kNHWC;
  Tensor in = nhwc ? te::placeholder({s.N, s.H, s.W, s.CI}, f32, "In") : te::placeholder({s.N, s.CI, s.H, s.W}, f32, "In");
  Tensor wp = te::placeholder({s.CO / nr, s.KH, s.KW, s.CI, nr}, f32, "Wp");
  Tensor ip = pad_input(in, s, layout);
  auto kh = te::reduce_axis(s.KH, "kh"), kw = te::reduce_axis(s.KW, "kw"), ci = te::reduce_axis(s.CI, "ci");
  auto body = [&](Var n, Var y, Var x, Var co) {
    Expr a = nhwc ? ip(n, y * s.stride + kh->var, x * s.stride + kw->var, ci->var)
                  : ip(n, ci->var, y * s.stride + kh->var, x * s.stride + kw->var);
    return te::sum(a * wp(co / nr, kh->var, kw->var, ci->var, co % nr), {kh, kw, ci});
  };
  if (nhwc) return {in, wp, te::compute({s.N, s.HO(), s.WO(), s.CO}, body, "Out")};
  Tensor t = te::compute({s.N, s.HO(), s.WO(), s.CO}, body, "T");
  Tensor out = te::compute({s.N, s.CO, s.HO(), s.WO()}, [&](Var n, Var co, Var y, Var x) { return t(n, y, x, co); }, "Out");
  return {in, wp, out};
}

std::vector<Tensor> pack_conv2d_weights(const Conv2dShape& s, ConvLayout layout, int nr) {
  check_shape(s);
  TESSEL_CHECK(nr > 0 && s.CO % nr == 0) << "pack_conv2d_weights: CO=" << s.CO << " must be a multiple of nr=" << nr;
  auto f32 = ir::DataType::float32();
  bool nhwc = layout == ConvLayout::kNHWC;
  Tensor w = nhwc ? te::placeholder({s.KH, s.KW, s.CI, s.CO}, f32, "W") : te::placeholder({s.CO, s.CI, s.KH, s.KW}, f32, "W");
  Tensor wp = te::compute(
      {s.CO / nr, s.KH, s.KW, s.CI, nr},
      [&](const std::vector<Var>& v) {
        Expr co = v[0] * nr + v[4];
        return nhwc ? w(v[1], v[2], v[3], co) : w(co, v[3], v[1], v[2]);
      },
      "Wp");
  return {w, wp};
}

Conv2dCpuParams conv2d_cpu_params(const Conv2dShape& s, int vector_bytes) {
  Conv2dCpuParams p;
  int lanes = std::max(1, vector_bytes / 4);
  p.nr = s.CO % (2 * lanes) == 0 ? 2 * lanes : lanes;
  int max_rows = vector_bytes >= 64 ? 14 : 6;  // accumulators: rows x (nr / lanes) within the register file
  if (p.nr == lanes) max_rows *= 2;
  p.mr = 1;
  for (int m = std::min(max_rows, s.WO()); m >= 1; --m)
    if (s.WO() % m == 0) {
      p.mr = m;
      break;
    }
  return p;
}

schedule::Schedule schedule_conv2d_packed_cpu(const std::vector<Tensor>& t, const Conv2dShape& s, ConvLayout layout,
                                              const Conv2dCpuParams& p) {
  TESSEL_CHECK(t.size() == 3) << "schedule_conv2d_packed_cpu expects {In, Wp, Out} from conv2d_packed";
  TESSEL_CHECK(s.WO() % p.mr == 0 && s.CO % p.nr == 0)
      << "schedule_conv2d_packed_cpu: mr=" << p.mr << " must divide WO=" << s.WO() << " and nr=" << p.nr
      << " must divide CO=" << s.CO;
  schedule::Schedule sch({t[2]});
  bool nhwc = layout == ConvLayout::kNHWC;
  // The accumulating stage: Out itself (NHWC) or the NHWC tile T (NCHW). Its axes: i=n, j=y, l=x, m=co.
  std::string acc = nhwc ? "Out" : "T";
  auto [ko, ki] = sch.split(acc, "ci", p.cunroll);
  if (nhwc) {
    auto [xo, xi] = sch.split(acc, "l", p.mr);
    auto [co, cin] = sch.split(acc, "m", p.nr);
    sch.reorder(acc, {"i", co, "j", xo, "kh", "kw", ko, ki, xi, cin});
    sch.unroll(acc, xi);
    sch.vectorize(acc, cin);
    if (p.parallel) sch.parallel(acc, sch.fuse(acc, {co, "j"}));
  } else {
    // Out[n][co][y][x]: tiles of nr channels x mr pixels; T (the tile, NHWC) computed inside.
    auto [co, cin] = sch.split("Out", "j", p.nr);
    auto [xo, xi] = sch.split("Out", "m", p.mr);
    sch.reorder("Out", {"i", co, "l", xo, cin, xi});
    std::string par = sch.fuse("Out", {co, "l"});
    if (p.parallel) sch.parallel("Out", par);
    sch.compute_at(acc, "Out", xo);
    sch.reorder(acc, {"i", "j", "kh", "kw", ko, ki, "l", "m"});
    sch.unroll(acc, "l");
    sch.vectorize(acc, "m");
  }
  sch.unroll(acc, ki);
  if (s.pad == 0) {  // nothing to pad: read the input directly
    sch.compute_inline("Ipad");
    return sch;
  }
  // The padded copy: rows in parallel, the innermost (contiguous) axis vectorized.
  std::string rows = sch.fuse("Ipad", {"i", "j"});
  if (p.parallel) sch.parallel("Ipad", rows);
  auto [mo, mi] = sch.split("Ipad", "m", 16);
  sch.vectorize("Ipad", mi);
  return sch;
}

namespace {
// Out[n][co][y*W + x] = sum_ci W[co][ci] * In[n][ci][y*W + x]: co rows broadcast from the weights, the
// flattened spatial axis vectorized, accumulated in registers over ci.
schedule::Schedule schedule_pointwise_nchw(const std::vector<Tensor>& t, const Conv2dShape& s, int vector_bytes) {
  int lanes = std::max(1, vector_bytes / 4);
  int nr = 2 * lanes, mr = vector_bytes >= 64 ? 8 : 6;
  while (s.CO % mr) --mr;
  schedule::Schedule sch({t[2]});
  sch.compute_inline("Ipad");
  std::string f = sch.fuse("Out", {"l", "m"});  // y, x -> flat spatial
  auto [fo, fi] = sch.split("Out", f, nr);
  auto [co, cin] = sch.split("Out", "j", mr);
  auto [ko, ki] = sch.split("Out", "ci", 4);
  sch.reorder("Out", {"i", co, fo, "kh", "kw", ko, ki, cin, fi});
  sch.unroll("Out", ki);
  sch.unroll("Out", cin);
  sch.vectorize("Out", fi);
  sch.parallel("Out", sch.fuse("Out", {co, fo}));
  return sch;
}
}  // namespace

Conv2dKernel conv2d_cpu_kernel(const Conv2dShape& s, ConvLayout layout, int vector_bytes) {
  bool pointwise = s.KH == 1 && s.KW == 1 && s.stride == 1 && s.pad == 0;
  if (layout == ConvLayout::kNCHW && pointwise) {
    auto t = conv2d(s, layout);
    return {t, schedule_pointwise_nchw(t, s, vector_bytes), {}};
  }
  Conv2dCpuParams p = conv2d_cpu_params(s, vector_bytes);
  auto t = conv2d_packed(s, layout, p.nr);
  return {t, schedule_conv2d_packed_cpu(t, s, layout, p), pack_conv2d_weights(s, layout, p.nr)};
}

void register_conv2d_ops() {
  // The general conv2d operators (stride, padding, dilation, groups, int8) are registered by the
  // operator library; this file provides the fast fp32 kernels used by the benchmarks.
}

}  // namespace tessel::ops
