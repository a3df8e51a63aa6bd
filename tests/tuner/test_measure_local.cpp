// LocalBuilder + LocalRunner end to end: real candidates of a 64^3 matmul built with LLVM and measured
// in a tessel-worker process; fault injection with hand-made kernels (bad_kernels.c): crash, hang,
// memory exhaustion, wrong answers; the runner keeps working after each. Plus the worker binary's
// protocol robustness over a pipe.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <set>

#include "subprocess.h"
#include "tuner/measure_test_util.h"
#include "tessel/schedule/schedule.h"
#include "tessel/tuner/measure.h"
#include "tessel/tuner/worker_protocol.h"

using namespace tessel;
using namespace tessel::tuner;
namespace fs = std::filesystem;
using namespace measuretest;

namespace {

std::string work_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("tessel_test_measure_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  return p.string();
}

/** A trace made with the Schedule API and sent through its JSON form, as the database stores it. */
std::vector<schedule::Step> via_json(const schedule::Schedule& s) {
  return schedule::trace_from_json(schedule::trace_to_json(s.trace()));
}

std::vector<schedule::Step> tiled_trace() {
  schedule::Schedule s(matmul64()->outputs);
  auto names = s.leaf_names("C");  // i, j, k
  auto [io, ii] = s.split("C", names[0], 8);
  auto [jo, ji] = s.split("C", names[1], 16);
  s.reorder("C", {io, jo, names[2], ii, ji});
  s.vectorize("C", ji);
  s.parallel("C", io);
  return via_json(s);
}

std::vector<schedule::Step> unrolled_trace() {
  schedule::Schedule s(matmul64()->outputs);
  auto names = s.leaf_names("C");
  auto t = s.tile("C", names[0], names[1], 4, 32);
  s.reorder("C", {t[0], t[1], names[2], t[2], t[3]});
  s.unroll("C", t[2]);
  s.vectorize("C", t[3]);
  return via_json(s);
}

}  // namespace

TEST_CASE("local builder + runner: real matmul candidates are checked and timed", "[tuner][measure]") {
  std::string dir = work_dir("real");
  auto builder = make_local_builder(dir, 2);
  auto runner = make_local_runner(dir);
  MeasureOptions opt = quick_options();
  // Every candidate is timed in full here: on a loaded machine one preempted first run of a 64^3 kernel
  // can take 10x the best so far and end early (early_aborted has its own test, test_measure_worker).
  opt.early_abort_ratio = 0;
  std::vector<MeasureInput> inputs = {{matmul64(), {}},
                                      {matmul64(), tiled_trace()},
                                      {matmul64(), unrolled_trace()},
                                      {matmul64(), {schedule::SplitStep{"C", "no_such_axis", 4, false}}}};
  auto builds = builder->build(inputs, opt);
  REQUIRE(builds.size() == 4);
  for (int i = 0; i < 3; ++i) {
    INFO("candidate " << i << ": " << builds[i].error_message);
    CHECK(builds[i].error_kind == MeasureErrorKind::kNone);
    CHECK(fs::exists(builds[i].artifact_path));
    CHECK(builds[i].build_s > 0);
  }
  CHECK(builds[3].error_kind == MeasureErrorKind::kInvalidSchedule);
  CHECK_THAT(builds[3].error_message, Catch::Contains("no_such_axis"));

  auto results = runner->run(inputs, builds, opt, 0);
  REQUIRE(results.size() == 4);
  for (int i = 0; i < 3; ++i) {
    INFO("candidate " << i << ": " << results[i].error_message);
    CHECK(results[i].ok());
    CHECK(results[i].run_times_s.size() >= 3);
    CHECK(results[i].median_s() > 0);
    CHECK(results[i].median_s() < 1);
    CHECK(results[i].run_s > 0);
    CHECK_FALSE(fs::exists(builds[i].artifact_path));  // cleaned up once measured
  }
  CHECK(results[3].error_kind == MeasureErrorKind::kInvalidSchedule);  // passed through
  CHECK_FALSE(results[3].ok());
  CHECK(results[3].median_s() == std::numeric_limits<double>::infinity());

  // Early abort against an impossible best time; the candidate is measured once.
  opt.early_abort_ratio = MeasureOptions().early_abort_ratio;
  auto again = builder->build({inputs[1]}, opt);
  auto aborted = runner->run({inputs[1]}, again, opt, 1e-12);
  CHECK(aborted[0].error_kind == MeasureErrorKind::kEarlyAborted);
  CHECK(aborted[0].run_times_s.size() == 1);

  // A build slower than the limit is a compile timeout (reported once it finished).
  MeasureOptions tight = opt;
  tight.build_timeout_s = 1e-6;
  auto slow = builder->build({inputs[1]}, tight);
  CHECK(slow[0].error_kind == MeasureErrorKind::kCompileTimeout);
  CHECK(slow[0].artifact_path.empty());
  runner.reset();
  CHECK(fs::is_empty(dir));  // references are removed with the runner
  fs::remove_all(dir);
}

