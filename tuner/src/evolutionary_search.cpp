// Evolutionary search guided by the cost model (after Ansor): a population seeded with the best
// measured candidates and random samples evolves for a few generations by mutation (tile sizes,
// compute locations, parallel/unroll/vector choices are all knobs) and crossover, selected by model
// score; a batch is the best-scored unseen members, with an epsilon share of random candidates
// (exploration). Invalid children are rejected before measurement (make_trace fails). With a refine
// model (SearchStrategy::set_refine_model), the model-chosen part of a batch is the best of a shortlist
// refine_shortlist times as large, re-ranked by that model: the cost model's best population members
// and, for the share refine_explore (all of it while the cost model is untrained), half mutants of the
// best measured candidates and half random samples. A refine model that needs no data (the analytic
// prior of a cold one) so chooses from the first batch on. After stall_batches batches without a new
// best, the whole shortlist is drawn so until one comes: the cost model's favourites have stopped paying.
// A share `polish` of the model-chosen part goes first to single-knob variants of the best measured
// candidate (a coordinate step, best-ranked first) until its neighbourhood is measured. Suggested points
// (transferred best, rule seeds) take up to half a batch and are measured alternately with the search's
// own choices.
#include <algorithm>
#include <numeric>

#include "strategy_base.h"

namespace tessel::tuner::detail {

class EvolutionarySearch : public StrategyBase {
 public:
  using StrategyBase::StrategyBase;

  std::vector<Candidate> propose(int n) override {
    return with_suggested(n, [this](int k, std::set<std::string>* taken) { return propose_own(k, taken); });
  }
  bool exhausted() const override { return sample_failures_ && double(seen_.size()) >= space_.size(); }
  std::string name() const override { return "evolutionary"; }

