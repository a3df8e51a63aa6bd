// Random search: uniformly random valid, unseen knob assignments.
#include "strategy_base.h"

namespace tessel::tuner::detail {

class RandomSearch : public StrategyBase {
 public:
  using StrategyBase::StrategyBase;
  std::vector<Candidate> propose(int n) override {
    std::set<std::string> taken;
    return sample(n, &taken);
  }
  bool exhausted() const override { return sample_failures_ && double(seen_.size()) >= space_.size(); }
  std::string name() const override { return "random"; }
};

std::unique_ptr<SearchStrategy> make_random_search(const SearchSpace& s, costmodel::CostModel* m,
                                                   const StrategyParams& p, const std::set<std::string>& seen) {
  return std::make_unique<RandomSearch>(s, m, p, seen);
}

}  // namespace tessel::tuner::detail
