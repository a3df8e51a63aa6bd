// LocalRunner: measures built candidates in a child `tessel-worker --stdio` process.
//   LocalRunner::run          per candidate: pass build errors through, build the reference once per
//                             workload, send a measure request, wait for the answer with a timeout
//                             (a .ptx candidate goes with artifact_kind "ptx": run on the CUDA device)
//   LocalRunner::ensure_worker  (re)start the worker (memory limit from the options) and ping it
//   LocalRunner::exchange     one request/response; timeout -> SIGKILL + restart (kRunTimeout); EOF ->
//                             waitpid: a signal is kRuntimeError, an unexpected SIGKILL kOutOfMemory
//   find_worker               $TESSEL_WORKER, next to /proc/self/exe, the build tree's tessel-worker
// See docs/measurement.md for the protocol, the timeouts and the error kinds.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "measure_internal.h"
#include "subprocess.h"
#include "tessel/support/error.h"
#include "tessel/support/log.h"

#ifndef TESSEL_WORKER_BUILD_PATH
#define TESSEL_WORKER_BUILD_PATH ""
#endif

namespace tessel::tuner {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string fmt(double v) {
  std::ostringstream os;
  os << std::setprecision(3) << v;
  return os.str();
}

bool is_executable(const std::string& p) {
  return !p.empty() && access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p);
}

/** The worker binary: explicit path, $TESSEL_WORKER, next to this executable, the build tree's. */
std::string find_worker(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("TESSEL_WORKER"); env && *env) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string next = (self.parent_path() / "tessel-worker").string();
    if (is_executable(next)) return next;
  }
  if (is_executable(TESSEL_WORKER_BUILD_PATH)) return TESSEL_WORKER_BUILD_PATH;
  return "";
}

MeasureResult error_result(MeasureErrorKind k, std::string msg) {
  MeasureResult r;
  r.error_kind = k;
  r.error_message = std::move(msg);
  return r;
}

class LocalRunner : public Runner {
 public:
  explicit LocalRunner(LocalRunnerParams p) : p_(std::move(p)) {}

