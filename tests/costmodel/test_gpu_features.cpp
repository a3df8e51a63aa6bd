// GPU feature group (version 3): launch shape, shared/local bytes and the sm_90 occupancy estimate of
// GPU schedules, computed by hand from their tile sizes; zeros for CPU programs; a learned model trains
// on GPU-scheduled candidates.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "candidates.h"
#include "tessel/costmodel/learned_model.h"
#include "tessel/lower/gpu_kernel.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/ops/matmul.h"

using namespace tessel;
using namespace tessel::costmodel;

namespace {

// Relative indices in the GPU group (docs/costmodel.md: absolute index kGpuOffset + k).
enum {
  kGridX = 0,
  kGridY = 1,
  kGridZ = 2,
  kBlockX = 3,
  kBlockY = 4,
  kBlockZ = 5,
  kThreads = 6,
  kBlocks = 7,
  kShared = 8,
  kLocal = 9,
  kRegisters = 10,
  kBlocksPerSm = 11,
  kOccupancy = 12,
  kWaves = 13,
  kStoreShared = 14,
  kStoreLocal = 15,
  kStoreGlobal = 16,
  kFetchStores = 17,
  kComputeStores = 18,
  kThreadShare = 19,
  kWorkPerThread = 20,
  kGlobalTxStride = 21,
  kUncoalesced = 22,
  kSharedTxStride = 23,
  kPipelined = 24,
  kMinBlocksPerSm = 25
};

float lg(double x) { return float(std::log2(1 + x)); }
float gpu(const std::vector<float>& row, int k) { return row[size_t(kGpuOffset + k)]; }

std::shared_ptr<workload::Workload> mm512() {
  static auto w = std::make_shared<workload::Workload>(workload::from_spec("matmul:M=512,N=512,K=512"));
  return w;
}

std::vector<std::vector<float>> matmul_gpu_rows(const ops::MatmulGpuParams& p) {
  return extract_features(*mm512(), ops::schedule_matmul_gpu(mm512()->outputs[0], p).trace());
}

// The row storing into a buffer of that scope (the first one).
std::vector<float> row_of_scope(const std::vector<std::vector<float>>& rows, int scope_feature) {
  for (auto& r : rows)
    if (gpu(r, scope_feature) == 1) return r;
  FAIL("no store of that scope");
  return {};
}

}  // namespace

TEST_CASE("gpu features: names and place in the layout", "[costmodel][features][gpu]") {
  const auto& names = feature_names();
  CHECK(names[kGpuOffset - 1] == "ai_curve9");
  CHECK(names[kGpuOffset + kGridX] == "gpu_grid_x");
  CHECK(names[kGpuOffset + kBlockX] == "gpu_block_x");
  CHECK(names[kGpuOffset + kShared] == "gpu_shared_bytes");
  CHECK(names[kGpuOffset + kOccupancy] == "gpu_occupancy");
  CHECK(names[kGpuOffset + kWaves] == "gpu_waves");
  CHECK(names[kGpuOffset + kUncoalesced] == "gpu_uncoalesced");
  CHECK(names[kCacheOffset - 3] == "gpu_shared_tx_stride");
  CHECK(names[kCacheOffset - 2] == "gpu_pipelined");
  CHECK(names[kCacheOffset - 1] == "gpu_min_blocks_per_sm");
}

