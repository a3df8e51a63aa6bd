// The measurement worker: what `tessel-worker --stdio` (and later a remote worker) runs. It loads
// candidate shared libraries (or PTX kernels on a CUDA device, gpu_measure.h), times them and checks
// their outputs against a reference; see worker_protocol.h for the messages and docs/measurement.md for the method. Links tessel_runtime,
// tessel_support, nlohmann_json and libdl only (no LLVM, no SQLite).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <list>
#include <memory>
#include <string>

#include "tessel/tuner/worker_protocol.h"

namespace tessel::tuner {

/** Handles requests one at a time; keeps the reference outputs of recent workloads. */
class MeasureWorker {
 public:
  struct Params {
    size_t reference_cache_entries = 4;  // workloads whose inputs + reference outputs are kept
  };
  MeasureWorker();
  explicit MeasureWorker(Params p);
  ~MeasureWorker();
  MeasureWorker(const MeasureWorker&) = delete;
  MeasureWorker& operator=(const MeasureWorker&) = delete;

  /** Parses and handles one request line. Never throws: a malformed line gives a protocol-error
   *  response (error_kind "worker_lost", protocol_error true). */
  WorkerResponse handle_line(const std::string& line);
  /** Handles a parsed request. Never throws. */
  WorkerResponse handle(const WorkerRequest& r);
  /** True after an "exit" request. */
  bool exit_requested() const { return exit_requested_; }

 private:
  struct Reference;
  WorkerResponse measure(const WorkerRequest& r);
  const Reference& reference(const WorkerRequest& r, uint64_t seed, double timeout_s);

  Params params_;
  std::list<std::unique_ptr<Reference>> refs_;  // most recently used first
  int threads_ = -1;                            // last thread count set (-1: never set)
  bool exit_requested_ = false;
};

/** Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT that, while a request is being
 *  measured, write a fatal response line (runtime_error, or out_of_memory when the faulting thread's
 *  errno is ENOMEM or the address space is within 1/8 of memory_limit_bytes) to fd, then let the
 *  signal kill the process. memory_limit_bytes 0 = no limit known. */
void install_fatal_signal_handlers(int fd, int64_t memory_limit_bytes);

/** Reads request lines from in and writes one response line per request to out (flushed), until
 *  EOF or an "exit" request. Returns the process exit code (0). After a fatal response (a GPU context
 *  that a kernel broke or that still runs a kernel) the process exits at once with code 4. */
int run_stdio_worker(MeasureWorker& worker, std::istream& in, std::ostream& out);

}  // namespace tessel::tuner