  ~LocalRunner() override {
    stop_worker();
    std::error_code ec;
    for (auto& [key, b] : refs_)
      if (!b.artifact_path.empty()) fs::remove(b.artifact_path, ec);
  }

  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds,
                                 const MeasureOptions& opt, double best_so_far_s) override {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<MeasureResult> out;
    out.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto t0 = Clock::now();
      MeasureResult r;
      if (i >= builds.size()) {
        r = error_result(MeasureErrorKind::kWorkerLost, "no build result for this candidate");
      } else {
        const BuildResult& b = builds[i];
        if (b.error_kind != MeasureErrorKind::kNone) {
          r = error_result(b.error_kind, b.error_message);
        } else {
          try {
            r = measure_one(inputs[i], b, opt, best_so_far_s);
          } catch (const std::exception& e) {  // nothing may escape the runner
            r = error_result(MeasureErrorKind::kWorkerLost, std::string("runner error: ") + e.what());
          }
          r.run_s = std::chrono::duration<double>(Clock::now() - t0).count();
          if (!p_.keep_artifacts && !b.artifact_path.empty()) {
            std::error_code ec;
            fs::remove(b.artifact_path, ec);
            if (fs::path(b.artifact_path).extension() == ".ptx")  // and the launch description beside it
              fs::remove(fs::path(b.artifact_path).replace_extension(".json"), ec);
          }
        }
        r.build_s = b.build_s;
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  MeasureResult measure_one(const MeasureInput& in, const BuildResult& b, const MeasureOptions& opt, double best) {
    if (!in.workload) return error_result(MeasureErrorKind::kWorkerLost, "the measure input has no workload");
    const workload::Workload& w = *in.workload;
    const BuildResult& ref = reference(w);
    if (ref.error_kind != MeasureErrorKind::kNone)
      return error_result(MeasureErrorKind::kWorkerLost, ref.error_message);
    if (std::string err = ensure_worker(opt); !err.empty()) return error_result(MeasureErrorKind::kWorkerLost, err);

    WorkerRequest req;
    req.id = next_id_++;
    req.op = "measure";
    req.artifact = b.artifact_path;
    req.function = b.function_name.empty() ? detail::kCandidateFunction : b.function_name;
    const std::string ptx = ".ptx";
    if (b.artifact_path.size() > ptx.size() &&
        b.artifact_path.compare(b.artifact_path.size() - ptx.size(), ptx.size(), ptx) == 0) {
      req.artifact_kind = "ptx";  // a GPU build: PTX + PATH.json; the worker runs it on the CUDA device
    } else {
      req.function += "_packed";
    }
    req.ref_artifact = ref.artifact_path;
    req.ref_function = ref.function_name + "_packed";
    req.ref_key = w.key;
    req.args = detail::worker_args(w);
    req.options = opt.to_json();
    req.best_so_far_s = best;
    // The timing loop stops by itself at half the run timeout; a first request of a workload also
    // computes the reference; 2 s cover start-up, loading and input generation.
    double timeout = opt.run_timeout_s + (worker_refs_.count(w.key) ? 0 : opt.run_timeout_s) + 2;
    MeasureResult r = exchange(req, timeout, opt.run_timeout_s);
    if (r.error_kind == MeasureErrorKind::kNone || r.error_kind == MeasureErrorKind::kWrongAnswer ||
        r.error_kind == MeasureErrorKind::kEarlyAborted)
      worker_refs_.insert(w.key);
    return r;
  }

  /** Sends req and waits for its response; handles timeouts and worker deaths. */
  MeasureResult exchange(const WorkerRequest& req, double timeout_s, double run_timeout_s) {
    if (!worker_->write_line(req.to_json().dump())) {
      // The worker died between requests (e.g. killed from outside): restart once and retry.
      TESSEL_LOG(1) << "tessel-worker " << worker_->pid() << " is gone; restarting it\n";
      drop_worker();
      if (std::string err = ensure_worker(last_opt_); !err.empty())
        return error_result(MeasureErrorKind::kWorkerLost, err);
      if (!worker_->write_line(req.to_json().dump()))
        return error_result(MeasureErrorKind::kWorkerLost, "cannot send the request to tessel-worker");
    }
    auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      std::string line;
      Subprocess::Read st = left > 0 ? worker_->read_line(&line, left) : Subprocess::Read::kTimeout;
      if (st == Subprocess::Read::kTimeout) {
        drop_worker();  // SIGKILL + reap
        return error_result(MeasureErrorKind::kRunTimeout, "no result within " + fmt(timeout_s) + " s (run_timeout_s " +
                                                               fmt(run_timeout_s) +
                                                               "); the worker was killed and will be restarted");
      }
      if (st == Subprocess::Read::kEof) return worker_died();
      WorkerResponse resp;
      try {
        resp = WorkerResponse::from_json(nlohmann::json::parse(line));
      } catch (const std::exception& e) {
        TESSEL_LOG(1) << "tessel-worker wrote a line that is not a response (ignored): " << line.substr(0, 200) << "\n";
        continue;
      }
      if (resp.id != req.id && !resp.protocol_error) continue;  // a stale answer
      if (resp.fatal) {                                         // the worker reported its own crash and is dying
        worker_->wait(5);
        drop_worker();
      }
      auto kind = records::error_kind_from_name(resp.error_kind);
      MeasureResult r;
      r.error_kind = kind ? *kind : MeasureErrorKind::kWorkerLost;
      r.error_message = kind ? resp.message : "unknown error kind '" + resp.error_kind + "': " + resp.message;
      r.run_times_s = std::move(resp.times);
      if (r.error_kind == MeasureErrorKind::kNone && r.run_times_s.empty())
        return error_result(MeasureErrorKind::kWorkerLost, "tessel-worker returned no run times");
      if (r.error_kind != MeasureErrorKind::kNone && r.error_kind != MeasureErrorKind::kEarlyAborted)
        r.run_times_s.clear();
      return r;
    }
  }

  /** The worker closed its end while measuring: reap it and say why it died. */
  MeasureResult worker_died() {
    int status = worker_->wait(5);
    drop_worker();
    if (WIFSIGNALED(status)) {
      int sig = WTERMSIG(status);
      if (sig == SIGKILL)  // the tuner kills only on timeouts, which are handled before
        return error_result(MeasureErrorKind::kOutOfMemory,
                            "worker was killed by SIGKILL (not sent by the tuner) while running the candidate; "
                            "most likely the kernel's out-of-memory killer");
      return error_result(MeasureErrorKind::kRuntimeError, "worker died with signal " + std::to_string(sig) + " (" +
                                                               signal_name(sig) + ") while running the candidate");
    }
    return error_result(MeasureErrorKind::kWorkerLost,
                        "worker " + Subprocess::describe_status(status) + " while running the candidate");
  }

  /** Starts the worker when none runs or its memory limit differs. Returns an error message or "". */
  std::string ensure_worker(const MeasureOptions& opt) {
    last_opt_ = opt;
    if (worker_ && worker_->running() && worker_limit_mb_ == opt.memory_limit_mb) return "";
    if (worker_) stop_worker();
    std::string path = find_worker(p_.worker_path);
    if (path.empty())
      return "cannot find tessel-worker (set TESSEL_WORKER, or install it next to " +
             fs::read_symlink("/proc/self/exe").string() + ")";
    std::vector<std::string> argv = {path, "--stdio"};
    if (opt.memory_limit_mb > 0) {
      argv.push_back("--memory-limit-mb");
      argv.push_back(std::to_string(opt.memory_limit_mb));
    }
    try {
      worker_ = Subprocess::spawn(argv);
    } catch (const std::exception& e) {
      return e.what();
    }
    worker_limit_mb_ = opt.memory_limit_mb;
    worker_refs_.clear();
    WorkerRequest ping;
    ping.id = next_id_++;
    ping.op = "ping";
    std::string line;
    bool ok = worker_->write_line(ping.to_json().dump()) &&
              worker_->read_line(&line, p_.startup_timeout_s) == Subprocess::Read::kLine;
    if (ok) {
      try {
        ok = WorkerResponse::from_json(nlohmann::json::parse(line)).error_kind == "none";
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok) {
      int status = worker_->kill_and_wait();
      worker_.reset();
      return "tessel-worker '" + path + "' did not answer a ping within " + fmt(p_.startup_timeout_s) + " s (" +
             Subprocess::describe_status(status) + (line.empty() ? "" : "; it said: " + line) + ")";
    }
    TESSEL_LOG(1) << "started tessel-worker " << worker_->pid() << " (" << path << ")\n";
    return "";
  }

  /** Forgets the worker (killing it if it still runs) and what it had cached. */
  void drop_worker() {
    worker_.reset();
    worker_refs_.clear();
  }

  void stop_worker() {
    if (!worker_) return;
    WorkerRequest bye;
    bye.id = next_id_++;
    bye.op = "exit";
    if (worker_->running() && worker_->write_line(bye.to_json().dump())) worker_->wait(1);
    drop_worker();
  }

  /** The reference build of a workload (built once per runner, cached by key). */
  const BuildResult& reference(const workload::Workload& w) {
    auto it = refs_.find(w.key);
    if (it != refs_.end()) return it->second;
    std::error_code ec;
    fs::create_directories(p_.work_dir, ec);
    std::string path =
        (fs::path(p_.work_dir) / ("ref_" + detail::safe_key(w.key) + "_" + std::to_string(getpid()) + ".so")).string();
    BuildResult r = build_reference(w, path, detail::kReferenceFunction);
    return refs_.emplace(w.key, std::move(r)).first->second;
  }

  LocalRunnerParams p_;
  std::mutex mu_;
  std::unique_ptr<Subprocess> worker_;
  int64_t worker_limit_mb_ = -1;
  MeasureOptions last_opt_;
  std::set<std::string> worker_refs_;        // workload keys whose reference the running worker holds
  std::map<std::string, BuildResult> refs_;  // workload key -> reference build
  int64_t next_id_ = 1;
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
