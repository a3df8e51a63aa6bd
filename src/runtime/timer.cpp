#include "tessel/runtime/timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace tessel::runtime {

TimingResult time_function(const std::function<void()>& f, const TimingOptions& opt) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < opt.warmup; ++i) f();
  std::vector<double> ts;
  double total = 0;
  while (int(ts.size()) < opt.max_repeats && (int(ts.size()) < opt.min_repeats || total < opt.min_total_s)) {
    auto t0 = clock::now();
    f();
    double t = std::chrono::duration<double>(clock::now() - t0).count();
    ts.push_back(t);
    total += t;
  }
  TimingResult r;
  r.repeats = int(ts.size());
  double mean = total / ts.size(), var = 0;
  for (double t : ts) var += (t - mean) * (t - mean);
  r.cv = ts.size() > 1 && mean > 0 ? std::sqrt(var / (ts.size() - 1)) / mean : 0;
  std::sort(ts.begin(), ts.end());
  r.min_s = ts.front();
  r.median_s = ts.size() % 2 ? ts[ts.size() / 2] : 0.5 * (ts[ts.size() / 2 - 1] + ts[ts.size() / 2]);
  return r;
}

}  // namespace tessel::runtime
