// Search-space plumbing: the rule-generated space (stages visited consumers first, the first applicable
// rule owns a stage), the AutoTVM-style knob space, and factor enumeration.
#include "tessel/tuner/search_space.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tessel/ir/functor.h"

namespace tessel::tuner {

double SearchSpace::size() const {
  double n = 1;
  for (auto& k : knobs()) n *= double(std::max<size_t>(1, k.options.size()));
  return n;
}

nlohmann::json SearchSpace::describe(const KnobValues& values) const {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < knobs().size() && i < values.size(); ++i) j[knobs()[i].name] = knobs()[i].options[values[i]];
  return j;
}

std::vector<std::vector<int64_t>> factor_tuples(int64_t extent, int n, const std::vector<int64_t>& max_factor) {
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= extent; ++d)
    if (extent % d == 0) divisors.push_back(d);
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> cur;
  std::function<void(int64_t)> rec = [&](int64_t remaining) {
    if (int(cur.size()) == n) {
      out.push_back(cur);
      return;
    }
    int64_t cap = size_t(cur.size()) < max_factor.size() && max_factor[cur.size()] > 0 ? max_factor[cur.size()] : remaining;
    for (int64_t d : divisors) {
      if (d > cap || remaining % d) continue;
      cur.push_back(d);
      rec(remaining / d);
      cur.pop_back();
    }
  };
  rec(extent);
  return out;  // divisors ascending: the all-ones tuple comes first
}

bool prime_move(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() != b.size()) return false;
  auto prime = [](int64_t p) {
    if (p < 2) return false;
    for (int64_t d = 2; d * d <= p; ++d)
      if (p % d == 0) return false;
    return true;
  };
  int64_t up = 1, down = 1;  // the factor an entry grew by, and the factor one shrank by
  int changed = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] <= 0 || b[i] <= 0) return false;
    if (a[i] == b[i]) continue;
    if (++changed > 2) return false;
    if (b[i] % a[i] == 0 && up == 1) up = b[i] / a[i];
    else if (a[i] % b[i] == 0 && down == 1) down = a[i] / b[i];
    else return false;
  }
  if (changed == 1) return prime(up * down);
  return changed == 2 && up == down && prime(up);
}

std::vector<int> neighbour_options(const Knob& knob, int i) {
  std::vector<int> out;
  auto& opts = knob.options;
  for (int j = 0; j < int(opts.size()); ++j)
    if (j != i && prime_move(opts[size_t(i)], opts[size_t(j)])) out.push_back(j);
  if (out.empty()) {
    if (i > 0) out.push_back(i - 1);
    if (i + 1 < int(opts.size())) out.push_back(i + 1);
  }
  return out;
}

namespace {

class RuleSpace : public SearchSpace, public RuleContext {
 public:
  RuleSpace(std::shared_ptr<const workload::Workload> w, std::vector<std::shared_ptr<const SketchRule>> rules)
      : w_(std::move(w)), rules_(std::move(rules)) {
    schedule::Schedule s(w_->outputs);
    analyze(s);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      StageInfo info = info_for(*it, s);
      if (!info.stage || info.stage->is_placeholder()) continue;
      for (auto& r : rules_) {
        if (!r->applies(info, s)) continue;
        Claim c{*it, r.get(), {}, {}};
        c.knobs = r->declare(info, s, *this);
        c.seeds = r->seeds(info, s);
        claims_.push_back(c);
        break;
      }
    }
  }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  const workload::Workload& workload() const override { return *w_; }
  int add_knob(Knob k) override {
    TESSEL_ICHECK(!k.options.empty()) << "knob " << k.name << " without options";
    knobs_.push_back(std::move(k));
    return int(knobs_.size()) - 1;
  }
  const std::vector<int64_t>& option(int knob) const override { return knobs_[knob].options[(*values_)[knob]]; }

