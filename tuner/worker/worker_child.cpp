// WorkerChild: drives a `tessel-worker --stdio` child (moved here from LocalRunner so that the RPC
// worker server measures the same way).
//   WorkerChild::measure       start the child if needed, send the request, wait with a timeout
//   WorkerChild::exchange      one request/response; timeout -> SIGKILL + restart (run_timeout); EOF ->
//                              waitpid: a signal is runtime_error, an unexpected SIGKILL out_of_memory
//   WorkerChild::ensure_child  (re)start the child with a memory limit and ping it
//   find_sibling_binary        $ENV, next to /proc/self/exe, the build tree's copy
#include "worker_child.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "subprocess.h"
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
  std::error_code ec;
  return !p.empty() && access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p, ec);
}

}  // namespace

std::string find_sibling_binary(const std::string& name, const char* env_var, const std::string& build_path) {
  if (const char* env = env_var ? std::getenv(env_var) : nullptr; env && *env) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string next = (self.parent_path() / name).string();
    if (is_executable(next)) return next;
  }
  if (is_executable(build_path)) return build_path;
  return "";
}

WorkerResponse worker_error(const std::string& kind, std::string message) {
  WorkerResponse r;
  r.error_kind = kind;
  r.message = std::move(message);
  return r;
}

WorkerChild::WorkerChild(WorkerChildParams p) : p_(std::move(p)) {}

WorkerChild::~WorkerChild() {
  if (!child_) return;
  WorkerRequest bye;
  bye.id = next_id_++;
  bye.op = "exit";
  if (child_->running() && child_->write_line(bye.to_json().dump())) child_->wait(1);
  drop_child();
}

int WorkerChild::pid() const { return child_ ? int(child_->pid()) : -1; }

WorkerResponse WorkerChild::measure(WorkerRequest req) {
  try {
    WorkerTiming t = WorkerTiming::from_json(req.options);
    int64_t limit_mb = 0;
    if (auto it = req.options.find("memory_limit_mb"); it != req.options.end() && it->is_number_integer())
      limit_mb = it->get<int64_t>();
    if (std::string err = ensure_child(limit_mb); !err.empty()) return worker_error("worker_lost", err);
    req.id = next_id_++;
    // The timing loop stops by itself at half the run timeout; a first request of a workload also
    // computes the reference; 2 s cover start-up, loading and input generation.
    double timeout = t.run_timeout_s + (refs_.count(req.ref_key) ? 0 : t.run_timeout_s) + 2;
    WorkerResponse r = exchange(req, timeout, t.run_timeout_s);
    if (r.error_kind == "none" || r.error_kind == "wrong_answer" || r.error_kind == "early_aborted")
      refs_.insert(req.ref_key);
    return r;
  } catch (const std::exception& e) {  // nothing may escape
    return worker_error("worker_lost", std::string("worker child: ") + e.what());
  }
}

WorkerResponse WorkerChild::exchange(const WorkerRequest& req, double timeout_s, double run_timeout_s) {
  int64_t limit_mb = limit_mb_;
  if (!child_->write_line(req.to_json().dump())) {
    // The child died between requests (e.g. killed from outside): restart once and retry.
    TESSEL_LOG(1) << "tessel-worker " << child_->pid() << " is gone; restarting it\n";
    drop_child();
    if (std::string err = ensure_child(limit_mb); !err.empty()) return worker_error("worker_lost", err);
    if (!child_->write_line(req.to_json().dump()))
      return worker_error("worker_lost", "cannot send the request to tessel-worker");
  }
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    std::string line;
    Subprocess::Read st = left > 0 ? child_->read_line(&line, left) : Subprocess::Read::kTimeout;
    if (st == Subprocess::Read::kTimeout) {
      drop_child();  // SIGKILL + reap
      return worker_error("run_timeout", "no result within " + fmt(timeout_s) + " s (run_timeout_s " +
                                             fmt(run_timeout_s) + "); the worker was killed and will be restarted");
    }
    if (st == Subprocess::Read::kEof) return child_died();
    WorkerResponse resp;
    try {
      resp = WorkerResponse::from_json(nlohmann::json::parse(line));
    } catch (const std::exception& e) {
      TESSEL_LOG(1) << "tessel-worker wrote a line that is not a response (ignored): " << line.substr(0, 200) << "\n";
      continue;
    }
    if (resp.id != req.id && !resp.protocol_error) continue;  // a stale answer
    if (resp.fatal) {                                         // the child reported its own crash and is dying
      child_->wait(5);
      drop_child();
    }
    return resp;
  }
}

WorkerResponse WorkerChild::child_died() {
  int status = child_->wait(5);
  drop_child();
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGKILL)  // we kill only on timeouts, which are handled before
      return worker_error("out_of_memory",
                          "worker was killed by SIGKILL (not sent by the tuner) while running the candidate; "
                          "most likely the kernel's out-of-memory killer");
    return worker_error("runtime_error", "worker died with signal " + std::to_string(sig) + " (" + signal_name(sig) +
                                             ") while running the candidate");
  }
  return worker_error("worker_lost", "worker " + Subprocess::describe_status(status) + " while running the candidate");
}

std::string WorkerChild::ensure_child(int64_t memory_limit_mb) {
  if (child_ && child_->running() && limit_mb_ == memory_limit_mb) return "";
  if (child_) drop_child();
  std::string path = p_.worker_path.empty()
                         ? find_sibling_binary("tessel-worker", "TESSEL_WORKER", TESSEL_WORKER_BUILD_PATH)
                         : p_.worker_path;
  if (path.empty()) {
    std::error_code ec;
    return "cannot find tessel-worker (set TESSEL_WORKER, or install it next to " +
           fs::read_symlink("/proc/self/exe", ec).string() + ")";
  }
  std::vector<std::string> argv = {path, "--stdio"};
  if (memory_limit_mb > 0) {
    argv.push_back("--memory-limit-mb");
    argv.push_back(std::to_string(memory_limit_mb));
  }
  try {
    child_ = Subprocess::spawn(argv);
  } catch (const std::exception& e) {
    return e.what();
  }
  limit_mb_ = memory_limit_mb;
  refs_.clear();
  WorkerRequest ping;
  ping.id = next_id_++;
  ping.op = "ping";
  std::string line;
  bool ok = child_->write_line(ping.to_json().dump()) &&
            child_->read_line(&line, p_.startup_timeout_s) == Subprocess::Read::kLine;
  if (ok) {
    try {
      ok = WorkerResponse::from_json(nlohmann::json::parse(line)).error_kind == "none";
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok) {
    int status = child_->kill_and_wait();
    child_.reset();
    return "tessel-worker '" + path + "' did not answer a ping within " + fmt(p_.startup_timeout_s) + " s (" +
           Subprocess::describe_status(status) + (line.empty() ? "" : "; it said: " + line) + ")";
  }
  TESSEL_LOG(1) << "started tessel-worker " << child_->pid() << " (" << path << ")\n";
  return "";
}

void WorkerChild::drop_child() {
  child_.reset();
  refs_.clear();
}

}  // namespace tessel::tuner
