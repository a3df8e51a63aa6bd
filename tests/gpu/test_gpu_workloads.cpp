// More GPU schedules end to end (PTX accepted by ptxas, CPU run of the same IR correct): a softmax and a
// row reduction (one row per thread, reductions in registers), and an NHWC conv2d with the filter slice
// staged in shared memory.
#include <cmath>

#include "gpu_test_util.h"
#include "tessel/ir/op.h"

using namespace tessel;
using namespace tessel::te;
using gputest::build;
using gputest::require_cpu_semantics;
using gputest::require_ptxas_accepts;
using ir::DataType;
using runtime::NDArray;

namespace {

testing::Workload softmax(int M, int N) {
  Tensor X = placeholder({M, N}, DataType::float32(), "X");
  IterVar k1 = reduce_axis(N, "k1");
  Tensor Mx = compute({M}, [&](Var i) { return reduce_max(X(i, k1->var), {k1}); }, "Mx");
  Tensor E = compute({M, N}, [&](Var i, Var j) { return ir::exp(X(i, j) - Mx(i)); }, "E");
  IterVar k2 = reduce_axis(N, "k2");
  Tensor S = compute({M}, [&](Var i) { return sum(E(i, k2->var), {k2}); }, "S");
  Tensor Y = compute({M, N}, [&](Var i, Var j) { return E(i, j) / S(i); }, "Y");
  testing::Workload w{"softmax", {X, Y}, 1, nullptr, 1e-5};
  w.reference = [=](std::vector<NDArray*>& t) {
    for (int i = 0; i < M; ++i) {
      double mx = -INFINITY, s = 0;
      for (int j = 0; j < N; ++j) mx = std::max(mx, t[0]->get(i * N + j));
      for (int j = 0; j < N; ++j) s += std::exp(t[0]->get(i * N + j) - mx);
      for (int j = 0; j < N; ++j) t[1]->set(i * N + j, std::exp(t[0]->get(i * N + j) - mx) / s);
    }
  };
  return w;
}

// O[n, y, x, f] = sum_{ry, rx, c} Inp[n, y + ry - pad, x + rx - pad, c] * Wt[ry, rx, c, f]  (NHWC, stride 1).
testing::Workload conv2d_nhwc(int N, int H, int W, int C, int F, int R, int pad) {
  Tensor In = placeholder({N, H, W, C}, DataType::float32(), "In");
  Tensor Wt = placeholder({R, R, C, F}, DataType::float32(), "Wt");
  Tensor Pad = compute(
      {N, H + 2 * pad, W + 2 * pad, C},
      [&](const std::vector<Var>& v) {
        Expr inside = v[1] >= pad && v[1] < H + pad && v[2] >= pad && v[2] < W + pad;
        return ir::if_then_else(inside, In(v[0], v[1] - pad, v[2] - pad, v[3]), Expr(0.0f));
      },
      "Pad");
  int HO = H + 2 * pad - R + 1, WO = W + 2 * pad - R + 1;
  IterVar ry = reduce_axis(R, "ry"), rx = reduce_axis(R, "rx"), rc = reduce_axis(C, "rc");
  Tensor O = compute(
      {N, HO, WO, F},
      [&](const std::vector<Var>& v) {
        return sum(Pad(v[0], v[1] + ry->var, v[2] + rx->var, rc->var) * Wt(ry->var, rx->var, rc->var, v[3]),
                   {ry, rx, rc});
      },
      "O");
  testing::Workload w{"conv2d_nhwc", {In, Wt, O}, 2, nullptr, 1e-4};
  w.reference = [=](std::vector<NDArray*>& t) {
    for (int n = 0; n < N; ++n)
      for (int y = 0; y < HO; ++y)
        for (int x = 0; x < WO; ++x)
          for (int f = 0; f < F; ++f) {
            double acc = 0;
            for (int a = 0; a < R; ++a)
              for (int b = 0; b < R; ++b)
                for (int c = 0; c < C; ++c) {
                  int yy = y + a - pad, xx = x + b - pad;
                  if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                  acc += t[0]->get(((n * H + yy) * W + xx) * C + c) * t[1]->get(((a * R + b) * C + c) * F + f);
                }
            t[2]->set(((n * HO + y) * WO + x) * F + f, acc);
          }
  };
  return w;
}

}  // namespace

TEST_CASE("gpu softmax: one row per thread, max and sum in registers", "[gpu]") {
  auto w = softmax(200, 96);
  schedule::Schedule s({w.args.back()});
  s.compute_inline("E");
  auto [bx, tx] = s.split("Y", "i", 64);  // 200 rows: the last block is partly idle (guarded)
  s.bind("Y", bx, "blockIdx.x");
  s.bind("Y", tx, "threadIdx.x");
  s.compute_at("S", "Y", tx);
  s.compute_at("Mx", "Y", tx);
  auto k = build(w, s, "softmax");
  CHECK((k.launch.grid == std::array<int64_t, 3>{4, 1, 1}));
  CHECK((k.launch.block == std::array<int64_t, 3>{64, 1, 1}));
  CHECK(k.launch.shared_bytes == 0);
  CHECK(k.ptx.find("ex2.approx") != std::string::npos);
  CHECK(k.ptx.find("bar.sync") == std::string::npos);  // no shared memory, no barrier
  require_ptxas_accepts(k);
  require_cpu_semantics(w, s);
}

