// Gradient-based and round-robin task scheduling.
#include "tessel/tuner/task_scheduler.h"

#include <cmath>
#include <limits>

#include "tessel/support/error.h"

namespace tessel::tuner {

namespace {

class RoundRobin : public TaskScheduler {
 public:
  int next(const std::vector<TaskState>& t) override {
    for (size_t k = 0; k < t.size(); ++k) {
      size_t i = (cursor_ + k) % t.size();
      if (!t[i].done) {
        cursor_ = i + 1;
        return int(i);
      }
    }
    return -1;
  }

 private:
  size_t cursor_ = 0;
};

// Ansor's estimate of d(weighted latency)/d(trials): a backward difference of the task's best latency
// over its last batch, blended with an optimistic forward guess (-latency / trials).
class Gradient : public TaskScheduler {
 public:
  int next(const std::vector<TaskState>& t) override {
    for (size_t i = 0; i < t.size(); ++i)  // warm-up: every task measured at least once
      if (!t[i].done && (t[i].history.empty() || t[i].best_latency_s <= 0)) return int(i);
    int best = -1;
    double best_g = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].done) continue;
      const auto& h = t[i].history;
      double l = t[i].best_latency_s;
      double backward = 0;
      if (h.size() >= 2) {
        auto [t0, l0] = h[h.size() - 2];
        auto [t1, l1] = h.back();
        if (t1 > t0 && l0 > 0 && l1 > 0) backward = (l1 - l0) / double(t1 - t0);
      }
      double forward = -l / double(std::max<int64_t>(1, t[i].trials));
      double g = t[i].weight * (kAlpha * backward + (1 - kAlpha) * forward);
      if (g < best_g) {
        best_g = g;
        best = int(i);
      }
    }
    return best;
  }

 private:
  static constexpr double kAlpha = 0.2;
};

}  // namespace

std::unique_ptr<TaskScheduler> make_task_scheduler(const std::string& name) {
  if (name == "gradient") return std::make_unique<Gradient>();
  if (name == "round-robin") return std::make_unique<RoundRobin>();
  TESSEL_CHECK(false) << "unknown task scheduler '" << name << "' (expected gradient or round-robin)";
  return nullptr;
}

}  // namespace tessel::tuner
