// Remote measurement on 127.0.0.1: a tracker and workers as real processes (ephemeral ports), the RPC
// runner measuring real LLVM-built candidates and the hand-made faulty kernels (tests/tuner/bad_kernels.c),
// and the fault tests of docs/remote.md: a worker killed mid-measurement, a worker stopped (SIGSTOP) and
// resumed, the tracker restarted under connected workers and tuners. In each, every candidate gets a
// result (none lost) with its error kind.
#include <fcntl.h>
#include <sys/file.h>

#include <catch2/catch.hpp>
#include <functional>
#include <future>
#include <thread>

#include "rpc_internal.h"
#include "rpc_test_util.h"
#include "tessel/rpc/rpc_runner.h"
#include "tessel/schedule/schedule.h"
#include "tessel/tuner/measure.h"
#include "tuner/measure_test_util.h"
#include "tuner/recheck_test_util.h"

using namespace tessel;
using namespace tessel::tuner;
using measuretest::bad_kernel;
using measuretest::matmul64;
using rpctest::Server;

namespace {

/** One thread, no rechecks: the fault tests count measurements (the recheck test turns them on). */
MeasureOptions quick_options() {
  MeasureOptions o = measuretest::quick_options(1);
  o.recheck_rounds = 0;
  return o;
}

/** A tracker and n workers of key "cpu" on 127.0.0.1, all with the same token. */
struct Cluster {
  std::string dir;
  rpc::Security sec;
  std::unique_ptr<Server> tracker;
  std::vector<std::unique_ptr<Server>> workers;

