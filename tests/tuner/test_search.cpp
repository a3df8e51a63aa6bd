// Search spaces, strategies, the task scheduler and the tuning loop against a deterministic fake runner;
// one real tuning run through the local builder and runner.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <random>
#include <cmath>

#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/ops/registry.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/tuner/fake_runner.h"
#include "tessel/tuner/task_scheduler.h"
#include "tessel/tuner/tuner.h"
#include "tessel/costmodel/learned_model.h"
#include "strategy_base.h"

using namespace tessel;
using namespace tessel::tuner;

namespace {

std::shared_ptr<const workload::Workload> wl(const std::string& spec) {
  return std::make_shared<workload::Workload>(workload::from_spec(spec));
}

std::string temp_db(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("tessel_test_search_" + std::to_string(::getpid()) + "_" + name + ".db");
  std::filesystem::remove(p);
  std::filesystem::remove(p.string() + "-wal");
  std::filesystem::remove(p.string() + "-shm");
  return p.string();
}

TuneOptions fake_options(const std::string& db, std::vector<TuneTask> tasks, int64_t trials,
                         FakeRunnerParams rp = {}) {
  TuneOptions o;
  o.tasks = std::move(tasks);
  o.trials = trials;
  o.db_path = db;
  o.batch_size = 8;
  o.remeasure_top = 0;
  o.refine_model = "none";  // the loop's mechanics; the refine stage has its own tests (it compiles candidates)
  o.transfer_from = {"none"};  // likewise the shipped records the default (pretrained) cost model brings
  o.make_builder = [](const std::string&, int) { return std::make_unique<FakeBuilder>(); };
  o.make_runner = [rp](const std::string&) { return std::make_unique<FakeRunner>(rp); };
  return o;
}

std::vector<size_t> shape_of(const te::Tensor& t) {
  std::vector<size_t> s;
  for (auto& e : t.shape()) s.push_back(size_t(*ir::as_const_int(e)));
  return s;
}

// Runs a schedule and the default schedule of the same workload on the same random inputs; compares.
void check_against_default(const workload::Workload& w, const schedule::Schedule& s, uint64_t seed) {
  auto args = w.args();
  auto ref = codegen::JitModule::compile(lower::lower(schedule::Schedule(w.outputs), args, "ref"));
  auto got = codegen::JitModule::compile(lower::lower(s, args, "cand"));
  std::vector<runtime::NDArray> a, b;
  for (size_t i = 0; i < args.size(); ++i) {
    std::vector<int64_t> sh;
    for (auto e : shape_of(args[i])) sh.push_back(int64_t(e));
    a.emplace_back(sh, runtime::DType::parse(args[i].dtype().to_string()));
    b.emplace_back(sh, runtime::DType::parse(args[i].dtype().to_string()));
    if (i < w.inputs.size()) {
      a.back().fill_random(seed + i);
      b.back().fill_random(seed + i);
    } else {
      a.back().fill_bytes(0xFF);
      b.back().fill_bytes(0xAB);
    }
  }
  std::vector<void*> pa, pb;
  for (auto& x : a) pa.push_back(x.data());
  for (auto& x : b) pb.push_back(x.data());
  ref->call_packed(pa.data());
  got->call_packed(pb.data());
  for (size_t i = w.inputs.size(); i < args.size(); ++i)
    for (int64_t k = 0; k < a[i].num_elements(); ++k) {
      INFO(w.spec << " output " << i << " element " << k << " seed " << seed);
      REQUIRE(std::fabs(a[i].get(k) - b[i].get(k)) <= 1e-3 * (1 + std::fabs(a[i].get(k))));
    }
}

}  // namespace

TEST_CASE("rule space: knobs come from the computation and sampled schedules are correct", "[tuner]") {
  std::vector<std::string> specs = {"matmul:M=48,N=64,K=40",
                                    "dense:M=8,N=48,K=32,bias=1,activation=gelu",
                                    "conv2d_nchw:N=1,H=10,W=10,CI=8,CO=16,KH=3,KW=3,stride=1,pad=1,bias=1,activation=relu",
                                    "softmax:M=12,N=40",
                                    "elementwise_chain:M=9,N=70,activation=relu",
                                    "reduce:D0=3,D1=1000,op=sum,axes=1",
                                    "conv2d_nchw:N=1,H=6,W=10,CI=8,CO=16,KH=1,KW=1,stride=1,pad=0",
                                    "reduce:D0=700,op=max,axes=0"};
  std::mt19937_64 rng(7);
  int valid = 0;
  for (auto& spec : specs) {
    auto w = wl(spec);
    auto space = make_rule_space(w);
    INFO(spec);
    REQUIRE_FALSE(space->knobs().empty());
    for (int t = 0; t < 12; ++t) {
      KnobValues k;
      for (auto& kn : space->knobs()) k.push_back(std::uniform_int_distribution<int>(0, int(kn.options.size()) - 1)(rng));
      std::vector<schedule::Step> trace;
      if (!space->make_trace(k, &trace)) continue;
      ++valid;
      schedule::Schedule s(w->outputs);
      REQUIRE(s.apply_all(trace).is_ok());
      check_against_default(*w, s, 100 + t);
    }
  }
  CHECK(valid >= 30);
  auto mm = make_rule_space(wl("matmul:M=64,N=64,K=64"));
  std::set<std::string> names;
  for (auto& k : mm->knobs()) names.insert(k.name);
  CHECK(names.count("C.tile.i"));
  CHECK(names.count("C.tile.j"));
  CHECK(names.count("C.tile.k"));
  CHECK(names.count("C.unroll"));
  CHECK(names.count("C.pack.B"));
  auto red = make_rule_space(wl("reduce:D0=3,D1=1000,op=sum,axes=1"));
  bool has_rf = false;
  for (auto& k : red->knobs()) has_rf |= k.name.find(".rfactor") != std::string::npos;
  CHECK(has_rf);
  // A pointwise NCHW convolution tiles H and W as one contiguous axis.
  auto pw = make_rule_space(wl("conv2d_nchw:N=1,H=6,W=10,CI=8,CO=16,KH=1,KW=1,stride=1,pad=0"));
  bool fused = false;
  for (auto& k : pw->knobs()) fused |= k.name == "Out.tile.l.m.f";
  CHECK(fused);
  auto c3 = make_rule_space(wl("conv2d_nchw:N=1,H=6,W=10,CI=8,CO=16,KH=3,KW=3,stride=1,pad=1"));
  for (auto& k : c3->knobs()) CHECK(k.name.find(".f") == std::string::npos);
}

