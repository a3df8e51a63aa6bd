// The default GPU sketch rules (after Ansor's GPU sketch policy, for tessel's bind/scope primitives):
//   InlineInjective        (shared with the CPU rules) elementwise intermediates are inlined
//   GpuMultiLevelTiling    reductions with data reuse (matmul, conv): each data axis of the output (or
//                          of the fused elementwise epilogue) split into block x thread x per-thread
//                          levels; block levels fused -> blockIdx.x, thread levels fused -> threadIdx.x;
//                          the accumulating tile in registers (cache_write local / the reduction
//                          computed per thread); reduction axes split R0 R1 with each operand optionally
//                          cached in shared memory at the innermost R0 loop, fetched cooperatively by all
//                          threads with vector loads; knobs: auto-unroll, software pipelining of the
//                          fetches (next tile staged in registers during the compute), min blocks per SM,
//                          virtual threads (each thread's tile of an axis split into interleaved
//                          sub-tiles, so a warp's shared-memory reads are consecutive)
//   GpuReduction           other reductions: one output per thread (fused data axes over blocks and
//                          threads), or computed inside the thread of its only consumer (or of the output);
//                          an output with a long reduction over few outputs may instead use a block per
//                          output whose threads reduce slices into a shared rfactor stage (cross_thread)
//   GpuRowBlock            elementwise outputs reading per-row reductions (softmax, layer_norm): one block
//                          per row, each reduction a cross-thread reduction (rfactor into shared memory) at
//                          the block loop (ops::schedule_row_block_gpu); or, as a knob option, the output as
//                          an injective root with the reductions inside each thread (gpu_reduction)
//   GpuInjectiveRoot       elementwise outputs: fused, vectorized, split over blocks and threads
// Cross-thread reductions go through shared memory (rfactor + set_scope), not warp shuffles.
#include <algorithm>

#include "rule_util.h"
#include "tessel/ir/functor.h"
#include "tessel/ops/row_block_gpu.h"
#include "tessel/tuner/search_space.h"

namespace tessel::tuner {

using namespace rule_util;
using schedule::Schedule;
using schedule::Stage;

namespace {

constexpr int64_t kWarp = 32;
constexpr int64_t kWholeWarpMinOutputs = 4096;

std::vector<std::vector<int64_t>> options_of(const std::vector<int64_t>& v, int64_t max) {
  std::vector<std::vector<int64_t>> out;
  for (auto x : v)
    if (x <= max) out.push_back({x});
  if (out.empty()) out.push_back({1});
  return out;
}

// The leaf of `stage` bound to threadIdx.x (the innermost one), or "".
std::string thread_leaf(const Schedule& sch, const std::string& stage) {
  std::string out;
  for (auto& a : sch.stage(stage).leaf_axes) {
    auto it = sch.stage(stage).annotations.find(a->name);
    if (it != sch.stage(stage).annotations.end() && it->second == "threadIdx.x") out = a->name;
  }
  return out;
}

// Fuses the leaves (if several), splits by vec (vectorized) and threads (threadIdx.x).
Status fuse_over_threads(Schedule& sch, const std::string& st, int64_t threads, int64_t vec, bool bind_blocks) {
  auto leaves = sch.leaf_names(st);
  std::string f = leaves.size() > 1 ? sch.fuse(st, leaves) : leaves[0];
  std::string v;
  if (vec > 1) std::tie(f, v) = sch.split(st, f, vec);
  auto [o, t] = sch.split(st, f, threads);
  if (bind_blocks) {
    Status s = sch.apply(schedule::BindStep{st, o, "blockIdx.x"});
    if (!s) return s;
  }
  Status s = sch.apply(schedule::BindStep{st, t, "threadIdx.x"});
  if (!s) return s;
  if (vec > 1) return sch.apply(schedule::AnnotateStep{st, v, "vectorize"});
  return Status::ok();
}

class GpuMultiLevelTiling : public SketchRule {
 public:
  explicit GpuMultiLevelTiling(GpuRuleParams p) : p_(std::move(p)) {}
  std::string name() const override { return "gpu_multi_level_tiling"; }
  bool applies(const StageInfo& s, const Schedule& sch) const override {
    return s.has_reuse && !data_extents(*s.stage).empty() && (s.is_output || !fusable_epilogue(sch, *s.stage).empty());
  }