 private:
  /** n candidates of the search's own choice, none in taken (added to it). */
  std::vector<Candidate> propose_own(int n, std::set<std::string>* taken_out) {
    std::set<std::string>& taken = *taken_out;
    int n_random = std::max(0, int(n * p_.epsilon + 0.5));
    bool screening = model_ && model_->trained();
    bool refining = refine_ && refine_->trained() && p_.refine_shortlist > 1;
    if (!screening && !refining) n_random = n;  // nothing learned yet: explore
    std::vector<Candidate> out;
    if (n_random < n) {
      // Best-scored members not measured before; with a trained refine model, a shortlist of
      // refine_shortlist times as many (the share refine_explore of it from outside the population, all of
      // it while the cost model is untrained), re-ranked by it.
      std::vector<Candidate> polished = polish(size_t(double(n - n_random) * p_.polish + 0.5), &taken);
      for (auto& c : polished) seen_.insert(c.trace_hash);
      tag(polished, "polish");
      out = std::move(polished);
      int want = n - n_random - int(out.size());
      size_t listed = size_t(want) * size_t(refining ? p_.refine_shortlist : 1);
      bool stalled = p_.stall_batches > 0 && since_best_ >= p_.stall_batches;
      double explore = screening && !stalled ? std::clamp(p_.refine_explore, 0.0, 1.0) : 1.0;
      size_t from_model = refining ? listed - size_t(double(listed) * explore) : listed;
      std::vector<Candidate> pop;
      if (from_model > 0) pop = initial_population();
      for (int g = 0; g < p_.generations && !pop.empty(); ++g) pop = next_generation(pop);
      std::vector<double> sc = score(pop);
      std::vector<size_t> idx(pop.size());
      std::iota(idx.begin(), idx.end(), 0);
      std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return sc[a] > sc[b]; });
      std::set<std::string> in_list;
      std::vector<Candidate> shortlist;
      for (size_t i : idx) {
        if (shortlist.size() >= from_model) break;
        if (!fresh(pop[i]) || in_list.count(pop[i].trace_hash)) continue;
        in_list.insert(pop[i].trace_hash);
        shortlist.push_back(pop[i]);
      }
      tag(shortlist, "population");
      if (refining) {  // the rest: half mutants of the best measured (a local search), half random samples
        std::vector<Candidate> mutants = neighbours((listed - shortlist.size()) / 2, &in_list);
        tag(mutants, "mutant");
        for (auto& c : mutants) shortlist.push_back(std::move(c));
        std::vector<Candidate> drawn = draw(listed - shortlist.size(), &in_list);
        tag(drawn, "drawn");
        for (auto& c : drawn) shortlist.push_back(std::move(c));
      }
      if (refining && int(shortlist.size()) > want) shortlist = best_by(*refine_, shortlist, size_t(want));
      for (auto& c : shortlist) {
        seen_.insert(c.trace_hash);
        taken.insert(c.trace_hash);
        out.push_back(std::move(c));
      }
    }
    auto rnd = sample(n - int(out.size()), &taken);
    tag(rnd, "random");
    out.insert(out.end(), rnd.begin(), rnd.end());
    return out;
  }
  /** The k best of c by model m's scores (stable: ties keep the first model's order). */
  std::vector<Candidate> best_by(costmodel::CostModel& m, std::vector<Candidate> c, size_t k) const {
    c = ranked(m, std::move(c));
    if (c.size() > k) c.resize(k);
    return c;
  }
  /** Up to n fresh single-knob variants of the best measured candidate, not in taken (added to it): every
   *  other option of a knob with at most 8 options, the neighbouring ones (near()) of a larger knob; the
   *  refine model's best when it is trained, else the cost model's, else a random n of them. */
  std::vector<Candidate> polish(size_t n, std::set<std::string>* taken) {
    std::vector<const Measured*> best = best_measured(1);
    if (n == 0 || best.empty()) return {};
    const KnobValues& k = best[0]->c.knobs;
    std::vector<Candidate> out;
    for (size_t i = 0; i < k.size(); ++i) {
      std::vector<int> options;
      int count = int(space_.knobs()[i].options.size());
      if (count <= 8) {
        for (int o = 0; o < count; ++o) options.push_back(o);
      } else {
        options = near(i, k[i]);
      }
      for (int o : options) {
        KnobValues v = k;
        v[i] = o;
        Candidate c;
        if (o == k[i] || !realize(v, &c) || !fresh(c, *taken)) continue;
        taken->insert(c.trace_hash);
        out.push_back(std::move(c));
      }
    }
    std::shuffle(out.begin(), out.end(), rng_);
    costmodel::CostModel* m = ranking_model();
    if (m && out.size() > n) out = ranked(*m, std::move(out));
    for (size_t r = n; r < out.size(); ++r) taken->erase(out[r].trace_hash);
    if (out.size() > n) out.resize(n);
    return out;
  }
  /** Up to n fresh mutants of the best measured candidates (the better, the likelier a parent), not in
   *  taken (added to it): the refine stage's local search. */
  std::vector<Candidate> neighbours(size_t n, std::set<std::string>* taken) {
    std::vector<const Measured*> best = best_measured(8);
    if (best.empty()) return {};
    std::vector<double> w;
    for (size_t r = 0; r < best.size(); ++r) w.push_back(1.0 / (1.0 + double(r)));
    std::discrete_distribution<size_t> pick(w.begin(), w.end());
    return draw(n, taken, [&] { return mutate(best[pick(rng_)]->c.knobs); });
  }
  /** The k fastest measured candidates (that ran), fastest first. */
  std::vector<const Measured*> best_measured(size_t k) const {
    std::vector<const Measured*> best;
    for (auto& m : history_)
      if (m.throughput > 0) best.push_back(&m);
    std::sort(best.begin(), best.end(), [](auto* a, auto* b) { return a->throughput > b->throughput; });
    if (best.size() > k) best.resize(k);
    return best;
  }
  /** The best measured (half a population at most), the suggested points that were not measured first
   *  (a quarter at most), then random samples (valid; measured or not). */
  std::vector<Candidate> initial_population() {
    std::vector<Candidate> pop;
    for (auto* m : best_measured(size_t(std::max(0, p_.population / 2)))) pop.push_back(m->c);
    for (size_t i = 0; i < suggested_pool_.size() && int(i) < p_.population / 4; ++i) pop.push_back(suggested_pool_[i]);
    for (int tries = 0; int(pop.size()) < p_.population && tries < p_.population * 8; ++tries) {
      Candidate c;
      if (realize(random_knobs(), &c)) pop.push_back(std::move(c));
    }
    return pop;
  }

  std::vector<Candidate> next_generation(const std::vector<Candidate>& pop) {
    std::vector<double> sc = score(pop);
    // Parents drawn with probability rising with rank.
    std::vector<size_t> idx(pop.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return sc[a] > sc[b]; });
    std::vector<double> w(pop.size());
    for (size_t r = 0; r < idx.size(); ++r) w[idx[r]] = 1.0 / (1.0 + double(r));
    std::discrete_distribution<size_t> pick(w.begin(), w.end());
    std::vector<Candidate> children;
    std::set<std::string> hashes;
    for (auto& c : pop) hashes.insert(c.trace_hash);
    for (int tries = 0; int(children.size()) < p_.population && tries < p_.population * 8; ++tries) {
      KnobValues k = std::uniform_real_distribution<double>(0, 1)(rng_) < p_.crossover_prob
                         ? crossover(pop[pick(rng_)].knobs, pop[pick(rng_)].knobs)
                         : mutate(pop[pick(rng_)].knobs);
      Candidate c;
      if (!realize(k, &c) || hashes.count(c.trace_hash)) continue;
      hashes.insert(c.trace_hash);
      children.push_back(std::move(c));
    }
    // Survivors: the best of parents and children by score.
    std::vector<Candidate> all = pop;
    all.insert(all.end(), children.begin(), children.end());
    std::vector<double> as = score(all);
    std::vector<size_t> ai(all.size());
    std::iota(ai.begin(), ai.end(), 0);
    std::sort(ai.begin(), ai.end(), [&](size_t a, size_t b) { return as[a] > as[b]; });
    std::vector<Candidate> next;
    for (size_t i = 0; i < ai.size() && int(next.size()) < p_.population; ++i) next.push_back(all[ai[i]]);
    return next;
  }
};

std::unique_ptr<SearchStrategy> make_evolutionary_search(const SearchSpace& s, costmodel::CostModel* m,
                                                         const StrategyParams& p, const std::set<std::string>& seen) {
  return std::make_unique<EvolutionarySearch>(s, m, p, seen);
}

}  // namespace tessel::tuner::detail