namespace {
// Exposes the strategies' shared mutation.
class MutationProbe : public tuner::detail::StrategyBase {
 public:
  using StrategyBase::StrategyBase;
  using StrategyBase::mutate;
  std::vector<Candidate> propose(int) override { return {}; }
  bool exhausted() const override { return false; }
  std::string name() const override { return "probe"; }
};
}  // namespace

TEST_CASE("local mutation moves one prime factor of a tile between levels", "[tuner]") {
  CHECK(prime_move({1, 2, 4}, {2, 1, 4}));   // a 2 from level 1 to level 0
  CHECK(prime_move({1, 7, 2}, {7, 1, 2}));
  CHECK(prime_move({1, 2, 4}, {1, 2, 8}));   // from the outer remainder
  CHECK(prime_move({1, 2, 4}, {1, 2, 2}));   // to it
  CHECK(prime_move({3}, {1}));
  CHECK_FALSE(prime_move({1, 2, 4}, {1, 4, 8}));  // two levels grew
  CHECK_FALSE(prime_move({1, 2, 4}, {1, 8, 1}));  // 4 is not prime
  CHECK_FALSE(prime_move({2, 3, 1}, {3, 2, 1}));  // different factors
  CHECK_FALSE(prime_move({1, 2, 4}, {1, 2, 4}));
  CHECK_FALSE(prime_move({0}, {16}));             // not a factor (an unroll depth)
  CHECK_FALSE(prime_move({1, 2}, {1, 2, 2}));

  auto w = wl("conv2d_nchw:N=1,H=56,W=56,CI=64,CO=64,KH=3,KW=3,stride=1,pad=1,bias=1,activation=relu");
  auto space = make_rule_space(w);
  auto& knobs = space->knobs();
  std::mt19937_64 rng(3);
  KnobValues start;
  for (auto& kn : knobs) start.push_back(std::uniform_int_distribution<int>(0, int(kn.options.size()) - 1)(rng));
  auto changes = [&](double local) {
    StrategyParams p;
    p.local_mutation = local;
    MutationProbe probe(*space, nullptr, p, {});
    int moves = 0, prime_moves = 0, steps = 0;  // steps: prime moves or steps to the next option
    for (int t = 0; t < 400; ++t) {
      KnobValues k = probe.mutate(start);
      REQUIRE(k.size() == start.size());
      for (size_t i = 0; i < k.size(); ++i) {
        if (k[i] == start[i]) continue;
        ++moves;
        auto& a = knobs[i].options[size_t(start[i])];
        auto& b = knobs[i].options[size_t(k[i])];
        prime_moves += prime_move(a, b);
        steps += prime_move(a, b) || std::abs(k[i] - start[i]) == 1;
      }
    }
    REQUIRE(moves > 200);
    return std::pair<double, double>(double(prime_moves) / moves, double(steps) / moves);
  };
  auto [pm_local, near_local] = changes(1.0);
  auto [pm_any, near_any] = changes(0.0);
  INFO(pm_local << " " << near_local << " " << pm_any << " " << near_any);
  // every change is a prime move or (other knobs) a step to the next option, but for the few mutants that
  // changed one knob twice
  CHECK(near_local > 0.97);
  CHECK(pm_local > 0.5);          // most knobs of a convolution are tile sizes
  CHECK(pm_any < pm_local - 0.2);  // uniform changes mostly jump further
}

TEST_CASE("knob space (AutoTVM style) with grid search visits every combination once", "[tuner]") {
  auto w = wl("matmul:M=32,N=32,K=32");
  auto space = make_knob_space(w, {{"ti", {{1}, {4}, {8}}}, {"tj", {{1}, {8}, {16}}}},
                               [](schedule::Schedule& s, const std::map<std::string, std::vector<int64_t>>& k) {
                                 s.split("C", "i", k.at("ti")[0]);
                                 s.split("C", "j", k.at("tj")[0]);
                                 return Status::ok();
                               });
  auto grid = make_search_strategy("grid", *space, nullptr, {});
  std::set<std::string> hashes;
  while (!grid->exhausted()) {
    auto b = grid->propose(4);
    for (auto& c : b) CHECK(hashes.insert(c.trace_hash).second);
    grid->observe(b, std::vector<double>(b.size(), 1.0));
  }
  CHECK(hashes.size() == 9);
  CHECK_THROWS_WITH(make_search_strategy("tabu", *space, nullptr, {}), Catch::Contains("strategies: evolutionary"));
}

namespace {
// A model that knows the fake runner's time function exactly (an oracle), to test that a strategy
// really follows its model.
class OracleModel : public costmodel::CostModel {
 public:
  std::vector<double> predict(const std::vector<costmodel::Candidate>& c) override {
    std::vector<double> out;
    for (auto& x : c) out.push_back(-FakeRunner::hash_time({nullptr, *x.trace}));
    return out;
  }
  void update(const std::vector<costmodel::Candidate>&, const std::vector<double>&) override {}
  bool trained() const override { return true; }
  std::string name() const override { return "oracle"; }
};

// Knows nothing (equal scores) but says it is trained: the search's choice is then its population order.
class FlatModel : public costmodel::CostModel {
 public:
  std::vector<double> predict(const std::vector<costmodel::Candidate>& c) override { return std::vector<double>(c.size(), 0.0); }
  void update(const std::vector<costmodel::Candidate>&, const std::vector<double>&) override {}
  bool trained() const override { return true; }
  std::string name() const override { return "flat"; }
};

// Knows the fake runner's time function and says the opposite: the slowest candidates score best (a
// pretrained model whose favourites mislead the run).
class WrongModel : public OracleModel {
 public:
  std::vector<double> predict(const std::vector<costmodel::Candidate>& c) override {
    auto s = OracleModel::predict(c);
    for (double& x : s) x = -x;
    return s;
  }
};

// The oracle as a refine model: counts what it is asked to score and what it learns from.
class CountingOracle : public OracleModel {
 public:
  std::vector<double> predict(const std::vector<costmodel::Candidate>& c) override {
    asked.push_back(c.size());
    return OracleModel::predict(c);
  }
  void update(const std::vector<costmodel::Candidate>& c, const std::vector<double>&) override { learned += c.size(); }
  std::vector<size_t> asked;
  size_t learned = 0;
};

double best_after(const std::string& strategy, costmodel::CostModel* model, const SearchSpace& space, int trials,
                  costmodel::CostModel* refine = nullptr, int shortlist = 4, double explore = 0, uint64_t seed = 3,
                  int stall_batches = 4) {
  StrategyParams p;
  p.seed = seed;
  p.refine_shortlist = shortlist;
  p.refine_explore = explore;
  p.stall_batches = stall_batches;
  p.polish = 0;  // these tests count the refine stage's shortlist (polish has its own)
  auto s = make_search_strategy(strategy, space, model, p);
  if (refine) s->set_refine_model(refine);
  double best = 1e9;
  for (int done = 0; done < trials;) {
    auto b = s->propose(8);
    if (b.empty()) break;
    std::vector<double> thr;
    for (auto& c : b) {
      double t = FakeRunner::hash_time({nullptr, c.trace});
      best = std::min(best, t);
      thr.push_back(1.0 / t);
    }
    s->observe(b, thr);
    done += int(b.size());
  }
  return best;
}
}  // namespace