TEST_CASE("local runner: crash / hang / memory exhaustion / wrong answers and the worker recovers",
          "[tuner][measure][faults]") {
  std::string dir = work_dir("faults");
  auto runner = bad_kernel_runner(dir);
  MeasureOptions opt = quick_options();
  opt.run_timeout_s = 1;
  std::vector<std::string> kernels = {"good", "segv",  "good",    "hang", "good", "oom",
                                      "good", "wrong", "nowrite", "fail", "good"};
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  add_bad_kernels(kernels, inputs, builds);
  BuildResult failed;
  failed.error_kind = MeasureErrorKind::kCompileError;
  failed.error_message = "linker said no";
  failed.build_s = 0.5;
  inputs.push_back({matmul64(), {}});
  builds.push_back(failed);

  std::vector<std::pair<size_t, MeasureErrorKind>> streamed;  // what the result callback saw, in order
  runner->set_result_callback([&](size_t i, const MeasureResult& m) { streamed.push_back({i, m.error_kind}); });
  auto r = runner->run(inputs, builds, opt, 0);
  REQUIRE(r.size() == kernels.size() + 1);
  REQUIRE(streamed.size() == kernels.size());  // every measured candidate, not the build failure
  // In batch order, except the near-best good ones, which come last after their rechecks (test_recheck.cpp).
  std::set<size_t> seen;
  for (auto& [i, kind] : streamed) {
    CHECK(seen.insert(i).second);
    CHECK(kind == r[i].error_kind);
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    INFO(kernels[i] << ": " << records::error_kind_name(r[i].error_kind) << ": " << r[i].error_message);
    if (kernels[i] == "good") {
      CHECK(r[i].ok());
    } else if (kernels[i] == "segv") {
      CHECK(r[i].error_kind == MeasureErrorKind::kRuntimeError);
      CHECK_THAT(r[i].error_message,
                 Catch::Contains("worker died with signal 11 (SIGSEGV) while running the candidate"));
    } else if (kernels[i] == "hang") {
      CHECK(r[i].error_kind == MeasureErrorKind::kRunTimeout);
      CHECK(r[i].run_s < 10);
    } else if (kernels[i] == "oom") {
      CHECK(r[i].error_kind == MeasureErrorKind::kOutOfMemory);
      CHECK_THAT(r[i].error_message, Catch::Contains("out of memory"));
    } else if (kernels[i] == "wrong") {
      CHECK(r[i].error_kind == MeasureErrorKind::kWrongAnswer);
      CHECK_THAT(r[i].error_message, Catch::Contains("C[5, 7]"));
    } else if (kernels[i] == "nowrite") {
      CHECK(r[i].error_kind == MeasureErrorKind::kWrongAnswer);
    } else if (kernels[i] == "fail") {
      CHECK(r[i].error_kind == MeasureErrorKind::kRuntimeError);
      CHECK_THAT(r[i].error_message, Catch::Contains("status 3"));
    }
    if (!r[i].ok()) CHECK(r[i].run_times_s.empty());
  }
  CHECK(r.back().error_kind == MeasureErrorKind::kCompileError);
  CHECK(r.back().error_message == "linker said no");
  CHECK(r.back().build_s == 0.5);
  runner.reset();
  fs::remove_all(dir);
}

TEST_CASE("local runner: a missing worker binary is reported and not thrown", "[tuner][measure]") {
  LocalRunnerParams p;
  p.work_dir = work_dir("noworker");
  p.worker_path = "/nonexistent/tessel-worker";
  p.keep_artifacts = true;
  auto runner = make_local_runner(p);
  auto r = runner->run({{matmul64(), {}}}, {bad_kernel("good")}, quick_options(), 0);
  REQUIRE(r.size() == 1);
  CHECK(r[0].error_kind == MeasureErrorKind::kWorkerLost);
  CHECK_THAT(r[0].error_message, Catch::Contains("/nonexistent/tessel-worker"));
  runner.reset();
  fs::remove_all(p.work_dir);
}

