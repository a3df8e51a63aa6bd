// The trivial cost model: random scores (what a search uses before anything is learned).
#include <random>

#include "tessel/costmodel/cost_model.h"
#include "tessel/support/error.h"

namespace tessel::costmodel {

namespace {
class RandomModel : public CostModel {
 public:
  explicit RandomModel(uint64_t seed) : rng_(seed) {}
  std::vector<double> predict(const std::vector<Candidate>& c) override {
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<double> out(c.size());
    for (auto& x : out) x = u(rng_);
    return out;
  }
  void update(const std::vector<Candidate>&, const std::vector<double>&) override {}
  bool trained() const override { return false; }
  std::string name() const override { return "random"; }

 private:
  std::mt19937_64 rng_;
};
}  // namespace

std::vector<std::string> cost_model_names() { return {"random"}; }

std::unique_ptr<CostModel> make_cost_model(const std::string& name, const ModelParams& params) {
  uint64_t seed = params.is_object() ? params.value("seed", uint64_t(1)) : 1;
  if (name == "random") return std::make_unique<RandomModel>(seed);
  std::string names;
  for (auto& n : cost_model_names()) names += (names.empty() ? "" : ", ") + n;
  TESSEL_CHECK(false) << "unknown cost model '" << name << "' (models: " << names << ")";
  return nullptr;
}

}  // namespace tessel::costmodel
