#include "candidates.h"

#include <atomic>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "tessel/codegen/jit.h"
#include "tessel/costmodel/cost_model.h"
#include "tessel/lower/lower.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/runtime/thread_pool.h"
#include "tessel/runtime/timer.h"
#include "tessel/tuner/search_space.h"

namespace tessel::costmodel::testing {

std::vector<TestCandidate> random_candidates(std::shared_ptr<const workload::Workload> w, int n, uint64_t seed,
                                             bool gpu) {
  auto space = gpu ? tuner::make_gpu_rule_space(w) : tuner::make_rule_space(w);
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
  std::vector<runtime::NDArray> bufs;  // 64-byte aligned, as the generated code assumes
  std::vector<void*> ptrs;
  for (auto& t : w.args()) {
    std::vector<int64_t> shape;
    for (auto& e : t.shape()) shape.push_back(*ir::as_const_int(e));
    bufs.emplace_back(shape, "float32");
    bufs.back().fill_random(7);
  }
  for (auto& b : bufs) ptrs.push_back(b.data());
  // Compile on two threads (LLVM dominates), then time one after the other.
  std::vector<std::unique_ptr<codegen::JitModule>> jits(cands.size());
  std::atomic<size_t> next{0};
  auto compile = [&] {
    for (size_t i; (i = next++) < cands.size();) {
      schedule::Schedule s(w.outputs);
      if (s.apply_all(cands[i].trace)) jits[i] = codegen::JitModule::compile(lower::lower(s, w.args(), "cand"));
    }
  };
  std::thread helper(compile);
  compile();
  helper.join();
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!jits[i]) continue;
    auto r = runtime::time_function([&] { jits[i]->call_packed(ptrs.data()); }, {1, 5, 0.003, 200});
    cands[i].gflops = w.flop_count() / r.median_s * 1e-9;
  }
  runtime::set_num_threads(0);
}

double pairwise_accuracy(const std::vector<double>& score, const std::vector<double>& truth, double min_rel_diff) {
  return pair_agreement(score, truth, min_rel_diff).accuracy();
}

}  // namespace tessel::costmodel::testing