TEST_CASE("gpu features of the matmul schedule, from its tile sizes", "[costmodel][features][gpu]") {
  // Defaults: 128 x 128 block tile (4 x 4 blocks for 512^3), 8 x 8 per thread (16 x 16 threads), A and
  // B slices of 128 x 8 and 8 x 128 floats in shared memory, an 8 x 8 float accumulator per thread.
  ops::MatmulGpuParams p;
  auto rows = matmul_gpu_rows(p);
  REQUIRE(rows.size() == 5);  // C.local init and update, A.shared, B.shared, C
  for (auto& r : rows) {
    REQUIRE(int(r.size()) == kFeatureLength);
    for (float x : r) CHECK(std::isfinite(x));
    CHECK(gpu(r, kGridX) == Approx(lg(4)));
    CHECK(gpu(r, kGridY) == Approx(lg(4)));
    CHECK(gpu(r, kGridZ) == Approx(lg(1)));
    CHECK(gpu(r, kBlockX) == Approx(lg(16)));
    CHECK(gpu(r, kBlockY) == Approx(lg(16)));
    CHECK(gpu(r, kBlockZ) == Approx(lg(1)));
    CHECK(gpu(r, kThreads) == Approx(lg(256)));
    CHECK(gpu(r, kBlocks) == Approx(lg(16)));
    CHECK(gpu(r, kShared) == Approx(lg((128 * 8 + 8 * 128) * 4)));
    CHECK(gpu(r, kLocal) == Approx(lg(8 * 8 * 4)));
    // Registers ~ 32 + 64 accumulators = 96: 3072 per warp, 21 warps of registers per SM = 2 blocks of
    // 8 warps (threads would allow 8, shared memory 25): 16 of 64 warps active.
    CHECK(gpu(r, kRegisters) == Approx(lg(96)));
    CHECK(gpu(r, kBlocksPerSm) == Approx(lg(2)));
    CHECK(gpu(r, kOccupancy) == Approx(0.25));
    CHECK(gpu(r, kWaves) == Approx(lg(16.0 / (2 * 132))));
    CHECK(gpu(r, kFetchStores) == Approx(lg(2)));
    CHECK(gpu(r, kComputeStores) == Approx(lg(3)));
    CHECK(gpu(r, kStoreShared) + gpu(r, kStoreLocal) + gpu(r, kStoreGlobal) == 1);
  }
  // The launch agrees with the one the GPU lowering derives.
  auto s = ops::schedule_matmul_gpu(mm512()->outputs[0], p);
  lower::GpuLaunch l = lower::infer_gpu_launch(lower::lower(s, mm512()->args(), "mm").body);
  CHECK(l.shared_bytes == (128 * 8 + 8 * 128) * 4);
  CHECK(l.local_bytes == 8 * 8 * 4);
  CHECK(l.threads_per_block() == 256);

  // The global store of C: every thread writes its 8 x 8 tile (8-wide vectors, 8 floats apart across
  // threadIdx.x: coalesced as vectors).
  auto c = row_of_scope(rows, kStoreGlobal);
  CHECK(gpu(c, kThreadShare) == 1);
  CHECK(gpu(c, kWorkPerThread) == Approx(lg(64)));
  CHECK(gpu(c, kGlobalTxStride) == Approx(lg(8)));
  CHECK(gpu(c, kUncoalesced) == 0);
  // A cooperative fetch: all threads read 4-float vectors of global memory, 4 floats apart (coalesced),
  // and write them to shared memory, 4 floats apart.
  auto f = row_of_scope(rows, kStoreShared);
  CHECK(gpu(f, kThreadShare) == 1);
  CHECK(gpu(f, kStoreLocal) == 0);
  CHECK(gpu(f, kGlobalTxStride) == Approx(lg(4)));
  CHECK(gpu(f, kUncoalesced) == 0);
  CHECK(gpu(f, kSharedTxStride) == Approx(lg(4)));
  // The update reads B.shared 8 floats apart across threadIdx.x (A.shared is the same for all of them).
  auto u = row_of_scope(rows, kStoreLocal);
  for (auto& r : rows)
    if (gpu(r, kStoreLocal) == 1 && gpu(r, kWorkPerThread) > gpu(u, kWorkPerThread)) u = r;
  CHECK(gpu(u, kWorkPerThread) == Approx(lg(64.0 * 8 * 8 * 8)));  // k.o x k.i x i x j
  CHECK(gpu(u, kSharedTxStride) == Approx(lg(8)));
}

TEST_CASE("gpu features: more shared memory per block lowers the occupancy estimate", "[costmodel][features][gpu]") {
  // 64 x 64 tiles, 4 x 4 per thread: 256 threads, 48 registers (5 blocks per SM by registers).
  auto small = matmul_gpu_rows({64, 64, 8, 4, 4, 4});    // 2 x 64 x 8 floats = 4 KiB shared: 5 blocks
  auto large = matmul_gpu_rows({64, 64, 128, 4, 4, 4});  // 2 x 64 x 128 floats = 64 KiB: 3 blocks
  REQUIRE(!small.empty());
  REQUIRE(!large.empty());
  CHECK(gpu(small[0], kShared) == Approx(lg(2 * 64 * 8 * 4)));
  CHECK(gpu(large[0], kShared) == Approx(lg(2 * 64 * 128 * 4)));
  CHECK(gpu(small[0], kOccupancy) == Approx(5 * 8 / 64.0));
  CHECK(gpu(large[0], kOccupancy) == Approx(3 * 8 / 64.0));
  CHECK(gpu(large[0], kOccupancy) < gpu(small[0], kOccupancy));
  CHECK(gpu(large[0], kWaves) > gpu(small[0], kWaves));
}

