// default_schedule: inline elementwise intermediates, parallelize the outer data-parallel loops.
#include "tessel/ops/default_schedule.h"

#include <optional>

#include "tessel/ops/matmul.h"
#include "tessel/ops/row_block_gpu.h"

namespace tessel::ops {

schedule::Schedule default_schedule(const OpTensors& t, const DefaultScheduleParams& p) {
  TESSEL_CHECK(!t.outputs.empty()) << "default_schedule: the operator has no outputs";
  schedule::Schedule s(t.outputs);
  std::vector<std::string> roots;
  for (auto& st : s.stages()) {
    if (st->is_placeholder()) continue;
    if (!st->is_output && !st->is_reduction())
      s.compute_inline(st->name);
    else
      roots.push_back(st->name);
  }
  if (!p.parallel) return s;
  for (auto& name : roots) {
    const schedule::Stage& st = s.stage(name);
    // The leading data-parallel leaf loops, fused until they have enough iterations.
    std::vector<std::string> lead;
    int64_t extent = 1;
    for (auto& ax : st.leaf_axes) {
      if (ax->kind != ir::IterKind::kDataPar || extent >= p.min_parallel_extent) break;
      lead.push_back(ax->name);
      extent *= ax->extent;
    }
    if (extent <= 1) continue;
    std::string par = lead.size() == 1 ? lead[0] : s.fuse(name, lead);
    s.parallel(name, par);
  }
  return s;
}

}  // namespace tessel::ops

namespace tessel::ops {

namespace {
// The matmul schedule when C[i, j] = sum_k f(X[..], Y[..]) of two inputs and the sizes tile.
std::optional<schedule::Schedule> try_matmul_gpu(const te::Tensor& out) {
  auto* c = te::as_compute(out.op());
  if (!c || !c->reduce() || c->axis.size() != 2 || c->reduce_axis.size() != 1 || c->inputs().size() != 2) return {};
  for (auto& in : c->inputs())
    if (in->shape().size() != 2) return {};
  // The fastest of the hand-picked configurations on an H200 (bench/gpu/mmvar-h200), then smaller ones.
  MatmulGpuParams best;
  best.bm = best.bn = 64, best.bk = 16, best.tm = 8, best.tn = 4, best.pipeline = true;
  MatmulGpuParams mid;
  mid.bm = mid.bn = 64, mid.tm = mid.tn = 4;
  MatmulGpuParams small;
  small.bm = small.bn = 32, small.tm = small.tn = 4;
  for (const auto& p : {best, mid, small}) {
    try {
      return schedule_matmul_gpu(out, p);
    } catch (const UserError&) {
    }
  }
  return {};
}
}  // namespace

schedule::Schedule default_gpu_schedule(const OpTensors& t, const DefaultGpuScheduleParams& p) {
  TESSEL_CHECK(t.outputs.size() == 1) << "default_gpu_schedule: " << t.outputs.size()
                                      << " outputs; one GPU kernel computes one output for now";
  const te::Tensor& out = t.outputs[0];
  schedule::Schedule s(t.outputs);
  bool intermediates = false;
  for (auto& st : s.stages())
    if (!st->is_placeholder() && !st->is_output) intermediates |= st->is_reduction();
  if (!intermediates)
    if (auto m = try_matmul_gpu(out)) {
      bool plain = true;  // the matmul path needs its inputs to be placeholders (no inlined producers)
      for (auto& st : s.stages()) plain &= st->is_placeholder() || st->is_output;
      if (plain) return *m;
    }
  std::vector<std::string> reductions;
  for (auto& st : s.stages()) {
    if (st->is_placeholder() || st->is_output) continue;
    if (st->is_reduction())
      reductions.push_back(st->name);
    else
      s.compute_inline(st->name);
  }
  const std::string name = out.name();
  if (auto rows = row_reductions(s, name); !rows.empty()) {  // softmax, layer_norm: one block per row
    int64_t len = 1;
    for (size_t d = s.stage(rows[0]).op->shape().size(); d < out.shape().size(); ++d)
      len *= *ir::as_const_int(out.shape()[d]);
    int64_t threads = 32;  // the fewest warps that cover a row, at most p.threads
    while (threads < len && threads < p.threads) threads *= 2;
    Status st = schedule_row_block_gpu(s, name, {threads, 1});
    TESSEL_ICHECK(st.is_ok()) << st.message();
    return s;
  }
  std::vector<std::string> data;
  for (auto& ax : s.stage(name).leaf_axes)
    if (ax->kind == ir::IterKind::kDataPar) data.push_back(ax->name);
  std::string fused = data.size() == 1 ? data[0] : s.fuse(name, data);
  int64_t extent = s.stage(name).find_axis(fused)->extent;
  auto [bx, tx] = s.split(name, fused, std::min<int64_t>(p.threads, extent));
  s.bind(name, bx, "blockIdx.x");
  s.bind(name, tx, "threadIdx.x");
  for (auto it = reductions.rbegin(); it != reductions.rend(); ++it) s.compute_at(*it, name, tx);
  return s;
}

}  // namespace tessel::ops
