// The tuner's RPC runner: measures built candidates on remote workers (leased from a tracker by device
// key, or named directly), all workers in parallel, retrying a lost worker's candidates elsewhere.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "tessel/rpc/rpc.h"
#include "tessel/tuner/measure.h"

namespace tessel::rpc {

/** Counters of an RPC runner (shared with the caller; updated while it runs). */
struct RpcRunnerStats {
  std::atomic<int64_t> measured{0};      // measurements answered by a worker (rechecks included)
  std::atomic<int64_t> rechecks{0};      // of those, recheck passes over near-best candidates
  std::atomic<int64_t> retried{0};       // candidates sent again because their worker was lost
  std::atomic<int64_t> workers_lost{0};  // workers given up on (unreachable, timed out)
};

/** Knobs of the RPC runner. */
struct RpcRunnerParams {
  std::string tracker;               // HOST:PORT of the tracker (or give workers)
  std::string key = "default";       // device key of the workers to lease
  std::vector<std::string> workers;  // HOST:PORT of workers used directly, without a tracker
  Security security;
  std::string work_dir;             // references are built here
  std::string target = "host";      // of the candidates; a cuda target gets a PTX reference
  int priority = 0;                 // of the lease requests (higher first)
  int max_workers = 0;              // workers leased at once (0 = all free ones)
  int max_attempts = 3;             // sends of a candidate before it is recorded as worker_lost
  double wait_for_workers_s = 300;  // give up (worker_lost) when no worker could be had this long
  double call_slack_s = 15;         // a call waits 2 x run_timeout_s + this before its worker counts as lost
  bool keep_artifacts = false;      // false: delete each candidate's .so once it was measured
  int64_t max_message_mb = kDefaultMaxMessageMb;
  std::shared_ptr<RpcRunnerStats> stats;  // optional
};

/** A Runner measuring on remote workers; results come back in input order, and each to the runner's
 *  result callback (Runner::set_result_callback) as it is final: at once, or, for a candidate near the
 *  best, after its rechecks (MeasureOptions::recheck_*, as the local runner). Never throws from run(). */
std::unique_ptr<tuner::Runner> make_rpc_runner(const RpcRunnerParams& p);

}  // namespace tessel::rpc
