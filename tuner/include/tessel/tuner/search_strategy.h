// Search strategies behind one interface: propose new candidates of a space, observe their measured
// throughput. Created by name: "random", "grid", "evolutionary" (cost-model guided, epsilon-greedy),
// "annealing" (simulated annealing on cost-model scores). All randomness comes from params.seed.
#pragma once
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tessel/costmodel/cost_model.h"
#include "tessel/tuner/search_space.h"

namespace tessel::tuner {

/** A valid point of a space with its trace and the trace's hash (records::trace_hash). */
struct Candidate {
  KnobValues knobs;
  std::vector<schedule::Step> trace;
  std::string trace_hash;
};

struct StrategyParams {
  uint64_t seed = 1;
  double epsilon = 0.05;       // evolutionary: share of each batch drawn at random
  int population = 128;        // evolutionary / annealing: points kept per generation
  int generations = 4;         // evolutionary: rounds of mutation + selection per batch
  double crossover_prob = 0.2; // evolutionary: share of children made by crossover
  double local_mutation = 0;   // share of mutations that step to a neighbouring option (a tile-size knob
                               // moves one prime factor between two of its levels; other knobs step to the
                               // option before or after) instead of any option of the knob (default off:
                               // it did not speed up cold search, docs/tuning.md)
  int max_sample_tries = 64;   // invalid or already-seen samples tolerated per wanted candidate
  int annealing_steps = 200;   // annealing: steps per batch
  double annealing_temperature = 1.0;
  int refine_shortlist = 8;    // evolutionary with a refine model: it re-ranks this many x the model-chosen
                               // part of a batch (the best by the first model) and the best of those are proposed
  double refine_explore = -1;  // share of that shortlist drawn from outside the evolved population (half
                               // mutants of the best measured, half random samples; all of it while the cost
                               // model is untrained) (< 0: tune picks, see TuneOptions::refine_model)
  int stall_batches = 4;       // evolutionary with a refine model: after this many batches without a new best
                               // (1% above the old), the whole shortlist is drawn (as refine_explore 1) until
                               // one comes (0: never); a pretrained model's favourites can hold a run in one
                               // family of schedules
  double polish = 0.25;        // evolutionary: share of each batch's model-chosen part given to single-knob
                               // variants of the best measured candidate (every other option of a knob with
                               // at most 8, the neighbouring ones of a larger one), the refine model's (else
                               // the cost model's) best first: the last few percent are often one knob away
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  /** Up to n candidates never proposed before (nor in the seen set given at creation). */
  virtual std::vector<Candidate> propose(int n) = 0;
  /** Measured throughput (FLOP/s; 0 for failed candidates) of proposed or database-seeded candidates. */
  virtual void observe(const std::vector<Candidate>& c, const std::vector<double>& throughput) = 0;
  /** Points to propose before any other, as batches of their own (the space's seeds; the best
   *  configurations of similar workloads, mapped into this space); invalid or already-seen ones are skipped. The evolutionary and
   *  annealing strategies take them; random and grid search ignore them. */
  virtual void suggest(const std::vector<KnobValues>& knobs) { (void)knobs; }
  /** A second, slower and more accurate model (one that reads the compiled code: costmodel/code_features.h)
   *  that re-ranks the shortlist the first model chose before a batch is proposed, once it is trained; it
   *  learns from observe() as the first model does. The evolutionary strategy uses it; others ignore it. */
  virtual void set_refine_model(costmodel::CostModel* model) { (void)model; }
  /** Changes StrategyParams::refine_explore from the next batch on (the tuner: 1, a cold run's share, once
   *  a pretrained cost model has handed over to its cold fallback). */
  virtual void set_refine_explore(double share) { (void)share; }
  /** True when the strategy cannot produce new candidates (grid done, space exhausted). */
  virtual bool exhausted() const = 0;
  virtual std::string name() const = 0;
};

/** Names accepted by make_search_strategy. */
std::vector<std::string> search_strategy_names();

/** model may be null for random and grid. seen: trace hashes already measured (exact resume). */
std::unique_ptr<SearchStrategy> make_search_strategy(const std::string& name, const SearchSpace& space,
                                                     costmodel::CostModel* model, const StrategyParams& params,
                                                     const std::set<std::string>& seen = {});

}  // namespace tessel::tuner
