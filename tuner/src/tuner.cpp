// The tuning loop (see tuner.h).
//
// Guide: TaskRun holds one task's space, model, strategy and best; resume() loads the database's records
// of the task (they count toward the budget, are never proposed again and seed strategy and model);
// measure_batch() builds, runs and records one batch; remeasure() re-times the best few side by side.
#include "tessel/tuner/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <unistd.h>

#include "tessel/codegen/target.h"
#include "tessel/costmodel/learned_model.h"
#include "tessel/records/target_match.h"
#include "tessel/runtime/thread_pool.h"
#include "tessel/support/log.h"
#include "tessel/support/sha256.h"
#include "tessel/tuner/task_scheduler.h"

namespace tessel::tuner {

nlohmann::json TuneSummary::to_json() const {
  nlohmann::json t = nlohmann::json::array();
  for (auto& x : tasks) {
    nlohmann::json errors = nlohmann::json::object();
    for (auto& [k, v] : x.errors) errors[k] = v;
    t.push_back({{"workload", x.spec},
                 {"key", x.key},
                 {"name", x.name},
                 {"weight", x.weight},
                 {"best_latency_s", x.best_latency_s > 0 ? nlohmann::json(x.best_latency_s) : nlohmann::json()},
                 {"best_gflops", x.best_gflops},
                 {"trials", x.trials},
                 {"resumed", x.resumed},
                 {"errors", errors},
                 {"model_fallbacks", x.fallbacks}});
  }
  return {{"tasks", t},
          {"total_trials", total_trials},
          {"wall_s", wall_s},
          {"estimated_latency_s", estimated_latency_s},
          {"stopped_by_time", stopped_by_time}};
}

namespace {

using clock_type = std::chrono::steady_clock;

// A signature of a space's knobs, stored with each record so a resumed run can map traces back to knobs.
std::string space_signature(const SearchSpace& s) {
  std::string text;
  for (auto& k : s.knobs()) text += k.name + ":" + std::to_string(k.options.size()) + ";";
  return sha256_hex(text).substr(0, 16);
}

struct TaskRun {
  TuneTask task;
  std::unique_ptr<SearchSpace> space;
  std::unique_ptr<costmodel::CostModel> model;
  std::unique_ptr<costmodel::CostModel> refine;  // null: no refine stage
  std::unique_ptr<SearchStrategy> strategy;
  std::string signature;
  TaskSummary summary;
  TaskState state;
  int64_t since_improvement = 0;
};

// FLOP/s for the cost model: 0 for a candidate that did not run correctly (time +infinity).
double throughput(const workload::Workload& w, double seconds) {
  return std::isfinite(seconds) && seconds > 0 ? w.flop_count() / seconds : 0.0;
}

// The run's cost-model parameter that sets its cold models' warm-up (cold_params), and its default: with
// batches of 8 or more, beside a pretrained cost model the cold refine model re-ranks from the second
// batch on what the first one measured (on the Zen 4 1x1 conv, 8 cut the pretrained runs' trials to 95% from
// a median of 21 to 13.5 over 18 runs a side, against 16; NCHW 3x3 and guided runs were unchanged:
// docs/performance.md, "Cold models from the second batch").
constexpr const char* kColdMinSamplesKey = "cold_min_samples";
constexpr int kColdMinSamples = 8;

// A model by name, or loaded from a file (a pretrained model) when the name is an existing file.
std::unique_ptr<costmodel::CostModel> make_model(const std::string& name, uint64_t seed,
                                                const nlohmann::json& extra) {
  costmodel::ModelParams p = {{"seed", seed}, {"nthread", 1}};
  TESSEL_CHECK(extra.is_object()) << "cost-model parameters must be a JSON object, got " << extra.dump();
  for (auto& [k, v] : extra.items())
    if (k != kColdMinSamplesKey) p[k] = v;  // the run's cold models' (cold_params), not this model's
  std::error_code ec;
  if (name.find('/') != std::string::npos || std::filesystem::is_regular_file(name, ec))
    return costmodel::make_pretrained_model(name, p);
  return costmodel::make_cost_model(name, p);
}

// Whether a resolved cost model starts from a saved model (the shipped one or a file).
bool is_pretrained(const std::string& cost_model) {
  std::error_code ec;
  return cost_model == "pretrained" || std::filesystem::is_regular_file(cost_model, ec);
}

// The parameters every learned model takes (warm-up and retraining) out of the run's cost-model parameters.
nlohmann::json shared_params(const nlohmann::json& extra) {
  nlohmann::json p = nlohmann::json::object();
  for (const char* k : {"min_samples", "retrain_ratio", "retrain_samples"})
    if (extra.is_object() && extra.contains(k)) p[k] = extra[k];
  return p;
}

// The parameters of the cold models a run keeps beside its cost model (the cold refine model, and the
// fallback a pretrained model is checked against): shared_params, with the warm-up `cold_min_samples`
// when given, else the run's `min_samples` when given, else kColdMinSamples: they learn from what the
// first batch measured (batches of 8 or more), also beside a pretrained cost model whose own correction waits longer.
nlohmann::json cold_params(const nlohmann::json& extra) {
  nlohmann::json p = shared_params(extra);
  if (extra.is_object() && extra.contains(kColdMinSamplesKey))
    p["min_samples"] = costmodel::count_param(extra, kColdMinSamplesKey, kColdMinSamples);
  else if (!p.contains("min_samples"))
    p["min_samples"] = kColdMinSamples;
  return p;
}

// The refine model (resolve_refine_model's result): "cold", an xgb-rank that reads code features and starts
// from the analytic model (it learns this run's corrections to the roofline estimate), with cold_params;
// "analytic"; or a file, with the run's warm-up and retraining parameters.
std::unique_ptr<costmodel::CostModel> make_refine_model(const std::string& name, uint64_t seed,
                                                        const nlohmann::json& extra) {
  if (name != "cold") return make_model(name, seed, shared_params(extra));
  nlohmann::json p = cold_params(extra);
  p["code_features"] = true;
  p["seed"] = seed;
  p["nthread"] = 1;
  auto m = costmodel::make_learned_model("xgb-rank", p);
  m->set_base(costmodel::make_learned_model("analytic", {{"seed", seed}, {"nthread", 1}}));
  return m;
}

// The online check of a model started from a pretrained one (LearnedModel::set_fallback) against the cold
// model the run would otherwise use: "xgb" over the loop nest, or the cold refine model for one that reads
// the code, with cold_params (the others may be another kind's). Nothing
// for other models.
void check_against_cold(costmodel::CostModel* m, uint64_t seed, const nlohmann::json& extra) {
  auto* learned = dynamic_cast<costmodel::LearnedModel*>(m);
  if (!learned || !learned->base() || learned->base()->name() == "analytic") return;
  auto cold = learned->uses_code_features() ? make_refine_model("cold", seed, extra) : make_model("xgb", seed, cold_params(extra));
  learned->set_fallback(std::unique_ptr<costmodel::LearnedModel>(static_cast<costmodel::LearnedModel*>(cold.release())));
}

// Whether a model's online check has switched it to its cold fallback.
bool on_fallback(const costmodel::CostModel* m) {
  auto* learned = dynamic_cast<const costmodel::LearnedModel*>(m);
  return learned && learned->on_fallback();
}

// The shipped model `path_of` finds, or fallback when there is none; a set env_name that is not a file
// is an error, not a silent fallback.
std::string shipped_or(std::string (*path_of)(const std::string& cpu), const std::string& cpu, const char* env_name,
                       const std::string& fallback) {
  if (std::getenv(env_name)) return path_of(cpu);
  try {
    return path_of(cpu);
  } catch (const UserError&) {
    return fallback;  // a build without the shipped file
  }
}

class Tuning {
 public:
  Tuning(const TuneOptions& o, const ProgressFn& progress) : o_(o), progress_(progress) {
    TESSEL_CHECK(!o.tasks.empty()) << "nothing to tune: give at least one workload";
    TESSEL_CHECK(o.trials >= 0) << "--trials must be >= 0";
    TESSEL_CHECK(o.batch_size >= 1) << "batch size must be >= 1";
    TESSEL_CHECK(o.measure.recheck_rounds >= 0) << "--recheck-rounds must be >= 0";
    TESSEL_CHECK(o.measure.recheck_max >= 0) << "--recheck-max must be >= 0";
    TESSEL_CHECK(o.measure.recheck_ratio >= 1) << "--recheck-ratio must be >= 1, got " << o.measure.recheck_ratio;
    check_recheck_merge(o.measure.recheck_merge);
    TESSEL_CHECK(o.transfer_seeds >= 0) << "--transfer-seeds must be >= 0";
    TESSEL_CHECK(o.strategy_params.refine_shortlist >= 1) << "--refine-shortlist must be >= 1";
    TESSEL_CHECK(o.strategy_params.stall_batches >= 0) << "--stall-batches must be >= 0";
    TESSEL_CHECK(o.strategy_params.polish >= 0 && o.strategy_params.polish <= 1)
        << "--polish must be in [0, 1], got " << o.strategy_params.polish;
    target_ = codegen::Target::parse(o.target).to_string();
    cost_model_ = resolve_cost_model(o.cost_model, o.target);  // once: every task and the settings use it
    refine_model_ = resolve_refine_model(o.refine_model, cost_model_, o.target);
    // The refine stage's share from outside the population (mutants of the best measured and random
    // samples): a model that learns from this run alone rates the family it has measured above any other
    // (it cannot extrapolate), so its shortlist is all drawn; a pretrained cost model's evolved population
    // is worth re-ranking, with half drawn so that a run its favourites mislead still gets out (a quarter
    // held matmul runs on Sapphire Rapids in the pretrained model's favourite family: docs/costmodel.md).
    refine_explore_ = o.strategy_params.refine_explore >= 0 ? o.strategy_params.refine_explore
                      : is_pretrained(cost_model_)           ? 0.5
                                                             : 1.0;
    TESSEL_CHECK(refine_explore_ <= 1) << "--refine-explore must be in [0, 1], got " << refine_explore_;
    for (auto& name : o.transfer_from)
      if (auto src = resolve_transfer_source(name, o.cost_model, o.target); !src.path.empty())
        transfer_sources_.push_back(src);
    db_ = records::open_database(o.db_path);
    scheduler_ = make_task_scheduler(o.scheduler);
    auto names = search_strategy_names();
    if (std::find(names.begin(), names.end(), o.strategy) == names.end())
      make_search_strategy(o.strategy, *make_rule_space(o.tasks[0].workload), nullptr, o.strategy_params);  // throws
    work_dir_ = o.work_dir;
    if (work_dir_.empty()) {
      work_dir_ = (std::filesystem::temp_directory_path() /
                   ("tessel-tune-" + std::to_string(::getpid()) + "-" + std::to_string(o.seed)))
                      .string();
    }
    std::filesystem::create_directories(work_dir_);
    int jobs = o.jobs > 0 ? o.jobs : runtime::usable_cpus();
    builder_ = o.make_builder ? o.make_builder(work_dir_, jobs) : make_local_builder(work_dir_, jobs, target_);
    LocalRunnerParams rp;
    rp.work_dir = work_dir_;
    rp.target = target_;
    rp.measure_lock = o.measure_lock;
    runner_ = o.make_runner ? o.make_runner(work_dir_) : make_local_runner(rp);
    uint64_t seed = o.seed;
    for (auto& t : o.tasks) {
      TaskRun r;
      r.task = t;
      r.space = space_for(t.workload);
      r.model = make_model(cost_model_, seed, o.model_params);
      r.signature = space_signature(*r.space);
      r.summary.name = t.name.empty() ? t.workload->spec : t.name;
      r.summary.spec = t.workload->spec;
      r.summary.key = t.workload->key;
      r.summary.weight = t.weight;
      r.state.weight = t.weight;
      db_->add_workload(*t.workload);
      StrategyParams sp = o.strategy_params;
      sp.seed = seed++;
      sp.refine_explore = refine_explore_;
      auto hashes = db_->trace_hashes(t.workload->key, target_);
      r.strategy = make_search_strategy(o.strategy, *r.space, r.model.get(), sp,
                                        std::set<std::string>(hashes.begin(), hashes.end()));
      codegen::Target code_target = codegen::Target::parse(target_);
      r.model->set_code_target(code_target);
      if (!refine_model_.empty() && !r.model->uses_code_features()) {  // a model that reads the code needs no refiner
        r.refine = make_refine_model(refine_model_, seed, o.model_params);
        r.refine->set_code_target(code_target);
        r.strategy->set_refine_model(r.refine.get());
      }
      if (o.check_pretrained) {
        check_against_cold(r.model.get(), seed, o.model_params);
        check_against_cold(r.refine.get(), seed, o.model_params);
      }
      runs_.push_back(std::move(r));
    }
  }