TEST_CASE("model-guided strategies follow the model, random does not need one", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  auto space = make_rule_space(w);
  OracleModel oracle;
  double rnd = best_after("random", nullptr, *space, 48);
  double evo = best_after("evolutionary", &oracle, *space, 48);
  double sa = best_after("annealing", &oracle, *space, 48);
  INFO("random " << rnd << " evolutionary " << evo << " annealing " << sa);
  CHECK(evo < rnd);
  CHECK(sa < rnd);
  CHECK(evo < 1.3e-4);  // near the bottom of the fake time range [1e-4, 1e-3)
}

TEST_CASE("a refine model re-ranks the shortlist the cost model chose", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  auto space = make_rule_space(w);
  FlatModel flat;
  CountingOracle refine;
  double alone = best_after("evolutionary", &flat, *space, 48);
  best_after("evolutionary", &flat, *space, 48, &refine, 8);  // fills refine.asked / learned, checked below
  // Better over several seeds (one seed's comparison depends on its random stream).
  double alone_sum = 0, refined_sum = 0;
  for (uint64_t seed = 10; seed < 15; ++seed) {
    CountingOracle r;
    alone_sum += best_after("evolutionary", &flat, *space, 48, nullptr, 4, 0, seed);
    refined_sum += best_after("evolutionary", &flat, *space, 48, &r, 8, 0, seed);
  }
  INFO("flat model alone " << alone_sum << ", refined by the oracle " << refined_sum << " (5 seeds)");
  CHECK(refined_sum < alone_sum);
  // Each batch: the model-chosen part (8 minus the epsilon share, 0.05 x 8 rounds to 0) times the shortlist.
  REQUIRE(!refine.asked.empty());
  for (size_t n : refine.asked) CHECK(n == 64);
  CHECK(refine.learned == 48);  // it learns every measurement, as the cost model does
  // A shortlist of random samples only (refine_explore 1, what a cold run uses): the oracle still finds better.
  CountingOracle explorer;
  double explored = best_after("evolutionary", &flat, *space, 48, &explorer, 8, 1.0);
  INFO("refined from random samples " << explored);
  CHECK(explored < alone);
  for (size_t n : explorer.asked) CHECK(n == 64);
  // A shortlist of 1 leaves the choice to the cost model: the refine model is not asked.
  CountingOracle unused;
  CHECK(best_after("evolutionary", &flat, *space, 48, &unused, 1) == alone);
  CHECK(unused.asked.empty());
}

TEST_CASE("a stalled run draws its whole refine shortlist from outside the cost model's population", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  auto space = make_rule_space(w);
  WrongModel wrong;
  // No share drawn from outside the population (refine_explore 0): the oracle refine model can only choose
  // among the wrong model's favourites, unless a stall (4 batches without a 1% better best) opens the
  // shortlist to mutants of the best and random samples.
  double held = 0, freed = 0;
  for (uint64_t seed = 20; seed < 25; ++seed) {
    CountingOracle a, b;
    held += best_after("evolutionary", &wrong, *space, 96, &a, 8, 0, seed, 0);
    freed += best_after("evolutionary", &wrong, *space, 96, &b, 8, 0, seed, 4);
    for (size_t n : b.asked) CHECK(n == 64);  // the shortlist keeps its size
  }
  INFO("best times summed over 5 seeds: never released " << held << ", released after 4 batches " << freed);
  CHECK(freed < 0.8 * held);
}

TEST_CASE("polish: a batch's share of single-knob variants of the best measured, the model's best first", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  auto space = make_rule_space(w);
  OracleModel oracle;
  StrategyParams p;
  p.seed = 7;
  p.polish = 0.5;
  auto s = make_search_strategy("evolutionary", *space, &oracle, p);
  auto first = s->propose(8);
  REQUIRE(first.size() == 8);
  std::vector<double> thr;
  for (auto& c : first) thr.push_back(1.0 / FakeRunner::hash_time({nullptr, c.trace}));
  s->observe(first, thr);
  const Candidate& best = first[size_t(std::max_element(thr.begin(), thr.end()) - thr.begin())];
  std::set<std::string> measured;
  for (auto& c : first) measured.insert(c.trace_hash);
  // Every single-knob variant the polish step may take (written out here): any other option of a knob with
  // at most 8, a neighbouring one of a larger knob; valid and not measured.
  std::vector<double> variant_times;
  for (size_t i = 0; i < best.knobs.size(); ++i) {
    const Knob& k = space->knobs()[i];
    std::vector<int> opts;
    if (k.options.size() <= 8) {
      for (int o = 0; o < int(k.options.size()); ++o) opts.push_back(o);
    } else {
      opts = neighbour_options(k, best.knobs[i]);
    }
    for (int o : opts) {
      KnobValues v = best.knobs;
      v[i] = o;
      std::vector<schedule::Step> trace;
      if (o == best.knobs[i] || !space->make_trace(v, &trace)) continue;
      if (measured.count(records::trace_hash(schedule::trace_to_json(trace)))) continue;
      variant_times.push_back(FakeRunner::hash_time({nullptr, trace}));
    }
  }
  REQUIRE(variant_times.size() >= 4);
  std::sort(variant_times.begin(), variant_times.end());
  auto second = s->propose(8);
  REQUIRE(second.size() == 8);
  // The first half: the oracle's 4 best variants, each one knob away from the best measured.
  for (size_t j = 0; j < 4; ++j) {
    int changed = 0;
    for (size_t i = 0; i < best.knobs.size(); ++i) changed += second[j].knobs[i] != best.knobs[i];
    CHECK(changed == 1);
    CHECK(FakeRunner::hash_time({nullptr, second[j].trace}) == variant_times[j]);
  }
}

TEST_CASE("the refine stage chooses from the first batch on, before the cost model is trained", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  auto space = make_rule_space(w);
  auto untrained = costmodel::make_cost_model("random");  // never trained: batches would be random samples
  REQUIRE(!untrained->trained());
  double alone = best_after("evolutionary", untrained.get(), *space, 16);
  CountingOracle refine;
  double refined = best_after("evolutionary", untrained.get(), *space, 16, &refine, 8);
  INFO("random batches " << alone << ", best of 8x as many random samples by the oracle " << refined);
  CHECK(refined < alone);
  // Both batches chose from a shortlist of 8 x 8: random samples, then random samples and mutants of the
  // first batch's best.
  REQUIRE(refine.asked.size() == 2);
  for (size_t n : refine.asked) CHECK(n == 64);
}

