// The hand-written CPU kernels of ops/ (the ones the benchmarks time) on small and awkward shapes,
// against plain C++ references on random inputs with poisoned outputs.
#include <catch2/catch.hpp>
#include <cmath>

#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/conv2d.h"
#include "tessel/ops/matmul.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/runtime/thread_pool.h"

using namespace tessel;
using runtime::NDArray;

namespace {
std::vector<int64_t> shape_of(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (auto& e : t.shape()) s.push_back(*ir::as_const_int(e));
  return s;
}
std::unique_ptr<codegen::JitModule> build(const schedule::Schedule& s, const std::vector<te::Tensor>& args) {
  return codegen::JitModule::compile(lower::lower(s, args, "k"));
}
}  // namespace

TEST_CASE("matmul_packed with the host's parameters, dividing and ragged shapes", "[ops]") {
  int vb = codegen::Target::host().vector_bytes();
  for (auto [M, N, K] : std::vector<std::tuple<int, int, int>>{{64, 64, 32}, {37, 70, 19}, {1, 33, 5}, {96, 40, 64}}) {
    auto p = ops::matmul_cpu_params(vb);
    auto t = ops::matmul_packed(M, N, K, p.nr);
    auto jit = build(ops::schedule_matmul_packed_cpu(t, p), t);
    NDArray a({M, K}, "float32"), b({K, N}, "float32"), c({M, N}, "float32");
    uint64_t seed = 1000 + M;
    a.fill_random(seed);
    b.fill_random(seed + 1);
    c.fill_bytes(0xFF);
    void* args[] = {a.data(), b.data(), c.data()};
    for (int threads : {1, 2}) {
      runtime::set_num_threads(threads);
      c.fill_bytes(0xFF);
      jit->call_packed(args);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double acc = 0;
          for (int k = 0; k < K; ++k) acc += double(a.data_as<float>()[i * K + k]) * b.data_as<float>()[k * N + j];
          INFO("M=" << M << " N=" << N << " K=" << K << " seed " << seed << " at " << i << "," << j);
          REQUIRE(std::fabs(c.data_as<float>()[i * N + j] - acc) <= 1e-4 * (1 + std::fabs(acc)));
        }
    }
  }
}

TEST_CASE("conv2d CPU kernels in NHWC and NCHW match a direct convolution", "[ops]") {
  int vb = codegen::Target::host().vector_bytes();
  std::vector<ops::Conv2dShape> shapes = {
      {1, 9, 14, 5, 32, 3, 3, 1, 1},   // 3x3 pad 1, odd sizes
      {1, 8, 8, 16, 64, 1, 1, 1, 0},   // pointwise
      {2, 11, 10, 3, 32, 3, 3, 2, 2},  // batch 2, stride 2, large padding
      {1, 7, 7, 8, 16, 5, 5, 1, 2},    // 5x5
  };
  for (auto& s : shapes) {
    for (auto layout : {ops::ConvLayout::kNHWC, ops::ConvLayout::kNCHW}) {
      bool nhwc = layout == ops::ConvLayout::kNHWC;
      ops::Conv2dKernel k = ops::conv2d_cpu_kernel(s, layout, vb);
      auto jit = build(k.schedule, k.args);
      auto plain = ops::conv2d(s, layout);
      NDArray in(shape_of(plain[0]), "float32"), w(shape_of(plain[1]), "float32"), out(shape_of(plain[2]), "float32");
      uint64_t seed = 77 + s.CI + s.stride;
      in.fill_random(seed);
      w.fill_random(seed + 1);
      NDArray wp;
      void* wk = w.data();
      if (!k.weight_pack.empty()) {
        wp = NDArray(shape_of(k.weight_pack[1]), "float32");
        wp.fill_bytes(0xFF);
        auto packer = build(schedule::Schedule({k.weight_pack[1]}), k.weight_pack);
        void* pa[] = {w.data(), wp.data()};
        packer->call_packed(pa);
        wk = wp.data();
      }
      out.fill_bytes(0xFF);
      void* args[] = {in.data(), wk, out.data()};
      jit->call_packed(args);
      auto I = [&](int n, int y, int x, int c) {
        int64_t idx = nhwc ? ((int64_t(n) * s.H + y) * s.W + x) * s.CI + c : ((int64_t(n) * s.CI + c) * s.H + y) * s.W + x;
        return double(in.data_as<float>()[idx]);
      };
      auto W = [&](int kh, int kw, int ci, int co) {
        int64_t idx = nhwc ? ((int64_t(kh) * s.KW + kw) * s.CI + ci) * s.CO + co
                           : ((int64_t(co) * s.CI + ci) * s.KH + kh) * s.KW + kw;
        return double(w.data_as<float>()[idx]);
      };
      for (int n = 0; n < s.N; ++n)
        for (int y = 0; y < s.HO(); ++y)
          for (int x = 0; x < s.WO(); ++x)
            for (int co = 0; co < s.CO; ++co) {
              double acc = 0;
              for (int kh = 0; kh < s.KH; ++kh)
                for (int kw = 0; kw < s.KW; ++kw)
                  for (int ci = 0; ci < s.CI; ++ci) {
                    int yy = y * s.stride + kh - s.pad, xx = x * s.stride + kw - s.pad;
                    if (yy < 0 || yy >= s.H || xx < 0 || xx >= s.W) continue;
                    acc += I(n, yy, xx, ci) * W(kh, kw, ci, co);
                  }
              int64_t o = nhwc ? ((int64_t(n) * s.HO() + y) * s.WO() + x) * s.CO + co
                               : ((int64_t(n) * s.CO + co) * s.HO() + y) * s.WO() + x;
              INFO(ops::layout_name(layout) << " CI=" << s.CI << " CO=" << s.CO << " K=" << s.KH << " stride "
                                            << s.stride << " seed " << seed << " at n" << n << " y" << y << " x" << x
                                            << " co" << co);
              REQUIRE(std::fabs(out.data_as<float>()[o] - acc) <= 1e-4 * (1 + std::fabs(acc)));
            }
    }
  }
}

TEST_CASE("ops refuse inconsistent parameters with a message", "[ops][error]") {
  CHECK_THROWS_WITH(ops::matmul_packed(8, 8, 8, 0), Catch::Contains("panel width nr must be positive"));
  auto t = ops::matmul_packed(8, 64, 8, 32);
  ops::MatmulCpuParams p;
  p.nr = 16;
  CHECK_THROWS_WITH(ops::schedule_matmul_packed_cpu(t, p), Catch::Contains("must equal the panel width"));
  ops::Conv2dShape bad{1, 2, 2, 4, 4, 5, 5, 1, 0};
  CHECK_THROWS_WITH(ops::conv2d(bad, ops::ConvLayout::kNHWC), Catch::Contains("kernel is larger than the padded input"));
  CHECK_THROWS_WITH(ops::conv2d_packed({1, 8, 8, 4, 20, 3, 3, 1, 1}, ops::ConvLayout::kNHWC, 16),
                    Catch::Contains("CO=20 must be a multiple of nr=16"));
}