  TuneSummary run() {
    start_ = clock_type::now();
    nlohmann::json settings = {{"strategy", o_.strategy},
                               {"cost_model", cost_model_},
                               {"refine_model", refine_model_.empty() ? "none" : refine_model_},
                               {"refine_shortlist", o_.strategy_params.refine_shortlist},
                               {"refine_explore", refine_explore_},
                               {"check_pretrained", o_.check_pretrained},
                               {"transfer_from", transfer_from_json()},
                               {"stall_batches", o_.strategy_params.stall_batches},
                               {"polish", o_.strategy_params.polish},
                               {"scheduler", o_.scheduler},
                               {"seed", o_.seed},
                               {"trials", o_.trials},
                               {"target", target_},
                               {"measure", o_.measure.to_json()}};
    settings["tasks"] = nlohmann::json::array();  // weights, for reports of network runs
    for (auto& r : runs_)
      settings["tasks"].push_back({{"key", r.summary.key}, {"name", r.summary.name}, {"weight", r.summary.weight}});
    run_id_ = db_->begin_run(settings);
    for (auto& r : runs_) resume(r);
    for (auto& r : runs_) r.strategy->suggest(r.space->seeds());  // the rules' hand-tuned kernels
    if (o_.transfer) transfer(*db_, target_, true);
    for (auto& src : transfer_sources_) {
      auto db = open_transfer_source(src.path);
      transfer(*db, "", src.learn);
    }
    while (true) {
      if (total_trials() >= o_.trials) break;
      if (o_.time_budget_s > 0 && elapsed() >= o_.time_budget_s) {
        stopped_by_time_ = true;
        break;
      }
      std::vector<TaskState> states;
      for (auto& r : runs_) states.push_back(r.state);
      int ti = scheduler_->next(states);
      if (ti < 0) break;
      measure_batch(runs_[ti]);
      report_progress();
      if (o_.stop_when && o_.stop_when(summary())) break;
    }
    for (auto& r : runs_) remeasure(r);
    TuneSummary s = summary();
    db_->end_run(run_id_, s.to_json());
    std::error_code ec;
    if (o_.work_dir.empty()) std::filesystem::remove_all(work_dir_, ec);
    return s;
  }