  // Seed i: each claim's i-th seed (or its first), merged; unnamed knobs at option 0. A seed naming an
  // option its knob lacks (a tile that does not fit this shape) is dropped.
  std::vector<KnobValues> seeds() const override {
    size_t n = 0;
    for (auto& c : claims_) n = std::max(n, c.seeds.size());
    std::vector<KnobValues> out;
    for (size_t i = 0; i < n; ++i) {
      KnobChoice merged;
      for (auto& c : claims_)
        if (!c.seeds.empty()) merged.merge(KnobChoice(c.seeds[std::min(i, c.seeds.size() - 1)]));
      KnobValues v(knobs_.size(), 0);
      size_t found = 0;
      for (size_t k = 0; k < knobs_.size(); ++k) {
        auto it = merged.find(knobs_[k].name);
        if (it == merged.end()) continue;
        auto o = std::find(knobs_[k].options.begin(), knobs_[k].options.end(), it->second);
        if (o == knobs_[k].options.end()) break;
        v[k] = int(o - knobs_[k].options.begin());
        ++found;
      }
      if (found == merged.size()) out.push_back(std::move(v));
    }
    return out;
  }

  Status make_trace(const KnobValues& values, std::vector<schedule::Step>* trace) const override {
    if (values.size() != knobs_.size()) return Status::error("knob count mismatch");
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i] < 0 || size_t(values[i]) >= knobs_[i].options.size()) return Status::error("knob value out of range");
    schedule::Schedule s(w_->outputs);
    values_ = &values;
    try {
      for (auto& c : claims_) {
        StageInfo info = info_for(c.stage, s);
        Status st = c.rule->apply(info, s, c.knobs, *this);
        if (!st) return Status::error(c.rule->name() + " on " + c.stage + ": " + st.message());
      }
    } catch (const UserError& e) {
      return Status::error(e.what());
    }
    *trace = s.trace();
    return Status::ok();
  }

 private:
  struct Claim {
    std::string stage;
    const SketchRule* rule;
    std::vector<int> knobs;
    std::vector<KnobChoice> seeds;  // the rule's seeds for this stage
  };

  void analyze(const schedule::Schedule& s) {
    for (auto& st : s.stages()) {
      order_.push_back(st->name);
      auto* c = te::as_compute(st->op);
      if (!c) continue;
      for (auto& in : c->inputs()) consumers_[in->name()].push_back(st->name);
      reuse_[st->name] = has_data_reuse(st->op);
    }
  }

  StageInfo info_for(const std::string& name, const schedule::Schedule& s) const {
    StageInfo info;
    const schedule::Stage* st = nullptr;
    for (auto& x : s.stages())
      if (x->name == name) st = x.get();
    info.stage = st;
    if (!st) return info;
    info.is_output = st->is_output;
    info.is_injective = !st->is_reduction();
    auto it = reuse_.find(name);
    info.has_reuse = it != reuse_.end() && it->second;
    auto ci = consumers_.find(name);
    if (ci != consumers_.end()) info.consumers = ci->second;
    return info;
  }

  std::shared_ptr<const workload::Workload> w_;
  std::vector<std::shared_ptr<const SketchRule>> rules_;
  std::vector<Knob> knobs_;
  std::vector<std::string> order_;
  std::map<std::string, std::vector<std::string>> consumers_;
  std::map<std::string, bool> reuse_;
  std::vector<Claim> claims_;
  mutable const KnobValues* values_ = nullptr;
};

class KnobSpace : public SearchSpace {
 public:
  KnobSpace(std::shared_ptr<const workload::Workload> w, std::vector<Knob> k, KnobApplyFn f)
      : w_(std::move(w)), knobs_(std::move(k)), apply_(std::move(f)) {
    for (auto& x : knobs_) TESSEL_CHECK(!x.options.empty()) << "knob " << x.name << " has no options";
  }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  const workload::Workload& workload() const override { return *w_; }
  Status make_trace(const KnobValues& values, std::vector<schedule::Step>* trace) const override {
    if (values.size() != knobs_.size()) return Status::error("knob count mismatch");
    std::map<std::string, std::vector<int64_t>> chosen;
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] < 0 || size_t(values[i]) >= knobs_[i].options.size()) return Status::error("knob value out of range");
      chosen[knobs_[i].name] = knobs_[i].options[values[i]];
    }
    schedule::Schedule s(w_->outputs);
    try {
      Status st = apply_(s, chosen);
      if (!st) return st;
    } catch (const UserError& e) {
      return Status::error(e.what());
    }
    *trace = s.trace();
    return Status::ok();
  }

 private:
  std::shared_ptr<const workload::Workload> w_;
  std::vector<Knob> knobs_;
  KnobApplyFn apply_;
};

}  // namespace

