#include "candidates.h"

#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/runtime/thread_pool.h"
#include "tessel/runtime/timer.h"
#include "tessel/tuner/search_space.h"

namespace tessel::costmodel::testing {

std::vector<TestCandidate> random_candidates(std::shared_ptr<const workload::Workload> w, int n, uint64_t seed) {
  auto space = tuner::make_rule_space(w);
  std::mt19937_64 rng(seed);
  std::set<std::string> seen;
  std::vector<TestCandidate> out;
  for (int tries = 0; int(out.size()) < n && tries < n * 50; ++tries) {
    tuner::KnobValues k;
    for (auto& kn : space->knobs()) k.push_back(std::uniform_int_distribution<int>(0, int(kn.options.size()) - 1)(rng));
    TestCandidate c;
    if (!space->make_trace(k, &c.trace)) continue;
    if (!seen.insert(schedule::trace_to_json(c.trace).dump()).second) continue;
    out.push_back(std::move(c));
  }
  return out;
}

void measure_all(const workload::Workload& w, std::vector<TestCandidate>& cands) {
  runtime::set_num_threads(1);
  std::vector<std::vector<float>> bufs;
  std::vector<void*> ptrs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& t : w.args()) {
    size_t n = 1;
    for (auto& e : t.shape()) n *= size_t(*ir::as_const_int(e));
    bufs.emplace_back(n);
    for (auto& x : bufs.back()) x = u(rng);
  }
  for (auto& b : bufs) ptrs.push_back(b.data());
  for (auto& c : cands) {
    schedule::Schedule s(w.outputs);
    if (!s.apply_all(c.trace)) continue;
    auto jit = codegen::JitModule::compile(lower::lower(s, w.args(), "cand"));
    auto r = runtime::time_function([&] { jit->call_packed(ptrs.data()); }, {1, 5, 0.003, 200});
    c.gflops = w.flop_count() / r.median_s * 1e-9;
  }
  runtime::set_num_threads(0);
}

double pairwise_accuracy(const std::vector<double>& score, const std::vector<double>& truth, double min_rel_diff) {
  size_t good = 0, all = 0;
  for (size_t i = 0; i < truth.size(); ++i)
    for (size_t j = i + 1; j < truth.size(); ++j) {
      double d = truth[i] - truth[j];
      if (std::abs(d) <= min_rel_diff * std::max(truth[i], truth[j])) continue;
      ++all;
      if ((d > 0) == (score[i] > score[j])) ++good;
    }
  return all ? double(good) / double(all) : 0.0;
}

}  // namespace tessel::costmodel::testing
