// A search space: named knobs (each a list of options, an option being a tuple of integers) and a
// function from one option per knob to a schedule trace. tessel generates spaces from the computation
// (make_rule_space: rules over the stage DAG, no hand-written templates); users can also write an
// AutoTVM-style knob space (make_knob_space) or add their own rules (SketchRule).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessel/codegen/target.h"
#include "tessel/schedule/schedule.h"
#include "tessel/support/error.h"
#include "tessel/workload/workload.h"

namespace tessel::tuner {

struct Knob {
  std::string name;                           // e.g. "C.tile.i" (stage.what.axis)
  std::vector<std::vector<int64_t>> options;  // e.g. {{1,1,1}, {1,2,4}, ...}
};

/** One option index per knob. */
using KnobValues = std::vector<int>;
/** A choice by knob name: {"C.gpu_tile.i": {8, 8}, ...} (what SearchSpace::describe gives as JSON). */
using KnobChoice = std::map<std::string, std::vector<int64_t>>;

/** True when option b is option a with one prime factor p moved between two levels of a tile: one entry
 *  times p and another divided by p, or one entry alone times or divided by p (the factor moved to or from
 *  the level outside the tuple). Entries must be positive. */
bool prime_move(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
/** The options next to option i of a knob (a local mutation's choices): for tile sizes, those one
 *  prime_move away (Ansor's tile-size mutation); when there are none, the options before and after i. */
std::vector<int> neighbour_options(const Knob& knob, int i);

class SearchSpace {
 public:
  virtual ~SearchSpace() = default;
  virtual const std::vector<Knob>& knobs() const = 0;
  /** Applies a choice to a fresh schedule of the workload; an illegal combination returns the error
   *  (the candidate is rejected before measurement). On success *trace holds the steps. */
  virtual Status make_trace(const KnobValues& values, std::vector<schedule::Step>* trace) const = 0;
  virtual const workload::Workload& workload() const = 0;
  /** Number of knob combinations (may exceed 2^53: a double). */
  double size() const;
  /** {"knob name": [option...]} of a choice (for records and reports). */
  nlohmann::json describe(const KnobValues& values) const;
  /** Known-good starting points of this space (its rules' seeds), measured first by a tuning run. */
  virtual std::vector<KnobValues> seeds() const { return {}; }
};

/** What a rule sees of one stage when deciding whether it applies. */
struct StageInfo {
  const schedule::Stage* stage = nullptr;
  bool is_output = false;
  bool is_injective = false;   // no reduction
  bool has_reuse = false;      // a reduction whose inputs are reused across data axes (matmul, conv)
  std::vector<std::string> consumers;  // stage names reading it
};

/** True for a reduction some of whose operands are read without some data axis (each operand element
 *  is used for several outputs: matmul, conv) — what multi-level tiling pays off for. */
bool has_data_reuse(const te::Operation& op);

/** Lets a rule declare knobs and later read the chosen options. */
class RuleContext {
 public:
  virtual ~RuleContext() = default;
  /** Declares a knob (at space construction) and returns its index. */
  virtual int add_knob(Knob k) = 0;
  /** The chosen option of knob i (while applying). */
  virtual const std::vector<int64_t>& option(int knob) const = 0;
};

/** A sketch rule: claims stages and schedules them. Rules are tried in order; the first whose applies()
 *  is true for a stage owns it. declare() runs once per stage at space construction, apply() per
 *  candidate, on the candidate's schedule (stages are visited consumers first). */
class SketchRule {
 public:
  virtual ~SketchRule() = default;
  virtual std::string name() const = 0;
  virtual bool applies(const StageInfo& s, const schedule::Schedule& sch) const = 0;
  /** Declares this stage's knobs; returns a rule-private state id stored for apply. */
  virtual std::vector<int> declare(const StageInfo& s, const schedule::Schedule& sch, RuleContext& ctx) const = 0;
  virtual Status apply(const StageInfo& s, schedule::Schedule& sch, const std::vector<int>& knobs,
                       const RuleContext& ctx) const = 0;
  /** Known-good configurations of this stage (hand-tuned kernels the search should start from), by the
   *  names of the knobs declare() made; knobs a seed leaves out take their first option, and a seed
   *  naming an option its knob lacks is dropped. Default: none. */
  virtual std::vector<KnobChoice> seeds(const StageInfo& s, const schedule::Schedule& sch) const {
    (void)s, (void)sch;
    return {};
  }
};

struct RuleSpaceParams {
  int max_innermost_factor = 64;     // S3 / R1 tile factors at most this
  int max_vector_lanes = 64;
  std::vector<int64_t> unroll_steps = {0, 16, 64, 512};  // auto_unroll_max_step options
  int max_local_tile = 4096;         // elements of a cache_write tile
  int vector_lanes = 16;             // lanes of the target's widest vector for 32-bit elements
  int max_register_tile = 32;        // innermost tile (S3 product / vector_lanes) at most this many vectors
  int max_inner_factor_other = 16;   // S3 factor of data axes other than the vectorized one
};

/** The rules tessel uses by default for CPUs, in order: inline injective intermediates, multi-level
 *  tiling (SSRSRS) with cache_write / consumer fusion for reductions with reuse, parallel + unroll for
 *  other reductions, fuse-split-vectorize-parallel for injective outputs. */
std::vector<std::shared_ptr<const SketchRule>> default_cpu_rules(const RuleSpaceParams& p = {});

/** Knobs of the GPU rules. */
struct GpuRuleParams {
  int max_threads = 1024;                          // threads per block
  int max_inner_factor = 8;                        // per-thread tile of one data axis
  int max_reduce_inner = 16;                       // reduction steps per shared-memory slice
  std::vector<int64_t> thread_options = {32, 64, 128, 256, 512, 1024};  // injective / reduction outputs
  std::vector<int64_t> vector_options = {1, 2, 4};  // vector width of global loads and stores
  std::vector<int64_t> unroll_steps = {0, 16, 64, 512, 1024};
  std::vector<int64_t> row_fallback_threads = {64, 256};  // gpu_row_block's one-element-per-thread options
  std::vector<int64_t> min_blocks_options = {0, 2};        // pragma min_blocks_per_sm (0: none)
  std::vector<int64_t> vthread_options = {1, 2};  // virtual threads per data axis of a tiled reduction
  bool whole_warps = true;  // tiled reductions: threads per block a multiple of 32 when the outputs
                            // (>= 4096 of them) allow
};

/** The GPU rules (docs/gpu-codegen.md), in order: inline injective intermediates; multi-level tiling for
 *  reductions with reuse (data axes split into block / thread / per-thread levels, blocks and threads
 *  fused and bound, register accumulators, each operand optionally staged in shared memory per
 *  reduction slice and fetched cooperatively with vector loads); elementwise outputs reading per-row
 *  reductions (softmax, layer_norm) one block per row with cross-thread reductions; other reductions
 *  one output per thread (computed inside their consumer's thread when they have one); injective outputs fused,
 *  vectorized and split over blocks and threads. */
std::vector<std::shared_ptr<const SketchRule>> default_gpu_rules(const GpuRuleParams& p = {});

/** A space generated by rules for a GPU: `rules` in front of default_gpu_rules(p). */
std::unique_ptr<SearchSpace> make_gpu_rule_space(std::shared_ptr<const workload::Workload> w,
                                                 std::vector<std::shared_ptr<const SketchRule>> rules = {},
                                                 const GpuRuleParams& p = {});

/** A space generated from the workload's stage DAG by rules (default_cpu_rules() when rules is empty;
 *  user rules may be put in front of the defaults). */
std::unique_ptr<SearchSpace> make_rule_space(std::shared_ptr<const workload::Workload> w,
                                             std::vector<std::shared_ptr<const SketchRule>> rules = {},
                                             const RuleSpaceParams& p = {});

/** The space `tune` searches for `w` on `target`: the GPU rules for cuda targets, else the CPU rules with
 *  the target's vector width (8 lanes of fp32 on AVX2, 16 on AVX-512), so a record's knob values index the
 *  options of this space only on a target of the same width. */
std::unique_ptr<SearchSpace> make_target_space(std::shared_ptr<const workload::Workload> w,
                                               const codegen::Target& target);

/** AutoTVM-style: the user declares knobs and writes the function that schedules with them. */
using KnobApplyFn = std::function<Status(schedule::Schedule&, const std::map<std::string, std::vector<int64_t>>&)>;
std::unique_ptr<SearchSpace> make_knob_space(std::shared_ptr<const workload::Workload> w, std::vector<Knob> knobs,
                                             KnobApplyFn apply);

/** Factor tuples (f1, ..., fn) whose product divides extent, each factor <= max_factor where given
 *  (max_factor[i] == 0: unbounded); the tuple of all ones first. */
std::vector<std::vector<int64_t>> factor_tuples(int64_t extent, int n, const std::vector<int64_t>& max_factor);

/** The point of `to` closest to point `values` of `from` (another workload's space built by the same
 *  rules): each knob of `to` takes the option equal to the same-named knob's option in `from`, else the
 *  nearest one (same length, least sum of |log2(1 + a) - log2(1 + b)|), else its first option. Empty when
 *  fewer than half of `to`'s knobs have a same-named knob in `from` (unrelated workloads). */
KnobValues map_knobs(const SearchSpace& from, const KnobValues& values, const SearchSpace& to);

}  // namespace tessel::tuner
