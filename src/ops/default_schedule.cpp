// default_schedule: inline elementwise intermediates, parallelize the outer data-parallel loops.
#include "tessel/ops/default_schedule.h"

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
