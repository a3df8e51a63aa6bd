// Deterministic stand-ins for the builder and runner, for testing search strategies and schedulers
// without compiling or running anything. Times are a function of the trace (a hash by default, or a
// user callback); errors can be injected per candidate.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "tessel/tuner/measure.h"

namespace tessel::tuner {

/** An error the fake runner reports instead of a time. */
struct FakeFault {
  MeasureErrorKind kind = MeasureErrorKind::kRuntimeError;
  std::string message;  // empty: a realistic default ("worker died with signal 11 (SIGSEGV) ...")
};

/** Knobs of FakeRunner. */
struct FakeRunnerParams {
  /** Run time of a candidate; default: 1e-4 * (1 + 9 * u) with u in [0, 1) from a hash of the trace JSON. */
  std::function<double(const MeasureInput&)> time_fn;
  /** Per candidate (index = how many candidates this runner measured before it): a fault or nullopt. */
  std::function<std::optional<FakeFault>(const MeasureInput&, int64_t index)> fault_fn;
  /** Faults by candidate index (checked before fault_fn). */
  std::map<int64_t, FakeFault> faults;
  /** Additionally, this fraction of candidates (chosen by trace hash, so reproducible) fails with fault_kind. */
  double fault_rate = 0;
  MeasureErrorKind fault_kind = MeasureErrorKind::kRuntimeError;
  /** Relative noise added to each repeat (deterministic per trace and repeat). */
  double noise = 0;
  int repeats = 3;
};

/** Reports time_fn's time (repeats times, with noise) for every candidate that built; honors the
 *  early-abort rule of the real runner (first run > early_abort_ratio x best -> kEarlyAborted). */
class FakeRunner : public Runner {
 public:
  explicit FakeRunner(FakeRunnerParams p = {});
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds,
                                 const MeasureOptions& opt, double best_so_far_s) override;
  /** Candidates measured so far (build failures not counted). */
  int64_t num_measured() const { return index_; }
  /** The default time of a trace (the hash-based function). */
  static double hash_time(const MeasureInput& in);

 private:
  FakeRunnerParams p_;
  int64_t index_ = 0;
};

/** Checks each trace by applying it to Schedule(workload->outputs) (kInvalidSchedule when it fails;
 *  with lower = true it also lowers) and produces no artifact. */
class FakeBuilder : public Builder {
 public:
  explicit FakeBuilder(bool lower = false) : lower_(lower) {}
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs, const MeasureOptions& opt) override;

 private:
  bool lower_;
};

}  // namespace tessel::tuner
