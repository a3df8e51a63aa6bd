// The default CPU sketch rules (after Ansor's CPU sketch policy, written for tessel's primitives):
//   InlineInjective        elementwise intermediates are inlined into their consumers
//   MultiLevelTiling       reductions with data reuse (matmul, conv, ...): data axes tiled in 4 levels and
//                          reduction axes in 2, ordered S0 S1 R0 S2 R1 S3; the accumulating tile either in
//                          place, in a cache_write local tile, or fused into an elementwise epilogue (the
//                          output); outer S0 levels fused and parallel, the innermost S3 vectorized,
//                          auto-unroll depth as a knob
//   SimpleReduction        other reductions: parallel over data axes, optional compute_at into its consumer
//   InjectiveRoot          elementwise outputs: all axes fused, split by a vector width, parallel + vectorized
#include <algorithm>

#include "tessel/ir/functor.h"
#include "tessel/ir/simplify.h"
#include "rule_util.h"
#include "tessel/tuner/search_space.h"

namespace tessel::tuner {

using namespace rule_util;

namespace {

using schedule::Schedule;
using schedule::Stage;

class InlineInjective : public SketchRule {
 public:
  std::string name() const override { return "inline_injective"; }
  bool applies(const StageInfo& s, const Schedule&) const override { return !s.is_output && s.is_injective; }
  std::vector<int> declare(const StageInfo&, const Schedule&, RuleContext&) const override { return {}; }
  Status apply(const StageInfo& s, Schedule& sch, const std::vector<int>&, const RuleContext&) const override {
    if (s.stage->attach == schedule::AttachKind::kInline) return Status::ok();  // inlined by a consumer's rule
    return sch.apply(schedule::ComputeInlineStep{s.stage->name});
  }
};

// An axis the tiling rule works on: a root axis, or the last two data axes fused into one when every
// read indexes them as its last two dimensions with the same row length (a 1x1 convolution's H, W):
// then the fused axis is contiguous in memory and can be tiled by a multiple of the vector width.
struct TiledAxis {
  std::string name;
  int64_t extent;
  ir::IterKind kind;
};

bool spatial_fusable(const Stage& st) {
  auto* c = te::as_compute(st.op);
  if (!c || c->axis.size() < 2 || !c->reduce()) return false;
  const ir::VarNode* a = c->axis[c->axis.size() - 2]->var.get();
  const ir::VarNode* b = c->axis.back()->var.get();
  int64_t eb = *ir::as_const_int(c->axis.back()->extent);
  ir::VarRanges ranges;
  for (auto& r : c->reduce_axis) {
    int64_t lo = *ir::as_const_int(r->min), ext = *ir::as_const_int(r->extent);
    ranges[r->var.get()] = {ir::Expr(int(lo)), ir::Expr(int(lo + ext - 1))};
  }
  bool ok = true;
  ir::post_order_visit(c->body, [&](const ir::Expr& e) {
    auto* t = e.as<ir::TensorRead>();
    if (!t || !ok) return;
    std::vector<ir::Expr> idx;
    for (auto& i : t->indices) idx.push_back(ir::simplify(i, ranges));
    auto uses = [&](const ir::Expr& x) {
      return ir::uses_var(x, [&](const ir::VarNode* v) { return v == a || v == b; });
    };
    size_t n = idx.size();
    bool any = false;
    for (auto& i : idx) any |= uses(i);
    if (!any) return;
    auto& shape = t->producer->shape();
    ok = n >= 2 && idx[n - 2].as<ir::VarNode>() == a && idx[n - 1].as<ir::VarNode>() == b &&
         ir::as_const_int(shape[n - 1]) && *ir::as_const_int(shape[n - 1]) == eb;
    for (size_t d = 0; ok && d + 2 < n; ++d) ok = !uses(idx[d]);
  });
  return ok;
}

std::vector<TiledAxis> tiled_axes(const Stage& st, bool fuse) {
  std::vector<TiledAxis> out;
  for (auto& a : st.root_axes) out.push_back({a->name, a->extent, a->kind});
  if (!fuse) return out;
  size_t nd = 0;
  for (auto& a : out) nd += a.kind == ir::IterKind::kDataPar;
  TiledAxis x = out[nd - 2], y = out[nd - 1];
  out.erase(out.begin() + nd - 2, out.begin() + nd);
  out.insert(out.begin() + nd - 2, {x.name + "." + y.name + ".f", x.extent * y.extent, ir::IterKind::kDataPar});
  return out;
}

class MultiLevelTiling : public SketchRule {
 public:
  explicit MultiLevelTiling(RuleSpaceParams p) : p_(std::move(p)) {}
  std::string name() const override { return "multi_level_tiling"; }
  bool applies(const StageInfo& s, const Schedule&) const override { return s.has_reuse && !data_extents(*s.stage).empty(); }