 private:
  // The space tasks of this target search (make_target_space).
  std::unique_ptr<SearchSpace> space_for(std::shared_ptr<const workload::Workload> w) const {
    return make_target_space(w, codegen::Target::parse(o_.target));
  }

  double elapsed() const { return std::chrono::duration<double>(clock_type::now() - start_).count(); }
  int64_t total_trials() const {
    int64_t n = 0;
    for (auto& r : runs_) n += r.state.trials;
    return n;
  }

  void note_best(TaskRun& r, double median_s, const nlohmann::json& trace) {
    if (median_s <= 0 || !std::isfinite(median_s)) return;
    if (r.state.best_latency_s == 0 || median_s < r.state.best_latency_s) {
      r.state.best_latency_s = median_s;
      r.summary.best_latency_s = median_s;
      r.summary.best_gflops = r.task.workload->flop_count() / median_s / 1e9;
      r.summary.best_trace = trace;
      r.since_improvement = 0;
    }
  }

  void resume(TaskRun& r) {
    records::RecordQuery q;
    q.workload_key = r.task.workload->key;
    q.target = target_;
    auto recs = db_->records(q);
    std::vector<Candidate> seeds;
    std::vector<double> thr;
    for (auto& rec : recs) {
      ++r.state.trials;
      ++r.summary.resumed;
      if (rec.ok()) note_best(r, rec.median_s(), rec.trace);
      // Seed the search with the knobs the record was made from (when the space is the same).
      const auto& b = rec.build_settings;
      if (b.is_object() && b.value("space", std::string()) == r.signature && b.contains("knobs")) {
        Candidate c;
        c.knobs = b["knobs"].get<KnobValues>();
        c.trace = schedule::trace_from_json(rec.trace);
        c.trace_hash = rec.trace_hash;
        seeds.push_back(std::move(c));
        thr.push_back(throughput(*r.task.workload, rec.timed_s()));
      }
    }
    if (!seeds.empty()) r.strategy->observe(seeds, thr);
    r.summary.trials = r.state.trials;
    if (r.state.trials > 0) r.state.history.push_back({r.state.trials, r.state.best_latency_s});
    TESSEL_LOG(1) << r.summary.name << ": resumed " << recs.size() << " records from " << o_.db_path << "\n";
  }