TEST_CASE("the refine stage: cold on x86-64 CPUs (the shipped code model by name), none elsewhere", "[tuner]") {
  const std::string x86 = "llvm -mtriple=x86_64-pc-linux-gnu";
  CHECK(resolve_refine_model("none", "xgb", x86).empty());
  CHECK(resolve_refine_model("auto", "random", x86).empty());  // unguided stays unguided
  CHECK(resolve_refine_model("auto", "xgb", x86) == "cold");
  CHECK(resolve_refine_model("auto", "xgb", "cuda").empty());
  CHECK(resolve_refine_model("auto", "xgb", "llvm -mtriple=aarch64-linux-gnu").empty());
  CHECK(resolve_refine_model("cold", "random", x86) == "cold");
  CHECK(resolve_refine_model("analytic", "xgb", x86) == "analytic");
  CHECK_THROWS_WITH(resolve_refine_model("analytic", "xgb", "cuda"), Catch::Contains("reads x86-64 code"));
  CHECK_THROWS_WITH(resolve_refine_model("cold", "xgb", "cuda"), Catch::Contains("reads x86-64 code"));
  CHECK_THROWS_WITH(resolve_refine_model("/nonexistent.model", "xgb", x86), Catch::Contains("is not a model file"));
  // A pretrained cost model keeps the cold refine stage; the shipped code model is asked for by name.
  std::string pretrained = costmodel::pretrained_model_path();
  CHECK(resolve_refine_model("auto", pretrained, x86) == "cold");
  CHECK(resolve_refine_model("pretrained", pretrained, x86) == costmodel::pretrained_code_model_path());
  setenv("TESSEL_PRETRAINED_CODE_MODEL", "/nonexistent/code.model", 1);
  CHECK(resolve_refine_model("auto", pretrained, x86) == "cold");  // auto does not read it
  CHECK_THROWS_WITH(resolve_refine_model("pretrained", "xgb", x86), Catch::Contains("is not a file"));
  unsetenv("TESSEL_PRETRAINED_CODE_MODEL");
}

TEST_CASE("tuning loop: budget, database records, determinism", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  std::string db1 = temp_db("det1"), db2 = temp_db("det2");
  auto s1 = tune(fake_options(db1, {{w, 1, "mm"}}, 40));
  auto s2 = tune(fake_options(db2, {{w, 1, "mm"}}, 40));
  CHECK(s1.total_trials == 40);
  CHECK(s1.tasks[0].best_latency_s > 0);
  auto a = records::open_database(db1)->records({w->key, "", false, false, 0});
  auto b = records::open_database(db2)->records({w->key, "", false, false, 0});
  REQUIRE(a.size() == 40);
  REQUIRE(b.size() == 40);
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].trace_hash == b[i].trace_hash);  // one seed, one run
  auto j = s1.to_json();
  CHECK(j["tasks"][0]["trials"] == 40);
  CHECK(j["tasks"][0].contains("best_gflops"));
  CHECK(j.contains("estimated_latency_s"));
}

TEST_CASE("tuning resumes from the database and never re-measures a recorded trace", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  std::string db = temp_db("resume");
  tune(fake_options(db, {{w, 1, "mm"}}, 24));
  auto o = fake_options(db, {{w, 1, "mm"}}, 40);
  int64_t measured = 0;
  o.make_runner = [&measured](const std::string&) {
    FakeRunnerParams rp;
    rp.time_fn = [&measured](const MeasureInput& in) {
      ++measured;
      return FakeRunner::hash_time(in);
    };
    return std::make_unique<FakeRunner>(rp);
  };
  auto s = tune(o);
  CHECK(measured == 16);  // 24 resumed count toward the budget of 40
  CHECK(s.tasks[0].resumed == 24);
  auto recs = records::open_database(db)->records({w->key, "", false, false, 0});
  std::set<std::string> hashes;
  for (auto& r : recs) CHECK(hashes.insert(r.trace_hash).second);
  CHECK(recs.size() == 40);
  // Budget already spent: nothing is measured.
  measured = 0;
  auto o2 = o;
  o2.trials = 40;
  tune(o2);
  CHECK(measured == 0);
}

TEST_CASE("crashing, hanging and wrong candidates are recorded with their kind while tuning continues", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  std::string db = temp_db("faults");
  FakeRunnerParams rp;
  rp.faults[1] = {MeasureErrorKind::kRuntimeError, ""};
  rp.faults[2] = {MeasureErrorKind::kRunTimeout, ""};
  rp.faults[3] = {MeasureErrorKind::kWrongAnswer, "output C[5] = 3, expected 2"};
  rp.fault_rate = 0.2;
  auto s = tune(fake_options(db, {{w, 1, "mm"}}, 48, rp));
  CHECK(s.total_trials == 48);
  CHECK(s.tasks[0].errors["runtime_error"] >= 1);
  CHECK(s.tasks[0].errors["run_timeout"] == 1);
  CHECK(s.tasks[0].errors["wrong_answer"] == 1);
  auto database = records::open_database(db);
  auto best = database->best(w->key, codegen::Target::host().to_string());
  REQUIRE(best);
  CHECK(best->error_kind == MeasureErrorKind::kNone);
  int64_t failed = 0;
  for (auto& r : database->records({w->key, "", false, false, 0})) failed += !r.ok();
  CHECK(failed >= 3);
}

TEST_CASE("several tasks: gradient and round-robin schedulers share the budget", "[tuner]") {
  auto a = wl("matmul:M=64,N=64,K=64"), b = wl("softmax:M=16,N=64");
  for (std::string sched : {"gradient", "round-robin"}) {
    auto o = fake_options(temp_db("multi_" + sched), {{a, 3, "mm"}, {b, 1, "softmax"}}, 48);
    o.scheduler = sched;
    auto s = tune(o);
    CHECK(s.total_trials == 48);
    CHECK(s.tasks[0].trials >= 8);
    CHECK(s.tasks[1].trials >= 8);
    CHECK(s.estimated_latency_s == Approx(3 * s.tasks[0].best_latency_s + s.tasks[1].best_latency_s));
  }
  CHECK_THROWS_WITH(make_task_scheduler("lottery"), Catch::Contains("gradient or round-robin"));
}

