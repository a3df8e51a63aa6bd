// Measurement: the Builder compiles candidates into shared libraries, the Runner runs them in a separate
// worker process (local child or remote worker) and returns times or an error kind. Nothing throws
// across these interfaces: every outcome is a MeasureResult.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessel/records/record.h"
#include "tessel/schedule/step.h"
#include "tessel/workload/workload.h"

namespace tessel::tuner {

using records::MeasureErrorKind;

/** How candidates are timed (stored in each record's run_settings). */
struct MeasureOptions {
  int warmup = 1;            // untimed runs first
  int min_repeats = 3;       // timed runs, at least
  double min_time_s = 0.05;  // and at least this much timed time in total
  int max_repeats = 100;
  bool flush_cache = false;        // write a buffer larger than the LLC between repeats
  double early_abort_ratio = 5;    // stop after the first run when it is this many times slower than the best
  double build_timeout_s = 30;     // per candidate
  double run_timeout_s = 10;       // per candidate (all repeats)
  int64_t memory_limit_mb = 8192;  // address-space limit of the worker process
  int threads = 0;                 // threads of the runtime pool in the worker (0 = default)
  uint64_t seed = 1;               // inputs are drawn from this seed (same for every candidate)
  // Rechecks against slow phases of the machine (docs/measurement.md): a candidate whose median is
  // within recheck_ratio x the best time known (its batch's included) is measured again in
  // recheck_rounds later rounds over its batch; recheck_merge says which times are kept: "fastest" (the
  // fastest round's) or "pooled" (every round's timed runs, so its median is the median of them all). At
  // most recheck_max candidates of a batch (the fastest). recheck_rounds = 0 turns it off.
  int recheck_rounds = 2;
  double recheck_ratio = 1.6;
  int recheck_max = 4;
  std::string recheck_merge = "fastest";
  nlohmann::json to_json() const;
  static MeasureOptions from_json(const nlohmann::json& j);
};

/** Throws a UserError unless merge names a MeasureOptions::recheck_merge ("fastest", "pooled"). */
void check_recheck_merge(const std::string& merge);

/** One candidate: a schedule trace of a workload. */
struct MeasureInput {
  std::shared_ptr<const workload::Workload> workload;
  std::vector<schedule::Step> trace;
};

/** A built candidate: the shared library (NAME_packed inside) or the error that stopped the build. */
struct BuildResult {
  MeasureErrorKind error_kind = MeasureErrorKind::kNone;
  std::string error_message;
  std::string artifact_path;  // .so on success
  std::string function_name;
  double build_s = 0;
};

struct MeasureResult {
  MeasureErrorKind error_kind = MeasureErrorKind::kNone;
  std::string error_message;
  std::vector<double> run_times_s;  // every timed repeat
  double build_s = 0, run_s = 0;    // wall time spent building and measuring this candidate
  int rounds = 1;                   // times it was measured (rechecks included); run_times_s: MeasureOptions::recheck_merge
  /** Median run time, or +infinity on error. */
  double median_s() const;
  /** As records::TuningRecord::timed_s: the median also of an early-aborted candidate's runs (for the
   *  cost model, which should learn how slow it was), +infinity for other errors. */
  double timed_s() const;
  bool ok() const { return error_kind == MeasureErrorKind::kNone && !run_times_s.empty(); }
};

/** Compiles candidates (in parallel) into shared libraries under a working directory. */
class Builder {
 public:
  virtual ~Builder() = default;
  virtual std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs, const MeasureOptions& opt) = 0;
};

/** Runs built candidates and checks their outputs against the workload's reference (its default
 *  schedule, built once per workload by the runner and run in the same worker). */
class Runner {
 public:
  virtual ~Runner() = default;
  /** best_so_far_s: the best time known for this workload (for early abort; 0 = none). */
  virtual std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                         const std::vector<BuildResult>& builds, const MeasureOptions& opt,
                                         double best_so_far_s) = 0;
  /** Results as they finish: called with a candidate's index and final result before run() returns
   *  (from any thread, one call at a time), so the tuner can record it at once. Runners that do not
   *  call it (build errors are never passed) leave those results to run()'s return value. */
  using ResultCallback = std::function<void(size_t index, const MeasureResult& result)>;
  void set_result_callback(ResultCallback cb) { on_result_ = std::move(cb); }

 protected:
  ResultCallback on_result_;
};

/** Builds locally with LLVM on `jobs` threads (0 = hardware concurrency) into work_dir (created if
 *  missing) as cand_<pid>_<n>.so exporting kernel_packed (for a cuda target: cand_<pid>_<n>.ptx + .json). A build that takes longer than
 *  build_timeout_s is reported as kCompileTimeout once it finished (an in-process LLVM compile cannot be
 *  interrupted; see docs/measurement.md). */
std::unique_ptr<Builder> make_local_builder(const std::string& work_dir, int jobs, const std::string& target = "host");

/** Knobs of the local runner. */
struct LocalRunnerParams {
  std::string work_dir;           // references are built here (created if missing)
  std::string target = "host";    // of the candidates; a cuda target gets a PTX reference
  std::string worker_path;        // empty: $TESSEL_WORKER, else next to /proc/self/exe, else the build tree's
  bool keep_artifacts = false;    // false: delete each candidate's .so once it was measured
  double startup_timeout_s = 10;  // a new worker must answer a ping within this time
  // Non-empty: each candidate is measured under an exclusive lock (flock) on this file, created if
  // missing, so that tuning runs sharing a machine (one per core) never time kernels at once; building
  // and searching still overlap. make_local_runner throws UserError when the file cannot be opened.
  std::string measure_lock;
};
/** Runs on a local worker process (`tessel-worker --stdio --memory-limit-mb N`), restarted after a
 *  crash or timeout. The reference of each workload (ops::default_schedule, or ops::default_gpu_schedule
 *  for a cuda target) is built once into work_dir. */
std::unique_ptr<Runner> make_local_runner(const std::string& work_dir);
std::unique_ptr<Runner> make_local_runner(const LocalRunnerParams& params);

/** Compiles one candidate (apply trace to Schedule(outputs), lower as `function`, emit a shared library
 *  at path); never throws. What LocalBuilder runs per candidate. For a cuda target ("cuda",
 *  "cuda -arch=sm_90") path ends in .ptx: the kernel must pass codegen::validate_gpu_kernel
 *  (kInvalidSchedule with its reason otherwise) and is written as PATH.ptx + PATH.json. */
BuildResult build_candidate(const MeasureInput& input, const std::string& path, const std::string& function,
                            const std::string& target = "host");
/** Compiles the workload's reference (ops::default_schedule) to path as a shared library; never throws.
 *  For a cuda target it is ops::default_gpu_schedule written as PATH.ptx + PATH.json (path ends in .ptx),
 *  which the worker runs on the GPU (docs/gpu.md). */
BuildResult build_reference(const workload::Workload& w, const std::string& path, const std::string& function,
                            const std::string& target = "host");

}  // namespace tessel::tuner