TEST_CASE("gpu row reduction: rows over blocks and threads, 2-D thread block", "[gpu]") {
  auto w = testing::row_reduce(256, 77);
  schedule::Schedule s({w.args.back()});
  auto [io, ii] = s.split("S", "i", 32);
  auto [ty, tx] = s.split("S", ii, 8);
  s.bind("S", io, "blockIdx.x");
  s.bind("S", ty, "threadIdx.y");
  s.bind("S", tx, "threadIdx.x");
  s.compute_at("Mx", "S", tx);
  auto k = build(w, s, "rowred");
  CHECK((k.launch.block == std::array<int64_t, 3>{8, 4, 1}));
  CHECK((k.launch.grid == std::array<int64_t, 3>{8, 1, 1}));
  require_ptxas_accepts(k);
  require_cpu_semantics(w, s);
}

TEST_CASE("gpu conv2d NHWC: filter slice in shared memory, register tile, padding inlined", "[gpu]") {
  auto w = conv2d_nhwc(2, 14, 14, 16, 32, 3, 1);
  schedule::Schedule s({w.args.back()});
  s.compute_inline("Pad");
  std::string ol = s.cache_write("O", "local");
  std::string ws = s.cache_read("Wt", "shared", {ol});
  // O: pixels (n, y, x) fused over blocks and threadIdx.y; filters over threadIdx.x with 4 per thread.
  auto o = s.leaf_names("O");                                      // n, y, x, f (copy of O.local)
  std::string p = s.fuse("O", {o[0], o[1], o[2]});                 // 392 pixels
  auto [po, py] = s.split("O", p, 8);                              // 49 blocks x 8
  auto [fx, fi] = s.split("O", o[3], 4);                           // 8 x 4
  s.reorder("O", {po, py, fx, fi});
  s.bind("O", po, "blockIdx.x");
  s.bind("O", py, "threadIdx.y");
  s.bind("O", fx, "threadIdx.x");
  s.vectorize("O", fi);
  s.compute_at(ol, "O", fx);
  auto [rco, rci] = s.split(ol, "rc", 8);
  auto l = s.leaf_names(ol);  // 4 data axes, ry, rx, rc.o, rc.i
  s.reorder(ol, {"ry", "rx", rco, rci, l[0], l[1], l[2], l[3]});
  s.unroll(ol, rci);
  s.compute_at(ws, ol, rco);
  // Cooperative fetch of the 8 x 32 filter slice by the 8 x 8 threads.
  std::string f = s.fuse(ws, s.leaf_names(ws));
  auto [fo, ftx] = s.split(ws, f, 8);
  auto [rest, fty] = s.split(ws, fo, 8);
  s.bind(ws, fty, "threadIdx.y");
  s.bind(ws, ftx, "threadIdx.x");
  auto k = build(w, s, "conv_nhwc");
  CHECK((k.launch.grid == std::array<int64_t, 3>{49, 1, 1}));
  CHECK((k.launch.block == std::array<int64_t, 3>{8, 8, 1}));
  CHECK(k.launch.shared_bytes == 8 * 32 * 4);
  CHECK(k.ptx.find("bar.sync") != std::string::npos);
  require_ptxas_accepts(k);
  require_cpu_semantics(w, s);
}

TEST_CASE("gpu cross-thread reduction: rfactor into shared memory, threads reduce slices", "[gpu]") {
  // 6 long rows: one block per row, 64 threads each summing a strided slice into shared memory, then
  // every thread adds the 64 partial sums (in registers) and stores the same total.
  te::Tensor X = placeholder({6, 1000}, DataType::float32(), "X");
  IterVar k = reduce_axis(1000, "k");
  te::Tensor S = compute({6}, [&](Var i) { return sum(X(i, k->var), {k}); }, "S");
  testing::Workload w{"row_sum", {X, S}, 1, nullptr, 1e-4};
  w.reference = [](std::vector<NDArray*>& t) {
    for (int i = 0; i < 6; ++i) {
      double s = 0;
      for (int j = 0; j < 1000; ++j) s += t[0]->get(i * 1000 + j);
      t[1]->set(i, s);
    }
  };
  schedule::Schedule s({S});
  std::string sl = s.cache_write("S", "local");
  auto [ko, ki] = s.split(sl, "k", 64);
  std::string rf = s.rfactor(sl, ki);  // S.local.rf[k.i, i] = sum over k.o
  s.set_scope(rf, "shared");
  s.bind("S", "i", "blockIdx.x");
  s.compute_at(sl, "S", "i");
  s.compute_at(rf, "S", "i");
  s.bind(rf, s.leaf_names(rf)[0], "threadIdx.x");
  auto k2 = build(w, s, "row_sum");
  CHECK((k2.launch.grid == std::array<int64_t, 3>{6, 1, 1}));
  CHECK((k2.launch.block == std::array<int64_t, 3>{64, 1, 1}));
  CHECK(k2.launch.shared_bytes == 64 * 4);
  std::string text = ir::to_string(k2.device_func);
  INFO(text);
  size_t fill = text.find("S.local.rf[");
  size_t sync = text.find("sync_threads()");
  size_t use = text.find("S.local.rf[", text.find("S.local[0] = 0"));
  CHECK(fill < sync);
  CHECK(sync < use);
  CHECK(text.find("sync_threads()", sync + 1) == std::string::npos);  // each thread's own slot: one barrier
  require_ptxas_accepts(k2);
  require_cpu_semantics(w, s);
  // The trace keeps the scope.
  auto j = schedule::trace_to_json(s.trace());
  CHECK(j.dump().find(R"({"kind":"set_scope","scope":"shared","stage":"S.local.rf"})") != std::string::npos);
}
