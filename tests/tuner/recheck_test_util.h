// Shared by the runners' recheck tests (local: tests/tuner/test_recheck.cpp, RPC: tests/rpc/test_rpc.cpp):
// one batch of hand-made kernels with rechecks on, and the checks every runner must pass on it.
#pragma once
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tuner/measure_test_util.h"

namespace measuretest {

/** Runs {good, slow, good, segv, good, wrong} with 2 recheck rounds of at most 2 candidates within 4x of
 *  the best ("slow" is ~40x slower) and checks: each candidate handed over once, as its final result; the
 *  good ones ok, two of them rechecked (3 rounds) and handed over last; failures and the slow one not
 *  rechecked. Returns the results. */
inline std::vector<tessel::tuner::MeasureResult> run_recheck_batch(tessel::tuner::Runner& runner,
                                                                   tessel::tuner::MeasureOptions opt) {
  using namespace tessel::tuner;
  opt.recheck_rounds = 2;
  opt.recheck_ratio = 4;  // the good ones are near each other even on a loaded machine
  opt.recheck_max = 2;
  std::vector<std::string> kernels = {"good", "slow", "good", "segv", "good", "wrong"};
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  add_bad_kernels(kernels, inputs, builds);
  std::mutex mu;
  std::vector<std::pair<size_t, MeasureResult>> streamed;
  runner.set_result_callback([&](size_t i, const MeasureResult& m) {
    std::lock_guard<std::mutex> lk(mu);
    streamed.push_back({i, m});
  });
  auto r = runner.run(inputs, builds, opt, 0);
  runner.set_result_callback(nullptr);
  REQUIRE(r.size() == kernels.size());
  REQUIRE(streamed.size() == kernels.size());  // each candidate once, as its final result
  std::set<size_t> seen;
  for (auto& [i, m] : streamed) {
    CHECK(seen.insert(i).second);
    CHECK(m.error_kind == r[i].error_kind);
    CHECK(m.rounds == r[i].rounds);
    CHECK(m.run_times_s == r[i].run_times_s);
  }
  std::vector<size_t> rechecked;
  for (size_t i = 0; i < kernels.size(); ++i) {
    INFO(kernels[i] << ": " << r[i].error_message);
    if (kernels[i] == "good") {
      CHECK(r[i].ok());
      if (r[i].rounds == 3) rechecked.push_back(i);
      else CHECK(r[i].rounds == 1);
    } else {
      CHECK(r[i].rounds == 1);  // the slow one is far from the best; failures are not rechecked
    }
  }
  CHECK(r[3].error_kind == MeasureErrorKind::kRuntimeError);
  CHECK(r[5].error_kind == MeasureErrorKind::kWrongAnswer);
  REQUIRE(rechecked.size() == 2);  // recheck_max of the three good ones
  // The rechecked ones come last: their later rounds follow the whole batch.
  CHECK(std::set<size_t>{streamed[4].first, streamed[5].first} == std::set<size_t>(rechecked.begin(), rechecked.end()));
  for (size_t i : rechecked) CHECK(r[i].run_s > 0);
  return r;
}

}  // namespace measuretest
