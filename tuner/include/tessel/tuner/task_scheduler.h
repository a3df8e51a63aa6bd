// Task scheduler: which task of a weighted list (a network) gets the next batch of trials.
// "gradient" (after Ansor): after one warm-up round, the task whose estimated weighted-latency decrease
// per trial is largest; "round-robin": in turn. Tasks that stopped improving (early stopping) or whose
// space is exhausted are skipped.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace tessel::tuner {

struct TaskState {
  double weight = 1;
  int64_t trials = 0;        // measured (incl. resumed from the database)
  double best_latency_s = 0; // 0 = nothing valid yet
  std::vector<std::pair<int64_t, double>> history;  // (trials, best latency) after each batch
  bool done = false;         // exhausted or stopped early
};

class TaskScheduler {
 public:
  virtual ~TaskScheduler() = default;
  /** Index of the next task, or -1 when every task is done. */
  virtual int next(const std::vector<TaskState>& tasks) = 0;
};

/** "gradient" or "round-robin" (UserError listing both otherwise). */
std::unique_ptr<TaskScheduler> make_task_scheduler(const std::string& name);

}  // namespace tessel::tuner