  std::vector<int> declare(const StageInfo& s, const Schedule& sch, RuleContext& ctx) const override {
    std::vector<int> k;
    const std::string& n = s.stage->name;
    bool fuse = fuse_spatial(s, sch);
    auto axes = tiled_axes(*s.stage, fuse);
    std::string last_data;
    for (auto& ax : axes)
      if (ax.kind == ir::IterKind::kDataPar) last_data = ax.name;
    for (auto& ax : axes) {
      const TiledAxis* a = &ax;
      if (a->kind == ir::IterKind::kDataPar) {
        // The vectorized axis: S3 a multiple of the vector width (or the whole axis when shorter);
        // other axes: a small S3 (rows of the register tile).
        bool vec = a->name == last_data;
        auto t = factor_tuples(a->extent, 3, {0, 0, vec ? p_.max_innermost_factor : p_.max_inner_factor_other});
        if (vec && a->extent >= p_.vector_lanes) {
          std::vector<std::vector<int64_t>> keep;
          for (auto& x : t)
            if (x[2] % p_.vector_lanes == 0) keep.push_back(x);
          if (!keep.empty()) t = keep;
        }
        k.push_back(ctx.add_knob({n + ".tile." + a->name, t}));
      } else
        k.push_back(ctx.add_knob({n + ".tile." + a->name, factor_tuples(a->extent, 1, {p_.max_innermost_factor})}));
    }
    std::vector<std::vector<int64_t>> unroll;
    for (auto u : p_.unroll_steps) unroll.push_back({u});
    k.push_back(ctx.add_knob({n + ".unroll", unroll}));
    // Where the accumulating tile lives: in place (0) or in a local tile (1); fused into the epilogue
    // when there is one.
    if (fusable_epilogue(sch, *s.stage).empty() && !fuse) k.push_back(ctx.add_knob({n + ".cache_write", {{0}, {1}}}));
    // Packing: an operand read along the vectorized (innermost data) axis and reused across another data
    // axis may be copied into panels [block][...][lane] (cache_read + transform_layout).
    for (auto& [tensor, dim] : packable_inputs(*s.stage))
      k.push_back(ctx.add_knob({n + ".pack." + tensor, {{0}, {1}}}));
    return k;
  }

  // Fuse the last two data axes when they are contiguous in every read and there is no epilogue to
  // fuse into (the tile then accumulates in place).
  static bool fuse_spatial(const StageInfo& s, const Schedule& sch) {
    return fusable_epilogue(sch, *s.stage).empty() && spatial_fusable(*s.stage);
  }

  // (tensor, dimension) of operands indexed by the innermost data axis alone in one dimension and not
  // using some other data axis.
  static std::vector<std::pair<std::string, int>> packable_inputs(const Stage& st) {
    std::vector<std::pair<std::string, int>> out;
    auto* c = te::as_compute(st.op);
    if (!c || c->axis.empty()) return out;
    const ir::VarNode* inner = c->axis.back()->var.get();
    ir::post_order_visit(c->body, [&](const ir::Expr& e) {
      auto* t = e.as<ir::TensorRead>();
      if (!t) return;
      int dim = -1;
      for (size_t d = 0; d < t->indices.size(); ++d)
        if (t->indices[d].as<ir::VarNode>() == inner) dim = int(d);
      if (dim < 0) return;
      bool reuse = false;
      for (auto& ax : c->axis) {
        bool used = false;
        for (auto& idx : t->indices) used |= ir::uses_var(idx, [&](const ir::VarNode* v) { return v == ax->var.get(); });
        reuse |= !used;
      }
      bool dup = false;
      for (auto& o : out) dup |= o.first == t->producer->name();
      if (reuse && !dup) out.push_back({t->producer->name(), dim});
    });
    return out;
  }

