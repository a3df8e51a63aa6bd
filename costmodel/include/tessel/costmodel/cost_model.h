// The cost-model interface the search uses: score candidate schedules of a workload (higher = expected
// faster) and learn from measurements. Implementations are created by name (make_cost_model): "random",
// "xgb" (XGBoost, pack-sum regression as Ansor), "xgb-rank" (XGBoost rank:pairwise), "mlp" (Eigen MLP,
// pairwise ranking loss). The learned ones read features.h and are described in docs/costmodel.md.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessel/codegen/target.h"
#include "tessel/schedule/step.h"
#include "tessel/workload/workload.h"

namespace tessel::costmodel {

/** A candidate as the model sees it: a workload and a schedule trace. */
struct Candidate {
  const workload::Workload* workload = nullptr;
  const std::vector<schedule::Step>* trace = nullptr;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  /** Scores, one per candidate; higher means expected faster. Comparable within one call. */
  virtual std::vector<double> predict(const std::vector<Candidate>& candidates) = 0;
  /** Learns from measurements: throughput (e.g. FLOP/s) of each candidate, 0 for failed ones. */
  virtual void update(const std::vector<Candidate>& candidates, const std::vector<double>& throughput) = 0;
  /** Whether predictions carry information yet (a search may explore randomly until they do). */
  virtual bool trained() const = 0;
  virtual std::string name() const = 0;
  /** Writes the learned state to path (signature, model kind, kFeatureVersion, checksum); throws
   *  UserError for models without state ("random") or when the file cannot be written. */
  virtual void save(const std::string& path) const;
  /** Replaces the learned state by the file's; trained() is true afterwards. Throws UserError (saying
   *  what to do) for a missing, corrupt or foreign file, another model kind or another feature version. */
  virtual void load(const std::string& path);
  /** Measured samples the model holds (0 for models that do not learn). */
  virtual size_t num_samples() const { return 0; }
  /** Whether the model reads the features of the compiled code (code_features.h): every candidate it
   *  scores or learns from is compiled once. */
  virtual bool uses_code_features() const { return false; }
  /** The target candidates are compiled for when the model reads code features (default: this machine). */
  virtual void set_code_target(const codegen::Target& target) { (void)target; }
};

/** Knobs of the models: JSON object (model-specific keys; "seed" for every model). */
using ModelParams = nlohmann::json;
/** Parameter key of p as a non-negative integer, or fallback when p has none or is not an object
 *  (UserError for another value: a string, a fraction, or a negative number, which an unsigned would wrap). */
size_t count_param(const ModelParams& p, const std::string& key, size_t fallback);
/** Parameter key of p as a number, or fallback when p has none or is not an object (UserError otherwise). */
double number_param(const ModelParams& p, const std::string& key, double fallback);

/** Creates a model by name: "random" (uniform random scores; never trained), "xgb", "xgb-rank", "mlp",
 *  "analytic" (the compiled hot loop's roofline, code_features.h; trained without data, learns nothing).
 *  Params common to the learned models: "seed", "min_samples" (64: trained() from then on),
 *  "retrain_ratio" (0.2) and "retrain_samples" (64): retrain when the data grew by either; "nthread"
 *  (0 = hardware). Throws UserError listing the known names for an unknown one. */
std::unique_ptr<CostModel> make_cost_model(const std::string& name, const ModelParams& params = {});

/** How many pairs of candidates a model orders as their measurements do. Two candidates are a pair when their
 *  throughputs differ by more than min_rel_diff of the larger (closer is within noise). A pair the model
 *  scores equal counts half (a coin toss: ties are common for the analytic model, whose roofline gives many
 *  schedules the same score, and counting them by the order of the input would make its figure depend on
 *  that order). */
struct PairAgreement {
  double agree = 0;
  size_t pairs = 0;
  double accuracy() const { return pairs ? agree / double(pairs) : 0.0; }
};
PairAgreement pair_agreement(const std::vector<double>& score, const std::vector<double>& truth,
                             double min_rel_diff = 0.05);

/** The held-out ranking metrics besides pair_agreement, as their expected values when the model's ties are
 *  broken at random (not by the order of the input, for the same reason). recall_at_k: the share of the k
 *  best measured among the k best scored (k = min(k, size)); a candidate tied at the cut is among them with
 *  the share of the cut's places left to its tie group. top1_score: the throughput of the best-scored
 *  candidate over the best measured (the tied-best group's mean). 0 for no candidates. */
double recall_at_k(const std::vector<double>& score, const std::vector<double>& truth, size_t k);
double top1_score(const std::vector<double>& score, const std::vector<double>& truth);

/** Names accepted by make_cost_model. */
std::vector<std::string> cost_model_names();

}  // namespace tessel::costmodel
