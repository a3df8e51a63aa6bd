// Features: fixed length and version, deterministic, different for different schedules, and the loop
// annotations (vectorize/parallel/unroll) and arithmetic counts land where docs/costmodel.md says.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "tessel/costmodel/features.h"
#include "tessel/lower/lower.h"
#include "tessel/schedule/schedule.h"

using namespace tessel;
using namespace tessel::costmodel;

namespace {

const workload::Workload& mm64() {
  static workload::Workload w = workload::from_spec("matmul:M=64,N=64,K=64");
  return w;
}

std::vector<schedule::Step> tiled(bool vec, bool par, bool unroll) {
  schedule::Schedule s(mm64().outputs);
  auto n = s.leaf_names("C");
  auto t = s.tile("C", n[0], n[1], 4, 16);  // i.o, j.o, i.i, j.i
  s.reorder("C", {t[0], t[1], n[2], t[2], t[3]});
  if (vec) s.vectorize("C", t[3]);
  if (par) s.parallel("C", t[0]);
  if (unroll) s.unroll("C", t[2]);
  return s.trace();
}

float lg(double x) { return float(std::log2(1 + x)); }

// The row of the reduction update (the store that reads its own buffer).
std::vector<float> update_row(const std::vector<std::vector<float>>& rows) {
  for (auto& r : rows)
    if (r[kLoopOffset + 17] == 1.0f) return r;
  FAIL("no accumulating store");
  return {};
}

}  // namespace

TEST_CASE("feature layout: fixed length, named, versioned", "[costmodel][features]") {
  CHECK(kFeatureVersion == 4);
  const auto& names = feature_names();
  REQUIRE(int(names.size()) == kFeatureLength);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  // Pinned indices (docs/costmodel.md): changing these needs a new kFeatureVersion.
  CHECK(names[0] == "float_addsub");
  CHECK(names[3] == "float_mad");
  CHECK(names[kLoopOffset + 6] == "vec_len");
  CHECK(names[kLoopOffset + 14] == "par_len");
  CHECK(names[kBufferOffset] == "buf0.present");
  CHECK(names[kBufferOffset + kFeaturesPerBuffer + 3] == "buf1.bytes");
  CHECK(names[kIntensityOffset] == "flops_per_byte");
  CHECK(names[kCurveOffset - 1] == "program_loops");
  CHECK(names[kCurveOffset] == "ai_curve0");
  CHECK(names[kGpuOffset - 1] == "ai_curve9");
  CHECK(names[kGpuOffset] == "gpu_grid_x");  // the GPU group (version 3): test_gpu_features.cpp
  CHECK(names[kCacheOffset - 1] == "gpu_min_blocks_per_sm");
  CHECK(names[kCacheOffset] == "traffic_l1");  // the cache group (version 4)
  CHECK(names[kFeatureLength - 1] == "tile_intensity");
  for (auto& r : extract_features(mm64(), tiled(true, true, true))) CHECK(int(r.size()) == kFeatureLength);
}

TEST_CASE("features: deterministic, and different for different schedules", "[costmodel][features]") {
  auto naive = extract_features(mm64(), {});
  REQUIRE(naive.size() == 2);  // init store + update store
  CHECK(naive == extract_features(mm64(), {}));
  auto a = extract_features(mm64(), tiled(true, false, false));
  auto b = extract_features(mm64(), tiled(false, false, false));
  auto c = extract_features(mm64(), tiled(true, true, true));
  CHECK(a == extract_features(mm64(), tiled(true, false, false)));
  CHECK(a != b);
  CHECK(a != c);
  CHECK(a != naive);
  for (auto* rows : {&naive, &a, &b, &c})
    for (auto& r : *rows)
      for (float x : r) CHECK(std::isfinite(x));
}

TEST_CASE("features: arithmetic counts and loop annotations", "[costmodel][features]") {
  auto naive = update_row(extract_features(mm64(), {}));
  double n3 = 64.0 * 64 * 64;
  // Work counts are per FLOP of the program (2 n^3 here), times 1024.
  auto per_flop = [&](double count) { return lg(count / (2 * n3) * 1024); };
  CHECK(naive[0] == Approx(per_flop(n3)));         // float adds
  CHECK(naive[1] == Approx(per_flop(n3)));         // float muls
  CHECK(naive[3] == Approx(per_flop(n3)));         // multiply-adds
  CHECK(naive[kLoopOffset + 0] == Approx(lg(3)));  // three loops
  CHECK(naive[kLoopOffset + 4] == 0);              // nothing vectorized
  CHECK(naive[kLoopOffset + 12] == 0);             // nor parallel
  CHECK(naive[kIntensityOffset + 2] == Approx(per_flop(2 * n3)));
  CHECK(naive[kOtherOffset + 1] == Approx(lg(2 * n3)));  // the program's FLOPs stay absolute

  auto v = update_row(extract_features(mm64(), tiled(true, true, true)));
  CHECK(v[kLoopOffset + 4] == Approx(lg(1)));    // one vectorized loop
  CHECK(v[kLoopOffset + 6] == Approx(lg(16)));   // of 16 lanes
  CHECK(v[kLoopOffset + 7] == 0);                // innermost
  CHECK(v[kLoopOffset + 10] == Approx(lg(4)));   // unrolled extent 4
  CHECK(v[kLoopOffset + 14] == Approx(lg(16)));  // parallel over 64 / 4 row blocks
  CHECK(v[kLoopOffset + 15] == 0);               // at the outermost position
  // Buffer slots: the output C is read and written by the update; B's innermost stride is 1 (j.i).
  bool saw_b = false;
  for (int s = 0; s < kFeatureBufferSlots; ++s) {
    const float* buf = &v[kBufferOffset + s * kFeaturesPerBuffer];
    if (buf[0] == 0) continue;
    CHECK(buf[3] >= buf[4]);  // bytes >= unique bytes
    if (buf[1] == 1 && buf[2] == 0 && buf[10] == Approx(lg(1))) saw_b = true;
  }
  CHECK(saw_b);
}

