// FakeRunner / FakeBuilder: deterministic times, error injection, early abort, invalid traces.
#include <catch2/catch.hpp>

#include "tessel/schedule/schedule.h"
#include "tessel/tuner/fake_runner.h"

using namespace tessel;
using namespace tessel::tuner;

namespace {

std::shared_ptr<const workload::Workload> matmul16() {
  static auto w = std::make_shared<const workload::Workload>(workload::from_spec("matmul:M=16,N=16,K=16"));
  return w;
}

MeasureInput split_input(int64_t factor) {
  schedule::Schedule s(matmul16()->outputs);
  s.split("C", s.leaf_names("C")[0], factor);
  return {matmul16(), s.trace()};
}

}  // namespace

TEST_CASE("fake runner: times are a deterministic function of the trace", "[tuner][fake]") {
  FakeRunner a, b;
  std::vector<MeasureInput> in = {split_input(2), split_input(4), split_input(8)};
  std::vector<BuildResult> builds(in.size());
  MeasureOptions opt;
  auto ra = a.run(in, builds, opt, 0);
  auto rb = b.run(in, builds, opt, 0);
  for (size_t i = 0; i < in.size(); ++i) {
    REQUIRE(ra[i].ok());
    CHECK(ra[i].run_times_s.size() == 3);
    CHECK(ra[i].median_s() == rb[i].median_s());
    CHECK(ra[i].median_s() == FakeRunner::hash_time(in[i]));
    CHECK(ra[i].median_s() >= 1e-4);
    CHECK(ra[i].median_s() < 1e-3);
  }
  CHECK(ra[0].median_s() != ra[1].median_s());
  CHECK(a.num_measured() == 3);

  FakeRunnerParams p;
  p.time_fn = [](const MeasureInput& in) { return 1e-3 * double(in.trace.size() + 1); };
  p.noise = 0.1;
  p.repeats = 5;
  FakeRunner c(p);
  auto rc = c.run(in, builds, opt, 0);
  CHECK(rc[0].run_times_s.size() == 5);
  CHECK(rc[0].median_s() == Approx(2e-3).epsilon(0.1));
  CHECK(rc[0].run_times_s == FakeRunner(p).run({in[0]}, {BuildResult{}}, opt, 0)[0].run_times_s);
}

TEST_CASE("fake runner: injected faults / build errors / early abort", "[tuner][fake]") {
  FakeRunnerParams p;
  p.faults[1] = {MeasureErrorKind::kRunTimeout, ""};
  p.faults[2] = {MeasureErrorKind::kWrongAnswer, "custom"};
  p.fault_fn = [](const MeasureInput&, int64_t index) -> std::optional<FakeFault> {
    if (index == 3) return FakeFault{MeasureErrorKind::kRuntimeError, ""};
    return std::nullopt;
  };
  FakeRunner r(p);
  std::vector<MeasureInput> in(6, split_input(4));
  std::vector<BuildResult> builds(6);
  builds[5].error_kind = MeasureErrorKind::kCompileError;
  builds[5].error_message = "boom";
  auto out = r.run(in, builds, MeasureOptions{}, 0);
  CHECK(out[0].ok());
  CHECK(out[1].error_kind == MeasureErrorKind::kRunTimeout);
  CHECK(out[2].error_kind == MeasureErrorKind::kWrongAnswer);
  CHECK(out[2].error_message == "custom");
  CHECK(out[3].error_kind == MeasureErrorKind::kRuntimeError);
  CHECK_THAT(out[3].error_message, Catch::Contains("SIGSEGV"));
  CHECK(out[4].ok());
  CHECK(out[5].error_kind == MeasureErrorKind::kCompileError);
  CHECK(out[5].error_message == "boom");
  CHECK(r.num_measured() == 5);  // build failures are not measured

  FakeRunner e;
  auto ab = e.run({split_input(4)}, {BuildResult{}}, MeasureOptions{}, 1e-9);
  CHECK(ab[0].error_kind == MeasureErrorKind::kEarlyAborted);
  CHECK(ab[0].run_times_s.size() == 1);

  FakeRunnerParams all;
  all.fault_rate = 1.0;
  all.fault_kind = MeasureErrorKind::kOutOfMemory;
  auto oom = FakeRunner(all).run({split_input(2)}, {BuildResult{}}, MeasureOptions{}, 0);
  CHECK(oom[0].error_kind == MeasureErrorKind::kOutOfMemory);
}

TEST_CASE("fake builder: invalid traces are kInvalidSchedule", "[tuner][fake]") {
  FakeBuilder b(/*lower=*/true);
  std::vector<MeasureInput> in = {split_input(4), {matmul16(), {schedule::SplitStep{"C", "nope", 2, false}}}};
  auto out = b.build(in, MeasureOptions{});
  CHECK(out[0].error_kind == MeasureErrorKind::kNone);
  CHECK(out[1].error_kind == MeasureErrorKind::kInvalidSchedule);
  CHECK_THAT(out[1].error_message, Catch::Contains("nope"));
}
