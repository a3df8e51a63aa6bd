// Records and the database API: round trips, best lookup with target matching and its reasons,
// exact-resume queries, distill, JSON lines.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>

#include "records_test_util.h"
#include "tessel/records/stats.h"
#include "tessel/support/version.h"

using namespace tessel;
using namespace tessel::records;
using tessel::test::make_record;
using tessel::test::TempDir;

namespace {
std::string other_cpu_target() {
  codegen::Target t = codegen::Target::host();
  t.cpu = t.cpu == "skylake-avx512" ? "znver3" : "skylake-avx512";
  return t.to_string();
}
/** The host target with one enabled feature removed: records measured there are compatible. */
std::string fewer_features_target() {
  codegen::Target t = codegen::Target::host();
  std::string out, dropped;
  std::stringstream ss(t.features);
  for (std::string f; std::getline(ss, f, ',');) {
    if (dropped.empty() && f.size() > 1 && f[0] == '+') {
      dropped = f;
      continue;
    }
    out += (out.empty() ? "" : ",") + f;
  }
  t.features = out;
  return t.to_string();
}
}  // namespace

TEST_CASE("error kinds have stable names", "[records]") {
  CHECK(std::string(error_kind_name(MeasureErrorKind::kNone)) == "none");
  CHECK(std::string(error_kind_name(MeasureErrorKind::kCompileTimeout)) == "compile_timeout");
  CHECK(std::string(error_kind_name(MeasureErrorKind::kOutOfMemory)) == "out_of_memory");
  for (auto k : all_error_kinds()) CHECK(error_kind_from_name(error_kind_name(k)) == k);
  CHECK_FALSE(error_kind_from_name("exploded").has_value());
}

TEST_CASE("record JSON round trip and validation", "[records]") {
  TuningRecord r = make_record(test::host_target(), 4, {3e-3, 1e-3, 2e-3});
  r.timestamp_us = 1700000000123456;
  r.tessel_version = "0.1.0";
  CHECK(r.median_s() == Approx(2e-3));
  nlohmann::json j = record_to_json(r);
  CHECK(j["version"] == kRecordJsonVersion);
  TuningRecord back = record_from_json(nlohmann::json::parse(j.dump()));
  CHECK(record_to_json(back) == j);
  CHECK(back.trace_hash == trace_hash(r.trace));

  nlohmann::json newer = j;
  newer["version"] = kRecordJsonVersion + 1;
  CHECK_THROWS_WITH(record_from_json(newer), Catch::Contains("newer than this tessel"));
  nlohmann::json bad = j;
  bad["error_kind"] = "exploded";
  CHECK_THROWS_WITH(record_from_json(bad), Catch::Contains("unknown error_kind 'exploded'"));
  bad = j;
  bad["trace"]["steps"][0]["factor"] = 8;  // edited trace, stale hash
  CHECK_THROWS_WITH(record_from_json(bad), Catch::Contains("trace_hash does not match"));
  TuningRecord empty_ok = make_record(test::host_target(), 4, {});
  CHECK_THROWS_WITH(validate_record(empty_ok), Catch::Contains("at least one run time"));
}

TEST_CASE("record -> database -> record", "[records]") {
  TempDir dir;
  auto db = open_database(dir.file("t.db"));
  db->add_workload(test::small_matmul());
  int64_t run = db->begin_run({{"strategy", "test"}});
  TuningRecord r = make_record(test::host_target(), 8, {2e-3, 1e-3});
  r.run_id = run;
  bool inserted = false;
  int64_t id = db->add_record(r, &inserted);
  CHECK(inserted);
  db->end_run(run, {{"records", 1}});
  auto back = db->record(id);
  REQUIRE(back.has_value());
  CHECK(back->id == id);
  CHECK(back->run_id == run);
  CHECK(back->workload_key == r.workload_key);
  CHECK(back->workload == r.workload);
  CHECK(back->target == r.target);
  CHECK(back->target_fingerprint == r.target_fingerprint);
  CHECK(back->trace == r.trace);
  CHECK(back->trace_hash == trace_hash(r.trace));
  CHECK(back->run_times_s == r.run_times_s);
  CHECK(back->build_settings == r.build_settings);
  CHECK(back->run_settings == r.run_settings);
  CHECK(back->tessel_version == tessel::version());
  CHECK(back->timestamp_us > 0);
  // The same record (same timestamp) again is a duplicate, not a second row.
  int64_t again = db->add_record(*back, &inserted);
  CHECK_FALSE(inserted);
  CHECK(again == id);
  DbStats s = db->stats();
  CHECK(s.schema_version == kSchemaVersion);
  CHECK(s.records == 1);
  CHECK(s.workloads == 1);
  CHECK(s.runs == 1);
  // Reopening sees the same data.
  db.reset();
  auto db2 = open_database(dir.file("t.db"));
  CHECK(db2->record(id)->trace == r.trace);
  CHECK(db2->workloads().at(0).records == 1);
}