TEST_CASE("features: the arithmetic-intensity curve", "[costmodel][features]") {
  // Naive 64^3 matmul update C[i,j] += A[i,k] * B[k,j] (loops i, j, k): inside k one C element, a row
  // of A and a column of B are touched (2 FLOPs per k: 128 FLOPs over 4 + 256 + 256 bytes); the whole
  // nest does 2*64^3 FLOPs over the three 16 KiB matrices.
  auto r = update_row(extract_features(mm64(), {}));
  double n3 = 64.0 * 64 * 64;
  CHECK(r[kCurveOffset] == Approx(lg(2.0 / 12)));                     // one statement: 2 FLOPs, 12 bytes
  CHECK(r[kCurveOffset + kCurvePoints - 1] == Approx(lg(2 * n3 / (3 * 64 * 64 * 4))));  // whole nest
  for (int k = 1; k < kCurvePoints; ++k) CHECK(r[kCurveOffset + k] >= r[kCurveOffset + k - 1] - 1e-6f);
  // Tiling for reuse raises the intensity of the inner levels: a 4x16 tile of C over the k loop.
  auto t = update_row(extract_features(mm64(), tiled(false, false, false)));
  CHECK(t[kCurveOffset + kCurvePoints / 2] > r[kCurveOffset + kCurvePoints / 2]);
}

TEST_CASE("features: cache traffic and the accumulator tile", "[costmodel][features]") {
  // Naive 64^3 matmul, loops i, j, k over C[i,j] += A[i,k] * B[k,j] (16 KiB per matrix). Distinct bytes
  // inside i: all three (48 KiB); inside j: B and a row of A and of C (16 KiB + 512 B); inside k: a row
  // of A and a column of B (512 B) and one C element.
  auto r = update_row(extract_features(mm64(), {}));
  double n3 = 64.0 * 64 * 64;
  auto per_flop = [&](double bytes) { return lg(bytes / (2 * n3) * 1024); };
  CHECK(r[kCacheOffset + 0] == Approx(per_flop(64 * (16384 + 512))));  // 32 KiB: the j level fits, 64 times
  CHECK(r[kCacheOffset + 1] == Approx(per_flop(3 * 16384)));           // 1 MiB: everything once
  CHECK(r[kCacheOffset + 2] == Approx(per_flop(3 * 16384)));
  CHECK(r[kCacheOffset + 3] == Approx(lg(4)));         // one C element lives across k
  CHECK(r[kCacheOffset + 4] == Approx(lg(2.0 / 12)));  // 2 FLOPs per k over 12 distinct bytes
  // The same, undone and summed over the rows (what the analytic model reads): bytes per FLOP of the
  // program, with the 16 KiB of C that the init store (C = 0) writes once.
  auto rows = extract_features(mm64(), {});
  REQUIRE(rows.size() == 2);
  CHECK(cache_traffic_per_flop(rows, 0) == Approx((64 * (16384 + 512) + 16384) / (2 * n3)).epsilon(1e-4));
  CHECK(cache_traffic_per_flop(rows, 1) == Approx(4 * 16384 / (2 * n3)).epsilon(1e-4));
  CHECK(cache_traffic_per_flop({}, 1) == 0);

  // Tiled (i.o, j.o, k, i.i, j.i): a 4 x 16 tile of C lives across k; per k it takes 4 elements of A and
  // 16 of B for 128 FLOPs.
  auto t = update_row(extract_features(mm64(), tiled(true, false, false)));
  CHECK(t[kCacheOffset + 3] == Approx(lg(4 * 16 * 4)));
  CHECK(t[kCacheOffset + 4] == Approx(lg(128.0 / (16 + 64 + 256))));
  // The tiled nest re-reads less into a small cache than the naive one.
  CHECK(t[kCacheOffset + 0] < r[kCacheOffset + 0]);
}

TEST_CASE("features: invalid traces give no rows, lowered functions work too", "[costmodel][features]") {
  std::vector<schedule::Step> bad = {schedule::SplitStep{"C", "no_such_axis", 4}};
  CHECK(extract_features(mm64(), bad).empty());
  schedule::Schedule s(mm64().outputs);
  s.apply_all(tiled(true, true, true));
  auto rows = extract_features(lower::lower(s, mm64().args(), "f"));
  CHECK(!rows.empty());
  for (auto& r : rows) CHECK(int(r.size()) == kFeatureLength);
}
