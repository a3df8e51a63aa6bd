// The trivial cost model: random scores (what a search uses before anything is learned).
#include <random>

#include "tessel/costmodel/cost_model.h"

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

std::unique_ptr<CostModel> make_random_model(const ModelParams& params) {
  uint64_t seed = count_param(params, "seed", 1);
  return std::make_unique<RandomModel>(seed);
}

}  // namespace tessel::costmodel
