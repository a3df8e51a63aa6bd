// The tuning loop: for a weighted list of workloads (tasks), repeatedly pick a task (TaskScheduler),
// propose candidates (SearchStrategy over the task's SearchSpace, guided by a CostModel), build and run
// them (Builder, Runner), store every result in the database, and learn. Resumes exactly from the
// database: recorded (workload, target, trace) triples are never measured again, count toward the budget
// and seed the search and the model.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessel/records/database.h"
#include "tessel/tuner/measure.h"
#include "tessel/tuner/search_strategy.h"

namespace tessel::tuner {

struct TuneTask {
  std::shared_ptr<const workload::Workload> workload;
  double weight = 1;  // occurrences in the network
  std::string name;   // for display (defaults to the workload spec)
};

struct TuneSummary;

struct TuneOptions {
  std::vector<TuneTask> tasks;
  int64_t trials = 200;           // measured candidates over all tasks (resumed records count)
  double time_budget_s = 0;       // wall-clock limit (0 = none)
  std::string db_path = "tessel.db";
  std::string target = "host";
  std::string strategy = "evolutionary";
  // A model name ("random", "xgb", "xgb-rank", "mlp", "pretrained"), a saved model file to start from, or
  // "auto": the shipped pretrained model on x86-64 CPU targets (when found), else "xgb".
  std::string cost_model = "auto";
  // The refine stage (SearchStrategy::set_refine_model): a model that reads the compiled code re-ranks the
  // shortlist the cost model chose. "none"; "analytic" (the roofline of the compiled hot loop, no data);
  // "cold" (an xgb-rank with code features learning from this run how it differs from "analytic", which
  // it starts from); "pretrained" (the shipped cpu-x86_64.code.model); a saved model file; or "auto": none when the
  // cost model is random or the target is not an x86-64 CPU, the shipped one when the cost model is a
  // pretrained file and it is found, else cold.
  std::string refine_model = "auto";
  // A pretrained cost or refine model is checked online against the cold one the run would use without it, and
  // the run switches to the cold one when that orders the measured batches clearly better
  // (LearnedModel::set_fallback; docs/costmodel.md). false: trust the pretrained models throughout.
  bool check_pretrained = true;
  nlohmann::json model_params = nlohmann::json::object();  // cost-model parameters (docs/costmodel.md), e.g.
                                                           // {"min_samples": 16}; seed and nthread set by tune
  bool transfer = false;              // also learn from the database's records of other workloads (same target)
  int transfer_seeds = 4;             // with transfer: each other workload's best k, mapped into this space,
                                      // are proposed first (tuner::map_knobs); 0 = learn only
  // Other sources to transfer from as `transfer` does from the run's database (records of every target):
  // a tuning database or a JSON-lines export (learned from, and their best transfer_seeds per workload
  // proposed); "pretrained": the shipped best records of the workloads the shipped models were trained
  // on (costmodel::pretrained_records_path; proposed only: those models learned them); "auto": that
  // when the cost model is the shipped pretrained one and the file is found; "none". When more are
  // proposed than a batch holds, the best by the model make the first batch and the rest join the
  // evolutionary search's population.
  std::vector<std::string> transfer_from = {"auto"};
  std::string scheduler = "gradient";
  uint64_t seed = 1;
  int jobs = 0;                   // build threads (0 = hardware concurrency)
  int batch_size = 16;            // candidates per round
  int early_stopping = 0;         // a task stops after this many trials without improvement (0 = never)
  int remeasure_top = 3;          // at the end, re-measure each task's best k side by side
  MeasureOptions measure;
  StrategyParams strategy_params;
  std::string work_dir;           // artifacts; empty = a fresh temp dir
  std::string measure_lock;       // the local runner measures under an exclusive lock on this file
                                  // (LocalRunnerParams::measure_lock); empty = none
  // Test and extension hooks (the defaults are the local builder and runner):
  std::function<std::unique_ptr<Builder>(const std::string& work_dir, int jobs)> make_builder;
  std::function<std::unique_ptr<Runner>(const std::string& work_dir)> make_runner;
  // Checked after every batch; true ends the run there, as the trial budget would (the search-efficiency
  // benchmark stops a run once it reaches its mark). Empty = never.
  std::function<bool(const TuneSummary& now)> stop_when;
};

/** What the progress callback and the final summary see. */
struct TaskSummary {
  std::string name, spec, key;
  double weight = 1;
  int64_t trials = 0, resumed = 0;  // resumed: records found in the database at the start
  double best_latency_s = 0;        // 0 = no valid candidate yet
  double best_gflops = 0;
  std::map<std::string, int64_t> errors;  // error kind name -> count (measured in this run)
  nlohmann::json best_trace;
  std::vector<std::pair<int64_t, double>> curve;  // (trials, best GFLOP/s) after each batch
  // The pretrained models ("cost model", "refine model") that predict with their cold fallback now
  // (TuneOptions::check_pretrained)
  std::vector<std::string> fallbacks;
};

struct TuneSummary {
  std::vector<TaskSummary> tasks;
  int64_t total_trials = 0;
  double wall_s = 0;
  double estimated_latency_s = 0;  // sum of weight x best latency (tasks without a valid result: 0)
  bool stopped_by_time = false;
  /** The --json document: {"tasks":[{"workload","key","best_latency_s","best_gflops","trials","errors",
   *  "model_fallbacks"}],
   *  "total_trials","wall_s","estimated_latency_s"}. */
  nlohmann::json to_json() const;
};

using ProgressFn = std::function<void(const TuneSummary& now, double eta_s)>;

/** The cost model a run uses for TuneOptions::cost_model: the name itself, except "auto", which is the
 *  shipped pretrained model's path on x86-64 CPU targets when it is found (costmodel::pretrained_model_path;
 *  a TESSEL_PRETRAINED_MODEL that is not a file is an error) and "xgb" otherwise. */
std::string resolve_cost_model(const std::string& name, const std::string& target);

/** The refine model a run uses for TuneOptions::refine_model, given the resolved cost model: "" (none),
 *  "cold", "analytic", or a model file's path. Throws UserError for an unknown value, or a refine model asked for on
 *  a target whose code cannot be read (not an x86-64 CPU). */
std::string resolve_refine_model(const std::string& name, const std::string& cost_model, const std::string& target);

/** A transfer source of TuneOptions::transfer_from resolved: a file's path ("" for none), and whether its
 *  records are learned from (not the shipped records: the shipped models learned them). Throws UserError
 *  for a file that does not exist, or "pretrained" when no records are shipped. */
struct TransferSource {
  std::string path;
  bool learn = true;
};
TransferSource resolve_transfer_source(const std::string& name, const std::string& cost_model_name,
                                       const std::string& target);

/** Runs the loop. Throws UserError for bad options (unknown strategy, unreadable database, ...). */
TuneSummary tune(const TuneOptions& options, const ProgressFn& progress = {});

}  // namespace tessel::tuner