  nlohmann::json transfer_from_json() const {
    nlohmann::json a = nlohmann::json::array();
    for (auto& s : transfer_sources_) a.push_back(s.path);
    return a;
  }

  // A transfer source as a database: a JSON-lines export is imported into a scratch one in the work
  // directory; a database is opened read-only.
  std::unique_ptr<records::Database> open_transfer_source(const std::string& path) {
    if (path.size() < 6 || path.compare(path.size() - 6, 6, ".jsonl") != 0) {
      records::OpenOptions ro;
      ro.create = false;
      ro.read_only = true;
      return records::open_database(path, ro);
    }
    auto scratch = std::filesystem::path(work_dir_) / ("transfer-" + std::to_string(++transfer_dbs_) + ".db");
    std::filesystem::remove(scratch);
    auto db = records::open_database(scratch.string());
    db->import_jsonl(path);
    return db;
  }

  // Teaches each task's model (when `learn`) the database's measurements of the other workloads on target
  // (any target when empty), and suggests their best configurations (o_.transfer_seeds of each, mapped by
  // knob name) to be measured first.
  void transfer(records::Database& db, const std::string& target, bool learn) {
    for (auto& wi : db.workloads()) {
      std::shared_ptr<workload::Workload> w;
      try {
        w = std::make_shared<workload::Workload>(workload::from_json(wi.workload));
      } catch (const UserError&) {
        continue;
      }
      records::RecordQuery q;
      q.workload_key = wi.key;
      q.target = target;
      std::vector<std::vector<schedule::Step>> traces;
      std::vector<double> thr;
      std::vector<std::pair<double, KnobValues>> best;  // (median, knobs) of records made in w's space
      std::unique_ptr<SearchSpace> wspace;
      std::string wsig;
      for (auto& rec : db.records(q)) {
        if (!std::isfinite(rec.timed_s())) continue;  // failed: nothing to learn about its speed
        traces.push_back(schedule::trace_from_json(rec.trace));
        thr.push_back(throughput(*w, rec.timed_s()));
        const auto& b = rec.build_settings;
        if (o_.transfer_seeds <= 0 || !rec.ok() || !b.is_object() || !b.contains("knobs")) continue;
        if (!wspace) wspace = space_for(w), wsig = space_signature(*wspace);
        if (b.value("space", std::string()) == wsig) best.push_back({rec.median_s(), b["knobs"].get<KnobValues>()});
      }
      if (traces.empty()) continue;
      std::sort(best.begin(), best.end(), [](auto& x, auto& y) { return x.first < y.first; });
      std::set<KnobValues> distinct;  // a schedule measured again counts once
      best.erase(std::remove_if(best.begin(), best.end(), [&](auto& x) { return !distinct.insert(x.second).second; }),
                 best.end());
      if (best.size() > size_t(o_.transfer_seeds)) best.resize(size_t(o_.transfer_seeds));
      for (auto& r : runs_) {
        if (r.task.workload->key == wi.key || best.empty()) continue;
        std::vector<KnobValues> mapped;
        for (auto& [s, k] : best) {
          if (k.size() != wspace->knobs().size()) continue;
          if (auto m = map_knobs(*wspace, k, *r.space); !m.empty()) mapped.push_back(std::move(m));
        }
        r.strategy->suggest(mapped);
        if (!mapped.empty()) {
          TESSEL_LOG(1) << "transfer: " << mapped.size() << " configurations of " << wi.name << " suggested for "
                        << r.summary.name << "\n";
        }
      }
      if (!learn) continue;
      std::vector<costmodel::Candidate> c;
      for (auto& t : traces) c.push_back({w.get(), &t});
      for (auto& r : runs_)
        if (r.task.workload->key != wi.key) r.model->update(c, thr);
      TESSEL_LOG(1) << "transfer: learned " << traces.size() << " records of " << wi.name << "\n";
    }
  }

