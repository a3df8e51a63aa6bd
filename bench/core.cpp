// bench: hand-scheduled vs naive (default-schedule) fp32 matmul, 1 and 2 threads (compiler core)
//
// Each row is a ratio against the naive loop nest measured in the same run; every output is checked
// against a plain C++ reference first. Reproduce: scripts/bench core [--sizes 256,512] [--repeats N]
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/bench_util.h"
#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/matmul.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/runtime/thread_pool.h"
#include "tessel/runtime/timer.h"

using namespace tessel;
namespace po = boost::program_options;

namespace {

struct Built {
  std::unique_ptr<codegen::JitModule> jit;
  double compile_s;
};

Built build(const schedule::Schedule& s, const std::vector<te::Tensor>& args) {
  Built b;
  auto t = runtime::time_function([&] { b.jit = codegen::JitModule::compile(lower::lower(s, args, "matmul")); },
                                  {0, 1, 0, 1});
  b.compile_s = t.median_s;
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv, sizes_arg = "512";
  int min_repeats = 5;
  po::options_description desc("core benchmark options");
  desc.add_options()("help,h", "help")("csv", po::value<std::string>(&csv), "write results to this CSV file")(
      "sizes", po::value<std::string>(&sizes_arg)->default_value("512"), "comma-separated M=N=K sizes")(
      "repeats", po::value<int>(&min_repeats)->default_value(5), "minimum timed repeats");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "core: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  std::vector<int> sizes;
  std::stringstream ss(sizes_arg);
  for (std::string x; std::getline(ss, x, ',');) sizes.push_back(std::stoi(x));

  bench::Table table({"workload", "schedule", "threads", "tessel_gflops", "baseline", "baseline_gflops", "ratio",
                      "compile_ms", "cv"});
  int failures = 0;
  for (int n : sizes) {
    auto t = ops::matmul(n, n, n);
    runtime::NDArray a({n, n}, "float32"), b({n, n}, "float32"), ref({n, n}, "float32");
    a.fill_random(11);
    b.fill_random(12);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int k = 0; k < n; ++k) acc += double(a.data_as<float>()[i * n + k]) * b.data_as<float>()[k * n + j];
        ref.data_as<float>()[i * n + j] = float(acc);
      }
    Built naive = build(schedule::Schedule({t[2]}), t);
    Built tuned = build(ops::schedule_matmul_cpu(t[2]), t);
    double flops = 2.0 * n * n * n;
    for (int threads : {1, 2}) {
      runtime::set_num_threads(threads);
      double naive_gflops = 0;
      for (auto* v : {&naive, &tuned}) {
        runtime::NDArray c({n, n}, "float32");
        c.fill_bytes(0xFF);
        void* p[] = {a.data(), b.data(), c.data()};
        auto r = runtime::time_function([&] { v->jit->call_packed(p); }, {1, min_repeats, 0.3, 200});
        double err = bench::max_rel_error(c.data_as<float>(), ref.data_as<float>(), int64_t(n) * n);
        if (!(err < 1e-3)) {
          std::fprintf(stderr, "WRONG RESULT: n=%d, max relative error %g\n", n, err);
          ++failures;
        }
        double g = flops / r.median_s / 1e9;
        const char* name = v == &naive ? "naive" : "hand-scheduled";
        if (v == &naive) naive_gflops = g;
        std::string wl = "matmul_" + std::to_string(n) + "^3";
        table.add({wl, name, std::to_string(threads), bench::fmt(g), "naive", bench::fmt(naive_gflops),
                   bench::fmt(g / naive_gflops, 1), bench::fmt(v->compile_s * 1e3, 1), bench::fmt(r.cv, 3)});
      }
    }
  }
  table.print();
  if (!table.write_csv(csv)) return 1;
  if (!csv.empty()) std::printf("\nwrote %s\n", csv.c_str());
  return failures ? 1 : 0;
}
