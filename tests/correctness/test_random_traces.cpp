// Randomized: draws random traces over several computations, keeps the steps the schedule accepts
// (illegal ones are rejected with a Status and skipped), then checks each result against the
// reference and that the JSON round trip of the trace replays to identical IR.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <random>

#include "tessel/ir/printer.h"
#include "tessel/lower/lower.h"
#include "workloads.h"

using namespace tessel;
using namespace tessel::testing;
using namespace tessel::schedule;

namespace {

template <class T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// One random step for the schedule's current state (may be illegal; the schedule decides).
Step random_step(std::mt19937_64& rng, const Schedule& s) {
  std::vector<std::string> stages;
  for (auto& st : s.stages())
    if (!st->is_placeholder()) stages.push_back(st->name);
  const std::string& sn = pick(rng, stages);
  const Stage& st = s.stage(sn);
  std::vector<std::string> leaves;
  for (auto& a : st.leaf_axes) leaves.push_back(a->name);
  std::string ax = leaves.empty() ? "i" : pick(rng, leaves);
  auto r = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  switch (r(0, 15)) {
    case 0:
    case 1: return SplitStep{sn, ax, r(1, 9), r(0, 3) == 0};
    case 2: {
      if (leaves.size() < 2) return SplitStep{sn, ax, 2, false};
      int i = r(0, int(leaves.size()) - 2);
      return FuseStep{sn, {leaves[i], leaves[i + 1]}};
    }
    case 3: {
      std::vector<std::string> order = leaves;
      std::shuffle(order.begin(), order.end(), rng);
      order.resize(std::min<size_t>(order.size(), size_t(r(2, 4))));
      return ReorderStep{sn, order};
    }
    case 4: {
      std::vector<std::string> others;
      for (auto& o : s.stages())
        if (!o->is_placeholder() && o->name != sn && o->attach != AttachKind::kInline) others.push_back(o->name);
      if (others.empty()) return ComputeRootStep{sn};
      const std::string& t = pick(rng, others);
      auto tl = s.leaf_names(t);
      return ComputeAtStep{sn, t, tl.empty() ? "i" : pick(rng, tl)};
    }
    case 5: return ComputeInlineStep{sn};
    case 6: return ComputeRootStep{sn};
    case 7: return AnnotateStep{sn, leaves.empty() ? "i" : leaves.back(), "vectorize"};
    case 8: return AnnotateStep{sn, ax, "unroll"};
    case 9: return AnnotateStep{sn, leaves.empty() ? "i" : leaves.front(), "parallel"};
    case 10:
      if (r(0, 2) == 0) return PragmaStep{sn, ax, "software_pipeline", 1};  // shared fetches at ax, if any
      return PragmaStep{sn, ax, "auto_unroll_max_step", pick(rng, std::vector<int64_t>{0, 8, 32, 128})};
    case 11: return CacheWriteStep{sn, "local"};
    case 12: {
      std::vector<std::string> inputs;
      for (auto& in : te::as_compute(st.op)->inputs()) inputs.push_back(in->name());
      if (inputs.empty()) return ComputeRootStep{sn};
      return CacheReadStep{pick(rng, inputs), r(0, 1) ? "shared" : "local", {sn}};  // "shared" is memory on a CPU
    }
    case 13: return RfactorStep{sn, ax};
    case 15: return TransformLayoutStep{sn, r(0, 2), r(1, 5)};
    default: return StorageAlignStep{sn, 0, r(1, 8), 0};
  }
}

}  // namespace

TEST_CASE("random legal traces match the reference and replay identically", "[correctness][random]") {
  const uint64_t base_seed = 20261129;
  std::vector<Workload> ws = {matmul(13, 18, 11), conv2d(3, 7, 6, 4, 3, 1), row_reduce(6, 21),
                              elementwise_chain(9, 14), conv2d(2, 9, 9, 3, 3, 1, 2)};
  int checked = 0, accepted_steps = 0, rejected_steps = 0;
  for (int t = 0; t < 240; ++t) {
    uint64_t seed = base_seed + t;
    std::mt19937_64 rng(seed);
    const Workload& w = ws[t % ws.size()];
    Schedule s({w.args.back()});
    int nsteps = std::uniform_int_distribution<int>(1, 10)(rng);
    for (int k = 0; k < nsteps; ++k) {
      Status st = s.apply(random_step(rng, s));
      (st ? accepted_steps : rejected_steps)++;
    }
    std::string msg = check_schedule(w, s, seed);
    INFO("trace seed " << seed << "\ntrace: " << trace_to_json(s.trace()).dump() << "\n" << msg);
    REQUIRE(msg.empty());
    // Replay through JSON gives the same lowered IR.
    Schedule replay({w.args.back()});
    REQUIRE(replay.apply_all(trace_from_json(nlohmann::json::parse(trace_to_json(s.trace()).dump()))).is_ok());
    auto a = lower::lower(s, w.args, "kernel");
    auto b = lower::lower(replay, w.args, "kernel");
    REQUIRE(ir::to_string(a) == ir::to_string(b));
    ++checked;
  }
  INFO("accepted " << accepted_steps << ", rejected " << rejected_steps);
  CHECK(checked >= 200);
  CHECK(accepted_steps > 300);
}
