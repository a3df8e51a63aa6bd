// GPU schedules end to end without a GPU: each one lowers, passes the launch checks, produces PTX that
// ptxas -arch=sm_90 accepts, and computes the right answer when its IR runs on the CPU.
#include <nlohmann/json.hpp>

#include "gpu_test_util.h"
#include "tessel/ops/matmul.h"

using namespace tessel;
using gputest::build;
using gputest::require_cpu_semantics;
using gputest::require_ptxas_accepts;

namespace {

// Elementwise: all intermediates inlined, i*j fused, split by 256 threads, vectorized by 4.
schedule::Schedule elementwise_gpu(const testing::Workload& w, int threads, int vec) {
  schedule::Schedule s({w.args.back()});
  for (auto& n : testing::inlinable_stages(w, s)) s.compute_inline(n);
  std::string out = w.args.back().name();
  std::string f = s.fuse(out, s.leaf_names(out));
  auto [fo, v] = s.split(out, f, vec);
  auto [bx, tx] = s.split(out, fo, threads);
  s.bind(out, bx, "blockIdx.x");
  s.bind(out, tx, "threadIdx.x");
  if (vec > 1) s.vectorize(out, v);
  return s;
}

}  // namespace

TEST_CASE("gpu elementwise: PTX for sm_90, launch shape, sidecar, CPU semantics", "[gpu]") {
  auto w = testing::elementwise_chain(64, 96);
  auto s = elementwise_gpu(w, 128, 4);
  auto k = build(w, s, "ew");
  CHECK(k.artifact.first().entry == "ew");
  CHECK((k.launch.block == std::array<int64_t, 3>{128, 1, 1}));
  CHECK((k.launch.grid == std::array<int64_t, 3>{12, 1, 1}));  // 64*96/4 = 1536 vectors / 128 threads
  CHECK(k.ptx.find(".visible .entry ew(") != std::string::npos);
  CHECK(k.ptx.find("%tid.x") != std::string::npos);
  CHECK(k.ptx.find("%ctaid.x") != std::string::npos);
  CHECK(k.ptx.find(".target sm_90") != std::string::npos);
  CHECK(k.ptx.find("ld.global") != std::string::npos);
  CHECK((k.ptx.find("ld.global.nc.v4.f32") != std::string::npos || k.ptx.find("ld.global.v4.f32") != std::string::npos));
  require_ptxas_accepts(k);
  require_cpu_semantics(w, s);
  // Sidecar: contract fields, round trip.
  nlohmann::json j = codegen::to_json(k.artifact);
  CHECK(j["kind"] == "ptx");
  CHECK(j["entry"] == "ew");
  CHECK(j["grid"] == nlohmann::json::array({12, 1, 1}));
  CHECK(j["block"] == nlohmann::json::array({128, 1, 1}));
  CHECK(j["shared_bytes"] == 0);
  CHECK(j["args"] == nlohmann::json::array({"A", "B", "D"}));
  auto back = codegen::gpu_artifact_from_json(j);
  CHECK((back.first().grid == k.artifact.first().grid));
  CHECK(back.params.size() == 3);
  CHECK((back.params[2].shape == std::vector<int64_t>{64, 96}));
}

TEST_CASE("gpu elementwise with a tail: guarded threads", "[gpu]") {
  auto w = testing::elementwise_chain(7, 33);  // 231 elements: neither 64 nor 4 divides
  auto s = elementwise_gpu(w, 64, 1);
  auto k = build(w, s, "ew_tail");
  CHECK(k.launch.block[0] == 64);
  CHECK(k.launch.grid[0] == 4);
  require_ptxas_accepts(k);
  require_cpu_semantics(w, s);
}

TEST_CASE("gpu matmul: shared-memory tiles, register accumulators, unrolled and vectorized", "[gpu]") {
  auto w = testing::matmul(128, 256, 64);
  ops::MatmulGpuParams p;
  p.bm = 64, p.bn = 64, p.bk = 8, p.tm = 4, p.tn = 4, p.vec = 4;
  auto s = ops::schedule_matmul_gpu(w.args.back(), p);
  auto k = build(w, s, "mm");
  CHECK((k.launch.grid == std::array<int64_t, 3>{4, 2, 1}));
  CHECK((k.launch.block == std::array<int64_t, 3>{16, 16, 1}));
  CHECK(k.launch.shared_bytes == 2 * 64 * 8 * 4);
  CHECK(k.artifact.first().static_shared_bytes == 2 * 64 * 8 * 4);
  CHECK(k.artifact.first().shared_bytes == 0);
  CHECK(k.ptx.find(".shared .align") != std::string::npos);
  CHECK(k.ptx.find("bar.sync") != std::string::npos);
  CHECK(k.ptx.find("fma.rn.f32") != std::string::npos);
  // Both cooperative fetches load 4-wide vectors from global memory; the products read shared memory
  // 4-wide (the accumulators' operands are adjacent after unrolling).
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t p = k.ptx.find(what); p != std::string::npos; p = k.ptx.find(what, p + 1)) ++n;
    return n;
  };
  CHECK(count("ld.global.nc.v4.f32") == 2);
  CHECK(count("ld.global.nc.f32") == 0);
  CHECK(count("ld.shared.v4.f32") >= 8);
  int regs = require_ptxas_accepts(k);
  if (regs >= 0) CHECK(regs <= 255);
  require_cpu_semantics(w, s);
}

