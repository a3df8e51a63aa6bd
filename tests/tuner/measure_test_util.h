// Shared by the measurement tests (local runner, RPC runner): the 64^3 matmul workload, quick
// measurement options and the hand-made kernels of bad_kernels.c as "built" candidates.
#pragma once
#include <memory>
#include <string>
#include <vector>

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

/** A local runner in work_dir that keeps artifacts (the hand-made kernels share one library). */
inline std::unique_ptr<tessel::tuner::Runner> bad_kernel_runner(const std::string& work_dir) {
  tessel::tuner::LocalRunnerParams p;
  p.work_dir = work_dir;
  p.keep_artifacts = true;
  return tessel::tuner::make_local_runner(p);
}

/** One candidate of matmul64() per named hand-made kernel: its inputs and "builds". */
inline void add_bad_kernels(const std::vector<std::string>& kernels, std::vector<tessel::tuner::MeasureInput>& inputs,
                            std::vector<tessel::tuner::BuildResult>& builds) {
  for (auto& k : kernels) {
    inputs.push_back({matmul64(), {}});
    builds.push_back(bad_kernel(k));
  }
}

}  // namespace measuretest