  Cluster(const std::string& name, int n, std::vector<std::string> tracker_flags = {}) : dir(rpctest::test_dir(name)) {
    sec.token = "s3cret-" + name;
    std::ofstream(dir + "/token") << sec.token << "\n";
    std::vector<std::string> t = {TESSEL_BIN,     "tracker",       "--listen", "127.0.0.1:0",        "--token-file",
                                  dir + "/token", "--heartbeat-s", "0.5",      "--worker-timeout-s", "4"};
    t.insert(t.end(), tracker_flags.begin(), tracker_flags.end());
    tracker = std::make_unique<Server>(t, dir, "tracker");
    REQUIRE(tracker->start());
    for (int i = 0; i < n; ++i) add_worker();
    REQUIRE(rpctest::poll_until([&] { return rpctest::key_status(tracker->address(), sec, "cpu").free == n; }, 60));
  }
  Server& add_worker() {
    int i = int(workers.size());
    workers.push_back(
        std::make_unique<Server>(std::vector<std::string>{TESSEL_RPC_WORKER_BINARY, "--tracker", tracker->address(),
                                                          "--key", "cpu", "--listen", "127.0.0.1:0", "--token-file",
                                                          dir + "/token", "--work-dir", dir + "/w" + std::to_string(i)},
                                 dir, "worker" + std::to_string(i)));
    REQUIRE(workers.back()->start());
    return *workers.back();
  }
  rpc::RpcRunnerParams runner_params() {
    rpc::RpcRunnerParams p;
    p.tracker = tracker->address();
    p.key = "cpu";
    p.security = sec;
    p.work_dir = dir + "/tuner";
    p.keep_artifacts = true;
    p.stats = std::make_shared<rpc::RpcRunnerStats>();
    p.wait_for_workers_s = 60;
    return p;
  }
  ~Cluster() {
    workers.clear();
    tracker.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

/** n copies of the good kernel. */
void good_batch(int n, std::vector<MeasureInput>* in, std::vector<BuildResult>* b) {
  for (int i = 0; i < n; ++i) {
    in->push_back({matmul64(), {}});
    b->push_back(bad_kernel("good"));
  }
}

/** Measures 8 good candidates (each timed for at least min_time_s) and calls fault() once `after` results
 *  arrived, while the others are being measured. Every candidate must still come back measured. */
void run_through_fault(Runner& runner, rpc::RpcRunnerStats& stats, MeasureOptions opt, int after,
                       const std::function<void()>& fault) {
  opt.max_repeats = 1000000;  // min_time_s decides how long a candidate takes
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  good_batch(8, &inputs, &builds);
  std::vector<MeasureResult> r;
  std::thread t([&] { r = runner.run(inputs, builds, opt, 0); });
  bool reached = rpctest::poll_until([&] { return stats.measured >= after; }, 120);
  if (reached) fault();
  t.join();
  REQUIRE(reached);
  REQUIRE(r.size() == 8);
  for (auto& x : r) {
    INFO(x.error_message);
    CHECK(x.ok());
  }
}

}  // namespace

TEST_CASE("rpc: a tracker and two workers measure real candidates built with LLVM", "[rpc]") {
  Cluster c("real", 2);
  auto p = c.runner_params();
  p.keep_artifacts = false;
  std::vector<size_t> streamed;
  std::mutex mu;
  auto runner = rpc::make_rpc_runner(p);
  runner->set_result_callback([&](size_t i, const MeasureResult&) {
    std::lock_guard<std::mutex> lk(mu);
    streamed.push_back(i);
  });
  auto builder = make_local_builder(c.dir + "/build", 2);
  schedule::Schedule s(matmul64()->outputs);
  auto names = s.leaf_names("C");
  auto [io, ii] = s.split("C", names[0], 8);
  s.parallel("C", io);
  std::vector<MeasureInput> inputs = {{matmul64(), {}},
                                      {matmul64(), s.trace()},
                                      {matmul64(), {}},
                                      {matmul64(), {schedule::SplitStep{"C", "no_such_axis", 4, false}}}};
  MeasureOptions opt = quick_options();
  auto builds = builder->build(inputs, opt);
  auto r = runner->run(inputs, builds, opt, 0);
  REQUIRE(r.size() == 4);
  for (int i = 0; i < 3; ++i) {
    INFO("candidate " << i << ": " << r[i].error_message);
    CHECK(r[i].ok());
    CHECK(r[i].run_times_s.size() >= 3);
    CHECK_FALSE(std::filesystem::exists(builds[i].artifact_path));
  }
  CHECK(r[3].error_kind == MeasureErrorKind::kInvalidSchedule);
  CHECK(p.stats->measured == 3);
  CHECK(streamed.size() == 3);  // results were handed over as they arrived
  // Leases are released after the batch.
  CHECK(rpctest::poll_until([&] { return rpctest::key_status(c.tracker->address(), c.sec, "cpu").free == 2; }, 30));
}

TEST_CASE("rpc: crash / hang / memory exhaustion / wrong answers are recorded with their kinds", "[rpc][faults]") {
  Cluster c("faults", 2);
  auto p = c.runner_params();
  auto runner = rpc::make_rpc_runner(p);
  MeasureOptions opt = quick_options();
  opt.run_timeout_s = 1;
  std::vector<std::string> kernels = {"good", "segv",  "good",    "hang", "good",
                                      "oom",  "wrong", "nowrite", "fail", "good"};
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  for (auto& k : kernels) {
    inputs.push_back({matmul64(), {}});
    builds.push_back(bad_kernel(k));
  }
  auto r = runner->run(inputs, builds, opt, 0);
  REQUIRE(r.size() == kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    INFO(kernels[i] << ": " << records::error_kind_name(r[i].error_kind) << ": " << r[i].error_message);
    auto k = kernels[i];
    if (k == "good") CHECK(r[i].ok());
    if (k == "segv") CHECK(r[i].error_kind == MeasureErrorKind::kRuntimeError);
    if (k == "segv") CHECK_THAT(r[i].error_message, Catch::Contains("SIGSEGV"));
    if (k == "hang") CHECK(r[i].error_kind == MeasureErrorKind::kRunTimeout);
    if (k == "oom") CHECK(r[i].error_kind == MeasureErrorKind::kOutOfMemory);
    if (k == "wrong") CHECK_THAT(r[i].error_message, Catch::Contains("C[5, 7]"));
    if (k == "wrong" || k == "nowrite") CHECK(r[i].error_kind == MeasureErrorKind::kWrongAnswer);
    if (k == "fail") CHECK(r[i].error_kind == MeasureErrorKind::kRuntimeError);
  }
  CHECK(p.stats->workers_lost == 0);  // faulty candidates kill children, never the worker servers
  for (auto& w : c.workers) CHECK(w->running());
}

TEST_CASE("rpc: a worker killed mid-measurement: its candidates are measured elsewhere", "[rpc][faults]") {
  // Without rechecks, and with the kill landing in the recheck passes (each candidate keeps a result).
  auto [rounds, after] = GENERATE(std::pair<int, int>{0, 2}, std::pair<int, int>{2, 10});
  Cluster c("killed" + std::to_string(rounds), 2);
  auto p = c.runner_params();
  auto runner = rpc::make_rpc_runner(p);
  MeasureOptions opt = quick_options();
  opt.min_time_s = 0.25;  // each candidate takes a quarter second: the kill lands mid-measurement
  opt.recheck_rounds = rounds;
  opt.recheck_ratio = 1e9;  // with rechecks: the 4 fastest of the 8 twice, 8 passes after the first 8
  opt.recheck_max = 4;
  // Both workers leased, and a few candidates measured: then one worker dies.
  run_through_fault(*runner, *p.stats, opt, after, [&] { c.workers[0]->stop(SIGKILL); });
  CHECK(p.stats->workers_lost >= 1);
  CHECK(p.stats->measured - p.stats->rechecks == 8);
  CHECK(p.stats->rechecks >= (rounds > 0 ? 2 : 0));
  if (rounds == 0) CHECK(p.stats->rechecks == 0);
  // The tracker forgets the dead worker; the survivor stays free.
  CHECK(rpctest::poll_until(
      [&] {
        auto k = rpctest::key_status(c.tracker->address(), c.sec, "cpu");
        return k.free == 1 && k.busy == 0;
      },
      60));
}

TEST_CASE("rpc: a worker stopped (SIGSTOP) and resumed: tuning finishes and the worker comes back", "[rpc][faults]") {
  Cluster c("stopped", 2);
  auto p = c.runner_params();
  p.call_slack_s = 3;  // a call waits 2 x 1 s + 3 s before its worker counts as lost
  auto runner = rpc::make_rpc_runner(p);
  MeasureOptions opt = quick_options();
  opt.run_timeout_s = 1;
  opt.min_time_s = 0.2;
  run_through_fault(*runner, *p.stats, opt, 1, [&] { c.workers[1]->signal(SIGSTOP); });
  c.workers[1]->signal(SIGCONT);
  CHECK(p.stats->workers_lost >= 1);
  // Resumed, it registers again and measures the next batch with the other one.
  REQUIRE(rpctest::poll_until([&] { return rpctest::key_status(c.tracker->address(), c.sec, "cpu").free == 2; }, 60));
  auto lost_before = p.stats->workers_lost.load();
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  good_batch(8, &inputs, &builds);
  auto again = runner->run(inputs, builds, opt, 0);
  for (auto& x : again) CHECK(x.ok());
  CHECK(p.stats->workers_lost == lost_before);
}

TEST_CASE("rpc: the tracker restarted while workers and a tuner are connected", "[rpc][faults]") {
  Cluster c("restart", 2);
  auto p = c.runner_params();
  auto runner = rpc::make_rpc_runner(p);
  MeasureOptions opt = quick_options();
  opt.min_time_s = 0.2;
  int port = c.tracker->port();
  // The batch goes on with the workers it holds.
  run_through_fault(*runner, *p.stats, opt, 1, [&] { c.tracker->stop(SIGKILL); });
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  good_batch(8, &inputs, &builds);
  // The next batch waits (retrying) for the tracker; it comes back on the same port, workers re-register.
  std::vector<MeasureResult> r2;
  std::thread t2([&] { r2 = runner->run(inputs, builds, opt, 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto& a = c.tracker->argv();
  for (size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == "--listen") a[i + 1] = "127.0.0.1:" + std::to_string(port);
  REQUIRE(rpctest::poll_until([&] { return c.tracker->start(10); }, 60));  // the port may linger briefly
  t2.join();
  INFO("restarted tracker: " << c.tracker->log());
  REQUIRE(r2.size() == 8);
  for (auto& x : r2) {
    INFO(x.error_message);
    CHECK(x.ok());
  }
  CHECK(rpctest::poll_until([&] { return rpctest::key_status(c.tracker->address(), c.sec, "cpu").free == 2; }, 60));
  CHECK(p.stats->workers_lost == 0);
}

TEST_CASE("rpc: clients without the token are refused and nothing runs", "[rpc][security]") {
  Cluster c("auth", 1);
  auto p = c.runner_params();
  p.security.token = "wrong";
  p.wait_for_workers_s = 5;
  auto bad = rpc::make_rpc_runner(p);
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  good_batch(2, &inputs, &builds);
  auto r = bad->run(inputs, builds, quick_options(), 0);
  REQUIRE(r.size() == 2);
  for (auto& x : r) {
    CHECK(x.error_kind == MeasureErrorKind::kWorkerLost);
    CHECK_THAT(x.error_message, Catch::Contains("token"));
  }
  rpc::Security none;
  CHECK_THROWS_WITH(rpc::tracker_status(c.tracker->address(), none, 5), Catch::Contains("missing token"));
  // Directly to the worker, with a wrong token: refused, nothing measured.
  auto direct = c.runner_params();
  direct.tracker.clear();
  direct.workers = {c.workers[0]->address()};
  direct.security.token = "wrong";
  direct.max_attempts = 2;
  auto r2 = rpc::make_rpc_runner(direct)->run(inputs, builds, quick_options(), 0);
  for (auto& x : r2) {
    CHECK(x.error_kind == MeasureErrorKind::kWorkerLost);
    CHECK_THAT(x.error_message, Catch::Contains("wrong token"));
  }
  // Nothing was measured for the refused calls.
  auto info_stub = rpc::proto::Worker::NewStub(rpc::make_channel(c.workers[0]->address(), c.sec, 8));
  auto ctx = rpc::client_context(c.sec, 10);
  rpc::proto::InfoReply info;
  REQUIRE(info_stub->Info(ctx.get(), rpc::proto::InfoRequest(), &info).ok());
  CHECK(info.measured() == 0);
  // With the right token the same worker measures.
  direct.security.token = c.sec.token;
  auto r3 = rpc::make_rpc_runner(direct)->run(inputs, builds, quick_options(), 0);
  for (auto& x : r3) CHECK(x.ok());
}

TEST_CASE("rpc: a --worker that never answers: every candidate is worker_lost and run() returns", "[rpc][faults]") {
  std::string dir = rpctest::test_dir("noworker");
  rpc::RpcRunnerParams p;
  p.workers = {"127.0.0.1:1"};  // nothing listens on port 1
  p.work_dir = dir;
  p.keep_artifacts = true;
  p.stats = std::make_shared<rpc::RpcRunnerStats>();
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  good_batch(5, &inputs, &builds);
  auto r = rpc::make_rpc_runner(p)->run(inputs, builds, quick_options(), 0);
  REQUIRE(r.size() == 5);
  for (auto& x : r) {
    CHECK(x.error_kind == MeasureErrorKind::kWorkerLost);
    CHECK_THAT(x.error_message, Catch::Contains("127.0.0.1:1"));
  }
  CHECK(p.stats->measured == 0);
  CHECK(p.stats->workers_lost == 3);  // three rounds without progress end the batch
  std::filesystem::remove_all(dir);
}

TEST_CASE("rpc: a worker with --measure-lock measures only while nobody else holds the lock", "[rpc]") {
  std::string dir = rpctest::test_dir("lock");
  std::string lock_path = dir + "/measure.lock";
  Server worker({TESSEL_RPC_WORKER_BINARY, "--listen", "127.0.0.1:0", "--work-dir", dir + "/w", "--measure-lock",
                 lock_path},
                dir, "worker");
  REQUIRE(worker.start());
  REQUIRE(std::filesystem::exists(lock_path));  // opened (made) at start
  rpc::RpcRunnerParams p;
  p.workers = {worker.address()};
  p.work_dir = dir + "/tuner";
  p.keep_artifacts = true;  // the same builds are measured twice
  p.stats = std::make_shared<rpc::RpcRunnerStats>();
  auto runner = rpc::make_rpc_runner(p);
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  good_batch(2, &inputs, &builds);
  // First batch: the worker's child starts and the reference arrives (slow steps outside the window below).
  for (auto& x : runner->run(inputs, builds, quick_options(), 0)) REQUIRE(x.ok());

  // Another holder of the lock (a tuning run or a second worker on this machine, measuring): the worker waits.
  int fd = ::open(lock_path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  int64_t before = p.stats->measured;
  auto measuring = std::async(std::launch::async, [&] { return runner->run(inputs, builds, quick_options(), 0); });
  CHECK(measuring.wait_for(std::chrono::milliseconds(1500)) == std::future_status::timeout);
  CHECK(p.stats->measured == before);
  ::flock(fd, LOCK_UN);
  REQUIRE(measuring.wait_for(std::chrono::seconds(120)) == std::future_status::ready);
  for (auto& x : measuring.get()) {
    INFO(x.error_message);
    CHECK(x.ok());
  }
  // Released after each candidate: the lock is free again.
  CHECK(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  ::close(fd);
  runner.reset();
  worker.stop(SIGKILL);
  std::filesystem::remove_all(dir);
}

TEST_CASE("rpc: near-best candidates are measured again after their batch, on any worker; the rest at once",
          "[rpc][recheck]") {
  Cluster c("recheck", 2);
  auto p = c.runner_params();
  auto runner = rpc::make_rpc_runner(p);
  measuretest::run_recheck_batch(*runner, quick_options());  // the request's early-abort bound is fixed when it is sent
  CHECK(p.stats->rechecks == 4);  // 2 candidates x 2 rounds
  CHECK(p.stats->measured == 6 + 4);
  CHECK(p.stats->workers_lost == 0);

  // Off: every candidate once.
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  measuretest::add_bad_kernels({"good", "slow", "good", "segv", "good", "wrong"}, inputs, builds);
  for (auto& x : runner->run(inputs, builds, quick_options(), 0)) CHECK(x.rounds == 1);
  CHECK(p.stats->rechecks == 4);
  CHECK(p.stats->measured == 10 + 6);
}
