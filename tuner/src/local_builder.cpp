// LocalBuilder: compiles candidates into shared libraries with LLVM in this process, `jobs` at a time.
//   build_candidate  trace -> Schedule(outputs).apply_all -> lower -> emit_shared_library; errors become kinds
//   build_reference  ops::default_schedule of the workload -> shared library (for a cuda target:
//                    ops::default_gpu_schedule -> PTX + launch description, run by the worker on the GPU)
//   LocalBuilder     a std::thread pool over the inputs (each LLVM compile uses its own LLVMContext and
//                    TargetMachine, see src/codegen/aot.cpp, so compiles run concurrently)
// Each candidate is built in its own `tessel-builder` process (found like the worker: TESSEL_BUILDER,
// next to the running executable, or in the build tree), killed when it exceeds build_timeout_s
// (kCompileTimeout). Without that binary the builds run in this process and a build over the limit can
// only be reported after it finished. See docs/measurement.md.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <thread>

#include "measure_internal.h"
#include "subprocess.h"
#include "worker_child.h"
#include "tessel/records/record.h"
#include "tessel/codegen/aot.h"
#include "tessel/codegen/cuda.h"
#include "tessel/codegen/target.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/runtime/thread_pool.h"
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

/** Writes the PTX kernel of f to path (PATH.ptx; the launch description beside it as PATH.json).
 *  kInvalidSchedule with validate_gpu_kernel's reason when the kernel breaks the GPU's rules (it is
 *  never launched), kCompileError when code generation fails. */
BuildResult compile_cuda(const ir::LoweredFunc& f, const codegen::Target& target, const std::string& path,
                         const std::string& function) {
  Status valid = codegen::validate_gpu_kernel(f);
  if (!valid) return fail(MeasureErrorKind::kInvalidSchedule, "invalid GPU schedule: " + valid.message());
  std::string stem = path.size() > 4 && path.ends_with(".ptx") ? path.substr(0, path.size() - 4) : path;
  try {
    codegen::write_cuda_kernel(codegen::build_cuda(f, target), stem);
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(stem + ".ptx", ec);
    std::filesystem::remove(stem + ".json", ec);
    return fail(MeasureErrorKind::kCompileError, e.what());
  }
  BuildResult r;
  r.artifact_path = stem + ".ptx";
  r.function_name = function;
  return r;
}

/** Lowers and emits s for target (a shared library, or PTX for a cuda target); kInvalidSchedule when
 *  lowering or the GPU checks refuse, kCompileError when codegen/link fails. */