  std::vector<int> declare(const StageInfo& s, const Schedule& sch, RuleContext& ctx) const override {
    std::vector<int> k;
    const std::string& n = s.stage->name;
    for (auto& a : s.stage->root_axes) {
      if (a->kind == ir::IterKind::kDataPar)  // (threads, per-thread) of this axis
        k.push_back(ctx.add_knob({n + ".gpu_tile." + a->name, factor_tuples(a->extent, 2, {0, p_.max_inner_factor})}));
      else
        k.push_back(ctx.add_knob({n + ".gpu_tile." + a->name, factor_tuples(a->extent, 1, {p_.max_reduce_inner})}));
    }
    for (auto& t : operands(*s.stage)) k.push_back(ctx.add_knob({n + ".shared." + t, {{0}, {1}}}));
    k.push_back(ctx.add_knob({n + ".fetch_vector", options_of(p_.vector_options, 16)}));
    std::vector<std::vector<int64_t>> unroll;
    for (auto u : p_.unroll_steps) unroll.push_back({u});
    k.push_back(ctx.add_knob({n + ".unroll", unroll}));
    // Staged fetches (software_pipeline at the R0 loop, when an operand is in shared memory) and the
    // blocks per SM ptxas must fit (min_blocks_per_sm: caps registers per thread).
    k.push_back(ctx.add_knob({n + ".pipeline", {{1}, {0}}}));
    std::vector<std::vector<int64_t>> min_blocks;
    for (auto b : p_.min_blocks_options) min_blocks.push_back({b});
    k.push_back(ctx.add_knob({n + ".min_blocks_per_sm", min_blocks}));
    std::vector<std::vector<int64_t>> vthreads;
    for (auto v : p_.vthread_options) vthreads.push_back({v});
    k.push_back(ctx.add_knob({n + ".vthread", vthreads}));
    return k;
  }

  // Hand-tuned GEMM-like kernels (measured on an H200, bench/gpu/mmvar-h200), on the two innermost data
  // axes (rows i, columns j; other data axes one per block) and the innermost reduction axis:
  // 64x64 block tile, 8x4 per thread, k slices of 16, pipelined (the default GPU matmul);
  // 128x64x16 and 128x128x8 with 8x8 per thread as 2 x 2 virtual threads.
  std::vector<KnobChoice> seeds(const StageInfo& s, const Schedule&) const override {
    struct Hand {
      int64_t ty, tm, tx, tn, bk, unroll, min_blocks, vt;
    };
    const Hand hands[] = {{8, 8, 16, 4, 16, 512, 0, 1}, {16, 8, 8, 8, 16, 1024, 0, 2}, {16, 8, 16, 8, 8, 512, 2, 2}};
    const std::string& n = s.stage->name;
    std::vector<const schedule::Axis*> data, red;
    for (auto& a : s.stage->root_axes) (a->kind == ir::IterKind::kDataPar ? data : red).push_back(a.get());
    if (data.size() < 2 || red.empty()) return {};
    std::vector<KnobChoice> out;
    for (const Hand& h : hands) {
      KnobChoice c;
      for (auto* a : data) c[n + ".gpu_tile." + a->name] = {1, 1};
      for (auto* a : red) c[n + ".gpu_tile." + a->name] = {1};
      c[n + ".gpu_tile." + data[data.size() - 2]->name] = {h.ty, h.tm};
      c[n + ".gpu_tile." + data.back()->name] = {h.tx, h.tn};
      c[n + ".gpu_tile." + red.back()->name] = {h.bk};
      for (auto& t : operands(*s.stage)) c[n + ".shared." + t] = {1};
      c[n + ".fetch_vector"] = {4};
      c[n + ".unroll"] = {h.unroll};
      c[n + ".pipeline"] = {1};
      c[n + ".min_blocks_per_sm"] = {h.min_blocks};
      c[n + ".vthread"] = {h.vt};
      out.push_back(std::move(c));
    }
    return out;
  }

  static std::vector<std::string> operands(const Stage& st) {
    std::vector<std::string> out;
    if (auto* c = te::as_compute(st.op))
      for (auto& in : c->inputs())
        if (std::find(out.begin(), out.end(), in->name()) == out.end()) out.push_back(in->name());
    return out;
  }

