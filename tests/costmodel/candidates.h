// Test helpers: random valid candidates of a workload (from the default rule space) and their measured
// throughput (JIT-compiled in this process, timed on one thread).
#pragma once
#include <memory>
#include <vector>

#include "tessel/schedule/step.h"
#include "tessel/workload/workload.h"

namespace tessel::costmodel::testing {

struct TestCandidate {
  std::vector<schedule::Step> trace;
  double gflops = 0;  // measured (0 until measure_all)
};

/** n distinct valid candidates drawn with random knob values (seeded), from the default CPU rule space or,
 *  with gpu, the GPU rule space (tuner::make_gpu_rule_space). */
std::vector<TestCandidate> random_candidates(std::shared_ptr<const workload::Workload> w, int n, uint64_t seed,
                                             bool gpu = false);

/** Fills gflops of each candidate: lower, JIT, median of a few runs on one thread. */
void measure_all(const workload::Workload& w, std::vector<TestCandidate>& c);

/** Share of pairs (a, b) with |throughput difference| > min_rel_diff * max(a, b) whose scores are ordered
 *  like the throughputs. */
double pairwise_accuracy(const std::vector<double>& score, const std::vector<double>& truth, double min_rel_diff);

}  // namespace tessel::costmodel::testing