  Status apply(const StageInfo& s, Schedule& sch, const std::vector<int>& k, const RuleContext& ctx) const override {
    const std::string name = s.stage->name;
    std::vector<std::string> data, red;
    std::vector<std::vector<int64_t>> dt, rt;
    size_t ki = 0;
    bool fuse = fuse_spatial(s, sch);
    for (auto& a : tiled_axes(*s.stage, fuse)) {
      if (a.kind == ir::IterKind::kDataPar) {
        data.push_back(a.name);
        dt.push_back(ctx.option(k[ki++]));
      } else {
        red.push_back(a.name);
        rt.push_back(ctx.option(k[ki++]));
      }
    }
    int64_t unroll = ctx.option(k[ki++])[0];
    std::string epilogue = fusable_epilogue(sch, *s.stage);
    bool cache = epilogue.empty() && !fuse && ctx.option(k[ki++])[0] == 1;
    int64_t lanes = dt.back()[2];
    for (auto& [tensor, dim] : packable_inputs(*s.stage)) {
      if (ctx.option(k[ki++])[0] == 1 && lanes > 1) {
        Status st = pack(sch, tensor, dim, name, lanes);
        if (!st) return st;
      }
    }
    if (fuse) {
      auto roots = tiled_axes(*s.stage, false);
      size_t nd = data.size() + 1;  // data axes before fusing
      sch.fuse(name, {roots[nd - 2].name, roots[nd - 1].name});
    }
    int64_t tile = 1, reg = 1;
    for (auto& t : dt) tile *= t[1] * t[2], reg *= t[2];
    if ((reg + p_.vector_lanes - 1) / p_.vector_lanes > p_.max_register_tile)
      return Status::error("register tile of " + std::to_string(reg) + " elements is over the limit");
    if ((cache || !epilogue.empty()) && tile > p_.max_local_tile)
      return Status::error("local tile of " + std::to_string(tile) + " elements is over the limit");

    if (!cache && epilogue.empty()) {  // tile in place: S0 S1 R0 S2 R1 S3
      std::vector<std::string> s0, s1, s2, s3, r0, r1;
      for (size_t i = 0; i < data.size(); ++i) {
        auto lv = split_levels(sch, name, data[i], {dt[i][0] * dt[i][1] * dt[i][2], dt[i][1] * dt[i][2], dt[i][2]});
        s0.push_back(lv[0]), s1.push_back(lv[1]), s2.push_back(lv[2]), s3.push_back(lv[3]);
      }
      for (size_t i = 0; i < red.size(); ++i) {
        auto lv = split_levels(sch, name, red[i], {rt[i][0]});
        r0.push_back(lv[0]), r1.push_back(lv[1]);
      }
      reorder(sch, name, {s0, s1, r0, s2, r1, s3});
      finish(sch, name, s0, s3.back(), dt.back()[2], unroll);
      return Status::ok();
    }
    // Outer stage (the epilogue, or the stage itself after cache_write): S0 S1 | inner tile.
    std::string inner_stage = name;
    std::string outer = epilogue;
    if (cache) {
      inner_stage = sch.cache_write(name, "local");
      outer = name;
    }
    const Stage* os = find_stage(sch, outer);
    std::vector<std::string> odata;
    for (auto& a : os->root_axes)
      if (a->kind == ir::IterKind::kDataPar) odata.push_back(a->name);
    std::vector<std::string> s0, s1, i2, i3;
    for (size_t i = 0; i < odata.size(); ++i) {
      auto lv = split_levels(sch, outer, odata[i], {dt[i][0] * dt[i][1] * dt[i][2], dt[i][1] * dt[i][2], dt[i][2]});
      s0.push_back(lv[0]), s1.push_back(lv[1]), i2.push_back(lv[2]), i3.push_back(lv[3]);
    }
    reorder(sch, outer, {s0, s1, i2, i3});
    finish(sch, outer, s0, i3.back(), dt.back()[2], 0);
    Status st = sch.apply(schedule::ComputeAtStep{inner_stage, outer, s1.back()});
    if (!st) return st;
    // The accumulating tile: R0 S2 R1 S3 over its (bound-inferred) region.
    std::vector<std::string> r0, r1, s2, s3;
    const Stage* is = find_stage(sch, inner_stage);
    std::vector<std::string> idata, ired;
    for (auto& a : is->root_axes) (a->kind == ir::IterKind::kDataPar ? idata : ired).push_back(a->name);
    for (size_t i = 0; i < idata.size(); ++i) {
      auto lv = split_levels(sch, inner_stage, idata[i], {dt[i][2]});
      s2.push_back(lv[0]), s3.push_back(lv[1]);
    }
    for (size_t i = 0; i < ired.size(); ++i) {
      auto lv = split_levels(sch, inner_stage, ired[i], {rt[i][0]});
      r0.push_back(lv[0]), r1.push_back(lv[1]);
    }
    reorder(sch, inner_stage, {r0, s2, r1, s3});
    if (dt.back()[2] > 1 && dt.back()[2] <= p_.max_vector_lanes) sch.vectorize(inner_stage, s3.back());
    if (unroll > 0) sch.pragma(inner_stage, sch.leaf_names(inner_stage).front(), "auto_unroll_max_step", unroll);
    return Status::ok();
  }

