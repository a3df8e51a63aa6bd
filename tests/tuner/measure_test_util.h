// Shared by the measurement tests (local runner, RPC runner): the 64^3 matmul workload, quick
// measurement options and the hand-made kernels of bad_kernels.c as "built" candidates.
#pragma once
#include <memory>
#include <string>

#include "tessel/tuner/measure.h"

namespace measuretest {

inline std::shared_ptr<const tessel::workload::Workload> matmul64() {
  static auto w =
      std::make_shared<const tessel::workload::Workload>(tessel::workload::from_spec("matmul:M=64,N=64,K=64"));
  return w;
}

/** Few repeats, no minimum time, 2 s run timeout, 1 GiB memory limit. */
inline tessel::tuner::MeasureOptions quick_options(int threads = 2) {
  tessel::tuner::MeasureOptions o;
  o.min_repeats = 3;
  o.min_time_s = 0;
  o.run_timeout_s = 2;
  o.memory_limit_mb = 1024;
  o.threads = threads;
  return o;
}

/** A "built" candidate that is one of the hand-made kernels (the runner calls NAME_packed). */
inline tessel::tuner::BuildResult bad_kernel(const std::string& name) {
  tessel::tuner::BuildResult b;
  b.artifact_path = TESSEL_BAD_KERNELS;
  b.function_name = name;
  return b;
}

}  // namespace measuretest