  Status apply(const StageInfo& s, Schedule& sch, const std::vector<int>& k, const RuleContext& ctx) const override {
    const std::string name = s.stage->name;
    std::vector<std::vector<int64_t>> dt, rt;
    size_t ki = 0;
    int64_t threads = 1;
    for (auto& a : s.stage->root_axes) {
      (a->kind == ir::IterKind::kDataPar ? dt : rt).push_back(ctx.option(k[ki++]));
      if (a->kind == ir::IterKind::kDataPar) threads *= dt.back()[0];
    }
    if (threads > p_.max_threads)
      return Status::error(std::to_string(threads) + " threads per block (over " + std::to_string(p_.max_threads) + ")");
    // Whole warps: a partial warp idles lanes. Required only when the outputs allow it (their count is a
    // multiple of the warp: then some choice of thread factors is) and are many (small workloads keep
    // their few valid choices), so odd shapes keep a space.
    int64_t outputs = data_points(*s.stage);
    if (p_.whole_warps && outputs % kWarp == 0 && outputs >= kWholeWarpMinOutputs && threads % kWarp != 0)
      return Status::error(std::to_string(threads) + " threads per block: not a whole number of warps");
    auto ops = operands(*s.stage);
    std::vector<std::string> cached;
    for (auto& t : ops)
      if (ctx.option(k[ki++])[0] == 1) cached.push_back(t);
    int64_t vec = ctx.option(k[ki++])[0];
    int64_t unroll = ctx.option(k[ki++])[0];
    bool pipeline = ctx.option(k[ki++])[0] == 1;
    int64_t min_blocks = ctx.option(k[ki++])[0];
    int64_t vt = ctx.option(k[ki++])[0];

    std::string epilogue = fusable_epilogue(sch, *s.stage);
    std::string inner = name, outer = epilogue;
    if (epilogue.empty()) {
      inner = sch.cache_write(name, "local");
      outer = name;
    }
    std::vector<std::string> shared;
    for (auto& t : cached) shared.push_back(sch.cache_read(t, "shared", {inner}));
    // Outer stage: blocks, threads, per-thread tile.
    std::vector<std::string> odata;
    for (auto& a : find_stage(sch, outer)->root_axes)
      if (a->kind == ir::IterKind::kDataPar) odata.push_back(a->name);
    // Virtual threads on the (up to) two innermost axes whose per-thread tile they divide: the thread's
    // tile of such an axis becomes vt sub-tiles, one per block-tile / vt.
    std::vector<bool> virt(odata.size(), false);
    for (size_t i = odata.size(), used = 0; vt > 1 && i-- > 0 && used < 2;)
      if (dt[i][1] % vt == 0) virt[i] = true, ++used;
    std::vector<std::string> b, v, t, in;
    for (size_t i = 0; i < odata.size(); ++i) {
      auto [bo, rest] = sch.split(outer, odata[i], dt[i][0] * dt[i][1]);
      if (virt[i]) {
        auto [vo, sub] = sch.split(outer, rest, dt[i][0] * dt[i][1] / vt);
        Status st = sch.apply(schedule::BindStep{outer, vo, "vthread"});
        if (!st) return st;
        v.push_back(vo), rest = sub;
      }
      auto [th, pi] = sch.split(outer, rest, virt[i] ? dt[i][1] / vt : dt[i][1]);
      b.push_back(bo), t.push_back(th), in.push_back(pi);
    }
    std::vector<std::string> order = b;
    order.insert(order.end(), v.begin(), v.end());
    order.insert(order.end(), t.begin(), t.end());
    order.insert(order.end(), in.begin(), in.end());
    if (order.size() > 1) sch.reorder(outer, order);
    std::string bx = b.size() > 1 ? sch.fuse(outer, b) : b[0];
    std::string tx = t.size() > 1 ? sch.fuse(outer, t) : t[0];
    for (auto& [axis, tag] : {std::pair{bx, "blockIdx.x"}, std::pair{tx, "threadIdx.x"}}) {
      Status st = sch.apply(schedule::BindStep{outer, axis, tag});
      if (!st) return st;
    }
    Status st = sch.apply(schedule::ComputeAtStep{inner, outer, tx});
    if (!st) return st;
    // The accumulating tile: R0 R1 data.
    std::vector<std::string> idata, r0, r1;
    for (auto& a : find_stage(sch, inner)->root_axes) {
      if (a->kind == ir::IterKind::kDataPar) {
        idata.push_back(a->name);
        continue;
      }
      auto [o, i] = sch.split(inner, a->name, rt[r0.size()][0]);
      r0.push_back(o), r1.push_back(i);
    }
    order = r0;
    order.insert(order.end(), r1.begin(), r1.end());
    order.insert(order.end(), idata.begin(), idata.end());
    if (order.size() > 1) sch.reorder(inner, order);
    // Shared operands: one slice per innermost R0 iteration, fetched by all threads.
    for (auto& sh : shared) {
      if (r0.empty()) break;
      st = sch.apply(schedule::ComputeAtStep{sh, inner, r0.back()});
      if (!st) return st;
      int64_t e = 1;
      for (auto& a : find_stage(sch, sh)->leaf_axes) e *= a->extent;
      st = fuse_over_threads(sch, sh, threads, e % vec == 0 ? vec : 1, false);
      if (!st) return st;
    }
    if (unroll > 0) sch.pragma(inner, sch.leaf_names(inner).front(), "auto_unroll_max_step", unroll);
    if (pipeline && !shared.empty() && !r0.empty()) sch.pragma(inner, r0.back(), "software_pipeline", 1);
    if (min_blocks > 0) sch.pragma(outer, bx, "min_blocks_per_sm", min_blocks);
    return Status::ok();
  }

