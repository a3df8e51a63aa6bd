// Timing a function: warm-up runs, then repeats until both a minimum count and a minimum total time
// are reached; reports the median, minimum and coefficient of variation (what tessel's measurements
// and benchmarks record).
#pragma once
#include <functional>

namespace tessel::runtime {

struct TimingOptions {
  int warmup = 1;            // untimed runs first
  int min_repeats = 5;       // at least this many timed runs
  double min_total_s = 0.2;  // and at least this much timed time in total
  int max_repeats = 1000;
};

struct TimingResult {
  double median_s = 0;
  double min_s = 0;
  double cv = 0;  // standard deviation / mean of the timed runs
  int repeats = 0;
};

/** Times f as described above (steady clock). */
TimingResult time_function(const std::function<void()>& f, const TimingOptions& opt = {});

}  // namespace tessel::runtime
