// Rechecks against slow phases of the machine (MeasureOptions::recheck_*): which candidates of a batch
// are measured again, how a recheck folds into a result, the local runner's rounds over the hand-made
// kernels, and a real tuning run recording its rounds.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <set>

#include "tuner/measure_test_util.h"
#include "tuner/recheck_test_util.h"
#include "tessel/records/database.h"
#include "tessel/tuner/runner_util.h"
#include "tessel/tuner/tuner.h"
#include "tessel/workload/workload.h"

using namespace tessel;
using namespace tessel::tuner;
namespace fs = std::filesystem;
using namespace measuretest;

namespace {

MeasureResult timed_at(double median_s, double run_s = 0.1) {
  MeasureResult r;
  r.run_times_s = {median_s * 1.01, median_s, median_s * 0.99};
  r.run_s = run_s;
  return r;
}

std::string work_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("tessel_test_recheck_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  return p.string();
}

}  // namespace

TEST_CASE("recheck: the near-best candidates of a batch, the fastest recheck_max of them in batch order",
          "[tuner][measure][recheck]") {
  MeasureOptions opt;
  opt.recheck_rounds = 2;
  opt.recheck_ratio = 1.6;
  opt.recheck_max = 2;
  std::vector<MeasureResult> r = {timed_at(1.0), timed_at(1.5), timed_at(2.0),
                                  measure_error(MeasureErrorKind::kWrongAnswer, "x"), timed_at(1.1), timed_at(1.05)};
  CHECK(wants_recheck(r[0], opt, 1.0));
  CHECK(wants_recheck(r[1], opt, 1.0));
  CHECK_FALSE(wants_recheck(r[2], opt, 1.0));  // 2x the best
  CHECK_FALSE(wants_recheck(r[3], opt, 1.0));  // failed
  CHECK(wants_recheck(r[2], opt, 0));          // no best known yet
  std::vector<char> waiting = {1, 1, 1, 1, 1, 1};
  CHECK(recheck_set(r, waiting, opt, 1.0) == std::vector<size_t>{0, 5});
  waiting[0] = 0;  // handed over already
  CHECK(recheck_set(r, waiting, opt, 1.0) == std::vector<size_t>{4, 5});
  opt.recheck_max = 10;
  CHECK(recheck_set(r, waiting, opt, 1.0) == std::vector<size_t>{1, 4, 5});
  opt.recheck_rounds = 0;  // off
  CHECK_FALSE(wants_recheck(r[0], opt, 1.0));
  CHECK(recheck_set(r, waiting, opt, 1.0).empty());
}

TEST_CASE("recheck: the faster round is kept; a wrong answer or a crash replaces, the machine's failures do not",
          "[tuner][measure][recheck]") {
  const MeasureOptions fastest;  // recheck_merge "fastest", the default
  REQUIRE(fastest.recheck_merge == "fastest");
  MeasureResult r = timed_at(1.5, 0.2);
  r.build_s = 0.7;
  merge_recheck(r, timed_at(1.0, 0.3), fastest);  // a slow phase ended
  CHECK(r.median_s() == Approx(1.0));
  CHECK(r.rounds == 2);
  CHECK(r.run_s == Approx(0.5));
  CHECK(r.build_s == 0.7);
  merge_recheck(r, timed_at(1.4, 0.1), fastest);  // slower: ignored
  CHECK(r.median_s() == Approx(1.0));
  CHECK(r.rounds == 3);
  CHECK(r.run_s == Approx(0.6));
  for (auto kind : {MeasureErrorKind::kRunTimeout, MeasureErrorKind::kWorkerLost, MeasureErrorKind::kEarlyAborted,
                    MeasureErrorKind::kOutOfMemory}) {
    MeasureResult m = r;
    merge_recheck(m, measure_error(kind, "the machine"), fastest);
    CHECK(m.ok());
    CHECK(m.median_s() == Approx(1.0));
  }
  for (auto kind : {MeasureErrorKind::kWrongAnswer, MeasureErrorKind::kRuntimeError}) {
    MeasureResult m = r;
    merge_recheck(m, measure_error(kind, "misbehaved on a later round"), fastest);
    CHECK(m.error_kind == kind);
    CHECK_FALSE(m.ok());
    CHECK(m.rounds == 4);
    CHECK(m.build_s == 0.7);
    merge_recheck(m, timed_at(0.5), fastest);  // a later good round does not make it correct again
    CHECK(m.error_kind == kind);
    CHECK(m.rounds == 5);
  }
}

TEST_CASE("recheck, pooled: every round's runs count, so one lucky round does not set the time",
          "[tuner][measure][recheck]") {
  MeasureOptions pooled;
  pooled.recheck_merge = "pooled";
  MeasureResult r = timed_at(0.8, 0.2);  // a lucky first round
  r.build_s = 0.7;
  merge_recheck(r, timed_at(1.2, 0.3), pooled);
  merge_recheck(r, timed_at(1.0, 0.1), pooled);
  CHECK(r.run_times_s.size() == 9);
  CHECK(r.median_s() == Approx(1.0));  // the fastest merge would say 0.8
  CHECK(r.rounds == 3);
  CHECK(r.run_s == Approx(0.6));
  CHECK(r.build_s == 0.7);
  MeasureResult m = r;
  merge_recheck(m, measure_error(MeasureErrorKind::kEarlyAborted, "the machine"), pooled);  // ignored
  CHECK(m.run_times_s.size() == 9);
  CHECK(m.median_s() == Approx(1.0));
  merge_recheck(m, measure_error(MeasureErrorKind::kWrongAnswer, "misbehaved"), pooled);  // replaces
  CHECK(m.error_kind == MeasureErrorKind::kWrongAnswer);
  CHECK_FALSE(m.ok());
  CHECK(m.rounds == 5);
}