 private:
  GpuRuleParams p_;
};

class GpuReduction : public SketchRule {
 public:
  explicit GpuReduction(GpuRuleParams p) : p_(std::move(p)) {}
  std::string name() const override { return "gpu_reduction"; }
  bool applies(const StageInfo& s, const Schedule&) const override { return !s.is_injective; }
  std::vector<int> declare(const StageInfo& s, const Schedule&, RuleContext& ctx) const override {
    if (!s.is_output) return {};  // computed inside a consumer's thread or block: no knobs of its own
    int64_t total = data_points(*s.stage);
    std::vector<int> k{ctx.add_knob({s.stage->name + ".threads", options_of(p_.thread_options, std::max<int64_t>(total, 32))})};
    if (cross_thread_candidate(s)) {  // threads per output (0: one thread per output)
      std::vector<std::vector<int64_t>> opts{{0}};
      for (auto& o : options_of(p_.thread_options, s.stage->root_axes.back()->extent)) opts.push_back(o);
      k.push_back(ctx.add_knob({s.stage->name + ".cross_thread", opts}));
    }
    return k;
  }
  // An output reducing a long innermost axis over few outputs: several threads can share each output.
  static bool cross_thread_candidate(const StageInfo& s) {
    int64_t spatial = data_points(*s.stage);
    auto& last = s.stage->root_axes.back();
    return s.is_output && last->kind == ir::IterKind::kReduce && last->extent >= 64 && spatial <= 16384;
  }
  // One block per output: its threads reduce strided slices into a shared rfactor stage, then every
  // thread adds the partial sums in registers and stores the (same) result.
  static Status cross_thread(const StageInfo& s, Schedule& sch, int64_t threads) {
    const std::string& n = s.stage->name;
    std::string local = sch.cache_write(n, "local");
    auto [ro, ri] = sch.split(local, sch.stage(local).root_axes.back()->name, threads);
    std::string rf = sch.rfactor(local, ri);
    sch.set_scope(rf, "shared");
    std::vector<std::string> data;
    for (auto& a : sch.stage(n).leaf_axes) data.push_back(a->name);
    std::string bx = data.size() > 1 ? sch.fuse(n, data) : data[0];
    for (auto& [st, axis, tag] : {std::tuple{n, bx, "blockIdx.x"}}) {
      Status r = sch.apply(schedule::BindStep{st, axis, tag});
      if (!r) return r;
    }
    for (auto& st : {local, rf}) {
      Status r = sch.apply(schedule::ComputeAtStep{st, n, bx});
      if (!r) return r;
    }
    return sch.apply(schedule::BindStep{rf, sch.leaf_names(rf).front(), "threadIdx.x"});
  }
  Status apply(const StageInfo& s, Schedule& sch, const std::vector<int>& k, const RuleContext& ctx) const override {
    const std::string& n = s.stage->name;
    if (cross_thread_candidate(s) && ctx.option(k[1])[0] > 0) return cross_thread(s, sch, ctx.option(k[1])[0]);
    if (s.stage->attach == schedule::AttachKind::kAt) return Status::ok();  // placed by gpu_row_block
    if (!s.is_output) {  // inside its consumer's thread, else the output's (consumers are scheduled first)
      auto cons = effective_consumers(sch, n);
      std::string target = cons.size() == 1 ? cons[0] : sch.outputs().size() == 1 ? sch.outputs()[0].name() : "";
      std::string tl = target.empty() ? "" : thread_leaf(sch, target);
      if (tl.empty()) return Status::error("stage " + n + ": no consumer thread loop to compute it in");
      return sch.apply(schedule::ComputeAtStep{n, target, tl});
    }
    std::vector<std::string> data;
    for (auto& a : sch.stage(n).leaf_axes)
      if (a->kind == ir::IterKind::kDataPar) data.push_back(a->name);
    if (data.empty())
      return Status::error("stage " + n + " reduces to a scalar, which needs a cross-thread reduction (not generated yet)");
    std::string f = data.size() > 1 ? sch.fuse(n, data) : data[0];
    auto [o, t] = sch.split(n, f, ctx.option(k[0])[0]);
    Status st = sch.apply(schedule::BindStep{n, o, "blockIdx.x"});
    if (!st) return st;
    return sch.apply(schedule::BindStep{n, t, "threadIdx.x"});
  }