TEST_CASE("tessel-worker --stdio: garbage / unknown ops / newer versions get error lines", "[tuner][worker]") {
  auto w = Subprocess::spawn({TESSEL_WORKER_BINARY, "--stdio", "--memory-limit-mb", "1024"});
  auto ask = [&](const std::string& line) {
    REQUIRE(w->write_line(line));
    std::string out;
    REQUIRE(w->read_line(&out, 10) == Subprocess::Read::kLine);
    return WorkerResponse::from_json(nlohmann::json::parse(out));
  };
  WorkerResponse r = ask("this is not json");
  CHECK(r.protocol_error);
  CHECK(r.id == -1);
  r = ask(R"({"version":1,"id":2,"op":"launch_missiles"})");
  CHECK(r.protocol_error);
  CHECK(r.id == 2);
  r = ask(R"({"version":99,"id":3,"op":"ping"})");
  CHECK(r.protocol_error);
  CHECK_THAT(r.message, Catch::Contains("newer"));
  r = ask(R"({"version":1,"id":4,"op":"ping"})");
  CHECK(r.error_kind == "none");
  CHECK(r.message == "pong");
  CHECK(w->running());
  r = ask(R"({"version":1,"id":5,"op":"exit"})");
  CHECK(r.message == "bye");
  int status = w->wait(5);
  CHECK(Subprocess::describe_status(status) == "exited with status 0");
}

TEST_CASE("measure options JSON round trip", "[tuner][measure]") {
  MeasureOptions o;
  o.flush_cache = true;
  o.threads = 3;
  o.seed = 99;
  o.run_timeout_s = 4.5;
  MeasureOptions back = MeasureOptions::from_json(o.to_json());
  CHECK(back.to_json() == o.to_json());
  CHECK(MeasureOptions::from_json(nlohmann::json::object()).to_json() == MeasureOptions().to_json());
  CHECK_THROWS_WITH(MeasureOptions::from_json({{"threads", "many"}}), Catch::Contains("'threads' must be an integer"));
  // Every kind the worker can send is a records kind.
  for (const char* k :
       {"none", "runtime_error", "run_timeout", "wrong_answer", "worker_lost", "early_aborted", "out_of_memory"})
    CHECK(records::error_kind_from_name(k).has_value());
}

TEST_CASE("local runner: a measure lock makes runners measure one at a time", "[tuner][measure]") {
  std::string dir = work_dir("lock");
  fs::create_directories(dir);
  std::string lock_path = dir + "/measure.lock";
  LocalRunnerParams p;
  p.work_dir = dir + "/run";
  p.measure_lock = lock_path;
  p.keep_artifacts = true;  // the same build is measured twice
  auto runner = make_local_runner(p);
  auto builder = make_local_builder(dir + "/build", 1);
  MeasureOptions opt = quick_options();
  std::vector<MeasureInput> inputs = {{matmul64(), tiled_trace()}};
  auto builds = builder->build(inputs, opt);
  REQUIRE(builds[0].error_kind == MeasureErrorKind::kNone);
  // First run: the worker starts and the reference is built (slow steps outside the test's window).
  REQUIRE(runner->run(inputs, builds, opt, 0)[0].ok());
  REQUIRE(fs::exists(lock_path));

  // Another holder of the lock (as a second tuning process would be, measuring): the runner waits for it.
  int fd = ::open(lock_path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  auto measuring = std::async(std::launch::async, [&] { return runner->run(inputs, builds, opt, 0); });
  CHECK(measuring.wait_for(std::chrono::milliseconds(1500)) == std::future_status::timeout);
  ::flock(fd, LOCK_UN);
  REQUIRE(measuring.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  auto results = measuring.get();
  CHECK(results[0].ok());
  // Released after each candidate: the lock is free again.
  CHECK(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  ::close(fd);

  // A lock that cannot be opened is a clear error when the runner is made.
  p.measure_lock = dir + "/no/such/dir/measure.lock";
  CHECK_THROWS_WITH(make_local_runner(p), Catch::Contains("cannot open the measure lock") &&
                                              Catch::Contains("no/such/dir"));
  runner.reset();
  fs::remove_all(dir);
}
