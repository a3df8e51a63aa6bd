// The model registry (one line per model) and the CostModel defaults.
#include "tessel/costmodel/cost_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

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
      {"xgb", make_xgb_model, {"num_rounds", "max_depth", "eta", "subsample", "colsample_bytree", "min_child_weight", "lambda", "gamma"}},
      {"xgb-rank", make_xgb_rank_model,
       {"num_rounds", "max_depth", "eta", "subsample", "colsample_bytree", "min_child_weight", "lambda", "gamma",
        "code_features"}},
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

size_t count_param(const ModelParams& p, const std::string& key, size_t fallback) {
  if (!p.is_object() || !p.contains(key)) return fallback;
  const auto& v = p[key];
  TESSEL_CHECK(v.is_number_integer() && (v.is_number_unsigned() || v.get<int64_t>() >= 0))
      << "cost model param " << key << " must be a non-negative integer, got " << v.dump();
  return v.get<size_t>();
}

double number_param(const ModelParams& p, const std::string& key, double fallback) {
  if (!p.is_object() || !p.contains(key)) return fallback;
  const auto& v = p[key];
  TESSEL_CHECK(v.is_number()) << "cost model param " << key << " must be a number, got " << v.dump();
  return v.get<double>();
}

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

double recall_at_k(const std::vector<double>& score, const std::vector<double>& truth, size_t k) {
  TESSEL_CHECK(score.size() == truth.size()) << score.size() << " scores for " << truth.size() << " measurements";
  k = std::min(k, truth.size());
  if (k == 0) return 0;
  std::vector<double> sorted = score;
  std::nth_element(sorted.begin(), sorted.begin() + long(k - 1), sorted.end(), std::greater<>());
  double cut = sorted[k - 1];  // the k-th best score
  double above = double(std::count_if(score.begin(), score.end(), [&](double s) { return s > cut; }));
  double at = double(std::count(score.begin(), score.end(), cut));
  std::vector<size_t> by_true(truth.size());
  std::iota(by_true.begin(), by_true.end(), 0);
  std::stable_sort(by_true.begin(), by_true.end(), [&](size_t a, size_t b) { return truth[a] > truth[b]; });
  double hit = 0;
  for (size_t i = 0; i < k; ++i) {
    double s = score[by_true[i]];
    hit += s > cut ? 1.0 : s == cut ? (double(k) - above) / at : 0.0;
  }
  return hit / double(k);
}

double top1_score(const std::vector<double>& score, const std::vector<double>& truth) {
  TESSEL_CHECK(score.size() == truth.size()) << score.size() << " scores for " << truth.size() << " measurements";
  if (truth.empty()) return 0;
  double top = *std::max_element(score.begin(), score.end()), sum = 0, tied = 0;
  for (size_t i = 0; i < truth.size(); ++i)
    if (score[i] == top) sum += truth[i], ++tied;
  return sum / tied / *std::max_element(truth.begin(), truth.end());
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
