// bench: tuned kernels vs the hand-written GEMM schedule and oneDNN conv2d, and measurement throughput (search)
//
// Tunes each workload from scratch (fresh database, one thread for the measured kernels), then measures
// the baseline in the same run. Writes bench/results/tune.csv. Reproduce the protocol with
//   scripts/bench tune --trials 1000 --time 15m
// (defaults are shorter: --trials 200 --time 4m per workload; --only gemm|conv|throughput).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "common/bench_util.h"
#include "common/conv_bench.h"
#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/matmul.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/runtime/thread_pool.h"
#include "tessel/tuner/tuner.h"

using namespace tessel;
namespace po = boost::program_options;

namespace {

tuner::TuneSummary tune_one(const std::string& spec, int64_t trials, double time_s, const std::string& model,
                            const std::string& dir) {
  tuner::TuneOptions o;
  auto w = std::make_shared<workload::Workload>(workload::from_spec(spec));
  o.tasks = {{w, 1, spec}};
  o.trials = trials;
  o.time_budget_s = time_s;
  o.cost_model = model;
  o.measure.threads = 1;
  o.db_path = dir + "/" + w->key + ".db";
  std::filesystem::remove(o.db_path);
  bool tty = isatty(fileno(stderr));
  return tuner::tune(o, [&](const tuner::TuneSummary& s, double eta) {
    std::fprintf(stderr, "%s  %s: trials %lld  best %.1f GFLOP/s  %.0fs%s", tty ? "\r" : "", spec.c_str(),
                 (long long)s.total_trials, s.tasks[0].best_gflops, s.wall_s, tty ? "   " : "\n");
  });
}

double hand_written_gemm_gflops(int n) {
  auto p = ops::matmul_cpu_params(codegen::Target::host().vector_bytes());
  auto t = ops::matmul_packed(n, n, n, p.nr);
  auto jit = codegen::JitModule::compile(lower::lower(ops::schedule_matmul_packed_cpu(t, p), t, "gemm"));
  runtime::NDArray a({n, n}, "float32"), b({n, n}, "float32"), c({n, n}, "float32");
  a.fill_random(1);
  b.fill_random(2);
  void* args[] = {a.data(), b.data(), c.data()};
  double best = 1e30;
  for (int r = 0; r < 3; ++r) best = std::min(best, bench::time_it([&] { jit->call_packed(args); }).median_s);
  return 2.0 * n * n * n / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv, only, time_str = "240", model = "random";
  int64_t trials = 200;
  po::options_description desc("tune benchmark options");
  desc.add_options()("help,h", "help")("csv", po::value<std::string>(&csv), "CSV output")(
      "trials", po::value<int64_t>(&trials)->default_value(200), "trials per workload")(
      "time", po::value<std::string>(&time_str)->default_value("240"), "seconds per workload (or 15m)")(
      "cost-model", po::value<std::string>(&model)->default_value("random"), "cost model")(
      "only", po::value<std::string>(&only), "gemm, conv, conv1x1 or throughput");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "tune: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  double time_s = std::stod(time_str) * (time_str.back() == 'm' ? 60 : time_str.back() == 'h' ? 3600 : 1);
  std::string dir = (std::filesystem::temp_directory_path() / "tessel-bench-tune").string();
  std::filesystem::create_directories(dir);
  runtime::set_num_threads(1);
  bench::Table table({"workload", "trials", "wall_s", "tuned_gflops", "baseline", "baseline_gflops", "ratio",
                      "candidates_per_s"});
  auto add = [&](const std::string& wl, const tuner::TuneSummary& s, const std::string& base, double bg) {
    double g = s.tasks[0].best_gflops;
    table.add({wl, std::to_string(s.total_trials), bench::fmt(s.wall_s, 1), bench::fmt(g, 1), base, bench::fmt(bg, 1),
               bench::fmt(bg > 0 ? g / bg : 0, 3), bench::fmt(s.total_trials / std::max(1e-9, s.wall_s), 2)});
  };
  if (only.empty() || only == "throughput") {
    auto s = tune_one("matmul:M=512,N=512,K=512", 64, 0, model, dir);
    add("throughput: matmul_512^3 (64 trials)", s, "-", 0);
  }
  if (only.empty() || only == "gemm") {
    auto s = tune_one("matmul:M=1024,N=1024,K=1024", trials, time_s, model, dir);
    add("gemm_1024^3 (1 thread)", s, "hand-written", hand_written_gemm_gflops(1024));
  }
  if (only.empty() || only == "conv" || only == "conv1x1") {
    struct L {
      int H, CI, CO, K, pad;
    };
    for (L l : {L{56, 64, 64, 3, 1}, L{28, 128, 128, 3, 1}, L{14, 256, 256, 3, 1}, L{7, 512, 512, 3, 1},
                L{56, 64, 256, 1, 0}}) {
      if (only == "conv1x1" && l.K != 1) continue;
      char spec[256];
      std::snprintf(spec, sizeof spec, "conv2d_nchw:N=1,H=%d,W=%d,CI=%d,CO=%d,KH=%d,KW=%d,stride=1,pad=%d", l.H, l.H,
                    l.CI, l.CO, l.K, l.K, l.pad);
      auto s = tune_one(spec, trials, time_s, model, dir);
      char label[128];
      std::snprintf(label, sizeof label, "conv_nchw_%dx%d_%d-%d_%dx%d (1 thread)", l.H, l.H, l.CI, l.CO, l.K, l.K);
      add(label, s, "onednn",
          bench::onednn_conv_gflops(1, l.H, l.H, l.CI, l.CO, l.K, 1, l.pad, false, 1));
    }
  }
  std::fprintf(stderr, "\n");
  table.print();
  if (!table.write_csv(csv)) return 1;
  return 0;
}
