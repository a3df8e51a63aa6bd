// Compile-time use: build_best replays the best record (or falls back to the default schedule with a
// single reason line) and the result computes the right thing.
#include <catch2/catch.hpp>
#include <cmath>

#include "records_test_util.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/records/compile.h"
#include "tessel/runtime/ndarray.h"

using namespace tessel;
using namespace tessel::records;
using tessel::test::make_record;
using tessel::test::TempDir;

namespace {

/** Runs k's JIT module on random inputs and compares with a plain matmul (32x32x32). */
void check_matmul(CompiledKernel& k) {
  REQUIRE(k.module);
  const int n = 32;
  runtime::NDArray a({n, n}, "float32"), b({n, n}, "float32"), c({n, n}, "float32");
  a.fill_random(11);
  b.fill_random(12);
  c.fill_bytes(0xFF);
  void* args[] = {a.data(), b.data(), c.data()};
  REQUIRE(k.module->call_packed(args) == 0);
  double max_err = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int l = 0; l < n; ++l) acc += double(a.data_as<float>()[i * n + l]) * b.data_as<float>()[l * n + j];
      double e = std::fabs(acc - c.data_as<float>()[i * n + j]);
      max_err = std::isnan(e) ? INFINITY : std::max(max_err, e);
    }
  CHECK(max_err < 1e-3);
}

TuningRecord tiled_record(const std::string& target, double seconds) {
  schedule::Schedule s(test::small_matmul().outputs);
  auto axes = s.tile("C", "i", "j", 4, 8);
  s.reorder("C", {axes[0], axes[1], "k", axes[2], axes[3]});
  s.vectorize("C", axes[3]);
  s.parallel("C", axes[0]);
  TuningRecord r = make_record(target, 1, {seconds});
  r.trace = schedule::trace_to_json(s.trace());
  return r;
}

}  // namespace

TEST_CASE("build_best uses the best record and reports it once", "[records][compile]") {
  TempDir dir;
  auto db = open_database(dir.file("t.db"));
  std::string host = test::host_target();
  int64_t id = db->add_record(tiled_record(host, 1e-5));
  db->add_record(make_record(host, 4, {2e-5}));
  std::vector<std::string> lines;
  BuildOptions o;
  o.name = "mm";
  o.jit = true;
  o.report = [&](const std::string& l) { lines.push_back(l); };
  CompiledKernel k = build_best(*db, test::small_matmul(), codegen::Target::host(), o);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Contains("using record " + std::to_string(id)) && Catch::Contains("GFLOP/s"));
  CHECK(k.used_record());
  CHECK(k.match.record->id == id);
  CHECK(k.func.name == "mm");
  check_matmul(k);
}

TEST_CASE("build_best skips a record whose trace no longer applies", "[records][compile]") {
  TempDir dir;
  auto db = open_database(dir.file("t.db"));
  std::string host = test::host_target();
  TuningRecord stale = make_record(host, 1, {1e-6});
  stale.trace = schedule::trace_to_json({schedule::SplitStep{"C", "no_such_axis", 4, false}});
  db->add_record(stale);
  int64_t good = db->add_record(make_record(host, 8, {1e-3}));
  std::vector<std::string> lines;
  BuildOptions o;
  o.jit = true;
  o.report = [&](const std::string& l) { lines.push_back(l); };
  CompiledKernel k = build_best(*db, test::small_matmul(), codegen::Target::host(), o);
  CHECK(k.match.record->id == good);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Contains("skipped 1 record(s) whose trace no longer applies"));
  check_matmul(k);
}

TEST_CASE("build_best falls back to the default schedule with one reason", "[records][compile]") {
  TempDir dir;
  auto db = open_database(dir.file("t.db"));
  std::string host = test::host_target();
  std::vector<std::string> lines;
  BuildOptions o;
  o.jit = true;
  o.report = [&](const std::string& l) { lines.push_back(l); };
  auto build = [&] {
    lines.clear();
    CompiledKernel k = build_best(*db, test::small_matmul(), codegen::Target::host(), o);
    CHECK_FALSE(k.used_record());
    check_matmul(k);
    REQUIRE(lines.size() == 1);
    return lines[0];
  };
  CHECK_THAT(build(), Catch::Contains("default schedule: no record for workload key"));
  for (int f = 1; f <= 20; ++f) db->add_record(make_record(host, f, {}, MeasureErrorKind::kCompileError));
  CHECK_THAT(build(), Catch::Contains("default schedule: only failed records") && Catch::Contains("20 compile_error"));
  TuningRecord stale = make_record(host, 1, {1e-6});
  stale.trace = schedule::trace_to_json({schedule::ComputeInlineStep{"no_such_stage"}});
  db->add_record(stale);
  CHECK_THAT(build(), Catch::Contains("default schedule: 1 successful record(s)") &&
                          Catch::Contains("no trace replays"));
}

TEST_CASE("default_schedule is the operator library's default", "[records][compile]") {
  workload::Workload w = workload::from_spec("matmul:M=8,N=8,K=8");
  schedule::Schedule s = default_schedule(w);
  CHECK(schedule::trace_to_json(s.trace()) ==
        schedule::trace_to_json(ops::default_schedule(ops::OpTensors{w.inputs, w.outputs}).trace()));
}
