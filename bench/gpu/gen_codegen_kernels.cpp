// gen_codegen_kernels OUT_DIR: writes PTX + launch JSON made by tessel's GPU code generator
// (codegen::build_cuda, ops::schedule_matmul_gpu) for the benchmark sizes of scripts/gpu-bench, and
// OUT_DIR/manifest.json, which `tessel-gpu-selftest --measure OUT_DIR` measures through tessel-worker
// against the selftest's naive PTX references.
//
// Built as build/bench/tessel_bench_gen_codegen_kernels.
// The schedules are hand-picked (a few matmul tile configurations, the code generator's own test
// schedules for the others scaled to these sizes); nothing here is auto-tuned.
#include <cmath>
#include <fstream>
#include <iostream>

#include "tessel/codegen/cuda.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/matmul.h"
#include "gpu_schedules.h"
#include "workloads.h"

using namespace tessel;
using namespace tessel::te;
using ir::DataType;
using nlohmann::json;

namespace {

json g_manifest = json::array();

json args_json(const std::vector<Tensor>& args, size_t num_inputs) {
  json a = json::array();
  for (size_t i = 0; i < args.size(); ++i) {
    json shape = json::array();
    for (auto& e : args[i].shape()) shape.push_back(*ir::as_const_int(e));
    a.push_back({{"name", args[i].name()}, {"shape", shape}, {"dtype", "float32"}, {"output", i >= num_inputs}});
  }
  return a;
}

/** Builds one kernel; records it in the manifest with its reference (an entry of the selftest PTX). */
void emit(const std::string& dir, const std::string& name, const std::string& group, const schedule::Schedule& s,
          const std::vector<Tensor>& args, size_t num_inputs, json ref, double flop, double bytes) {
  try {
    ir::LoweredFunc f = lower::lower(s, args, name);
    codegen::CudaKernel k = codegen::build_cuda(f);
    codegen::write_cuda_kernel(k, dir + "/" + name);
    int regs = -1;
    std::string log;
    Status st = codegen::run_ptxas(k.ptx, k.artifact.arch, &log, &regs);
    g_manifest.push_back({{"name", name}, {"group", group}, {"ptx", name + ".ptx"}, {"args", args_json(args, num_inputs)},
                          {"reference", ref}, {"flop", flop}, {"bytes", bytes}, {"registers", regs}});
    std::cout << name << ": grid " << json(k.artifact.first().grid) << " block " << json(k.artifact.first().block)
              << ", " << regs << " registers" << (st.is_ok() ? "" : " (ptxas: " + st.message() + ")") << "\n";
  } catch (const std::exception& e) {
    std::cout << name << ": not built: " << e.what() << "\n";
  }
}

json ref(const std::string& entry, std::array<int, 3> grid, std::array<int, 3> block) {
  return {{"kind", "ptx"}, {"entry", entry}, {"grid", grid}, {"block", block}, {"shared_bytes", 0}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gen_codegen_kernels OUT_DIR\n";
    return 2;
  }
  std::string dir = argv[1];
  // fp32 GEMM, a few tile configurations per size (bm, bn, bk, tm, tn, vec).
  struct Cfg {
    int bm, bn, bk, tm, tn, vec;
  };
  std::vector<Cfg> cfgs = {{128, 128, 8, 8, 8, 4}, {128, 128, 16, 8, 8, 4}, {128, 64, 8, 8, 4, 4}, {64, 64, 8, 4, 4, 4}};
  for (int n : {1024, 2048, 4096}) {
    auto w = testing::matmul(n, n, n);
    for (auto& c : cfgs) {
      ops::MatmulGpuParams p;
      p.bm = c.bm, p.bn = c.bn, p.bk = c.bk, p.tm = c.tm, p.tn = c.tn, p.vec = c.vec;
      std::string name = "mm" + std::to_string(n) + "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn) + "x" +
                         std::to_string(c.bk) + "_" + std::to_string(c.tm) + "x" + std::to_string(c.tn);
      try {
        emit(dir, name, "matmul_" + std::to_string(n), ops::schedule_matmul_gpu(w.args.back(), p), w.args, 2,
             ref("matmul_naive_" + std::to_string(n), {n / 16, n / 16, 1}, {16, 16, 1}), 2.0 * n * n * n,
             3.0 * 4 * n * n);
      } catch (const std::exception& e) {
        std::cout << name << ": no schedule: " << e.what() << "\n";
      }
    }
  }
  const int M = 4096, N = 4096;
  {  // softmax of each row of X[4096, 4096]: one row per thread (the code generator's test schedule)
    auto w = testing::softmax(M, N);
    emit(dir, "softmax_row_per_thread", "softmax_4096x4096", testing::softmax_row_per_thread_gpu(w, 64), w.args, 1,
         ref("softmax_4096x4096", {M, 1, 1}, {256, 1, 1}), 5.0 * M * N, 2.0 * 4 * M * N);
  }
  {  // row sums of X[4096, 4096]: rows over blocks and a 2-D thread block (the test schedule)
    Tensor X = placeholder({M, N}, DataType::float32(), "X");
    IterVar k = reduce_axis(N, "k");
    Tensor S = compute({M}, [&](Var i) { return sum(X(i, k->var), {k}); }, "S");
    schedule::Schedule s({S});
    auto [io, ii] = s.split("S", "i", 32);
    auto [ty, tx] = s.split("S", ii, 8);
    s.bind("S", io, "blockIdx.x");
    s.bind("S", ty, "threadIdx.y");
    s.bind("S", tx, "threadIdx.x");
    emit(dir, "rowsum_row_per_thread", "rowsum_4096x4096", s, {X, S}, 1, ref("rowsum_4096x4096", {M, 1, 1}, {256, 1, 1}),
         1.0 * M * N, 4.0 * M * (N + 1));
  }
  {  // conv2d NHWC 1x56x56x64 * 3x3x64x64, pad 1 (ResNet-50 stage 2): the test's shared-filter schedule
    const int H = 56, W = 56, C = 64, F = 64;
    auto w = testing::conv2d_nhwc(1, H, W, C, F, 3, 1);
    // 3136 pixels over 392 blocks x 8, 64 filters over 16 threads x 4, filter slices of 8 channels.
    emit(dir, "conv_nhwc_shared_filter", "conv2d_nhwc_n1_56x56_64_3x3", testing::conv2d_nhwc_shared_filter_gpu(w, 8, 4, 8),
         w.args, 2, ref("conv3x3_nhwc_n1_56_64", {1, H * W, 1}, {64, 1, 1}), 2.0 * H * W * C * F * 9,
         4.0 * (2 * H * W * C + 9 * C * F));
  }
  std::ofstream(dir + "/manifest.json") << g_manifest.dump(1) << "\n";
  std::cout << g_manifest.size() << " kernels in " << dir << "/manifest.json\n";
  return 0;
}