 private:
  GpuRuleParams p_;
};

// Knob S.row_block: (1, threads) one block per row (ops::schedule_row_block_gpu with S.vector), or
// (0, threads) the output fused over blocks and threads like an injective root, its reductions then
// computed inside each thread by gpu_reduction (row-block options first: the default and most of the
// space).
class GpuRowBlock : public SketchRule {
 public:
  explicit GpuRowBlock(GpuRuleParams p) : p_(std::move(p)) {}
  std::string name() const override { return "gpu_row_block"; }
  bool applies(const StageInfo& s, const Schedule& sch) const override {
    return s.is_output && s.is_injective && !is_tiled_epilogue(sch, *s.stage) &&
           !ops::row_reductions(sch, s.stage->name).empty();
  }
  std::vector<int> declare(const StageInfo& s, const Schedule& sch, RuleContext& ctx) const override {
    size_t rows = data_extents(sch.stage(ops::row_reductions(sch, s.stage->name)[0])).size();
    auto ext = data_extents(*s.stage);
    int64_t len = 1;
    for (size_t d = rows; d < ext.size(); ++d) len *= ext[d];
    int64_t cap = 0;  // the fewest threads that cover a row, else the most
    for (auto t : p_.thread_options)
      if (t <= p_.max_threads) cap = std::max(cap, t);
    for (auto t : p_.thread_options)
      if (t >= len && t <= cap) cap = t;
    std::vector<std::vector<int64_t>> modes, vec;
    for (auto t : p_.thread_options)
      if (t <= cap) modes.push_back({1, t});
    for (auto t : p_.row_fallback_threads)
      if (t <= p_.max_threads) modes.push_back({0, t});
    for (auto v : p_.vector_options)
      if (len % v == 0) vec.push_back({v});
    return {ctx.add_knob({s.stage->name + ".row_block", modes}), ctx.add_knob({s.stage->name + ".vector", vec})};
  }
  Status apply(const StageInfo& s, Schedule& sch, const std::vector<int>& k, const RuleContext& ctx) const override {
    const auto& mode = ctx.option(k[0]);
    int64_t vec = ctx.option(k[1])[0];
    if (mode[0] == 0) return fuse_over_threads(sch, s.stage->name, mode[1], vec, true);
    return ops::schedule_row_block_gpu(sch, s.stage->name, {mode[1], vec});
  }

 private:
  GpuRuleParams p_;
};

class GpuInjectiveRoot : public SketchRule {
 public:
  explicit GpuInjectiveRoot(GpuRuleParams p) : p_(std::move(p)) {}
  std::string name() const override { return "gpu_injective_root"; }
  bool applies(const StageInfo& s, const Schedule& sch) const override {
    return s.is_injective && !is_tiled_epilogue(sch, *s.stage);
  }
  std::vector<int> declare(const StageInfo& s, const Schedule&, RuleContext& ctx) const override {
    int64_t total = data_points(*s.stage);
    return {ctx.add_knob({s.stage->name + ".threads", options_of(p_.thread_options, std::max<int64_t>(total, 32))}),
            ctx.add_knob({s.stage->name + ".vector", options_of(p_.vector_options, total)})};
  }
  Status apply(const StageInfo& s, Schedule& sch, const std::vector<int>& k, const RuleContext& ctx) const override {
    return fuse_over_threads(sch, s.stage->name, ctx.option(k[0])[0], ctx.option(k[1])[0], true);
  }

 private:
  GpuRuleParams p_;
};

}  // namespace

std::vector<std::shared_ptr<const SketchRule>> default_gpu_rules(const GpuRuleParams& p) {
  return {inline_injective_rule(), std::make_shared<GpuMultiLevelTiling>(p), std::make_shared<GpuRowBlock>(p),
          std::make_shared<GpuReduction>(p), std::make_shared<GpuInjectiveRoot>(p)};
}

}  // namespace tessel::tuner
