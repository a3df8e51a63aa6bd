// WorkerChild: one `tessel-worker --stdio` child process driven request by request, restarted after a
// crash or a timeout. The one measurement path: the local runner (in the tuner) and the RPC worker
// server (`tessel-rpc-worker`, on the measured machine) both measure through it, so a candidate that
// crashes, hangs or exhausts memory kills only the child. Links no LLVM, SQLite or XGBoost.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "tessel/tuner/worker_protocol.h"

namespace tessel::tuner {

class Subprocess;

/** Knobs of a WorkerChild. */
struct WorkerChildParams {
  std::string worker_path;        // empty: find_sibling_binary("tessel-worker", "TESSEL_WORKER", build path)
  double startup_timeout_s = 10;  // a new child must answer a ping within this time
};

class WorkerChild {
 public:
  explicit WorkerChild(WorkerChildParams p);
  ~WorkerChild();  // asks the child to exit (then kills it)
  WorkerChild(const WorkerChild&) = delete;
  WorkerChild& operator=(const WorkerChild&) = delete;

  /** Measures one "measure" request (its id is replaced) in the child, started or restarted with the
   *  memory limit of req.options.memory_limit_mb. Waits run_timeout_s (+ once more when the child has
   *  not yet computed this workload's reference) + 2 s. Never throws; failures are responses:
   *  run_timeout (child killed), runtime_error (child died by a signal), out_of_memory (an unexpected
   *  SIGKILL), worker_lost (no child, protocol trouble). */
  WorkerResponse measure(WorkerRequest req);
  /** True when the running child holds the reference outputs of this workload key. */
  bool holds_reference(const std::string& key) const { return refs_.count(key) > 0; }
  /** The child's pid, or -1 when none runs. */
  int pid() const;

 private:
  std::string ensure_child(int64_t memory_limit_mb);
  WorkerResponse exchange(const WorkerRequest& req, double timeout_s, double run_timeout_s);
  WorkerResponse child_died();
  void drop_child();

  WorkerChildParams p_;
  std::unique_ptr<Subprocess> child_;
  int64_t limit_mb_ = -1;
  std::set<std::string> refs_;  // workload keys whose reference the running child holds
  int64_t next_id_ = 1;
};

/** A companion executable `name`: $env_var, else next to /proc/self/exe, else build_path; "" if none. */
std::string find_sibling_binary(const std::string& name, const char* env_var, const std::string& build_path);

/** A WorkerResponse with error_kind kind and message (helper for the error paths). */
WorkerResponse worker_error(const std::string& kind, std::string message);

}  // namespace tessel::tuner