BuildResult compile(const schedule::Schedule& s, const workload::Workload& w, const std::string& path,
                    const std::string& function, const codegen::Target& target) {
  ir::LoweredFunc f;
  try {
    f = lower::lower(s, w.args(), function);
  } catch (const UserError& e) {
    return fail(MeasureErrorKind::kInvalidSchedule, std::string("lowering failed: ") + e.what());
  } catch (const std::exception& e) {
    return fail(MeasureErrorKind::kInvalidSchedule, std::string("lowering failed (internal error): ") + e.what());
  }
  if (target.is_cuda()) return compile_cuda(f, target, path, function);
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

// The tessel-builder binary ($TESSEL_BUILDER, next to this executable, the build tree's), or "".
std::string find_builder() {
#ifndef TESSEL_BUILDER_BUILD_PATH
#define TESSEL_BUILDER_BUILD_PATH ""
#endif
  std::string p = find_sibling_binary("tessel-builder", "TESSEL_BUILDER", TESSEL_BUILDER_BUILD_PATH);
  return !p.empty() && access(p.c_str(), X_OK) == 0 ? p : "";
}

// Builds one candidate in a tessel-builder process with a hard time limit.
BuildResult build_in_process_of_its_own(const std::string& builder, const MeasureInput& in, const std::string& path,
                                        const std::string& target, double timeout_s) {
  std::string wpath = path + ".workload.json", tpath = path + ".trace.json";
  {
    std::ofstream(wpath) << workload::to_json(*in.workload).dump();
    std::ofstream(tpath) << schedule::trace_to_json(in.trace).dump();
  }
  auto cleanup = [&] {
    std::error_code ec;
    std::filesystem::remove(wpath, ec);
    std::filesystem::remove(tpath, ec);
  };
  std::unique_ptr<Subprocess> p;
  try {
    p = Subprocess::spawn({builder, "--workload", wpath, "--trace", tpath, "--out", path, "--function",
                           detail::kCandidateFunction, "--target", target});
  } catch (const std::exception& e) {
    cleanup();
    return fail(MeasureErrorKind::kCompileError, std::string("cannot start tessel-builder: ") + e.what());
  }
  std::string line;
  auto got = p->read_line(&line, timeout_s > 0 ? timeout_s : 1e9);
  if (got == Subprocess::Read::kTimeout) {
    p->kill_and_wait();
    cleanup();
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return fail(MeasureErrorKind::kCompileTimeout,
                "the build was stopped after the " + fmt(timeout_s) + " s limit");
  }
  int status = p->wait(5);
  cleanup();
  if (got == Subprocess::Read::kEof)
    return fail(MeasureErrorKind::kCompileError, "tessel-builder " + Subprocess::describe_status(status));
  try {
    auto j = nlohmann::json::parse(line);
    auto kind = records::error_kind_from_name(j.value("error_kind", std::string("compile_error")));
    BuildResult r;
    r.error_kind = kind ? *kind : MeasureErrorKind::kCompileError;
    r.error_message = j.value("message", std::string());
    if (r.error_kind == MeasureErrorKind::kNone) {
      r.artifact_path = path;
      r.function_name = detail::kCandidateFunction;
    }
    return r;
  } catch (const std::exception&) {
    return fail(MeasureErrorKind::kCompileError, "tessel-builder answered '" + line + "'");
  }
}

class LocalBuilder : public Builder {
 public:
  LocalBuilder(std::string work_dir, int jobs, const std::string& target)
      : work_dir_(std::move(work_dir)),
        jobs_(jobs),
        builder_(find_builder()),
        target_(target),
        ext_(codegen::Target::parse(target).is_cuda() ? ".ptx" : ".so") {
    if (jobs_ <= 0) jobs_ = runtime::usable_cpus();
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
                            ("cand_" + std::to_string(getpid()) + "_" + std::to_string(counter_.fetch_add(1)) + ext_))
                               .string();
        BuildResult r = !builder_.empty() && inputs[i].workload
                            ? build_in_process_of_its_own(builder_, inputs[i], path, target_, opt.build_timeout_s)
                            : build_candidate(inputs[i], path, detail::kCandidateFunction, target_);
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
  std::string builder_;  // tessel-builder, or "" (build in this process)
  std::string target_;   // "host" or a target string; a cuda target builds PTX
  std::string ext_;      // of the artifacts: ".so" or ".ptx"
  static inline std::atomic<uint64_t> counter_{0};  // unique names across builders of this process
};

}  // namespace

BuildResult build_candidate(const MeasureInput& input, const std::string& path, const std::string& function,
                            const std::string& target) {
  try {
    if (!input.workload) return fail(MeasureErrorKind::kInvalidSchedule, "the measure input has no workload");
    const workload::Workload& w = *input.workload;
    schedule::Schedule s(w.outputs);
    Status st = s.apply_all(input.trace);
    if (!st) return fail(MeasureErrorKind::kInvalidSchedule, st.message());
    return compile(s, w, path, function, codegen::Target::parse(target));
  } catch (const std::exception& e) {  // apply_all reports errors as Status; anything else is unexpected
    return fail(MeasureErrorKind::kInvalidSchedule, std::string("the trace cannot be applied: ") + e.what());
  }
}

BuildResult build_reference(const workload::Workload& w, const std::string& path, const std::string& function,
                            const std::string& target) {
  auto t0 = std::chrono::steady_clock::now();
  BuildResult r;
  try {
    ops::OpTensors t{w.inputs, w.outputs};
    codegen::Target tg = codegen::Target::parse(target);
    if (tg.is_cuda())  // a CPU reference of a large GPU workload takes longer than any run limit
      r = compile(ops::default_gpu_schedule(t), w, path, function, tg);
    else
      r = compile(ops::default_schedule(t), w, path, function, codegen::Target::host());
  } catch (const std::exception& e) {
    r = fail(MeasureErrorKind::kCompileError, std::string("the default schedule cannot be built: ") + e.what());
  }
  if (r.error_kind != MeasureErrorKind::kNone)
    r.error_message = "reference of workload " + w.name + " (" + w.key + "): " + r.error_message;
  r.build_s = seconds_since(t0);
  return r;
}

std::unique_ptr<Builder> make_local_builder(const std::string& work_dir, int jobs, const std::string& target) {
  return std::make_unique<LocalBuilder>(work_dir, jobs, target);
}

}  // namespace tessel::tuner