TEST_CASE("a time budget stops the run", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  FakeRunnerParams rp;
  rp.time_fn = [](const MeasureInput& in) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return FakeRunner::hash_time(in);
  };
  auto o = fake_options(temp_db("time"), {{w, 1, "mm"}}, 100000, rp);
  o.time_budget_s = 0.5;
  auto s = tune(o);
  CHECK(s.stopped_by_time);
  CHECK(s.total_trials < 100000);
}

TEST_CASE("stop_when ends the run after the batch in which it first holds", "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  auto o = fake_options(temp_db("stop"), {{w, 1, "mm"}}, 200);
  o.batch_size = 8;
  // Stop once the best is within 10% of a full run's best: the stopped run must reach it, and its
  // records must be exactly the trials it ran.
  auto full = tune(fake_options(temp_db("stopfull"), {{w, 1, "mm"}}, 200));
  double mark = full.tasks[0].best_gflops * 0.9;
  int calls = 0;
  o.stop_when = [&](const TuneSummary& now) {
    ++calls;
    return now.tasks[0].best_gflops >= mark;
  };
  auto s = tune(o);
  CHECK(s.tasks[0].best_gflops >= mark);
  CHECK(s.total_trials < 200);
  CHECK(s.total_trials == int64_t(calls) * 8);  // checked after every batch, none after the stop
  CHECK(records::open_database(o.db_path)->records({w->key, "", false, false, 0}).size() == size_t(s.total_trials));
}

TEST_CASE("a real tuning run through the local builder and worker", "[tuner][local]") {
  auto w = wl("matmul:M=32,N=48,K=24");
  TuneOptions o;
  o.tasks = {{w, 1, "mm"}};
  o.trials = 12;
  o.batch_size = 6;
  o.jobs = 2;
  o.db_path = temp_db("real");
  o.measure.min_repeats = 2;
  o.measure.min_time_s = 0.005;
  auto s = tune(o);
  CHECK(s.total_trials == 12);
  CHECK(s.tasks[0].best_latency_s > 0);
  CHECK(s.tasks[0].best_gflops > 0);
}

TEST_CASE("builds run in their own process and a build over the time limit is stopped", "[tuner][local]") {
  auto w = wl("matmul:M=32,N=32,K=32");
  std::string dir = (std::filesystem::temp_directory_path() / ("tessel_build_" + std::to_string(::getpid()))).string();
  auto builder = make_local_builder(dir, 2);
  MeasureOptions opt;
  std::vector<MeasureInput> in{{w, {}}, {w, {schedule::SplitStep{"C", "zz", 4, false}}}};
  auto r = builder->build(in, opt);
  REQUIRE(r.size() == 2);
  CHECK(r[0].error_kind == MeasureErrorKind::kNone);
  CHECK(std::filesystem::exists(r[0].artifact_path));
  CHECK(r[1].error_kind == MeasureErrorKind::kInvalidSchedule);
  CHECK(r[1].error_message.find("zz") != std::string::npos);
  opt.build_timeout_s = 0.01;  // far below one LLVM compile
  auto slow = builder->build({{w, {}}}, opt);
  CHECK(slow[0].error_kind == MeasureErrorKind::kCompileTimeout);
  CHECK(slow[0].build_s < 2.0);  // stopped, not waited for
  std::filesystem::remove_all(dir);
}

namespace {
// A user rule: claims the matmul stage ahead of the defaults and exposes one knob (the j split).
class SplitJRule : public SketchRule {
 public:
  std::string name() const override { return "user_split_j"; }
  bool applies(const StageInfo& s, const schedule::Schedule&) const override { return s.stage->name == "C"; }
  std::vector<int> declare(const StageInfo&, const schedule::Schedule&, RuleContext& ctx) const override {
    return {ctx.add_knob({"C.user_j", {{4}, {8}, {16}}})};
  }
  Status apply(const StageInfo&, schedule::Schedule& sch, const std::vector<int>& k,
               const RuleContext& ctx) const override {
    return sch.apply(schedule::SplitStep{"C", "j", ctx.option(k[0])[0], false});
  }
};
}  // namespace

TEST_CASE("a user rule in front of the defaults owns its stage", "[tuner]") {
  auto w = wl("matmul:M=16,N=32,K=8");
  auto space = make_rule_space(w, {std::make_shared<SplitJRule>()});
  REQUIRE(space->knobs().size() == 1);
  CHECK(space->knobs()[0].name == "C.user_j");
  std::vector<schedule::Step> trace;
  REQUIRE(space->make_trace({2}, &trace).is_ok());
  REQUIRE(trace.size() == 1);
  CHECK(schedule::step_to_string(trace[0]).find("factor=16") != std::string::npos);
  schedule::Schedule s(w->outputs);
  REQUIRE(s.apply_all(trace).is_ok());
  check_against_default(*w, s, 5);
}

TEST_CASE("a tuning run can start from a saved model and from other workloads' records", "[tuner]") {
  auto a = wl("matmul:M=32,N=32,K=32"), b = wl("matmul:M=48,N=32,K=32");
  // A model trained on measurements of workload a, saved to a file.
  auto space = make_rule_space(a);
  auto rnd = make_search_strategy("random", *space, nullptr, {});
  auto cands = rnd->propose(40);
  std::vector<costmodel::Candidate> mc;
  std::vector<double> thr;
  for (auto& c : cands) {
    mc.push_back({a.get(), &c.trace});
    thr.push_back(1.0 / FakeRunner::hash_time({a, c.trace}));
  }
  std::string path = temp_db("model") + ".model";
  TuneOptions o;
  for (std::string kind : {"xgb", "xgb-rank"}) {
    INFO("model " << kind);
    auto model = costmodel::make_learned_model(kind, {{"nthread", 1}});
    model->update(mc, thr);
    model->fit_now();
    model->save(path);
    std::string db = temp_db("transfer_" + kind);
    tune(fake_options(db, {{a, 1, "a"}}, 24));  // records of a in the database
    o = fake_options(db, {{b, 1, "b"}}, 16);
    o.cost_model = path;
    o.transfer = true;
    o.model_params = {{"min_samples", 8}, {"retrain_samples", 4}};  // fine-tuned on b during the run
    auto s = tune(o);
    CHECK(s.tasks[0].trials == 16);
    CHECK(s.tasks[0].best_latency_s > 0);
  }
  // The last file (xgb-rank) as if saved by a tessel with another feature layout: refused, not run.
  std::string text;
  {
    std::ifstream f(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(f), {});
  }
  std::string field = "\"feature_version\":" + std::to_string(costmodel::kFeatureVersion);
  REQUIRE(text.find(field) != std::string::npos);
  text.replace(text.find(field), field.size(), "\"feature_version\":1");
  std::ofstream(path, std::ios::binary) << text;
  CHECK_THROWS_WITH(tune(o), Catch::Contains("trained on feature version 1") && Catch::Contains("retrain"));
  o.cost_model = "/nonexistent/model.file";
  CHECK_THROWS_WITH(tune(o), Catch::Contains("cannot read the cost-model file /nonexistent/model.file"));
}

