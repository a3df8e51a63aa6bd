// Shared machinery of the strategies: random sampling of valid, unseen candidates; mutation and
// crossover of knob vectors; the measured history.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "tessel/records/record.h"
#include "tessel/tuner/search_strategy.h"

namespace tessel::tuner::detail {

class StrategyBase : public SearchStrategy {
 public:
  StrategyBase(const SearchSpace& space, costmodel::CostModel* model, const StrategyParams& p,
               const std::set<std::string>& seen)
      : space_(space), model_(model), p_(p), rng_(p.seed), seen_(seen) {}

  void suggest(const std::vector<KnobValues>& knobs) override {
    suggested_.insert(suggested_.end(), knobs.begin(), knobs.end());
  }

  void set_refine_model(costmodel::CostModel* model) override { refine_ = model; }
  void set_refine_explore(double share) override { p_.refine_explore = share; }

  void observe(const std::vector<Candidate>& c, const std::vector<double>& t) override {
    double top = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      if (tracing()) {
        auto o = origin_.find(c[i].trace_hash);
        std::fprintf(stderr, "search-trace: %s %.3f\n", o == origin_.end() ? "given" : o->second, t[i] * 1e-9);
      }
      seen_.insert(c[i].trace_hash);
      if (!c[i].knobs.empty()) history_.push_back({c[i], t[i]});
      top = std::max(top, t[i]);
    }
    since_best_ = top > best_ * 1.01 ? 0 : since_best_ + 1;
    best_ = std::max(best_, top);
    std::vector<costmodel::Candidate> mc;
    for (auto& x : c) mc.push_back({&space_.workload(), &x.trace});
    if (model_) model_->update(mc, t);
    if (refine_) refine_->update(mc, t);
  }

 protected:
  struct Measured {
    Candidate c;
    double throughput;
  };

