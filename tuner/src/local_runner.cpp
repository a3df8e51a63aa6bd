// LocalRunner: measures built candidates in a child `tessel-worker --stdio` process (a WorkerChild,
// the same code the RPC worker server measures with).
//   LocalRunner::run   per candidate: pass build errors through, build the reference once per workload
//                      (ReferenceBuilds), send a measure request through the WorkerChild
// runner_util.cpp holds the pieces shared with the RPC runner; see docs/measurement.md for the
// protocol, the timeouts and the error kinds.
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
    std::vector<MeasureResult> out;
    out.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto t0 = Clock::now();
      MeasureResult r;
      if (i >= builds.size()) {
        r = measure_error(MeasureErrorKind::kWorkerLost, "no build result for this candidate");
      } else {
        const BuildResult& b = builds[i];
        if (b.error_kind != MeasureErrorKind::kNone) {
          r = measure_error(b.error_kind, b.error_message);
        } else {
          try {
            r = measure_one(inputs[i], b, opt, best_so_far_s);
          } catch (const std::exception& e) {  // nothing may escape the runner
            r = measure_error(MeasureErrorKind::kWorkerLost, std::string("runner error: ") + e.what());
          }
          r.run_s = std::chrono::duration<double>(Clock::now() - t0).count();
          r.build_s = b.build_s;
          if (!p_.keep_artifacts) remove_artifact(b.artifact_path);
          if (on_result_) on_result_(i, r);
        }
        r.build_s = b.build_s;
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
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
