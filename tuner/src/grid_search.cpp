// Grid search: every knob combination in mixed-radix order (for small spaces).
#include "strategy_base.h"

namespace tessel::tuner::detail {

class GridSearch : public StrategyBase {
 public:
  GridSearch(const SearchSpace& s, costmodel::CostModel* m, const StrategyParams& p, const std::set<std::string>& seen)
      : StrategyBase(s, m, p, seen), next_(s.knobs().size(), 0) {
    TESSEL_CHECK(s.size() <= 1e7) << "grid search over " << s.size()
                                  << " combinations is too large; use random or evolutionary search";
  }
  std::vector<Candidate> propose(int n) override {
    std::vector<Candidate> out;
    while (int(out.size()) < n && !done_) {
      Candidate c;
      if (realize(next_, &c) && fresh(c)) {
        seen_.insert(c.trace_hash);
        out.push_back(std::move(c));
      }
      advance();
    }
    return out;
  }
  bool exhausted() const override { return done_; }
  std::string name() const override { return "grid"; }

 private:
  void advance() {
    for (size_t i = next_.size(); i-- > 0;) {
      if (++next_[i] < int(space_.knobs()[i].options.size())) return;
      next_[i] = 0;
    }
    done_ = true;
  }
  KnobValues next_;
  bool done_ = false;
};

std::unique_ptr<SearchStrategy> make_grid_search(const SearchSpace& s, costmodel::CostModel* m,
                                                 const StrategyParams& p, const std::set<std::string>& seen) {
  return std::make_unique<GridSearch>(s, m, p, seen);
}

}  // namespace tessel::tuner::detail