  void measure_batch(TaskRun& r) {
    int n = int(std::min<int64_t>(o_.batch_size, o_.trials - total_trials()));
    std::vector<Candidate> cands = r.strategy->propose(n);
    if (cands.empty()) {
      r.state.done = true;  // nothing new to try
      return;
    }
    std::vector<MeasureInput> inputs;
    for (auto& c : cands) inputs.push_back({r.task.workload, c.trace});
    std::vector<BuildResult> builds = builder_->build(inputs, o_.measure);
    // Each result is recorded as soon as the runner hands it over (a remote runner does so as workers
    // answer), the rest once run() returns: a tuner stopped mid-batch keeps what was measured.
    std::vector<char> recorded(cands.size(), 0);
    std::mutex record_mu;
    auto record = [&](size_t i, const MeasureResult& m) {
      std::lock_guard<std::mutex> lk(record_mu);
      if (i >= cands.size() || recorded[i]) return;
      records::TuningRecord rec;
      rec.workload_key = r.task.workload->key;
      rec.target = target_;
      rec.target_fingerprint = fingerprint_;
      rec.trace = schedule::trace_to_json(cands[i].trace);
      rec.trace_hash = cands[i].trace_hash;
      rec.run_times_s = m.run_times_s;
      rec.error_kind = m.error_kind;
      rec.error_message = m.error_message;
      rec.build_settings = {{"space", r.signature}, {"knobs", cands[i].knobs}, {"strategy", o_.strategy},
                            {"build_s", m.build_s}};
      rec.run_settings = run_settings_of(m);
      rec.run_id = run_id_;
      db_->add_record(rec);
      recorded[i] = 1;
    };
    runner_->set_result_callback(record);
    std::vector<MeasureResult> results = runner_->run(inputs, builds, o_.measure, r.state.best_latency_s);
    runner_->set_result_callback(nullptr);
    std::vector<double> thr;
    for (size_t i = 0; i < cands.size(); ++i) {
      const MeasureResult& m = results[i];
      record(i, m);
      ++r.state.trials;
      ++r.since_improvement;
      if (m.ok()) note_best(r, m.median_s(), schedule::trace_to_json(cands[i].trace));
      else ++r.summary.errors[records::error_kind_name(m.error_kind)];
      thr.push_back(throughput(*r.task.workload, m.timed_s()));
    }
    r.strategy->observe(cands, thr);
    r.summary.trials = r.state.trials;
    r.state.history.push_back({r.state.trials, r.state.best_latency_s});
    r.summary.curve.push_back({r.state.trials, r.summary.best_gflops});
    r.summary.fallbacks.clear();
    bool cold_model = on_fallback(r.model.get());
    if (cold_model) r.summary.fallbacks.push_back("cost model");
    if (on_fallback(r.refine.get())) r.summary.fallbacks.push_back("refine model");
    // A cost model on its cold fallback gets a cold run's refine share (unless --refine-explore set one).
    if (o_.strategy_params.refine_explore < 0) r.strategy->set_refine_explore(cold_model ? 1.0 : refine_explore_);
    if (o_.early_stopping > 0 && r.since_improvement >= o_.early_stopping) r.state.done = true;
    if (r.strategy->exhausted()) r.state.done = true;
  }