TEST_CASE("exact resume: has_record and trace_hashes", "[records]") {
  TempDir dir;
  auto db = open_database(dir.file("t.db"));
  std::string host = test::host_target();
  db->add_record(make_record(host, 4, {1e-3}));
  db->add_record(make_record(host, 8, {}, MeasureErrorKind::kCompileError));
  CHECK(db->has_record(test::small_matmul().key, host, trace_hash(test::split_trace(4))));
  CHECK(db->has_record(test::small_matmul().key, host, trace_hash(test::split_trace(8))));  // failed ones count
  CHECK_FALSE(db->has_record(test::small_matmul().key, host, trace_hash(test::split_trace(16))));
  CHECK_FALSE(db->has_record(test::small_matmul().key, other_cpu_target(), trace_hash(test::split_trace(4))));
  CHECK_FALSE(db->has_record("0123", host, trace_hash(test::split_trace(4))));
  auto hashes = db->trace_hashes(test::small_matmul().key, host);
  CHECK(hashes.size() == 2);
  // A record of an unknown workload without workload JSON is refused with what to do.
  TuningRecord orphan = make_record(host, 4, {1e-3});
  orphan.workload_key = "feedfeedfeedfeedfeedfeedfeedfeed";
  orphan.workload = nullptr;
  CHECK_THROWS_WITH(db->add_record(orphan), Catch::Contains("add the workload first"));
}

TEST_CASE("best, top_k and find_best with target matching", "[records]") {
  TempDir dir;
  auto db = open_database(dir.file("t.db"));
  std::string host = test::host_target(), key = test::small_matmul().key;

  BestMatch m = db->find_best(key, host);
  CHECK(m.reason == MatchReason::kNoRecordForKey);
  CHECK_THAT(m.message, Catch::Contains("no record for workload key " + key));

  db->add_record(make_record(other_cpu_target(), 2, {1e-4}));
  m = db->find_best(key, host);
  CHECK(m.reason == MatchReason::kOtherTargetsOnly);
  CHECK_THAT(m.message, Catch::Contains("only for other targets") && Catch::Contains("cpu "));
  REQUIRE(m.other_targets.size() == 1);

  db->add_record(make_record(host, 4, {}, MeasureErrorKind::kCompileError));
  db->add_record(make_record(host, 8, {}, MeasureErrorKind::kCompileError));
  db->add_record(make_record(host, 16, {}, MeasureErrorKind::kRunTimeout));
  m = db->find_best(key, host);
  CHECK(m.reason == MatchReason::kOnlyFailed);
  CHECK_THAT(m.message, Catch::Contains("only failed records") && Catch::Contains("2 compile_error") &&
                            Catch::Contains("1 run_timeout"));
  CHECK_FALSE(db->best(key, host).has_value());

  // A compatible target (subset of the host's features) is a fallback.
  std::string fewer = fewer_features_target();
  REQUIRE(match_target(fewer, host).kind == TargetMatchKind::kCompatible);
  CHECK(match_target(host, fewer).kind == TargetMatchKind::kIncompatible);  // needs a feature fewer lacks
  int64_t compat = db->add_record(make_record(fewer, 32, {5e-4}));
  m = db->find_best(key, host);
  CHECK(m.reason == MatchReason::kFound);
  CHECK(m.fallback);
  CHECK(m.record->id == compat);

  // Exact records win over compatible ones; the lowest median wins among them.
  db->add_record(make_record(host, 1, {3e-3, 3e-3, 3e-3}));
  int64_t fastest = db->add_record(make_record(host, 2, {9e-3, 1e-3, 1e-3}));  // median 1 ms
  db->add_record(make_record(host, 32, {2e-3}));
  m = db->find_best(key, host);
  CHECK(m.reason == MatchReason::kFound);
  CHECK_FALSE(m.fallback);
  CHECK(m.record->id == fastest);
  CHECK(db->best(key, host)->id == fastest);
  auto top = db->top_k(key, host, 2);
  REQUIRE(top.size() == 2);
  CHECK(top[0].id == fastest);
  CHECK(top[1].median_s() == Approx(2e-3));
  CHECK(db->find_best(key, "host").record->id == fastest);  // "host" is the host's printed target

  // A replay check that refuses the best record moves on to the next and says so.
  m = db->find_best(key, host, [&](const TuningRecord& r) { return r.id == fastest ? "no such axis" : ""; });
  CHECK(m.record->id != fastest);
  CHECK(m.rejected_traces == 1);
  m = db->find_best(key, host, [](const TuningRecord&) { return std::string("stage C is gone"); });
  CHECK(m.reason == MatchReason::kTraceInvalid);
  CHECK_THAT(m.message, Catch::Contains("no trace replays") && Catch::Contains("stage C is gone"));
}

