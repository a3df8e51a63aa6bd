// The model registry (one line per model) and the CostModel defaults.
#include "tessel/costmodel/cost_model.h"

#include <algorithm>

#include "tessel/costmodel/learned_model.h"
#include "tessel/support/error.h"

namespace tessel::costmodel {

std::unique_ptr<CostModel> make_random_model(const ModelParams& params);
std::unique_ptr<LearnedModel> make_xgb_model(const ModelParams& params);
std::unique_ptr<LearnedModel> make_xgb_rank_model(const ModelParams& params);
std::unique_ptr<LearnedModel> make_mlp_model(const ModelParams& params);

namespace {
using LearnedFactory = std::unique_ptr<LearnedModel> (*)(const ModelParams&);
// The learned models, one line each.
const std::vector<std::pair<std::string, LearnedFactory>>& learned_registry() {
  static const std::vector<std::pair<std::string, LearnedFactory>> r = {
      {"xgb", make_xgb_model},
      {"xgb-rank", make_xgb_rank_model},
      {"mlp", make_mlp_model},
  };
  return r;
}
// Parameter names each model reads (docs/costmodel.md); anything else is a typo the user should hear of.
std::vector<std::string> known_params(const std::string& model) {
  std::vector<std::string> k = {"seed", "nthread"};
  if (model == "random") return k;
  for (const char* c : {"min_samples", "retrain_ratio", "retrain_samples"}) k.push_back(c);
  if (model == "xgb" || model == "xgb-rank")
    for (const char* c : {"num_rounds", "max_depth", "eta"}) k.push_back(c);
  if (model == "mlp")
    for (const char* c : {"hidden", "epochs", "learning_rate", "pairs_per_program", "max_steps"}) k.push_back(c);
  return k;
}
void check_params(const std::string& model, const ModelParams& params) {
  if (!params.is_object()) return;
  auto known = known_params(model);
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

std::vector<std::string> cost_model_names() {
  std::vector<std::string> n = {"random"};
  for (auto& [name, f] : learned_registry()) n.push_back(name);
  return n;
}

std::unique_ptr<LearnedModel> make_learned_model(const std::string& name, const ModelParams& params) {
  for (auto& [n, f] : learned_registry())
    if (n == name) return check_params(n, params), f(params.is_object() ? params : ModelParams::object());
  TESSEL_CHECK(false) << "unknown learned cost model '" << name << "' (models: " << known_names() << ")";
  return nullptr;
}

std::unique_ptr<CostModel> make_cost_model(const std::string& name, const ModelParams& params) {
  if (name == "random") return check_params(name, params), make_random_model(params.is_object() ? params : ModelParams::object());
  for (auto& [n, f] : learned_registry())
    if (n == name) return check_params(n, params), f(params.is_object() ? params : ModelParams::object());
  TESSEL_CHECK(false) << "unknown cost model '" << name << "' (models: " << known_names() << ")";
  return nullptr;
}

}  // namespace tessel::costmodel
