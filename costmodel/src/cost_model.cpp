// The model registry (one line per model) and the CostModel defaults.
#include "tessel/costmodel/cost_model.h"

#include <algorithm>
#include <cmath>

#include "tessel/costmodel/learned_model.h"
#include "tessel/support/error.h"

namespace tessel::costmodel {

std::unique_ptr<CostModel> make_random_model(const ModelParams& params);
std::unique_ptr<LearnedModel> make_xgb_model(const ModelParams& params);
std::unique_ptr<LearnedModel> make_xgb_rank_model(const ModelParams& params);
std::unique_ptr<LearnedModel> make_mlp_model(const ModelParams& params);
std::unique_ptr<LearnedModel> make_analytic_model(const ModelParams& params);

namespace {
using LearnedFactory = std::unique_ptr<LearnedModel> (*)(const ModelParams&);
struct LearnedEntry {
  std::string name;
  LearnedFactory make;
  std::vector<std::string> params;  // its own parameters, besides the common ones (docs/costmodel.md)
};
// The learned models, one line each.
const std::vector<LearnedEntry>& learned_registry() {
  static const std::vector<LearnedEntry> r = {
      {"xgb", make_xgb_model, {"num_rounds", "max_depth", "eta"}},
      {"xgb-rank", make_xgb_rank_model, {"num_rounds", "max_depth", "eta", "code_features"}},
      {"mlp", make_mlp_model, {"hidden", "epochs", "learning_rate", "pairs_per_program", "max_steps"}},
      {"analytic", make_analytic_model, {}},
  };
  return r;
}
// Refuses a parameter the model does not read (a typo would otherwise be a silent default).
void check_params(const std::string& model, const std::vector<std::string>& own, const ModelParams& params) {
  if (!params.is_object()) return;
  std::vector<std::string> known = {"seed", "nthread"};  // every model, the random one too
  if (model != "random") known.insert(known.end(), {"min_samples", "retrain_ratio", "retrain_samples"});
  known.insert(known.end(), own.begin(), own.end());
  for (auto& [key, v] : params.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (auto& k : known) list += (list.empty() ? "" : ", ") + k;
    TESSEL_CHECK(false) << "unknown parameter '" << key << "' for cost model " << model << " (it takes: " << list << ")";
  }
}
std::string known_names() {
  std::string names;
  for (auto& n : cost_model_names()) names += (names.empty() ? "" : ", ") + n;
  return names;
}
}  // namespace

void CostModel::save(const std::string& path) const {
  TESSEL_CHECK(false) << "cost model '" << name() << "' has no learned state to save to " << path
                      << " (save a learned model: xgb, xgb-rank or mlp)";
}

void CostModel::load(const std::string& path) {
  TESSEL_CHECK(false) << "cost model '" << name() << "' cannot load " << path
                      << " (load it into the model kind that saved it: xgb, xgb-rank or mlp)";
}

PairAgreement pair_agreement(const std::vector<double>& score, const std::vector<double>& truth, double min_rel_diff) {
  TESSEL_CHECK(score.size() == truth.size()) << score.size() << " scores for " << truth.size() << " measurements";
  PairAgreement r;
  for (size_t i = 0; i < truth.size(); ++i)
    for (size_t j = i + 1; j < truth.size(); ++j) {
      double d = truth[i] - truth[j];
      if (std::abs(d) <= min_rel_diff * std::max(truth[i], truth[j])) continue;
      ++r.pairs;
      r.agree += score[i] == score[j] ? 0.5 : (d > 0) == (score[i] > score[j]) ? 1.0 : 0.0;
    }
  return r;
}

std::vector<std::string> cost_model_names() {
  std::vector<std::string> n = {"random"};
  for (auto& e : learned_registry()) n.push_back(e.name);
  return n;
}

std::unique_ptr<LearnedModel> make_learned_model(const std::string& name, const ModelParams& params) {
  for (auto& e : learned_registry())
    if (e.name == name) return check_params(name, e.params, params), e.make(params.is_object() ? params : ModelParams::object());
  TESSEL_CHECK(false) << "unknown learned cost model '" << name << "' (models: " << known_names() << ")";
  return nullptr;
}

std::unique_ptr<CostModel> make_cost_model(const std::string& name, const ModelParams& params) {
  if (name == "random") return check_params(name, {}, params), make_random_model(params.is_object() ? params : ModelParams::object());
  for (auto& e : learned_registry())
    if (e.name == name) return check_params(name, e.params, params), e.make(params.is_object() ? params : ModelParams::object());
  TESSEL_CHECK(false) << "unknown cost model '" << name << "' (models: " << known_names() << ")";
  return nullptr;
}

}  // namespace tessel::costmodel