 private:
  // cache_read(tensor) for `reader`, stored as [dim / lanes][other dims][dim % lanes], copied in parallel
  // over the blocks with the lanes vectorized.
  Status pack(Schedule& sch, const std::string& tensor, int dim, const std::string& reader, int64_t lanes) const {
    std::string p = sch.cache_read(tensor, "global", {reader});
    sch.transform_layout(p, dim, lanes);
    auto leaves = sch.leaf_names(p);
    std::string axis = leaves[dim];
    auto [o, i] = sch.split(p, axis, lanes);
    std::vector<std::string> order{o};
    for (auto& l : sch.leaf_names(p))
      if (l != o && l != i) order.push_back(l);
    order.push_back(i);
    sch.reorder(p, order);
    sch.parallel(p, o);
    if (lanes <= p_.max_vector_lanes) sch.vectorize(p, i);
    return Status::ok();
  }

  // Splits axis by each factor in turn (outermost first); returns the len+1 levels, outermost first.
  static std::vector<std::string> split_levels(Schedule& sch, const std::string& stage, const std::string& axis,
                                               const std::vector<int64_t>& factors) {
    std::vector<std::string> lv;
    std::string rest = axis;
    for (int64_t f : factors) {
      auto [o, i] = sch.split(stage, rest, std::max<int64_t>(f, 1));
      lv.push_back(o);
      rest = i;
    }
    lv.push_back(rest);
    return lv;
  }
  static void reorder(Schedule& sch, const std::string& stage, const std::vector<std::vector<std::string>>& groups) {
    std::vector<std::string> order;
    for (auto& g : groups) order.insert(order.end(), g.begin(), g.end());
    if (order.size() > 1) sch.reorder(stage, order);
  }
  // Fuses the S0 loops (outermost, consecutive) and runs them in parallel; vectorizes the innermost.
  void finish(Schedule& sch, const std::string& stage, const std::vector<std::string>& s0, const std::string& innermost,
              int64_t inner_extent, int64_t unroll) const {
    std::string par = s0.size() > 1 ? sch.fuse(stage, s0) : s0[0];
    sch.parallel(stage, par);
    if (inner_extent > 1 && inner_extent <= p_.max_vector_lanes) sch.vectorize(stage, innermost);
    if (unroll > 0) sch.pragma(stage, par, "auto_unroll_max_step", unroll);
  }
  RuleSpaceParams p_;
};

class SimpleReduction : public SketchRule {
 public:
  explicit SimpleReduction(RuleSpaceParams p) : p_(std::move(p)) {}
  std::string name() const override { return "simple_reduction"; }
  bool applies(const StageInfo& s, const Schedule&) const override { return !s.is_injective; }
  std::vector<int> declare(const StageInfo& s, const Schedule& sch, RuleContext& ctx) const override {
    std::vector<std::vector<int64_t>> unroll;
    for (auto u : p_.unroll_steps) unroll.push_back({u});
    std::vector<int> k{ctx.add_knob({s.stage->name + ".unroll", unroll})};
    if (!s.is_output && effective_consumers(sch, s.stage->name).size() == 1)
      k.push_back(ctx.add_knob({s.stage->name + ".compute_at_consumer", {{0}, {1}}}));
    // rfactor: a long innermost reduction (and little spatial parallelism to use instead) is split, its
    // inner part becoming a data axis of a new stage that can be vectorized.
    if (rfactor_candidate(*s.stage)) {
      std::vector<std::vector<int64_t>> f = {{0}};
      for (int64_t v : {8, 16, 32, 64})
        if (v <= p_.max_vector_lanes) f.push_back({v});
      k.push_back(ctx.add_knob({s.stage->name + ".rfactor", f}));
    }
    return k;
  }