TEST_CASE("a run hands over from a pretrained model that orders its measurements backwards to the cold one",
          "[tuner]") {
  auto w = wl("matmul:M=64,N=64,K=64");
  // Times with a structure a model can learn (from the loop-nest features), unlike the default hash.
  auto time_of = [](const MeasureInput& in) {
    double s = 0;
    for (auto& row : costmodel::extract_features(*in.workload, in.trace))
      for (size_t k = 0; k < row.size(); ++k) s += std::log1p(std::abs(row[k])) / double(1 + k);
    return 1e-2 * std::exp(-s / 4);  // ~1e-4 s, a 3x range over the space
  };
  // A model file trained backwards: the slowest candidates labelled fastest.
  auto space = make_rule_space(w);
  StrategyParams sp;
  sp.seed = 3;
  std::vector<Candidate> cands = make_search_strategy("random", *space, nullptr, sp)->propose(80);
  std::vector<costmodel::Candidate> mc;
  std::vector<double> thr;
  for (auto& c : cands) {
    mc.push_back({w.get(), &c.trace});
    thr.push_back(time_of({w, c.trace}));
  }
  auto model = costmodel::make_learned_model("xgb-rank", {{"nthread", 1}, {"seed", 4}});
  model->update(mc, thr);
  model->fit_now();
  std::string path = temp_db("backwards") + ".model";
  model->save(path);
  FakeRunnerParams rp;
  rp.time_fn = time_of;
  // 160 trials: a quarter of each batch polishes the best measured (one-knob variants), so fewer are the
  // model's picks and the test that catches it needs more batches than the 96 trials it took without.
  TuneOptions o = fake_options(temp_db("backwards_run"), {{w, 1, "mm"}}, 160, rp);
  o.cost_model = path;
  o.model_params = {{"min_samples", 16}};  // the cold fallback is trained from the third batch on
  auto s = tune(o);
  CHECK(s.tasks[0].fallbacks == std::vector<std::string>{"cost model"});
  CHECK(s.to_json()["tasks"][0]["model_fallbacks"] == nlohmann::json::array({"cost model"}));
  // Not without the check.
  o.db_path = temp_db("backwards_unchecked");
  o.check_pretrained = false;
  s = tune(o);
  CHECK(s.tasks[0].fallbacks.empty());
  CHECK(s.to_json()["tasks"][0]["model_fallbacks"].empty());
  // The cold models warm up after 8 measurements by default (cold_min_samples), whatever the pretrained
  // model's own min_samples (64 by default): the check still catches it.
  o.check_pretrained = true;
  o.db_path = temp_db("backwards_cold_default");
  o.model_params = nlohmann::json::object();
  s = tune(o);
  CHECK(s.tasks[0].fallbacks == std::vector<std::string>{"cost model"});
  // A cold fallback that never warms up takes no test, so nothing hands over.
  o.db_path = temp_db("backwards_cold_never");
  o.model_params = {{"min_samples", 16}, {"cold_min_samples", 100000}};
  s = tune(o);
  CHECK(s.tasks[0].fallbacks.empty());
  std::filesystem::remove(path);
}

TEST_CASE("the default cost model: pretrained on x86-64 CPUs, a cold xgb elsewhere", "[tuner]") {
  CHECK(resolve_cost_model("random", "host") == "random");
  CHECK(resolve_cost_model("xgb-rank", "cuda") == "xgb-rank");
  CHECK(resolve_cost_model("auto", "cuda") == "xgb");
  CHECK(resolve_cost_model("auto", "llvm -mtriple=aarch64-linux-gnu") == "xgb");
  if (codegen::Target::parse("host").triple.rfind("x86_64", 0) == 0) {
    std::string path = resolve_cost_model("auto", "host");
    CHECK(path == costmodel::pretrained_model_path(codegen::Target::parse("host").cpu));
    CHECK(costmodel::load_cost_model(path)->name() == "xgb-rank");
  }
  // The model of the target's CPU when one is shipped (Zen 4: costmodel/pretrained/cpu-x86_64-znver4.model),
  // else the default one; the refine stage's code model likewise.
  const std::string zen4 = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4 -mattr=+avx512f";
  const std::string other = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=no-such-cpu";
  CHECK_THAT(resolve_cost_model("auto", zen4), Catch::EndsWith("/cpu-x86_64-znver4.model"));
  CHECK_THAT(resolve_cost_model("pretrained", zen4), Catch::EndsWith("/cpu-x86_64-znver4.model"));
  CHECK_THAT(resolve_cost_model("auto", other), Catch::EndsWith("/cpu-x86_64.model"));
  CHECK_THAT(resolve_cost_model("pretrained", "llvm -mtriple=x86_64-pc-linux-gnu"), Catch::EndsWith("/cpu-x86_64.model"));
  CHECK_THAT(resolve_refine_model("pretrained", resolve_cost_model("auto", zen4), zen4), Catch::EndsWith("/cpu-x86_64-znver4.code.model"));
  CHECK_THAT(resolve_refine_model("pretrained", "xgb", other), Catch::EndsWith("/cpu-x86_64.code.model"));
  CHECK_THAT(costmodel::pretrained_model_path("generic"), Catch::EndsWith("/cpu-x86_64.model"));
  // A CPU without a model of its own takes the closest one shipped: its vendor's of the same vector width,
  // then another vendor's of that width (Zen 1 -> the Zen 3 model; Ice Lake server -> Sapphire Rapids).
  CHECK(costmodel::similar_cpus("znver3").front() == "znver2");
  CHECK(costmodel::similar_cpus("icelake-server").front() == "sapphirerapids");
  CHECK(costmodel::similar_cpus("no-such-cpu").empty());
  CHECK(costmodel::similar_cpus("znver5").empty());  // the default model is its own
  const std::string zen3 = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3 -mattr=+avx2";
  const std::string zen1 = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver1 -mattr=+avx2";
  const std::string haswell = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=haswell -mattr=+avx2";
  const std::string icelake = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=icelake-server -mattr=+avx512f";
  // Zen 3 has its own models (2026-12-07); Zen 2 keeps its own; Zen 1 and Haswell take the Zen 3 ones.
  CHECK_THAT(resolve_cost_model("auto", zen3), Catch::EndsWith("/cpu-x86_64-znver3.model"));
  CHECK_THAT(resolve_refine_model("pretrained", resolve_cost_model("auto", zen3), zen3),
             Catch::EndsWith("/cpu-x86_64-znver3.code.model"));
  CHECK_THAT(resolve_cost_model("auto", "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver2 -mattr=+avx2"),
             Catch::EndsWith("/cpu-x86_64-znver2.model"));
  CHECK_THAT(resolve_cost_model("auto", zen1), Catch::EndsWith("/cpu-x86_64-znver3.model"));
  CHECK_THAT(resolve_cost_model("auto", haswell), Catch::EndsWith("/cpu-x86_64-znver3.model"));
  CHECK_THAT(resolve_cost_model("auto", icelake), Catch::EndsWith("/cpu-x86_64-sapphirerapids.model"));
  CHECK_THAT(resolve_transfer_source("auto", "auto", zen3).path, Catch::EndsWith("/cpu-x86_64-znver3.records.jsonl"));
  CHECK_THAT(resolve_transfer_source("auto", "auto", zen1).path, Catch::EndsWith("/cpu-x86_64-znver3.records.jsonl"));
  CHECK(costmodel::load_cost_model(resolve_cost_model("auto", zen4))->name() == "xgb-rank");
  // The shipped best records go with the shipped cost model: auto gives them to it alone (not learned from).
  CHECK_THAT(resolve_transfer_source("auto", "auto", zen4).path, Catch::EndsWith("/cpu-x86_64-znver4.records.jsonl"));
  CHECK_THAT(resolve_transfer_source("auto", "pretrained", other).path, Catch::EndsWith("/cpu-x86_64.records.jsonl"));
  CHECK_FALSE(resolve_transfer_source("auto", "pretrained", other).learn);
  CHECK(resolve_transfer_source("auto", "xgb", zen4).path.empty());
  CHECK(resolve_transfer_source("none", "auto", zen4).path.empty());
  CHECK_THAT(resolve_transfer_source("pretrained", "xgb", zen4).path, Catch::EndsWith("/cpu-x86_64-znver4.records.jsonl"));
  CHECK_THROWS_WITH(resolve_transfer_source("/nonexistent/records.jsonl", "xgb", zen4),
                    Catch::Contains("--transfer-from '/nonexistent/records.jsonl' is not a file"));
  setenv("TESSEL_PRETRAINED_RECORDS", "/nonexistent/records.jsonl", 1);
  CHECK_THROWS_WITH(resolve_transfer_source("pretrained", "xgb", zen4), Catch::Contains("is not a file"));
  CHECK_THROWS_WITH(resolve_transfer_source("auto", "auto", zen4), Catch::Contains("is not a file"));
  unsetenv("TESSEL_PRETRAINED_RECORDS");
  // A TESSEL_PRETRAINED_MODEL that is not a file is an error, not a silent cold start.
  setenv("TESSEL_PRETRAINED_MODEL", "/nonexistent/pretrained.model", 1);
  CHECK_THROWS_WITH(resolve_cost_model("auto", "llvm -mtriple=x86_64-pc-linux-gnu"), Catch::Contains("is not a file"));
  unsetenv("TESSEL_PRETRAINED_MODEL");
}