  /** A record's run_settings: the measure options, and the rounds of a rechecked candidate (its
   *  run_times_s are the fastest round's). */
  nlohmann::json run_settings_of(const MeasureResult& m) const {
    nlohmann::json j = o_.measure.to_json();
    if (m.rounds > 1) j["rounds"] = m.rounds;
    return j;
  }

  // Re-times the best few records side by side so one noisy lucky run does not decide the winner.
  void remeasure(TaskRun& r) {
    if (o_.remeasure_top <= 0 || r.state.best_latency_s == 0) return;
    auto top = db_->top_k(r.task.workload->key, target_, o_.remeasure_top);
    if (top.size() < 2) return;
    std::vector<MeasureInput> inputs;
    for (auto& rec : top) inputs.push_back({r.task.workload, schedule::trace_from_json(rec.trace)});
    auto builds = builder_->build(inputs, o_.measure);
    auto results = runner_->run(inputs, builds, o_.measure, 0);
    r.state.best_latency_s = 0;
    r.summary.best_latency_s = 0;
    for (size_t i = 0; i < top.size(); ++i) {
      if (!results[i].ok()) continue;
      records::TuningRecord rec = top[i];
      rec.id = 0;
      rec.timestamp_us = 0;
      rec.run_times_s = results[i].run_times_s;
      rec.run_settings = run_settings_of(results[i]);
      rec.run_settings["remeasure"] = true;
      rec.run_id = run_id_;
      db_->add_record(rec);
      note_best(r, results[i].median_s(), rec.trace);
    }
    if (r.state.best_latency_s == 0) note_best(r, top[0].median_s(), top[0].trace);
  }

