// LocalBuilder: compiles candidates into shared libraries with LLVM in this process, `jobs` at a time.
//   build_candidate  trace -> Schedule(outputs).apply_all -> lower -> emit_shared_library; errors become kinds
//   build_reference  ops::default_schedule of the workload -> shared library
//   LocalBuilder     a std::thread pool over the inputs (each LLVM compile uses its own LLVMContext and
//                    TargetMachine, see src/codegen/aot.cpp, so compiles run concurrently)
// A compile cannot be interrupted, so a build over build_timeout_s finishes and is then reported as
// kCompileTimeout (its library is deleted). See docs/measurement.md.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <thread>

#include "measure_internal.h"
#include "tessel/codegen/aot.h"
#include "tessel/codegen/target.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/support/error.h"

namespace tessel::tuner {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string fmt(double v) {
  std::ostringstream os;
  os << std::setprecision(3) << v;
  return os.str();
}

BuildResult fail(MeasureErrorKind kind, std::string msg) {
  BuildResult r;
  r.error_kind = kind;
  r.error_message = std::move(msg);
  return r;
}

/** Lowers and emits s; kInvalidSchedule when lowering refuses, kCompileError when codegen/link fails. */
BuildResult compile(const schedule::Schedule& s, const workload::Workload& w, const std::string& path,
                    const std::string& function) {
  ir::LoweredFunc f;
  try {
    f = lower::lower(s, w.args(), function);
  } catch (const UserError& e) {
    return fail(MeasureErrorKind::kInvalidSchedule, std::string("lowering failed: ") + e.what());
  } catch (const std::exception& e) {
    return fail(MeasureErrorKind::kInvalidSchedule, std::string("lowering failed (internal error): ") + e.what());
  }
  try {
    codegen::emit_shared_library(f, codegen::Target::host(), path);
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return fail(MeasureErrorKind::kCompileError, e.what());
  }
  BuildResult r;
  r.artifact_path = path;
  r.function_name = function;
  return r;
}

class LocalBuilder : public Builder {
 public:
  LocalBuilder(std::string work_dir, int jobs) : work_dir_(std::move(work_dir)), jobs_(jobs) {
    if (jobs_ <= 0) jobs_ = int(std::max(1u, std::thread::hardware_concurrency()));
  }

  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs, const MeasureOptions& opt) override {
    std::vector<BuildResult> results(inputs.size());
    std::error_code ec;
    std::filesystem::create_directories(work_dir_, ec);
    if (ec) {
      for (auto& r : results)
        r = fail(MeasureErrorKind::kCompileError,
                 "cannot create the work directory '" + work_dir_ + "': " + ec.message());
      return results;
    }
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next.fetch_add(1)) < inputs.size();) {
        auto t0 = std::chrono::steady_clock::now();
        std::string path = (std::filesystem::path(work_dir_) /
                            ("cand_" + std::to_string(getpid()) + "_" + std::to_string(counter_.fetch_add(1)) + ".so"))
                               .string();
        BuildResult r = build_candidate(inputs[i], path, detail::kCandidateFunction);
        r.build_s = seconds_since(t0);
        if (r.error_kind == MeasureErrorKind::kNone && opt.build_timeout_s > 0 && r.build_s > opt.build_timeout_s) {
          std::error_code rm_ec;
          std::filesystem::remove(path, rm_ec);
          double t = r.build_s;
          r = fail(MeasureErrorKind::kCompileTimeout,
                   "the build took " + fmt(t) + " s, more than the " + fmt(opt.build_timeout_s) + " s limit");
          r.build_s = t;
        }
        results[i] = std::move(r);
      }
    };
    int n = int(std::min<size_t>(size_t(jobs_), inputs.size()));
    if (n <= 1) {
      worker();
    } else {
      std::vector<std::thread> pool;
      for (int t = 0; t < n; ++t) pool.emplace_back(worker);
      for (auto& t : pool) t.join();
    }
    return results;
  }

 private:
  std::string work_dir_;
  int jobs_;
  static inline std::atomic<uint64_t> counter_{0};  // unique names across builders of this process
};

}  // namespace

BuildResult build_candidate(const MeasureInput& input, const std::string& path, const std::string& function) {
  try {
    if (!input.workload) return fail(MeasureErrorKind::kInvalidSchedule, "the measure input has no workload");
    const workload::Workload& w = *input.workload;
    schedule::Schedule s(w.outputs);
    Status st = s.apply_all(input.trace);
    if (!st) return fail(MeasureErrorKind::kInvalidSchedule, st.message());
    return compile(s, w, path, function);
  } catch (const std::exception& e) {  // apply_all reports errors as Status; anything else is unexpected
    return fail(MeasureErrorKind::kInvalidSchedule, std::string("the trace cannot be applied: ") + e.what());
  }
}

BuildResult build_reference(const workload::Workload& w, const std::string& path, const std::string& function) {
  auto t0 = std::chrono::steady_clock::now();
  BuildResult r;
  try {
    ops::OpTensors t{w.inputs, w.outputs};
    r = compile(ops::default_schedule(t), w, path, function);
  } catch (const std::exception& e) {
    r = fail(MeasureErrorKind::kCompileError, std::string("the default schedule cannot be built: ") + e.what());
  }
  if (r.error_kind != MeasureErrorKind::kNone)
    r.error_message = "reference of workload " + w.name + " (" + w.key + "): " + r.error_message;
  r.build_s = seconds_since(t0);
  return r;
}

std::unique_ptr<Builder> make_local_builder(const std::string& work_dir, int jobs) {
  return std::make_unique<LocalBuilder>(work_dir, jobs);
}

}  // namespace tessel::tuner