TEST_CASE("recheck merge: only fastest or pooled, from JSON and in the tuner's options", "[tuner][measure][recheck]") {
  CHECK(MeasureOptions::from_json(nlohmann::json{{"recheck_merge", "pooled"}}).recheck_merge == "pooled");
  CHECK(MeasureOptions::from_json(MeasureOptions().to_json()).recheck_merge == "fastest");
  CHECK_THROWS_WITH(MeasureOptions::from_json(nlohmann::json{{"recheck_merge", "median"}}),
                    Catch::Contains("'fastest' or 'pooled'"));
  CHECK_THROWS_WITH(MeasureOptions::from_json(nlohmann::json{{"recheck_merge", 3}}),
                    Catch::Contains("must be a string"));
}

TEST_CASE("local runner: near-best candidates are measured again after their batch; the rest are handed over at once",
          "[tuner][measure][recheck]") {
  std::string dir = work_dir("runner");
  auto runner = bad_kernel_runner(dir);
  auto r = run_recheck_batch(*runner, quick_options());
  CHECK(r[1].error_kind == MeasureErrorKind::kEarlyAborted);  // 40x the first good one

  // Off: every candidate once, handed over in batch order.
  MeasureOptions opt = quick_options();
  opt.recheck_rounds = 0;
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  add_bad_kernels({"good", "slow", "good", "segv", "good", "wrong"}, inputs, builds);
  std::vector<size_t> streamed;
  runner->set_result_callback([&](size_t i, const MeasureResult&) { streamed.push_back(i); });
  r = runner->run(inputs, builds, opt, 0);
  REQUIRE(streamed.size() == inputs.size());
  for (size_t i = 0; i < streamed.size(); ++i) {
    CHECK(streamed[i] == i);
    CHECK(r[i].rounds == 1);
  }
  runner.reset();
  fs::remove_all(dir);
}

TEST_CASE("tune: the rechecked candidates' records carry their rounds and the fastest round's times",
          "[tuner][measure][recheck]") {
  std::string dir = work_dir("tune");
  fs::create_directories(dir);
  auto w = std::make_shared<workload::Workload>(workload::from_spec("matmul:M=32,N=32,K=32"));
  TuneOptions o;
  o.tasks = {{w, 1, "mm"}};
  o.trials = 8;
  o.batch_size = 8;
  o.db_path = dir + "/t.db";
  o.cost_model = "random";
  o.refine_model = "none";
  o.transfer_from = {"none"};
  o.remeasure_top = 2;  // the final side-by-side re-measurement of the best 2 is rechecked too
  o.jobs = 2;
  o.measure = quick_options(1);
  o.measure.recheck_rounds = 2;
  o.measure.recheck_max = 3;
  o.measure.recheck_ratio = 1e9;  // every candidate that ran is near enough: the fastest three are rechecked
  // The final re-measurement keeps only candidates that run again; 2 s (quick_options) can time out on a
  // machine busy with other tests (seen once in CI: one of the best 2 was not re-recorded).
  o.measure.run_timeout_s = 30;
  o.work_dir = dir + "/work";
  tune(o);
  auto recs = records::open_database(o.db_path)->records({w->key, "", false, false, 0});
  REQUIRE(recs.size() >= 8);
  int with_rounds = 0, ok = 0, remeasured = 0;
  for (auto& rec : recs) {
    if (rec.run_settings.contains("remeasure")) {  // within ratio 1e9 of the best: rechecked as well
      CHECK(rec.run_settings["rounds"] == 3);
      ++remeasured;
      continue;
    }
    ok += rec.ok();
    CHECK(rec.run_settings["recheck_rounds"] == 2);
    CHECK(rec.run_settings["recheck_merge"] == "fastest");
    if (rec.run_settings.contains("rounds")) {
      CHECK(rec.run_settings["rounds"] == 3);
      CHECK(rec.ok());
      CHECK(rec.run_times_s.size() >= 3);  // one round's times, not all three rounds'
      ++with_rounds;
    }
  }
  CHECK(with_rounds == std::min(ok, 3));
  CHECK(remeasured == std::min(ok, 2));
  CHECK(recs.size() == size_t(8 + remeasured));
  CHECK(with_rounds > 0);
  // Bad settings are refused with the flag's name.
  o.measure.recheck_ratio = 0.5;
  CHECK_THROWS_WITH(tune(o), Catch::Contains("--recheck-ratio must be >= 1"));
  o.measure.recheck_ratio = 1.6;
  o.measure.recheck_rounds = -1;
  CHECK_THROWS_WITH(tune(o), Catch::Contains("--recheck-rounds must be >= 0"));
  o.measure.recheck_rounds = 2;
  o.measure.recheck_merge = "median";
  CHECK_THROWS_WITH(tune(o), Catch::Contains("recheck merge must be 'fastest' or 'pooled'"));
  fs::remove_all(dir);
}