TEST_CASE("map_knobs carries a configuration to another shape of the same operator", "[tuner]") {
  auto a = wl("matmul:M=32,N=32,K=32"), b = wl("matmul:M=64,N=32,K=48");
  auto sa = make_rule_space(a), sb = make_rule_space(b);
  std::mt19937_64 rng(7);
  int exact = 0, knobs = 0;
  for (int t = 0; t < 50; ++t) {
    KnobValues k;
    for (auto& kn : sa->knobs()) k.push_back(std::uniform_int_distribution<int>(0, int(kn.options.size()) - 1)(rng));
    KnobValues m = map_knobs(*sa, k, *sb);
    REQUIRE(m.size() == sb->knobs().size());
    for (size_t i = 0; i < m.size(); ++i) {
      REQUIRE(m[i] >= 0);
      REQUIRE(size_t(m[i]) < sb->knobs()[i].options.size());
      // Where a's option exists in b under the same knob name, it is the one taken.
      for (size_t j = 0; j < k.size(); ++j) {
        if (sa->knobs()[j].name != sb->knobs()[i].name) continue;
        const auto& want = sa->knobs()[j].options[size_t(k[j])];
        auto& opts = sb->knobs()[i].options;
        if (std::find(opts.begin(), opts.end(), want) == opts.end()) continue;
        ++knobs;
        exact += opts[size_t(m[i])] == want;
      }
    }
  }
  CHECK(knobs > 100);
  CHECK(exact == knobs);
  // Unrelated operators share too few knob names: nothing is mapped.
  auto sm = make_rule_space(wl("softmax:M=64,N=64"));
  CHECK(map_knobs(*sa, KnobValues(sa->knobs().size(), 0), *sm).empty());
  CHECK_THROWS_WITH(map_knobs(*sa, {0}, *sb), Catch::Contains("values for"));
}

TEST_CASE("transfer: tune measures other workloads' best configurations first", "[tuner]") {
  auto a = wl("matmul:M=32,N=32,K=32"), b = wl("matmul:M=64,N=32,K=48");
  std::string db = temp_db("transfer_seeds");
  tune(fake_options(db, {{a, 1, "a"}}, 40));
  // a's two fastest records, mapped into b's space: what b's first batch must be.
  auto ra = records::open_database(db)->records({a->key, "", false, false, 0});
  std::sort(ra.begin(), ra.end(), [](auto& x, auto& y) { return x.median_s() < y.median_s(); });
  auto host = codegen::Target::parse("host");  // what tune searches here (fake_options: target host)
  auto sa = make_target_space(a, host), sb = make_target_space(b, host);
  std::set<std::string> want;
  for (size_t i = 0; i < 2; ++i) {
    std::vector<schedule::Step> trace;
    REQUIRE(sb->make_trace(map_knobs(*sa, ra[i].build_settings["knobs"].get<KnobValues>(), *sb), &trace).is_ok());
    want.insert(records::trace_hash(schedule::trace_to_json(trace)));
  }
  auto o = fake_options(db, {{b, 1, "b"}}, 2);
  o.batch_size = 2;
  o.strategy_params.seed = 99;
  o.transfer = true;
  o.transfer_seeds = 2;
  tune(o);
  auto rb = records::open_database(db)->records({b->key, "", false, false, 0});
  std::set<std::string> got;
  for (auto& r : rb) got.insert(r.trace_hash);
  CHECK(got == want);
  // Without seeds (learning only) the first batch is the strategy's own.
  std::string db2 = temp_db("transfer_noseeds");
  tune(fake_options(db2, {{a, 1, "a"}}, 40));
  o.db_path = db2;
  o.transfer_seeds = 0;
  tune(o);
  std::set<std::string> got2;
  for (auto& r : records::open_database(db2)->records({b->key, "", false, false, 0})) got2.insert(r.trace_hash);
  CHECK(got2 != want);
  o.transfer_seeds = -1;
  CHECK_THROWS_WITH(tune(o), Catch::Contains("--transfer-seeds must be >= 0"));
  o.transfer_seeds = 0;
  o.strategy_params.stall_batches = -1;
  CHECK_THROWS_WITH(tune(o), Catch::Contains("--stall-batches must be >= 0"));
}