TEST_CASE("gpu features of default GPU schedules", "[costmodel][features][gpu]") {
  SECTION("elementwise: fused loops over blocks of 256 threads") {
    auto w = std::make_shared<workload::Workload>(workload::from_spec("exp:N=4096"));
    auto rows = extract_features(*w, ops::default_gpu_schedule({w->inputs, w->outputs}).trace());
    REQUIRE(rows.size() == 1);
    auto& r = rows[0];
    CHECK(gpu(r, kBlockX) == Approx(lg(256)));
    CHECK(gpu(r, kGridX) == Approx(lg(16)));
    CHECK(gpu(r, kShared) == 0);
    CHECK(gpu(r, kLocal) == 0);
    CHECK(gpu(r, kOccupancy) == Approx(1.0));  // 8 blocks of 8 warps
    CHECK(gpu(r, kStoreGlobal) == 1);
    CHECK(gpu(r, kGlobalTxStride) == Approx(lg(1)));
    CHECK(gpu(r, kUncoalesced) == 0);
  }
  SECTION("a tiling matmul gets the matmul schedule") {
    auto rows = extract_features(*mm512(), ops::default_gpu_schedule({mm512()->inputs, mm512()->outputs}).trace());
    ops::MatmulGpuParams p;  // the configuration default_gpu_schedule picks first
    p.bm = p.bn = 64, p.bk = 16, p.tm = 8, p.tn = 4, p.pipeline = true;
    CHECK(rows == matmul_gpu_rows(p));
    CHECK(rows != matmul_gpu_rows({}));
    // The pipelining and min-blocks pragmas are features of their own.
    CHECK(rows[0][kGpuOffset + kPipelined] == 1);
    CHECK(matmul_gpu_rows({})[0][kGpuOffset + kPipelined] == 0);
    ops::MatmulGpuParams m;
    m.min_blocks_per_sm = 2;
    auto mr = matmul_gpu_rows(m);
    CHECK(mr[0][kGpuOffset + kMinBlocksPerSm] == Approx(std::log2(3.0)));
    CHECK(mr[0][kGpuOffset + kRegisters] <= matmul_gpu_rows({})[0][kGpuOffset + kRegisters]);
  }
  SECTION("a transpose reads global memory across threads") {
    auto w = std::make_shared<workload::Workload>(workload::from_spec("transpose:D0=256,D1=256"));
    auto rows = extract_features(*w, ops::default_gpu_schedule({w->inputs, w->outputs}).trace());
    REQUIRE(rows.size() == 1);
    CHECK(gpu(rows[0], kGlobalTxStride) == Approx(lg(256)));  // the read: 256 floats between threads
    CHECK(gpu(rows[0], kUncoalesced) == Approx(0.5));         // half of the bytes (the read)
  }
}

TEST_CASE("gpu features are zero for CPU programs", "[costmodel][features][gpu]") {
  auto w = std::make_shared<workload::Workload>(workload::from_spec("matmul:M=64,N=64,K=64"));
  auto cands = testing::random_candidates(w, 20, 11);
  cands.push_back({});  // the naive schedule
  REQUIRE(cands.size() > 10);
  for (auto& c : cands)
    for (auto& r : extract_features(*w, c.trace))
      for (int k = 0; k < kGpuFeatures; ++k) CHECK(gpu(r, k) == 0);
}

TEST_CASE("a learned model trains on GPU-scheduled candidates", "[costmodel][models][gpu]") {
  auto w = mm512();
  auto cands = testing::random_candidates(w, 120, 5, /*gpu=*/true);
  REQUIRE(cands.size() >= 80);
  std::vector<Sample> samples;
  std::vector<std::shared_ptr<const ProgramFeatures>> feats;
  bool varied = false;
  for (auto& c : cands) {
    auto f = std::make_shared<const ProgramFeatures>(extract_features(*w, c.trace));
    REQUIRE(!f->empty());
    for (auto& r : f->rows)
      for (float x : r) REQUIRE(std::isfinite(x));
    if (!feats.empty()) varied |= gpu(f->rows[0], kOccupancy) != gpu(feats[0]->rows[0], kOccupancy);
    // A synthetic throughput that the GPU group explains: occupancy, fewer waves, less uncoalesced traffic.
    double t = 1;
    for (auto& r : f->rows) t += gpu(r, kOccupancy) - 0.2 * gpu(r, kUncoalesced) - 0.05 * gpu(r, kWaves);
    samples.push_back({f, w->key, std::max(0.1, t) * 1e9});
    feats.push_back(f);
  }
  CHECK(varied);
  auto m = make_learned_model("xgb", {{"seed", 3}, {"nthread", 1}, {"num_rounds", 50}});
  size_t split = samples.size() * 2 / 3;
  m->update_samples(std::vector<Sample>(samples.begin(), samples.begin() + long(split)));
  m->fit_now();
  REQUIRE(m->trained());
  std::vector<const ProgramFeatures*> test;
  std::vector<double> truth;
  for (size_t i = split; i < samples.size(); ++i)
    test.push_back(feats[i].get()), truth.push_back(samples[i].throughput);
  auto scores = m->predict_features(test);
  for (double s : scores) CHECK(std::isfinite(s));
  CHECK(testing::pairwise_accuracy(scores, truth, 0.05) > 0.6);
}
