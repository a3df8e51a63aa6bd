// More GPU schedules end to end (PTX accepted by ptxas, CPU run of the same IR correct): a softmax and a
// row reduction (one row per thread, reductions in registers), and an NHWC conv2d with the filter slice
// staged in shared memory.
#include <cmath>

#include "gpu_schedules.h"
#include "gpu_test_util.h"
#include "tessel/ir/op.h"

using namespace tessel;
using namespace tessel::te;
using gputest::build;
using gputest::require_cpu_semantics;
using gputest::require_ptxas_accepts;
using ir::DataType;
using runtime::NDArray;

TEST_CASE("gpu softmax: one row per thread, max and sum in registers", "[gpu]") {
  auto w = testing::softmax(200, 96);
  schedule::Schedule s = testing::softmax_row_per_thread_gpu(w, 64);  // 200 rows: the last block is partly idle
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
  auto w = testing::conv2d_nhwc(2, 14, 14, 16, 32, 3, 1);
  // 392 pixels over 49 blocks x 8 (threadIdx.y), 32 filters over 8 threads x 4, filter slices of 8 channels.
  schedule::Schedule s = testing::conv2d_nhwc_shared_filter_gpu(w, 8, 4, 8);
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
