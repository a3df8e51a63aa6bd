// Stage-DAG queries shared by the CPU and GPU sketch rules.
#include "rule_util.h"

#include <algorithm>

namespace tessel::tuner::rule_util {

using schedule::Schedule;
using schedule::Stage;

const Stage* find_stage(const Schedule& s, const std::string& name) {
  for (auto& st : s.stages())
    if (st->name == name) return st.get();
  return nullptr;
}

std::vector<std::string> direct_consumers(const Schedule& s, const std::string& name) {
  std::vector<std::string> out;
  for (auto& st : s.stages()) {
    auto* c = te::as_compute(st->op);
    if (!c) continue;
    for (auto& in : c->inputs())
      if (in->name() == name) out.push_back(st->name);
  }
  return out;
}

bool will_inline(const Stage& st) { return !st.is_placeholder() && !st.is_output && !st.is_reduction(); }

// Consumers after elementwise intermediates are inlined.
std::vector<std::string> effective_consumers(const Schedule& s, const std::string& name) {
  std::vector<std::string> out;
  for (auto& c : direct_consumers(s, name)) {
    const Stage* st = find_stage(s, c);
    if (st && will_inline(*st) && st->attach != schedule::AttachKind::kAt) {
      for (auto& cc : effective_consumers(s, c)) out.push_back(cc);
    } else {
      out.push_back(c);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> data_extents(const Stage& st) {
  std::vector<int64_t> e;
  for (auto& a : st.root_axes)
    if (a->kind == ir::IterKind::kDataPar) e.push_back(a->extent);
  return e;
}

int64_t data_points(const Stage& st) {
  int64_t n = 1;
  for (auto e : data_extents(st)) n *= e;
  return n;
}

// The elementwise output a reduction can be fused into (its only consumer, same data shape), or "".
std::string fusable_epilogue(const Schedule& s, const Stage& producer) {
  auto cons = effective_consumers(s, producer.name);
  if (cons.size() != 1) return "";
  const Stage* e = find_stage(s, cons[0]);
  if (!e || !e->is_output || e->is_reduction()) return "";
  if (data_extents(*e) != data_extents(producer)) return "";
  return e->name;
}

bool is_tiled_epilogue(const Schedule& sch, const Stage& stage) {
  for (auto& st : sch.stages()) {
    auto* c = te::as_compute(st->op);
    if (c && c->reduce() && fusable_epilogue(sch, *st) == stage.name && has_data_reuse(st->op)) return true;
  }
  return false;
}

}  // namespace tessel::tuner::rule_util
