// tessel-worker: the measurement worker process. `tessel-worker --stdio` reads worker-protocol requests
// (one JSON object per line) on stdin and writes one response line per request on stdout. Started and
// restarted by the tuner's LocalRunner; see docs/measurement.md.
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include "measure_worker.h"
#include "tessel/support/version.h"

namespace {

const char* kUsage =
    "Usage: tessel-worker --stdio [--memory-limit-mb N]\n"
    "  --stdio              serve measurement requests on stdin/stdout (one JSON object per line)\n"
    "  --memory-limit-mb N  limit the address space of this process to N MiB (setrlimit RLIMIT_AS)\n"
    "  --version, --help\n"
    "Candidates are shared libraries run on the CPU, or PTX (\"artifact_kind\": \"ptx\") run on a CUDA\n"
    "device through libcuda.so.1 loaded at run time (docs/gpu.md).\n";

/** Exits when the parent (the tuner) goes away, even while a candidate loops forever. */
void watch_parent() {
  pid_t parent = getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (getppid() != parent) _exit(3);
    }
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  bool stdio = false;
  long long limit_mb = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--stdio") {
      stdio = true;
    } else if (a == "--memory-limit-mb" && i + 1 < argc) {
      char* end = nullptr;
      limit_mb = std::strtoll(argv[++i], &end, 10);
      if (!end || *end || limit_mb < 0) {
        std::cerr << "tessel-worker: --memory-limit-mb needs a non-negative integer, got '" << argv[i] << "'\n";
        return 2;
      }
    } else if (a == "--version") {
      std::cout << "tessel-worker " << tessel::version() << " (protocol " << tessel::tuner::kWorkerProtocolVersion
                << ")\n";
      return 0;
    } else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "tessel-worker: unknown argument '" << a << "'\n" << kUsage;
      return 2;
    }
  }
  if (!stdio) {
    std::cerr << kUsage;
    return 2;
  }
  int64_t limit_bytes = int64_t(limit_mb) << 20;
  if (limit_mb > 0) {
    // glibc reserves 64 MiB of address space per malloc arena (one per thread that allocates, up to
    // 8 x cores): with many pool threads that alone could exhaust RLIMIT_AS. A few arenas suffice here.
    mallopt(M_ARENA_MAX, 4);
    // Only the soft limit: the CUDA driver reserves far more address space than any CPU candidate may use
    // (it raises the soft limit back to the hard one before cuInit; see tuner/worker/cuda_driver.cpp).
    struct rlimit rl;
    getrlimit(RLIMIT_AS, &rl);
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? rlim_t(limit_bytes) : std::min(rl.rlim_max, rlim_t(limit_bytes));
    if (setrlimit(RLIMIT_AS, &rl) != 0)
      std::cerr << "tessel-worker: setrlimit(RLIMIT_AS, " << limit_mb << " MiB) failed: " << std::strerror(errno)
                << "\n";
  }
  watch_parent();
  tessel::tuner::install_fatal_signal_handlers(STDOUT_FILENO, limit_bytes);
  std::ios::sync_with_stdio(false);
  tessel::tuner::MeasureWorker worker;
  return tessel::tuner::run_stdio_worker(worker, std::cin, std::cout);
}