TEST_CASE("target matching rule", "[records]") {
  std::string host = test::host_target();
  CHECK(match_target(host, host).kind == TargetMatchKind::kExact);
  CHECK(match_target(host, "host").kind == TargetMatchKind::kExact);
  CHECK(match_target(other_cpu_target(), host).kind == TargetMatchKind::kIncompatible);
  CHECK_THAT(match_target("llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=generic", host).reason,
             Catch::Contains("triple"));
  CHECK(match_target("not a target at all", host).kind == TargetMatchKind::kIncompatible);
  nlohmann::json fp = host_fingerprint();
  CHECK(fp["cores"].get<int>() >= 1);
  CHECK(fp["features"] == codegen::Target::host().features);
  CHECK(fp.contains("cpu_model"));
  CHECK(fp.contains("os"));
  CHECK(thp_policy_of("always [madvise] never") == "madvise");
  CHECK(thp_policy_of("[always] madvise never") == "always");
  CHECK(thp_policy_of("always madvise [never]") == "never");
  CHECK(thp_policy_of("") == "unknown");
  CHECK(thp_policy_of("always madvise never") == "unknown");
  CHECK(thp_policy_of("always [] never") == "unknown");
  CHECK(thp_policy_of("always [madvise never") == "unknown");
  // The host's, read here independently: the bracketed word of the sysfs file.
  std::string thp = fp.value("transparent_hugepages", "");
  std::ifstream sys("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (std::getline(sys, line) && line.find('[') != std::string::npos) {
    CHECK(line.find("[" + thp + "]") != std::string::npos);
  } else {
    CHECK(thp == "unknown");
  }
}

TEST_CASE("database -> JSON lines -> database, deduplicated", "[records]") {
  TempDir dir;
  auto a = open_database(dir.file("a.db"));
  std::string host = test::host_target();
  for (int f = 1; f <= 5; ++f) a->add_record(make_record(host, f, {1e-3 * f}));
  a->add_record(make_record(host, 7, {}, MeasureErrorKind::kWrongAnswer));
  CHECK(a->export_jsonl(dir.file("a.jsonl")) == 6);
  auto b = open_database(dir.file("b.db"));
  auto [added, skipped] = b->import_jsonl(dir.file("a.jsonl"));
  CHECK(added == 6);
  CHECK(skipped == 0);
  auto again = b->import_jsonl(dir.file("a.jsonl"));
  CHECK(again.first == 0);
  CHECK(again.second == 6);
  CHECK(b->export_jsonl(dir.file("b.jsonl")) == 6);
  CHECK(test::read_bytes(dir.file("a.jsonl")) == test::read_bytes(dir.file("b.jsonl")));

  test::write_bytes(dir.file("bad.jsonl"), test::read_bytes(dir.file("a.jsonl")) + "{\"version\": 1}\n");
  CHECK_THROWS_WITH(b->import_jsonl(dir.file("bad.jsonl")), Catch::Contains("bad.jsonl:7") &&
                                                                Catch::Contains("missing field 'workload_key'"));
}

