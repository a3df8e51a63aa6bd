// LocalRunner: measures built candidates in a child `tessel-worker --stdio` process (a WorkerChild,
// the same code the RPC worker server measures with).
//   LocalRunner::run   per candidate: pass build errors through, build the reference once per workload
//                      (ReferenceBuilds), send a measure request through the WorkerChild; then the
//                      rechecks of the near-best candidates (MeasureOptions::recheck_*)
// runner_util.cpp holds the pieces shared with the RPC runner; see docs/measurement.md for the
// protocol, the timeouts and the error kinds.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>

#include "tessel/support/error.h"
#include "tessel/tuner/runner_util.h"
#include "measure_lock.h"
#include "worker_child.h"

namespace tessel::tuner {
namespace {

using Clock = std::chrono::steady_clock;

class LocalRunner : public Runner {
 public:
  explicit LocalRunner(LocalRunnerParams p)
      : p_(p),
        child_(WorkerChildParams{p.worker_path, p.startup_timeout_s}),
        refs_(p.work_dir, p.target),
        lock_(p.measure_lock) {}

  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds,
                                 const MeasureOptions& opt, double best_so_far_s) override {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<MeasureResult> out(inputs.size());
    std::vector<char> waiting(inputs.size(), 0);  // measured once, may be rechecked
    double best = best_so_far_s;
    // A candidate is handed over once no recheck can follow (at once, unless it is near the best).
    auto finish = [&](size_t i) {
      if (!p_.keep_artifacts) remove_artifact(builds[i].artifact_path);
      if (on_result_) on_result_(i, out[i]);
    };
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (i >= builds.size()) {
        out[i] = measure_error(MeasureErrorKind::kWorkerLost, "no build result for this candidate");
        continue;
      }
      const BuildResult& b = builds[i];
      if (b.error_kind != MeasureErrorKind::kNone) {
        out[i] = measure_error(b.error_kind, b.error_message);
        out[i].build_s = b.build_s;
        continue;
      }
      out[i] = timed(inputs[i], b, opt, best);
      note_best(out[i], &best);
      if (wants_recheck(out[i], opt, best))
        waiting[i] = 1;
      else
        finish(i);
    }
    // Rechecks: later rounds over the near-best candidates, so that a slow phase of the machine during
    // a candidate's ~50 ms of timed calls does not decide its time (docs/measurement.md).
    std::vector<size_t> again = recheck_set(out, waiting, opt, best);
    for (size_t i = 0; i < out.size(); ++i)
      if (waiting[i] && !std::binary_search(again.begin(), again.end(), i)) finish(i);
    for (int round = 0; round < opt.recheck_rounds && !again.empty(); ++round)
      for (size_t i : again) {
        merge_recheck(out[i], timed(inputs[i], builds[i], opt, best), opt);
        note_best(out[i], &best);
      }
    for (size_t i : again) finish(i);
    return out;
  }

 private:
  /** measure_one with its wall time; nothing escapes. */
  MeasureResult timed(const MeasureInput& in, const BuildResult& b, const MeasureOptions& opt, double best) {
    auto t0 = Clock::now();
    MeasureResult r;
    try {
      r = measure_one(in, b, opt, best);
    } catch (const std::exception& e) {  // nothing may escape the runner
      r = measure_error(MeasureErrorKind::kWorkerLost, std::string("runner error: ") + e.what());
    }
    r.run_s = std::chrono::duration<double>(Clock::now() - t0).count();
    r.build_s = b.build_s;
    return r;
  }

  MeasureResult measure_one(const MeasureInput& in, const BuildResult& b, const MeasureOptions& opt, double best) {
    if (!in.workload) return measure_error(MeasureErrorKind::kWorkerLost, "the measure input has no workload");
    const BuildResult& ref = refs_.get(*in.workload);
    if (ref.error_kind != MeasureErrorKind::kNone)
      return measure_error(MeasureErrorKind::kWorkerLost, ref.error_message);
    auto request = make_measure_request(*in.workload, b, ref, opt, best);
    std::lock_guard<MeasureLock> measuring(lock_);
    return measure_result_from(child_.measure(request));
  }

  LocalRunnerParams p_;
  std::mutex mu_;
  WorkerChild child_;
  ReferenceBuilds refs_;
  MeasureLock lock_;
};

}  // namespace

std::unique_ptr<Runner> make_local_runner(const std::string& work_dir) {
  LocalRunnerParams p;
  p.work_dir = work_dir;
  return make_local_runner(p);
}

std::unique_ptr<Runner> make_local_runner(const LocalRunnerParams& params) {
  return std::make_unique<LocalRunner>(params);
}

}  // namespace tessel::tuner