TEST_CASE("gpu matmul with virtual threads: interleaved thread tiles, right answer, ptxas accepts", "[gpu]") {
  auto w = testing::matmul(128, 128, 32);
  for (bool pipeline : {false, true}) {
    ops::MatmulGpuParams p;
    p.bm = 64, p.bn = 64, p.bk = 8, p.tm = 8, p.tn = 8, p.vec = 4, p.vt = 2, p.pipeline = pipeline;
    auto s = ops::schedule_matmul_gpu(w.args.back(), p);
    auto k = build(w, s, "mm_vt");
    CHECK((k.launch.block == std::array<int64_t, 3>{8, 8, 1}));
    CHECK((k.launch.grid == std::array<int64_t, 3>{2, 2, 1}));
    // Each thread's columns are two runs of 4, 32 apart: still 4-wide shared reads.
    CHECK(k.ptx.find("ld.shared.v4.f32") != std::string::npos);
    require_ptxas_accepts(k);
    // The CPU run of a software-pipelined kernel would share one simulated thread's staging registers
    // among the fetch's thread loops (docs/gpu-codegen.md), so only the plain kernel runs here.
    if (!pipeline) require_cpu_semantics(w, s);
  }
  ops::MatmulGpuParams bad;
  bad.bm = 64, bad.bn = 64, bad.bk = 8, bad.tm = 8, bad.tn = 8, bad.vt = 3;
  CHECK_THROWS_WITH(ops::schedule_matmul_gpu(w.args.back(), bad), Catch::Contains("vt=3 must divide"));
}

TEST_CASE("gpu virtual threads over shapes that do not tile: guarded copies stay right", "[gpu]") {
  // 50 x 70 outputs in 32 x 32 blocks, 2 x 2 virtual threads of 4 x 4 x 4 threads: the last block's
  // guards depend on the virtual thread, so those statements are copied per virtual thread.
  auto w = testing::matmul(50, 70, 24);
  const std::string out = w.args.back().name();
  schedule::Schedule s({w.args.back()});
  std::string cl = s.cache_write(out, "local");
  std::string as = s.cache_read(w.args[0].name(), "shared", {cl});
  auto t = s.tile(out, "i", "j", 32, 32);
  auto [vy, ri] = s.split(out, t[2], 16);
  auto [vx, rj] = s.split(out, t[3], 16);
  auto [ty, ii] = s.split(out, ri, 4);
  auto [tx, ji] = s.split(out, rj, 4);
  s.reorder(out, {t[0], t[1], vy, vx, ty, tx, ii, ji});
  s.bind(out, t[0], "blockIdx.y");
  s.bind(out, t[1], "blockIdx.x");
  s.bind(out, vy, "vthread");
  s.bind(out, vx, "vthread");
  s.bind(out, ty, "threadIdx.y");
  s.bind(out, tx, "threadIdx.x");
  s.compute_at(cl, out, tx);
  auto [ko, ki] = s.split(cl, "k", 8);
  s.reorder(cl, {ko, ki, "i", "j"});
  s.compute_at(as, cl, ko);
  auto leaves = s.leaf_names(as);
  auto [fo, f] = s.split(as, s.fuse(as, leaves), 16);
  auto [fy, fx] = s.split(as, f, 4);
  s.bind(as, fy, "threadIdx.y");
  s.bind(as, fx, "threadIdx.x");
  s.vectorize(out, ji);
  auto k = build(w, s, "mm_vt_tail");
  CHECK((k.launch.block == std::array<int64_t, 3>{4, 4, 1}));
  CHECK((k.launch.grid == std::array<int64_t, 3>{3, 2, 1}));
  require_ptxas_accepts(k);
  require_cpu_semantics(w, s);
}