  /** TESSEL_SEARCH_TRACE set: observe() prints each measured candidate's origin (tag()) and GFLOP/s on
   *  stderr, a debugging aid for where a search's finds come from. */
  static bool tracing() {
    static const bool on = std::getenv("TESSEL_SEARCH_TRACE") != nullptr;
    return on;
  }
  /** Records where c came from (a static string) for tracing(). */
  void tag(const std::vector<Candidate>& c, const char* origin) {
    if (tracing())
      for (auto& x : c) origin_.emplace(x.trace_hash, origin);
  }
  /** Builds the candidate for knob values; false when invalid. Does not check `seen`. */
  bool realize(const KnobValues& k, Candidate* c) {
    c->knobs = k;
    c->trace.clear();
    if (!space_.make_trace(k, &c->trace)) return false;
    c->trace_hash = records::trace_hash(schedule::trace_to_json(c->trace));
    return true;
  }
  bool fresh(const Candidate& c, const std::set<std::string>& extra = {}) const {
    return !seen_.count(c.trace_hash) && !extra.count(c.trace_hash);
  }
  KnobValues random_knobs() {
    KnobValues k;
    for (auto& kn : space_.knobs()) k.push_back(std::uniform_int_distribution<int>(0, int(kn.options.size()) - 1)(rng_));
    return k;
  }
  /** One or two knobs changed: each to a neighbouring option (near(), with probability local_mutation)
   *  or to any option. */
  KnobValues mutate(KnobValues k) {
    if (k.empty()) return k;
    std::uniform_real_distribution<double> u(0, 1);
    int changes = 1 + (u(rng_) < 0.3);
    for (int c = 0; c < changes; ++c) {
      size_t i = std::uniform_int_distribution<size_t>(0, k.size() - 1)(rng_);
      int n = int(space_.knobs()[i].options.size());
      if (n <= 1) continue;
      // (no draw when local mutation is off: the random stream stays that of plain mutation)
      const std::vector<int>* nb = p_.local_mutation > 0 && u(rng_) < p_.local_mutation ? &near(i, k[i]) : nullptr;
      k[i] = nb && !nb->empty() ? (*nb)[std::uniform_int_distribution<size_t>(0, nb->size() - 1)(rng_)]
                                : std::uniform_int_distribution<int>(0, n - 1)(rng_);
    }
    return k;
  }
  /** neighbour_options of knob k's option i, cached. */
  const std::vector<int>& near(size_t k, int i) {
    auto [it, added] = near_.try_emplace({k, i});
    if (added) it->second = neighbour_options(space_.knobs()[k], i);
    return it->second;
  }
  KnobValues crossover(const KnobValues& a, const KnobValues& b) {
    KnobValues k = a;
    for (size_t i = 0; i < k.size(); ++i)
      if (std::uniform_int_distribution<int>(0, 1)(rng_)) k[i] = b[i];
    return k;
  }
  /** The suggested points (valid, fresh) for a batch of n: all of them when they fit, else the best half
   *  batch of them by the refine model (when trained; else the cost model, else in order); the queue is
   *  emptied. */
  std::vector<Candidate> take_suggested(int n, std::set<std::string>* taken) {
    std::vector<Candidate> out;
    for (auto& k : suggested_) {
      Candidate c;
      if (k.size() != space_.knobs().size() || !realize(k, &c) || !fresh(c, *taken)) continue;
      taken->insert(c.trace_hash);
      out.push_back(std::move(c));
    }
    suggested_.clear();
    if (int(out.size()) > n) {
      // More than a batch (e.g. the best of many other workloads): the model's best half batch is
      // measured, the rest join the population (suggested_pool_) instead of taking batches of their own;
      // the search's own choices fill the batch (a hedge: other workloads' best can mislead).
      n = (n + 1) / 2;
      if (costmodel::CostModel* m = ranking_model()) out = ranked(*m, std::move(out));
      for (size_t r = size_t(n); r < out.size(); ++r) {
        taken->erase(out[r].trace_hash);
        suggested_pool_.push_back(std::move(out[r]));
      }
      out.resize(size_t(n));
    }
    for (auto& c : out) seen_.insert(c.trace_hash);
    return out;
  }
  /** a[0], b[0], a[1], b[1], ..., then the rest of the longer: a batch measured in this order finds the
   *  best of either list within twice that list's own place. propose() measures take_suggested()'s points
   *  so with the strategy's own choices. Which wins a first batch, the suggested
   *  points (other workloads' best, the rules' seeds) or the search's own choices, depends on the
   *  workload (bench/results' pretrained runs: the suggested half was the better in 10% of batch_matmul's
   *  runs and 85% of matmul's), so neither waits for the other; what a batch holds does not change. */
  static std::vector<Candidate> alternated(std::vector<Candidate> a, std::vector<Candidate> b) {
    std::vector<Candidate> out;
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      if (i < a.size()) out.push_back(std::move(a[i]));
      if (i < b.size()) out.push_back(std::move(b[i]));
    }
    return out;
  }
  /** A batch of n for a strategy that takes suggestions: take_suggested()'s points measured alternately
   *  with own(n minus their count, &taken)'s, the strategy's own choices (none of them in taken). */
  template <class Own>
  std::vector<Candidate> with_suggested(int n, Own own) {
    std::set<std::string> taken;
    std::vector<Candidate> given = take_suggested(n, &taken);
    tag(given, "suggested");
    std::vector<Candidate> mine = own(n - int(given.size()), &taken);
    return alternated(std::move(given), std::move(mine));
  }
  /** Up to n fresh random candidates. */
  std::vector<Candidate> sample(int n, std::set<std::string>* taken) {
    std::vector<Candidate> out = draw(size_t(std::max(n, 0)), taken);
    for (auto& c : out) seen_.insert(c.trace_hash);  // proposed once, never again
    if (int(out.size()) < n) sample_failures_ = true;
    return out;
  }
  /** Up to n fresh candidates not in taken (added to it), made from knobs() (default: random samples);
   *  not marked as proposed. */
  std::vector<Candidate> draw(size_t n, std::set<std::string>* taken, const std::function<KnobValues()>& knobs = {}) {
    std::vector<Candidate> out;
    for (size_t tries = 0; out.size() < n && tries < n * size_t(p_.max_sample_tries); ++tries) {
      Candidate c;
      if (!realize(knobs ? knobs() : random_knobs(), &c) || !fresh(c, *taken)) continue;
      taken->insert(c.trace_hash);
      out.push_back(std::move(c));
    }
    return out;
  }
  std::vector<double> score(const std::vector<Candidate>& c) {
    return model_ ? predict_with(*model_, c) : std::vector<double>(c.size(), 0.0);
  }
  /** Model m's scores of c. */
  std::vector<double> predict_with(costmodel::CostModel& m, const std::vector<Candidate>& c) const {
    std::vector<costmodel::Candidate> mc;
    for (auto& x : c) mc.push_back({&space_.workload(), &x.trace});
    return m.predict(mc);
  }
  /** The model that orders a handful of candidates: the refine model when trained, else the cost model
   *  when trained, else none. */
  costmodel::CostModel* ranking_model() const {
    return refine_ && refine_->trained() ? refine_ : model_ && model_->trained() ? model_ : nullptr;
  }
  /** c ordered by model m's scores, best first (stable: ties keep c's order). */
  std::vector<Candidate> ranked(costmodel::CostModel& m, std::vector<Candidate> c) const {
    std::vector<double> s = predict_with(m, c);
    std::vector<size_t> idx(c.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return s[a] > s[b]; });
    std::vector<Candidate> out;
    for (size_t i : idx) out.push_back(std::move(c[i]));
    return out;
  }

  const SearchSpace& space_;
  costmodel::CostModel* model_;
  costmodel::CostModel* refine_ = nullptr;  // set_refine_model
  StrategyParams p_;
  std::mt19937_64 rng_;
  std::set<std::string> seen_;
  std::vector<Measured> history_;
  std::map<std::pair<size_t, int>, std::vector<int>> near_;  // near()'s cache
  bool sample_failures_ = false;
  double best_ = 0;     // observe(): the best throughput seen
  int since_best_ = 0;  // observe() calls (batches) since one rose more than 1% above the best before it
  std::vector<KnobValues> suggested_;  // suggest(): proposed first (the model's best batch of them)
  std::vector<Candidate> suggested_pool_;  // suggested but not in that batch: population members
  std::map<std::string, const char*> origin_;  // tag(), when tracing()
};

}  // namespace tessel::tuner::detail