TEST_CASE("transfer from a JSON-lines export: its best configurations first, the model's best batch of them",
          "[tuner]") {
  auto a = wl("matmul:M=32,N=32,K=32"), b = wl("matmul:M=64,N=32,K=48");
  std::string src = temp_db("transfer_src");
  tune(fake_options(src, {{a, 1, "a"}}, 40));
  std::string jsonl = src + ".jsonl";
  records::open_database(src)->export_jsonl(jsonl);
  // a's six fastest distinct schedules, mapped into b's space, in the source's order (fastest first).
  auto ra = records::open_database(src)->records({a->key, "", true, true, 0});
  auto host = codegen::Target::parse("host");
  auto sa = make_target_space(a, host), sb = make_target_space(b, host);
  std::vector<KnobValues> six;
  std::set<KnobValues> distinct;
  for (auto& r : ra) {
    auto k = r.build_settings["knobs"].get<KnobValues>();
    if (distinct.insert(k).second && six.size() < 6) six.push_back(map_knobs(*sa, k, *sb));
  }
  REQUIRE(six.size() == 6);
  auto hash_of = [&](const KnobValues& k) {
    std::vector<schedule::Step> trace;
    REQUIRE(sb->make_trace(k, &trace).is_ok());
    return std::make_pair(FakeRunner::hash_time({nullptr, trace}), records::trace_hash(schedule::trace_to_json(trace)));
  };
  std::vector<std::pair<double, std::string>> mapped;  // (OracleModel's time, trace hash), in a's order
  for (auto& k : six) mapped.push_back(hash_of(k));
  std::set<std::string> source_first2 = {mapped[0].second, mapped[1].second};
  std::set<std::string> last3 = {mapped[3].second, mapped[4].second, mapped[5].second};  // six[3..5]
  std::sort(mapped.begin(), mapped.end());
  std::set<std::string> all6, best2 = {mapped[0].second, mapped[1].second};
  for (auto& m : mapped) all6.insert(m.second);
  REQUIRE(all6.size() == 6);
  REQUIRE(best2 != source_first2);  // else the oracle's order below shows nothing
  std::string db = temp_db("transfer_from");
  // Six suggested for a batch of 4: the first half batch is two of them, the search's own fill it.
  auto o = fake_options(db, {{b, 1, "b"}}, 4);
  o.batch_size = 4;
  o.cost_model = "xgb";  // untrained: the suggestions keep their order (fastest source record first)
  o.transfer_from = {jsonl};
  o.transfer_seeds = 6;
  tune(o);
  std::vector<std::string> got;
  for (auto& r : records::open_database(db)->records({b->key, "", false, false, 0})) got.push_back(r.trace_hash);
  REQUIRE(got.size() == 4);
  CHECK(std::set<std::string>{got[0], got[2]} == source_first2);  // suggested, own, suggested, own
  CHECK(std::count_if(got.begin(), got.end(), [&](auto& h) { return all6.count(h) > 0; }) == 2);
  // A trained model orders the six: the first batch is its best two (an oracle of the fake runner's times).
  OracleModel oracle;
  StrategyParams sp;
  // Measured alternately with the search's own choices: suggested, own, suggested, own (the annealing
  // search takes suggestions the same way).
  auto first_batch = [&](const std::string& kind) {
    auto st = make_search_strategy(kind, *sb, &oracle, sp);
    st->suggest(six);
    auto batch = st->propose(4);
    REQUIRE(batch.size() == 4);
    CHECK(std::set<std::string>{batch[0].trace_hash, batch[2].trace_hash} == best2);
    CHECK_FALSE(all6.count(batch[1].trace_hash));
    CHECK_FALSE(all6.count(batch[3].trace_hash));
    return std::pair{std::move(st), batch};
  };
  (void)first_batch("annealing");
  auto [strategy, first] = first_batch("evolutionary");
  std::set<std::string> first_hashes;
  for (auto& c : first) first_hashes.insert(c.trace_hash);
  CHECK(first_hashes.size() == 4);
  // The other four are not forced into the next batch (the oracle's best of a population they joined),
  // and nothing is proposed twice.
  auto next = strategy->propose(8);
  for (auto& c : next) CHECK_FALSE(first_hashes.count(c.trace_hash));
  // Three suggested for a batch of 4 fit: all are measured, with one of the search's own.
  auto again = make_search_strategy("evolutionary", *sb, &oracle, sp);
  again->suggest({six[3], six[4], six[5]});
  auto fit = again->propose(4);
  REQUIRE(fit.size() == 4);
  CHECK(std::set<std::string>{fit[0].trace_hash, fit[2].trace_hash, fit[3].trace_hash} == last3);
  CHECK_FALSE(all6.count(fit[1].trace_hash));
  // A source that is no database: refused before anything runs.
  std::ofstream(db + ".bad.db") << "not sqlite";
  o.transfer_from = {db + ".bad.db"};
  CHECK_THROWS(tune(o));
}

TEST_CASE("rule seeds: a cuda tuning run measures the GPU rules' hand-written GEMM kernels first", "[tuner]") {
  auto w = wl("matmul:M=256,N=256,K=64");
  auto space = make_gpu_rule_space(w);
  std::set<std::string> want;
  for (auto& k : space->seeds()) {
    std::vector<schedule::Step> trace;
    REQUIRE(space->make_trace(k, &trace).is_ok());
    want.insert(records::trace_hash(schedule::trace_to_json(trace)));
  }
  REQUIRE(want.size() == 3);
  std::string db = temp_db("rule_seeds");
  auto o = fake_options(db, {{w, 1, "mm"}}, 3);
  o.target = "cuda -arch=sm_90";
  o.batch_size = 3;
  tune(o);
  std::set<std::string> got;
  for (auto& r : records::open_database(db)->records({w->key, "", false, false, 0})) got.insert(r.trace_hash);
  CHECK(got == want);
  // Resumed (the 3 records count towards the budget), the seeds are not measured again: the next batch
  // is all new.
  o.trials = 6;
  tune(o);
  std::set<std::string> again;
  for (auto& r : records::open_database(db)->records({w->key, "", false, false, 0})) again.insert(r.trace_hash);
  CHECK(again.size() == 6);
}