  TuneSummary summary() const {
    TuneSummary s;
    for (auto& r : runs_) {
      s.tasks.push_back(r.summary);
      s.total_trials += r.state.trials;
      s.estimated_latency_s += r.task.weight * r.state.best_latency_s;
    }
    s.wall_s = elapsed();
    s.stopped_by_time = stopped_by_time_;
    return s;
  }

  void report_progress() {
    if (!progress_) return;
    TuneSummary s = summary();
    double rate = s.total_trials > 0 ? elapsed() / double(std::max<int64_t>(1, measured_now())) : 0;
    double eta = rate * double(std::max<int64_t>(0, o_.trials - s.total_trials));
    if (o_.time_budget_s > 0) eta = std::min(eta, std::max(0.0, o_.time_budget_s - elapsed()));
    progress_(s, eta);
  }
  int64_t measured_now() const {
    int64_t n = 0;
    for (auto& r : runs_) n += r.state.trials - r.summary.resumed;
    return n;
  }

  const TuneOptions& o_;
  ProgressFn progress_;
  std::string target_;
  std::vector<TransferSource> transfer_sources_;  // o_.transfer_from resolved
  int transfer_dbs_ = 0;                          // scratch databases of JSON-lines sources
  std::string cost_model_;  // o_.cost_model resolved ("auto" -> the model used)
  std::string refine_model_;  // o_.refine_model resolved ("" = none)
  double refine_explore_ = 0;  // o_.strategy_params.refine_explore resolved
  nlohmann::json fingerprint_ = records::host_fingerprint();
  std::unique_ptr<records::Database> db_;
  std::unique_ptr<TaskScheduler> scheduler_;
  std::unique_ptr<Builder> builder_;
  std::unique_ptr<Runner> runner_;
  std::string work_dir_;
  std::vector<TaskRun> runs_;
  int64_t run_id_ = 0;
  clock_type::time_point start_;
  bool stopped_by_time_ = false;
};

}  // namespace

TuneSummary tune(const TuneOptions& options, const ProgressFn& progress) { return Tuning(options, progress).run(); }

std::string resolve_cost_model(const std::string& name, const std::string& target_text) {
  if (name != "auto" && name != "pretrained") return name;
  codegen::Target target = codegen::Target::parse(target_text);
  if (name == "pretrained") return costmodel::pretrained_model_path(target.cpu);  // the one of the target's CPU
  if (target.is_cuda() || target.triple.rfind("x86_64", 0) != 0) return "xgb";
  return shipped_or(costmodel::pretrained_model_path, target.cpu, "TESSEL_PRETRAINED_MODEL", "xgb");  // else learn from this run
}

TransferSource resolve_transfer_source(const std::string& name, const std::string& cost_model_name,
                                       const std::string& target_text) {
  if (name == "none") return {};
  codegen::Target target = codegen::Target::parse(target_text);
  if (name == "pretrained") return {costmodel::pretrained_records_path(target.cpu), false};
  if (name == "auto") {
    // The shipped records go with the shipped cost model (pretrained, auto on an x86-64 CPU, or its path).
    std::string shipped = shipped_or(costmodel::pretrained_model_path, target.cpu, "TESSEL_PRETRAINED_MODEL", "");
    if (shipped.empty() || resolve_cost_model(cost_model_name, target_text) != shipped) return {};
    return {shipped_or(costmodel::pretrained_records_path, target.cpu, "TESSEL_PRETRAINED_RECORDS", ""), false};
  }
  std::error_code ec;
  TESSEL_CHECK(std::filesystem::is_regular_file(name, ec))
      << "--transfer-from '" << name << "' is not a file (values: auto, none, pretrained, a tuning database or "
      << "a JSON-lines export of one)";
  return {name, true};
}

std::string resolve_refine_model(const std::string& name, const std::string& cost_model, const std::string& target_text) {
  if (name == "none") return "";
  static const char* kValues = "none, auto, cold, analytic, pretrained or a model file";
  codegen::Target target = codegen::Target::parse(target_text);
  bool readable = costmodel::code_features_supported(target);
  // auto: the cold refine model, with a pretrained cost model too. The shipped code model ranks random
  // schedules well (held-out pairwise 0.864) but ordered its own picks from a shortlist's top worse than
  // chance; side by side, the cold refine stage did better on the 1x1 conv and dense and one batch worse
  // on NHWC (docs/costmodel.md, "Which refine model"). --refine-model pretrained still selects it.
  if (name == "auto") return readable && cost_model != "random" ? "cold" : "";
  TESSEL_CHECK(readable) << "--refine-model " << name << ": the refine stage reads x86-64 code and the target is "
                         << target.to_string() << "; use --refine-model none";
  if (name == "cold" || name == "analytic") return name;
  if (name == "pretrained") return costmodel::pretrained_code_model_path(target.cpu);
  std::error_code ec;
  TESSEL_CHECK(std::filesystem::is_regular_file(name, ec))
      << "--refine-model '" << name << "' is not a model file (values: " << kValues << ")";
  return name;
}

}  // namespace tessel::tuner