TEST_CASE("distill keeps the best k per workload and target", "[records]") {
  TempDir dir;
  auto db = open_database(dir.file("t.db"));
  std::string host = test::host_target(), other = other_cpu_target();
  for (int f = 1; f <= 6; ++f) db->add_record(make_record(host, f, {1e-3 * (7 - f)}));
  for (int f = 1; f <= 3; ++f) db->add_record(make_record(other, f, {1e-3 * f}));
  db->add_record(make_record(host, 9, {}, MeasureErrorKind::kRuntimeError));
  CHECK(db->distill(2, dir.file("small.db")) == 4);
  auto small = open_database(dir.file("small.db"));
  CHECK(small->stats().records == 4);
  auto top = small->top_k(test::small_matmul().key, host, 5);
  REQUIRE(top.size() == 2);
  CHECK(top[0].median_s() == Approx(1e-3));
  CHECK(top[1].median_s() == Approx(2e-3));
  CHECK(db->stats().records == 10);  // the source is untouched
  // The best schedule measured again (slower than its first time, faster than the second schedule): k
  // records keep both measurements, k distinct schedules keep its best and the next schedule.
  auto again = make_record(host, 6, {1.5e-3});
  again.timestamp_us = 1;
  db->add_record(again);
  CHECK(db->distill(2, dir.file("same.db")) == 4);
  auto same = open_database(dir.file("same.db"))->top_k(test::small_matmul().key, host, 5);
  REQUIRE(same.size() == 2);
  CHECK(same[0].trace_hash == same[1].trace_hash);
  CHECK(db->distill(2, dir.file("distinct.db"), true) == 4);
  auto distinct = open_database(dir.file("distinct.db"))->top_k(test::small_matmul().key, host, 5);
  REQUIRE(distinct.size() == 2);
  CHECK(distinct[0].median_s() == Approx(1e-3));
  CHECK(distinct[1].median_s() == Approx(2e-3));
  CHECK(distinct[0].trace_hash != distinct[1].trace_hash);
  db->remove_records({db->top_k(test::small_matmul().key, host, 2)[1].id});  // the re-measurement again
  CHECK(db->stats().records == 10);
  CHECK(db->distill(1) == 2);        // in place
  CHECK(db->stats().records == 2);
  CHECK(db->best(test::small_matmul().key, host)->median_s() == Approx(1e-3));
}

namespace {
/** Reference for slower_beyond_noise: a permutation test written out (ties count a half), every way of splitting the pooled
 *  samples into groups of a's and b's sizes, p = the share of splits whose U is at least the observed. */
bool slower_by_permutations(const std::vector<double>& a, const std::vector<double>& b, double alpha) {
  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  auto u_of = [](const std::vector<double>& x, const std::vector<double>& y) {
    double u = 0;
    for (double p : x)
      for (double q : y) u += p > q ? 1.0 : p == q ? 0.5 : 0.0;
    return u;
  };
  double observed = u_of(a, b);
  size_t n = all.size(), at_least = 0, splits = 0;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (size_t(__builtin_popcount(mask)) != a.size()) continue;
    std::vector<double> x, y;
    for (size_t i = 0; i < n; ++i) (mask >> i & 1 ? x : y).push_back(all[i]);
    ++splits;
    at_least += u_of(x, y) >= observed - 1e-9;
  }
  return double(at_least) / double(splits) < alpha;
}
}  // namespace

TEST_CASE("slower_beyond_noise: a one-sided Mann-Whitney test on measured times", "[records]") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0.0, 0.03);  // 3% spread, as between measurements here
  auto times = [&](double mean, size_t k) {
    std::vector<double> t;
    for (size_t i = 0; i < k; ++i) t.push_back(mean * (1.0 + noise(rng)));
    return t;
  };
  // Against the permutation test written out, on random samples of several sizes and gaps (ties too).
  int agree = 0, slower = 0;
  for (int trial = 0; trial < 400; ++trial) {
    size_t n = 3 + trial % 4, m = 3 + (trial / 4) % 4;
    double gap = 1.0 + 0.02 * double(trial % 5);
    std::vector<double> a = times(gap * 1e-3, n), b = times(1e-3, m);
    if (trial % 7 == 0) a[0] = b[0];  // a tie
    bool got = records::slower_beyond_noise(a, b), want = slower_by_permutations(a, b, 0.05);
    if (trial % 7 == 0) {
      CHECK((!got || want));  // with a tie: never "slower" where the permutation test says no
    } else {
      CHECK(got == want);
      agree += got == want;
    }
    slower += got;
  }
  CHECK(agree == 400 - 58);  // the trials without a tie
  CHECK(slower > 40);  // the larger gaps are told apart (the test is not always false)
  CHECK(slower < 360);  // and the small ones are not (nor always true)
  // Clearly slower: yes; the other way round, or the same distribution: rarely (about alpha).
  std::vector<double> fast = times(1e-3, 5), slow = times(1.3e-3, 5);
  CHECK(records::slower_beyond_noise(slow, fast));
  CHECK_FALSE(records::slower_beyond_noise(fast, slow));
  int false_alarms = 0;
  for (int i = 0; i < 2000; ++i) false_alarms += records::slower_beyond_noise(times(1e-3, 5), times(1e-3, 5));
  CHECK(false_alarms > 20);   // 5 a side: P(U >= 21) = 12/252 = 4.8%
  CHECK(false_alarms < 160);
  // Fewer than 3 samples a side: no evidence either way.
  CHECK_FALSE(records::slower_beyond_noise({2e-3, 2e-3}, {1e-3, 1e-3, 1e-3}));
  CHECK_FALSE(records::slower_beyond_noise({2e-3, 2e-3, 2e-3}, {}));
}
