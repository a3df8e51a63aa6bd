// bench: GEMM and ResNet-50 conv2d kernels vs OpenBLAS / oneDNN and the measured FMA peak (fast CPU code)
//
// Every tessel kernel is compiled in this run, its output checked against the baseline's output on the
// same random inputs, then both are timed (median of repeats, warm caches). Writes
// bench/results/cpu.csv: workload,layout,threads,tessel_gflops,baseline,baseline_gflops,ratio,pct_peak,
// plus compile_ms. Reproduce: scripts/bench cpu [--quick] [--only gemm|conv]
#include <cblas.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "common/bench_util.h"
#include "common/conv_bench.h"
#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/matmul.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/runtime/thread_pool.h"

using namespace tessel;
namespace po = boost::program_options;

namespace {

struct Shape {
  int M, N, K;
};

int failures = 0;

void bench_gemm(const Shape& sh, bench::Table& table, double peak, int vbytes, std::vector<double>* compile_ms) {
  auto p = ops::matmul_cpu_params(vbytes);
  auto t = ops::matmul_packed(sh.M, sh.N, sh.K, p.nr);
  std::unique_ptr<codegen::JitModule> jit;
  for (int r = 0; r < (compile_ms ? 10 : 1); ++r) {
    auto c = bench::time_it([&] { jit = codegen::JitModule::compile(lower::lower(ops::schedule_matmul_packed_cpu(t, p), t, "gemm")); }, 1, 0);
    if (compile_ms) compile_ms->push_back(c.median_s * 1e3);
  }
  runtime::NDArray a({sh.M, sh.K}, "float32"), b({sh.K, sh.N}, "float32"), c({sh.M, sh.N}, "float32"),
      ref({sh.M, sh.N}, "float32");
  a.fill_random(1);
  b.fill_random(2);
  std::string wl = "gemm_" + std::to_string(sh.M) + "x" + std::to_string(sh.N) + "x" + std::to_string(sh.K);
  double flops = 2.0 * sh.M * sh.N * sh.K;
  for (int threads : {1, 2}) {
    runtime::set_num_threads(threads);
    openblas_set_num_threads(threads);
    auto blas = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sh.M, sh.N, sh.K, 1.0f, a.data_as<float>(), sh.K,
                  b.data_as<float>(), sh.N, 0.0f, ref.data_as<float>(), sh.N);
    };
    void* args[] = {a.data(), b.data(), c.data()};
    auto ours = [&] { jit->call_packed(args); };
    blas();
    c.fill_bytes(0xFF);
    ours();
    double err = bench::max_rel_error(c.data_as<float>(), ref.data_as<float>(), int64_t(sh.M) * sh.N);
    if (!(err < 1e-3)) {
      std::fprintf(stderr, "WRONG RESULT %s threads=%d: max rel error %g\n", wl.c_str(), threads, err);
      ++failures;
    }
    // Interleave to share any drift in machine state between the two.
    double tb = 1e30, tt = 1e30;
    for (int round = 0; round < 3; ++round) {
      tb = std::min(tb, bench::time_it(blas).median_s);
      tt = std::min(tt, bench::time_it(ours).median_s);
    }
    double g = flops / tt / 1e9, gb = flops / tb / 1e9;
    table.add({wl, "row-major", std::to_string(threads), bench::fmt(g, 1), "openblas", bench::fmt(gb, 1),
               bench::fmt(g / gb, 3), bench::fmt(100 * g / (peak * threads), 1),
               compile_ms && !compile_ms->empty() ? bench::fmt(compile_ms->front(), 1) : ""});
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv, only;
  bool quick = false;
  po::options_description desc("cpu benchmark options");
  desc.add_options()("help,h", "help")("csv", po::value<std::string>(&csv), "write results to this CSV file")(
      "quick", po::bool_switch(&quick), "fewer shapes (a smoke run)")(
      "only", po::value<std::string>(&only), "gemm or conv");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "cpu: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  codegen::Target host = codegen::Target::host();
  int vbytes = host.vector_bytes();
  double peak = bench::measure_fma_peak_gflops(vbytes);
  std::printf("target: %s\nOpenBLAS core: %s\nmeasured FMA peak (one core, %d-bit vectors): %.1f GFLOP/s\n\n",
              host.cpu.c_str(), openblas_get_corename(), vbytes * 8, peak);
  bench::Table table({"workload", "layout", "threads", "tessel_gflops", "baseline", "baseline_gflops", "ratio",
                      "pct_peak", "compile_ms"});
  if (only.empty() || only == "gemm") {
    std::vector<Shape> shapes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {512, 512, 512}, {384, 1536, 768}};
    if (quick) shapes = {{512, 512, 512}};
    std::vector<double> compile_ms;
    for (size_t i = 0; i < shapes.size(); ++i) bench_gemm(shapes[i], table, peak, vbytes, i == 0 ? &compile_ms : nullptr);
    std::sort(compile_ms.begin(), compile_ms.end());
    if (!compile_ms.empty())
      std::printf("compile latency of the gemm kernel (lower + LLVM O3 + JIT, %zu compiles): median %.1f ms, p90 %.1f ms\n\n",
                  compile_ms.size(), compile_ms[compile_ms.size() / 2], compile_ms[compile_ms.size() * 9 / 10]);
  }
  if (only.empty() || only == "conv") failures += bench::run_conv_benchmarks(table, peak, quick);
  table.print();
  if (!table.write_csv(csv)) return 1;
  if (!csv.empty()) std::printf("\nwrote %s\n", csv.c_str());
  return failures ? 1 : 0;
}