  static bool rfactor_candidate(const Stage& st) {
    int64_t spatial = 1, inner_red = 0;
    for (auto& a : st.root_axes) {
      if (a->kind == ir::IterKind::kDataPar) spatial *= a->extent;
      else inner_red = a->extent;
    }
    return inner_red >= 64 && spatial <= 4096;
  }
  Status apply(const StageInfo& s, Schedule& sch, const std::vector<int>& k, const RuleContext& ctx) const override {
    const std::string& n = s.stage->name;
    int64_t unroll = ctx.option(k[0])[0];
    size_t ki = 1;
    bool at = !s.is_output && effective_consumers(sch, n).size() == 1 && ctx.option(k[ki++])[0] == 1;
    int64_t rf = rfactor_candidate(*s.stage) ? ctx.option(k[ki++])[0] : 0;
    if (rf > 0) {
      // Split the innermost reduction axis; S.rf keeps its inner part as a (vectorized) data axis.
      std::string red = s.stage->root_axes.back()->name;
      auto [ro, ri] = sch.split(n, red, rf);
      std::string rfs = sch.rfactor(n, ri);
      auto rl = sch.leaf_names(rfs);  // ri (data), data axes..., reduction axes...
      std::vector<std::string> order(rl.begin() + 1, rl.end());
      order.push_back(rl.front());
      sch.reorder(rfs, order);
      sch.vectorize(rfs, rl.front());
      const Stage* rs = find_stage(sch, rfs);
      auto first = rs ? rs->find_axis(order.front()) : nullptr;
      if (first && first->kind == ir::IterKind::kDataPar) sch.parallel(rfs, order.front());
    }
    auto leaves = sch.leaf_names(n);
    if (at) {
      std::string consumer = effective_consumers(sch, n)[0];
      auto cl = sch.leaf_names(consumer);
      if (cl.empty()) return Status::error("consumer has no loops");
      Status st = sch.apply(schedule::ComputeAtStep{n, consumer, cl.front()});
      if (!st) return st;
    } else if (!data_extents(*s.stage).empty()) {
      sch.parallel(n, leaves.front());
    }
    if (unroll > 0) sch.pragma(n, leaves.front(), "auto_unroll_max_step", unroll);
    return Status::ok();
  }

 private:
  RuleSpaceParams p_;
};

class InjectiveRoot : public SketchRule {
 public:
  explicit InjectiveRoot(RuleSpaceParams p) : p_(std::move(p)) {}
  std::string name() const override { return "injective_root"; }
  bool applies(const StageInfo& s, const Schedule& sch) const override {
    // An epilogue fused into a multi-level-tiled producer is scheduled by that rule.
    return s.is_injective && !is_tiled_epilogue(sch, *s.stage);
  }
  std::vector<int> declare(const StageInfo& s, const Schedule&, RuleContext& ctx) const override {
    int64_t total = data_points(*s.stage);
    std::vector<std::vector<int64_t>> v;
    for (int64_t w : {1, 4, 8, 16, 32, 64})
      if (w <= total && w <= p_.max_vector_lanes) v.push_back({w});
    return {ctx.add_knob({s.stage->name + ".vector", v})};
  }
  Status apply(const StageInfo& s, Schedule& sch, const std::vector<int>& k, const RuleContext& ctx) const override {
    const std::string& n = s.stage->name;
    int64_t w = ctx.option(k[0])[0];
    auto leaves = sch.leaf_names(n);
    std::string f = leaves.size() > 1 ? sch.fuse(n, leaves) : leaves[0];
    if (w > 1) {
      auto [o, i] = sch.split(n, f, w);
      sch.parallel(n, o);
      sch.vectorize(n, i);
    } else {
      sch.parallel(n, f);
    }
    return Status::ok();
  }

 private:
  RuleSpaceParams p_;
};

}  // namespace

std::shared_ptr<const SketchRule> rule_util::inline_injective_rule() { return std::make_shared<InlineInjective>(); }

std::vector<std::shared_ptr<const SketchRule>> default_cpu_rules(const RuleSpaceParams& p) {
  return {std::make_shared<InlineInjective>(), std::make_shared<MultiLevelTiling>(p),
          std::make_shared<SimpleReduction>(p), std::make_shared<InjectiveRoot>(p)};
}

}  // namespace tessel::tuner
