// bench: rpc: measurement throughput (candidates/s) through a tracker with 1, 2 and 4 local workers
//
// One workload's candidates (random points of the default rule space, built once with LLVM) are
// measured by the RPC runner on k `tessel worker`s of one tracker on 127.0.0.1 (k = 1, 2, 4), and by the
// local runner for comparison. Each k gets a warm-up batch first (worker children started, references
// sent), then the timed batch (3 times; the median). Kernels run on one thread each, so k workers can use k cores: on
// this project's 2-core machines 4 workers share 2 cores and cannot scale past 2. Reproduce: scripts/bench rpc
// [--candidates N] [--spec S] [--min-time S]
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>
#include <thread>

#include "common/bench_util.h"
#include "rpc_test_util.h"
#include "tessel/rpc/rpc_runner.h"
#include "tessel/tuner/search_space.h"

using namespace tessel;
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/** Runs inputs through runner `rounds` times; returns the median wall seconds of a round, counts the
 *  successes of the last and gives the median over its candidates of their measured median times. */
double timed_run(tuner::Runner& runner, const std::vector<tuner::MeasureInput>& in,
                 const std::vector<tuner::BuildResult>& b, const tuner::MeasureOptions& opt, int* ok, int rounds = 3,
                 double* kernel_s = nullptr) {
  std::vector<double> s, k;
  for (int i = 0; i < rounds; ++i) {
    double t0 = now_s();
    auto r = runner.run(in, b, opt, 0);
    s.push_back(now_s() - t0);
    *ok = 0;
    k.clear();
    for (auto& x : r) {
      *ok += x.ok();
      if (x.ok()) k.push_back(x.median_s());
    }
  }
  std::sort(k.begin(), k.end());
  if (kernel_s) *kernel_s = k.empty() ? 0 : k[k.size() / 2];
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv, spec = "matmul:M=128,N=128,K=128";
  int n = 32;
  double min_time = 0.05;
  po::options_description desc("rpc benchmark options");
  desc.add_options()("help,h", "help")("csv", po::value<std::string>(&csv), "write results to this CSV file")(
      "candidates", po::value<int>(&n)->default_value(n), "candidates per timed batch")(
      "spec", po::value<std::string>(&spec)->default_value(spec), "workload spec")(
      "min-time", po::value<double>(&min_time)->default_value(min_time), "timed seconds per candidate, at least");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "rpc: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  std::string dir = rpctest::test_dir("bench");
  auto w = std::make_shared<const workload::Workload>(workload::from_spec(spec));
  auto space = tuner::make_target_space(w, codegen::Target::parse("host"));  // the space tune searches here
  std::mt19937_64 rng(1);
  std::set<std::string> seen;
  std::vector<tuner::MeasureInput> inputs;
  for (int tries = 0; int(inputs.size()) < n && tries < 200 * n; ++tries) {
    tuner::KnobValues k;
    for (auto& kn : space->knobs()) k.push_back(std::uniform_int_distribution<int>(0, int(kn.options.size()) - 1)(rng));
    std::vector<schedule::Step> t;
    if (space->make_trace(k, &t) && seen.insert(schedule::trace_to_json(t).dump()).second) inputs.push_back({w, t});
  }
  tuner::MeasureOptions opt;
  opt.threads = 1;
  opt.min_time_s = min_time;
  opt.max_repeats = 1000000;  // min_time_s decides how long a candidate is timed
  opt.memory_limit_mb = 2048;
  auto builds = tuner::make_local_builder(dir + "/build", 0)->build(inputs, opt);
  std::cout << "rpc: " << inputs.size() << " candidates of " << spec << " built; "
            << std::thread::hardware_concurrency() << " cores here\n";

  bench::Table table(
      {"runner", "workers", "candidates", "ok", "seconds", "candidates_per_s", "vs_1_worker", "median_kernel_ms"});
  double base = 0;
  {
    tuner::LocalRunnerParams lp;
    lp.work_dir = dir + "/local";
    lp.keep_artifacts = true;
    auto local = tuner::make_local_runner(lp);
    int ok = 0;
    timed_run(*local, {inputs[0]}, {builds[0]}, opt, &ok, 1);  // warm-up: child, reference
    double kernel = 0;
    double s = timed_run(*local, inputs, builds, opt, &ok, 3, &kernel);
    table.add({"local (no RPC)", "1", std::to_string(inputs.size()), std::to_string(ok), bench::fmt(s, 2),
               bench::fmt(inputs.size() / s, 2), "-", bench::fmt(kernel * 1e3, 3)});
  }
  std::ofstream(dir + "/token") << "bench-token\n";
  rpc::Security sec;
  sec.token = "bench-token";
  for (int k : {1, 2, 4}) {
    rpctest::Server tracker({TESSEL_BIN, "tracker", "--listen", "127.0.0.1:0", "--token-file", dir + "/token"}, dir,
                            "tracker" + std::to_string(k));
    if (!tracker.start()) {
      std::cerr << "rpc: the tracker did not start\n";
      return 1;
    }
    std::vector<std::unique_ptr<rpctest::Server>> workers;
    for (int i = 0; i < k; ++i) {
      workers.push_back(std::make_unique<rpctest::Server>(
          std::vector<std::string>{TESSEL_RPC_WORKER_BINARY, "--tracker", tracker.address(), "--key", "cpu", "--listen",
                                   "127.0.0.1:0", "--token-file", dir + "/token"},
          dir, "worker" + std::to_string(k) + "_" + std::to_string(i)));
      if (!workers.back()->start()) return 1;
    }
    if (!rpctest::poll_until([&] { return rpctest::key_status(tracker.address(), sec, "cpu").free == k; }, 60)) {
      std::cerr << "rpc: workers did not register\n";
      return 1;
    }
    rpc::RpcRunnerParams p;
    p.tracker = tracker.address();
    p.key = "cpu";
    p.security = sec;
    p.work_dir = dir + "/tuner";
    p.keep_artifacts = true;
    auto runner = rpc::make_rpc_runner(p);
    int ok = 0;
    std::vector<tuner::MeasureInput> warm(inputs.begin(), inputs.begin() + std::min<size_t>(k, inputs.size()));
    std::vector<tuner::BuildResult> warm_b(builds.begin(), builds.begin() + warm.size());
    timed_run(*runner, warm, warm_b, opt, &ok, 1);
    double kernel = 0;
    double s = timed_run(*runner, inputs, builds, opt, &ok, 3, &kernel);
    double rate = inputs.size() / s;
    if (k == 1) base = rate;
    table.add({"rpc (tracker + workers)", std::to_string(k), std::to_string(inputs.size()), std::to_string(ok),
               bench::fmt(s, 2), bench::fmt(rate, 2), bench::fmt(rate / base, 2) + "x", bench::fmt(kernel * 1e3, 3)});
  }
  std::cout << "measurement throughput, " << spec << ", 1 thread per kernel, each candidate timed for >= " << min_time
            << " s; median of 3 batches\n";
  table.print();
  if (std::thread::hardware_concurrency() < 4)
    std::cout << "note: " << std::thread::hardware_concurrency()
              << " cores: workers beyond that share cores. A candidate is timed until its run times add up to\n"
                 "min_time_s, and a run that was preempted counts its waiting time too, so more workers than cores\n"
                 "still finish more candidates per second -- with timings disturbed by the sharing (medians of\n"
                 "short kernels mostly survive it). Run at most one worker per core on a measured machine.\n";
  std::error_code ec;
  fs::remove_all(dir, ec);
  return table.write_csv(csv) ? 0 : 1;
}
