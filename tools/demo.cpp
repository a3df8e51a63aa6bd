// `tessel demo`: the main job of scripts/demo. Builds an fp32 matmul with tessel's default (naive)
// schedule and with the hand-written register-blocked schedule, checks both against a plain C++
// reference on random inputs, and prints times and GFLOP/s.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli_util.h"
#include "subcommand.h"
#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/matmul.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/runtime/thread_pool.h"
#include "tessel/runtime/timer.h"

namespace tessel::tools {

namespace po = boost::program_options;

int run_demo(const std::vector<std::string>& args) {
  int n = 512, threads = 1;
  po::options_description desc("tessel demo: naive vs hand-scheduled matmul\n\nOptions");
  desc.add_options()("help,h", "print this help")("size,n", po::value<int>(&n)->default_value(512),
                                                    "M = N = K")(
      "threads,t", po::value<int>(&threads)->default_value(1), "threads for parallel loops");
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  TESSEL_CHECK(n >= 1 && n <= 4096) << "--size must be in [1, 4096], got " << n;
  TESSEL_CHECK(threads >= 1 && threads <= 256) << "--threads must be in [1, 256], got " << threads;
  runtime::set_num_threads(threads);

  auto t = ops::matmul(n, n, n);
  runtime::NDArray a({n, n}, "float32"), b({n, n}, "float32"), ref({n, n}, "float32");
  a.fill_random(1);
  b.fill_random(2);
  const float* pa = a.data_as<float>();
  const float* pb = b.data_as<float>();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int k = 0; k < n; ++k) acc += double(pa[i * n + k]) * pb[k * n + j];
      ref.data_as<float>()[i * n + j] = float(acc);
    }

  struct Variant {
    const char* name;
    schedule::Schedule sch;
  };
  std::vector<Variant> variants = {{"naive", schedule::Schedule({t[2]})},
                                   {"hand-scheduled", ops::schedule_matmul_cpu(t[2])}};
  double flops = 2.0 * n * n * n, naive_s = 0;
  std::printf("fp32 matmul %dx%dx%d, %d thread(s), on %s\n\n", n, n, n, threads,
              codegen::Target::host().cpu.c_str());
  std::printf("%-16s %10s %10s %10s %10s %8s\n", "schedule", "compile_ms", "time_ms", "GFLOP/s", "speedup", "check");
  int failures = 0;
  for (auto& v : variants) {
    std::unique_ptr<codegen::JitModule> jit;
    runtime::TimingResult ct = runtime::time_function([&] { jit = codegen::JitModule::compile(lower::lower(v.sch, t, "matmul")); },
                                {0, 1, 0, 1});
    runtime::NDArray c({n, n}, "float32");
    c.fill_bytes(0xFF);  // NaN poison: an unwritten element fails the check
    void* ptrs[] = {a.data(), b.data(), c.data()};
    runtime::TimingResult r = runtime::time_function([&] { jit->call_packed(ptrs); }, {1, 3, 0.3, 50});
    double max_err = 0;
    for (int64_t i = 0; i < int64_t(n) * n; ++i) {
      double e = std::fabs(c.data_as<float>()[i] - ref.data_as<float>()[i]);
      max_err = std::isnan(e) ? INFINITY : std::max(max_err, e);
    }
    bool ok = max_err <= 1e-3 * std::sqrt(double(n));
    failures += !ok;
    if (naive_s == 0) naive_s = r.median_s;
    std::printf("%-16s %10.1f %10.3f %10.1f %9.1fx %8s\n", v.name, ct.median_s * 1e3, r.median_s * 1e3,
                flops / r.median_s / 1e9, naive_s / r.median_s, ok ? "ok" : "WRONG");
  }
  std::printf("\nBoth outputs are compared with a plain C++ reference (max abs error <= 1e-3*sqrt(n)).\n");
  return failures ? 1 : 0;
}

}  // namespace tessel::tools
