// Simulated annealing on cost-model scores (after AutoTVM): parallel chains of single-knob mutations,
// accepted when the score improves or with probability exp(delta / T); T cools linearly. A batch is the
// best-scored unseen points visited, topped up with random samples; suggested points (transferred best,
// rule seeds) take up to half of it, measured alternately with those (StrategyBase::alternated).
#include <algorithm>
#include <cmath>
#include <map>

#include "strategy_base.h"

namespace tessel::tuner::detail {

class AnnealingSearch : public StrategyBase {
 public:
  using StrategyBase::StrategyBase;
  std::vector<Candidate> propose(int n) override {
    return with_suggested(n, [this](int k, std::set<std::string>* taken) { return propose_own(k, *taken); });
  }
  bool exhausted() const override { return sample_failures_ && double(seen_.size()) >= space_.size(); }
  std::string name() const override { return "annealing"; }

 private:
  /** n points of the chains' best-scored visits, topped up with random samples; none in taken (added). */
  std::vector<Candidate> propose_own(int n, std::set<std::string>& taken) {
    std::vector<Candidate> out;
    if (model_ && model_->trained()) {
      std::vector<Candidate> chains;
      for (auto& m : history_)
        if (m.throughput > 0 && int(chains.size()) < p_.population / 4) chains.push_back(m.c);
      while (int(chains.size()) < p_.population / 4) {
        Candidate c;
        if (!realize(random_knobs(), &c)) {
          if (++failures_ > 1000) break;
          continue;
        }
        chains.push_back(std::move(c));
      }
      std::vector<double> cur = score(chains);
      std::map<std::string, std::pair<double, Candidate>> visited;
      for (int step = 0; step < p_.annealing_steps && !chains.empty(); ++step) {
        double t = p_.annealing_temperature * (1.0 - double(step) / p_.annealing_steps) + 1e-9;
        std::vector<Candidate> next(chains.size());
        std::vector<bool> valid(chains.size());
        for (size_t i = 0; i < chains.size(); ++i) valid[i] = realize(mutate(chains[i].knobs), &next[i]);
        std::vector<double> ns = score(next);
        for (size_t i = 0; i < chains.size(); ++i) {
          if (!valid[i]) continue;
          if (ns[i] > cur[i] || std::uniform_real_distribution<double>(0, 1)(rng_) < std::exp((ns[i] - cur[i]) / t)) {
            chains[i] = next[i];
            cur[i] = ns[i];
            if (fresh(chains[i])) visited[chains[i].trace_hash] = {cur[i], chains[i]};
          }
        }
      }
      std::vector<std::pair<double, Candidate>> best;
      for (auto& [h, v] : visited) best.push_back(v);
      std::sort(best.begin(), best.end(), [](auto& a, auto& b) { return a.first > b.first; });
      for (auto& [s, c] : best) {
        if (int(out.size()) >= n) break;
        taken.insert(c.trace_hash);
        seen_.insert(c.trace_hash);
        out.push_back(c);
      }
      tag(out, "chain");
    }
    auto rnd = sample(n - int(out.size()), &taken);
    tag(rnd, "random");
    out.insert(out.end(), rnd.begin(), rnd.end());
    return out;
  }

  int failures_ = 0;
};

std::unique_ptr<SearchStrategy> make_annealing_search(const SearchSpace& s, costmodel::CostModel* m,
                                                      const StrategyParams& p, const std::set<std::string>& seen) {
  return std::make_unique<AnnealingSearch>(s, m, p, seen);
}

}  // namespace tessel::tuner::detail