bool has_data_reuse(const te::Operation& op) {
  auto* c = te::as_compute(op);
  if (!c || !c->reduce()) return false;
  bool reuse = false;
  ir::post_order_visit(c->body, [&](const ir::Expr& e) {
    auto* t = e.as<ir::TensorRead>();
    if (!t) return;
    for (auto& ax : c->axis) {
      bool used = false;
      for (auto& idx : t->indices) used |= ir::uses_var(idx, [&](const ir::VarNode* v) { return v == ax->var.get(); });
      reuse |= !used;
    }
  });
  return reuse;
}

std::unique_ptr<SearchSpace> make_rule_space(std::shared_ptr<const workload::Workload> w,
                                             std::vector<std::shared_ptr<const SketchRule>> rules,
                                             const RuleSpaceParams& p) {
  auto defaults = default_cpu_rules(p);
  rules.insert(rules.end(), defaults.begin(), defaults.end());
  return std::make_unique<RuleSpace>(std::move(w), std::move(rules));
}

std::unique_ptr<SearchSpace> make_gpu_rule_space(std::shared_ptr<const workload::Workload> w,
                                                 std::vector<std::shared_ptr<const SketchRule>> rules,
                                                 const GpuRuleParams& p) {
  auto defaults = default_gpu_rules(p);
  rules.insert(rules.end(), defaults.begin(), defaults.end());
  return std::make_unique<RuleSpace>(std::move(w), std::move(rules));
}

std::unique_ptr<SearchSpace> make_target_space(std::shared_ptr<const workload::Workload> w,
                                               const codegen::Target& target) {
  if (target.is_cuda()) return make_gpu_rule_space(std::move(w));  // docs/gpu-codegen.md
  RuleSpaceParams rp;
  rp.vector_lanes = std::max(4, target.vector_bytes() / 4);
  return make_rule_space(std::move(w), {}, rp);
}

std::unique_ptr<SearchSpace> make_knob_space(std::shared_ptr<const workload::Workload> w, std::vector<Knob> knobs,
                                             KnobApplyFn apply) {
  return std::make_unique<KnobSpace>(std::move(w), std::move(knobs), std::move(apply));
}

KnobValues map_knobs(const SearchSpace& from, const KnobValues& values, const SearchSpace& to) {
  TESSEL_CHECK(values.size() == from.knobs().size()) << "map_knobs: " << values.size() << " values for "
                                                     << from.knobs().size() << " knobs";
  std::map<std::string, const std::vector<int64_t>*> chosen;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& opts = from.knobs()[i].options;
    TESSEL_CHECK(values[i] >= 0 && size_t(values[i]) < opts.size())
        << "map_knobs: option " << values[i] << " of knob " << from.knobs()[i].name << " out of range";
    chosen[from.knobs()[i].name] = &opts[size_t(values[i])];
  }
  auto distance = [](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i)
      d += std::fabs(std::log2(1.0 + std::fabs(double(a[i]))) - std::log2(1.0 + std::fabs(double(b[i]))));
    return d;
  };
  KnobValues out;
  size_t matched = 0;
  for (auto& k : to.knobs()) {
    auto it = chosen.find(k.name);
    int best = 0;
    if (it != chosen.end()) {
      ++matched;
      double best_d = std::numeric_limits<double>::infinity();
      for (size_t o = 0; o < k.options.size(); ++o) {
        if (k.options[o].size() != it->second->size()) continue;
        double d = distance(k.options[o], *it->second);
        if (d < best_d) best_d = d, best = int(o);
      }
    }
    out.push_back(best);
  }
  if (2 * matched < to.knobs().size()) return {};
  return out;
}

}  // namespace tessel::tuner
