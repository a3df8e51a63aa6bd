// bench: measured trials to reach 95% of the best: random search vs model-guided vs pretrained model
//
// For each workload (the held-out set of costmodel/pretrained/workloads.txt: the pretrained model never
// saw them) and each seed, three tuning runs of the same trial budget, one thread for the kernels:
//   random      strategy random (uniform samples of the rule space)
//   guided      evolutionary search with a cold xgb model (learns from this run's measurements only); its
//               refine stage (tessel tune --refine-model) is a cold xgb-rank that reads the compiled code,
//               starting from the analytic model (the hot loop's roofline; no data)
//   pretrained  evolutionary search starting from the shipped pretrained model (and fine-tuning it); its
//               refine stage is the guided mode's cold one (tessel tune's default; --refine-model pretrained
//               gives it the shipped code model, cpu-x86_64[-CPU].code.model); it also starts from the
//               shipped best records of the models' training workloads (tessel tune --transfer-from
//               pretrained: carried into the workload's space, the refine model's best 4 (half a batch)
//               are measured in the first batch, the rest join the population; --pretrained-records none
//               turns that off)
// Every candidate is measured once per workload: the runs share a measurement cache keyed by the trace,
// so a schedule two runs both propose has one time (fewer measurements, and no noise between modes).
// After the runs, the fastest --remeasure-top candidates of the workload are measured --remeasure-rounds
// more times and their time becomes the median of all their measurements (a first measurement is one
// noisy sample, and the best of thousands of them is a lucky one: it would raise the mark).
// "best" is the best throughput any run found for the workload (a re-measured candidate: the fastest is
// re-measured until it is one); a run's trials-to-95% is the first trial after which its best is >= 95%
// of that. Every sample that counts as within 95% is re-measured before it counts (the first one of each
// guided and pretrained run, every one of the random runs; one that falls short exposes the next), so a
// lucky first measurement neither ends a run early nor raises random search's share. A run that never
// gets there counts as its budget (printed with ">="). Random search draws independent uniform samples,
// so its trials to the first sample within 95% of the best follow a geometric distribution with p = the share of such samples: p is estimated from all
// random samples of the workload (seeds x budget; --random-trials gives random runs a larger budget than
// the others, for a tighter estimate), and random's median trials is ln(0.5) / ln(1 - p)
// (with no hit, p < 3 / samples at 95% confidence: a lower bound, ">="). random / guided compares that
// with guided's median over its seeds. The cold guided model uses --model-params (default min_samples 16:
// it guides from the third batch on); the pretrained one keeps its defaults (its base model guides from
// the start and a correction is fitted from 64 samples on: fitted on fewer, it undid the base's ranking),
// while the cold models beside it (refine model, check fallback) learn from 8 on, one of its batches (tessel tune's
// cold_min_samples default; 16 before 2026-12-07; --pretrained-model-params sets its parameters). Writes bench/results/search-efficiency.csv (+ -runs.csv).
//
// --extra-seeds E adds E seeds of the guided and pretrained modes after the mark is set; each stops after
// the batch in which it reaches 95% of the mark with a re-measured candidate (TuneOptions::stop_when),
// so a seed costs its trials to the mark, not the budget, and the medians are over seeds + E runs (3
// seeds move a median 2x between runs of the same code; --extra-until MINUTES starts none after that time
// from the benchmark's start and leaves out one stopped then, so a run with a deadline still ends with a
// row). The mark and random's share come from the full runs only. Each full run's two
// fastest candidates are re-measured with the workload's top ones (and its next fastest, until its fastest is
// a re-measured one), so its end is a median too:
// pretrained_end/guided_end_min compares the pretrained run's end with the cold run's of the same seed;
// ends_worse_beyond_noise counts the seeds where the pretrained end is slower by a one-sided Mann-Whitney
// test at 5% on the two ends' re-measured times (measured side by side): a difference of a few percent
// between two schedules is often the spread of their measurements, and "worse" should not be a coin flip.
// The runs CSV's model_fallbacks names the pretrained models that ended on their cold fallback (the
// online check, TuneOptions::check_pretrained; "-": none).
//
// --parallel N runs N workloads at once, each in its own process pinned to its own CPU (a workload's runs
// and its mark stay in one process; on this machine's 2 cores the benchmark takes half the time). They
// measure one candidate at a time (LocalRunnerParams::measure_lock; --no-measure-lock: at once; --measure-lock
// FILE shares the lock with other processes, e.g. a second benchmark started on a core the first freed), while
// building and searching overlap.
//
//   scripts/bench search-efficiency [--trials 160] [--random-trials N] [--seeds 3] [--extra-seeds 0] [--extra-until MINUTES] [--first-seed 101] [--parallel 1]
//                                   [--remeasure-top 8] [--remeasure-rounds 4] [--recheck-rounds 2] [--measure-lock FILE] [--model costmodel/pretrained/cpu-x86_64[-CPU].model]
//                                   [--model-params '{"min_samples":16}'] [--guided-model xgb]
//                                   [--strategy-params '{"population":128}'] [--modes random,guided,pretrained]
//                                   [--only SPEC_PART[,SPEC_PART...]] [--curves FILE.csv] [--refine-model auto|none|...] [--no-pretrained-check]
// --modes and --only run a part (for experiments: the ratios need all three modes); --curves writes every
// run's per-trial GFLOP/s (the tuning curves). The CSVs (and --curves) are rewritten after each workload finishes, so
// a run stopped part-way keeps the workloads it finished. --pool-curves FILE... runs nothing: it counts the
// runs of several --curves files against one mark per workload (the best of all of them), so that two
// invocations (an A/B of a search setting, which set two marks) compare.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "common/bench_util.h"
#include "tessel/codegen/target.h"
#include "tessel/records/stats.h"
#include "tessel/runtime/thread_pool.h"
#include "tessel/tuner/tuner.h"

using namespace tessel;
namespace po = boost::program_options;

namespace {

std::string trace_key(const tuner::MeasureInput& in) {
  std::string k = in.workload->key;
  for (auto& s : in.trace) k += '\n' + schedule::step_to_string(s);
  return k;
}

/** Results of every candidate measured so far (shared by the runs of one workload). */
struct MeasureCache {
  std::map<std::string, tuner::MeasureResult> results;
  std::map<std::string, tuner::MeasureInput> inputs;  // of the candidates really run (for re-measuring)
  // The re-measured candidates (their time is the median of these): their measured times (s), the first,
  // then each round's.
  std::map<std::string, std::vector<double>> samples;
  int64_t measured = 0;  // candidates really built and run
  double best_s = 0;     // best median time so far (early abort of candidates 5x slower, as in tuning)
};

/** Builds only candidates the cache does not know. */
class CachingBuilder : public tuner::Builder {
 public:
  CachingBuilder(std::unique_ptr<tuner::Builder> inner, MeasureCache& cache) : inner_(std::move(inner)), cache_(cache) {}
  std::vector<tuner::BuildResult> build(const std::vector<tuner::MeasureInput>& inputs,
                                        const tuner::MeasureOptions& opt) override {
    std::vector<tuner::BuildResult> out(inputs.size());
    std::vector<tuner::MeasureInput> todo;
    std::vector<size_t> where;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!cache_.results.count(trace_key(inputs[i]))) todo.push_back(inputs[i]), where.push_back(i);
    auto built = inner_->build(todo, opt);
    for (size_t k = 0; k < where.size(); ++k) out[where[k]] = built[k];
    return out;
  }

 private:
  std::unique_ptr<tuner::Builder> inner_;
  MeasureCache& cache_;
};

/** Answers known candidates from the cache, runs the others; logs every trial's candidate in order. */
class CachingRunner : public tuner::Runner {
 public:
  CachingRunner(std::unique_ptr<tuner::Runner> inner, MeasureCache& cache, std::vector<std::string>& log)
      : inner_(std::move(inner)), cache_(cache), log_(log) {}
  std::vector<tuner::MeasureResult> run(const std::vector<tuner::MeasureInput>& inputs,
                                        const std::vector<tuner::BuildResult>& builds,
                                        const tuner::MeasureOptions& opt, double best_so_far_s) override {
    std::vector<tuner::MeasureResult> out(inputs.size());
    std::vector<tuner::MeasureInput> todo;
    std::vector<tuner::BuildResult> todo_builds;
    std::vector<size_t> where;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto it = cache_.results.find(trace_key(inputs[i]));
      if (it != cache_.results.end()) {
        out[i] = it->second;
      } else if (builds[i].error_kind != records::MeasureErrorKind::kNone) {
        out[i].error_kind = builds[i].error_kind;
        out[i].error_message = builds[i].error_message;
        cache_.results[trace_key(inputs[i])] = out[i];
      } else {
        todo.push_back(inputs[i]), todo_builds.push_back(builds[i]), where.push_back(i);
      }
    }
    // Early abort against the best of all runs so far (only candidates 5x slower than it are cut short,
    // far from the 95% mark this benchmark looks for).
    auto ran = inner_->run(todo, todo_builds, opt, cache_.best_s);
    for (size_t k = 0; k < where.size(); ++k) {
      out[where[k]] = ran[k];
      cache_.results[trace_key(todo[k])] = ran[k];
      cache_.inputs[trace_key(todo[k])] = todo[k];
      ++cache_.measured;
      if (ran[k].ok() && (cache_.best_s == 0 || ran[k].median_s() < cache_.best_s)) cache_.best_s = ran[k].median_s();
    }
    for (auto& in : inputs) log_.push_back(trace_key(in));
    return out;
  }

 private:
  std::unique_ptr<tuner::Runner> inner_;
  MeasureCache& cache_;
  std::vector<std::string>& log_;
};

struct Run {
  std::string workload, mode;
  uint64_t seed;
  bool extra = false;             // an extra seed: stops at the mark
  std::vector<std::string> keys;  // the candidate of each trial, in order
  std::vector<double> gflops;     // per trial (filled after the re-measurement)
  std::string fallbacks = "-";    // the pretrained models on their cold fallback at the end (the online check)
};

/** First trial (1-based) after which the running best reaches target; 0 = never. */
int64_t trials_to(const std::vector<double>& g, double target) {
  double best = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    best = std::max(best, g[i]);
    if (best >= target) return int64_t(i) + 1;
  }
  return 0;
}

/** --pool-curves: trials to 95% of one mark per workload, the best of every run in the --curves files given
 *  (two invocations, e.g. an A/B of a search setting, set two marks: their own t95 columns do not compare).
 *  Counted as the benchmark counts them (trials_to; a run that never gets there counts as its trials and
 *  makes the median a bound, ">="); a row per file, workload and mode. Returns the exit status. */
int pool_curves(const std::vector<std::string>& files, const std::string& csv) {
  struct Curve {
    std::string file, workload, mode, seed;
    std::vector<double> gflops;
  };
  std::vector<Curve> curves;
  std::map<std::string, double> mark;  // per workload
  for (auto& file : files) {
    std::ifstream f(file);
    std::string line;
    if (!f || !std::getline(f, line) || line != "workload,mode,seed,trial,gflops") {
      std::cerr << "search-efficiency: --pool-curves: " << file
                << " is not a --curves file (no header workload,mode,seed,trial,gflops)\n";
      return 2;
    }
    for (int n = 2; std::getline(f, line); ++n) {
      // "SPEC",MODE,SEED,TRIAL,GFLOPS (the spec is quoted: it holds commas)
      size_t close = line.size() > 1 && line[0] == '"' ? line.find('"', 1) : std::string::npos;
      std::vector<std::string> rest;
      if (close != std::string::npos && close + 1 < line.size() && line[close + 1] == ',') {
        std::stringstream ss(line.substr(close + 2));
        for (std::string field; std::getline(ss, field, ',');) rest.push_back(field);
      }
      double g = 0;
      try {
        size_t used = 0;
        if (rest.size() == 4) g = std::stod(rest[3], &used);
        if (rest.size() != 4 || used != rest[3].size() || !(g >= 0)) rest.clear();
      } catch (const std::exception&) {
        rest.clear();
      }
      if (rest.empty()) {
        std::cerr << "search-efficiency: --pool-curves: " << file << " line " << n
                  << ": expected \"SPEC\",MODE,SEED,TRIAL,GFLOPS\n";
        return 2;
      }
      std::string workload = line.substr(1, close - 1);
      if (curves.empty() || curves.back().file != file || curves.back().workload != workload ||
          curves.back().mode != rest[0] || curves.back().seed != rest[1])
        curves.push_back({file, workload, rest[0], rest[1], {}});
      curves.back().gflops.push_back(g);
      mark[workload] = std::max(mark[workload], g);
    }
  }
  if (curves.empty()) {
    std::cerr << "search-efficiency: --pool-curves: no runs in the files given\n";
    return 2;
  }
  bench::Table table{{"file", "workload", "mode", "mark_gflops", "seeds", "trials_to_95", "median_t95", "best_gflops"}};
  for (size_t i = 0; i < curves.size();) {
    size_t j = i;
    std::vector<double> t95;
    std::string per, best;
    bool never = false;
    double never_trials = 0;
    for (; j < curves.size() && curves[j].file == curves[i].file && curves[j].workload == curves[i].workload &&
           curves[j].mode == curves[i].mode;
         ++j) {
      auto& c = curves[j];
      int64_t t = trials_to(c.gflops, 0.95 * mark[c.workload]);
      double n = double(c.gflops.size());
      if (t == 0) never_trials = never ? std::min(never_trials, n) : n, never = true;
      t95.push_back(t == 0 ? n : double(t));
      per += (per.empty() ? "" : " ") + (t == 0 ? ">" + std::to_string(c.gflops.size()) : std::to_string(t));
      best += (best.empty() ? "" : " ") + bench::fmt(*std::max_element(c.gflops.begin(), c.gflops.end()), 1);
    }
    double median = records::median_of(t95);
    table.add({curves[i].file, curves[i].workload, curves[i].mode, bench::fmt(mark[curves[i].workload], 1),
               std::to_string(j - i), per, (never && median >= never_trials ? ">=" : "") + bench::fmt(median, 0), best});
    i = j;
  }
  table.print();
  return table.write_csv(csv) ? 0 : 1;
}

std::vector<std::string> heldout_workloads(const std::string& list) {
  std::ifstream f(list);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::string set, spec;
    if (is >> set >> spec && set == "heldout") out.push_back(spec);
  }
  return out;
}

struct Settings {
  std::string model, refine_model, guided_model, dir;
  std::string pretrained_records = "pretrained";  // the pretrained mode's TuneOptions::transfer_from
  std::string measure_lock;  // LocalRunnerParams::measure_lock of every runner (with --parallel)
  nlohmann::json model_params;             // the guided mode's (--model-params)
  nlohmann::json pretrained_model_params;  // the pretrained mode's (--pretrained-model-params)
  tuner::StrategyParams strategy_params;
  std::vector<std::pair<std::string, std::string>> modes;  // (mode, strategy)
  int64_t trials = 0, random_trials = 0;
  int seeds = 3, extra_seeds = 0, batch = 8, remeasure_top = 8, remeasure_rounds = 4;
  uint64_t first_seed = 101;
  bool tty = false;
  bool check_pretrained = true;  // TuneOptions::check_pretrained (--no-pretrained-check)
  // --extra-until: no extra seed starts after this, and one running then is stopped and left out
  // (steady_clock is the system's monotonic clock: the same in the worker processes)
  std::chrono::steady_clock::time_point extra_until = std::chrono::steady_clock::time_point::max();
  tuner::MeasureOptions measure;
  int64_t budget_of(const std::string& mode) const { return mode == "random" ? random_trials : trials; }
};

/** A local runner that measures under the settings' lock (if any). */
std::unique_ptr<tuner::Runner> make_runner(const std::string& work_dir, const Settings& st) {
  tuner::LocalRunnerParams p;
  p.work_dir = work_dir;
  p.measure_lock = st.measure_lock;
  return tuner::make_local_runner(p);
}

/** Measures the candidates `keys` names again (those not re-measured yet and whose first measurement
 *  succeeded; rounds times each, side by side, in a fresh builder and runner) and sets their time to the
 *  median of all their measurements. A first measurement is one noisy sample; the best of thousands of
 *  them is biased upward (a lucky sample), which would move the 95% mark, and a lucky sample would also
 *  count as a run reaching it. */
size_t remeasure_keys(MeasureCache& cache, const workload::Workload& w, const Settings& st,
                      const std::set<std::string>& keys) {
  std::vector<std::string> todo;
  for (auto& k : keys) {
    auto it = cache.results.find(k);
    if (it != cache.results.end() && it->second.ok() && !cache.samples.count(k) && cache.inputs.count(k))
      todo.push_back(k);
  }
  if (todo.empty() || st.remeasure_rounds <= 0) return 0;
  std::vector<tuner::MeasureInput> inputs;
  std::vector<std::vector<double>> samples;  // per candidate: its first time, then each round's
  for (auto& k : todo) inputs.push_back(cache.inputs.at(k)), samples.push_back({cache.results.at(k).median_s()});
  std::string wd = st.dir + "/remeasure-" + w.key;
  auto builder = tuner::make_local_builder(wd, 0);
  auto runner = make_runner(wd, st);
  tuner::MeasureOptions plain = st.measure;
  plain.recheck_rounds = 0;  // each round is one plain sample; the median of the rounds is the estimate
  auto built = builder->build(inputs, plain);
  for (int r = 0; r < st.remeasure_rounds; ++r) {
    auto res = runner->run(inputs, built, plain, 0);
    for (size_t i = 0; i < res.size(); ++i)
      if (res[i].ok()) samples[i].push_back(res[i].median_s());
  }
  for (size_t i = 0; i < todo.size(); ++i) {
    cache.results[todo[i]].run_times_s = {records::median_of(samples[i])};  // the value every trial reads
    cache.samples[todo[i]] = samples[i];
  }
  return todo.size();
}

/** Of the keys, the fastest one that succeeded ("" when none did). */
std::string fastest(const MeasureCache& cache, const std::vector<std::string>& keys) {
  std::string best;
  double best_s = 0;
  for (auto& key : keys) {
    auto it = cache.results.find(key);
    if (it != cache.results.end() && it->second.ok() && (best.empty() || it->second.median_s() < best_s))
      best = key, best_s = it->second.median_s();
  }
  return best;
}

/** Re-measures the k fastest candidates and the candidates `also` names, then each run's fastest until
 *  every one is a re-measured one: the mark (the fastest of all, some run's) and each run's end are medians,
 *  not lucky samples. Returns the best throughput before. */
double remeasure(MeasureCache& cache, const workload::Workload& w, const Settings& st,
                 const std::set<std::string>& also, const std::vector<Run>& runs) {
  std::vector<std::pair<double, std::string>> ok;
  for (auto& [key, r] : cache.results)
    if (r.ok()) ok.push_back({r.median_s(), key});
  std::sort(ok.begin(), ok.end());
  if (ok.empty()) return 0;
  double before = w.flop_count() / ok.front().first / 1e9;
  std::set<std::string> keys = also;
  for (size_t i = 0; i < std::min(ok.size(), size_t(st.remeasure_top)); ++i) keys.insert(ok[i].second);
  remeasure_keys(cache, w, st, keys);
  std::set<std::string> tops;
  do {
    tops.clear();
    for (auto& r : runs) tops.insert(fastest(cache, r.keys));
  } while (remeasure_keys(cache, w, st, tops) > 0);
  return before;
}

/** Runs every mode and seed on one workload; the runs' table rows, the summary row, the two ratios (null
 *  when censored) and the curves' CSV lines, as JSON (so a worker process can hand them back). */
nlohmann::json run_workload(const std::string& spec, const Settings& st) {
  auto w = std::make_shared<workload::Workload>(workload::from_spec(spec));
  MeasureCache cache;
  std::vector<Run> runs;
  auto gflops_of = [&](const std::string& key) {
    auto& m = cache.results.at(key);
    return m.ok() ? w->flop_count() / m.median_s() / 1e9 : 0.0;
  };
  // One tuning run (index: its place among the seeds, for its database); stop_at > 0 ends it after the
  // batch in which its best reaches stop_at GFLOP/s (read from the cache, as the trials-to-95% below), or
  // when --extra-until is past (then it is left out: it neither reached the mark nor used its budget).
  auto tune_run = [&](const std::string& mode, const std::string& strategy, int index, double stop_at) {
    bool cut = false;
    Run run{spec, mode, st.first_seed + uint64_t(index), stop_at > 0, {}, {}, "-"};
    tuner::TuneOptions o;
    o.tasks = {{w, 1, spec}};
    o.trials = st.budget_of(mode);
    o.strategy = strategy;
    o.cost_model = mode == "random" ? "random" : mode == "guided" ? st.guided_model : st.model;
    if (mode == "guided") o.model_params = st.model_params;
    if (mode == "pretrained") o.model_params = st.pretrained_model_params;
    o.refine_model = mode == "random" ? "none" : st.refine_model;
    o.check_pretrained = st.check_pretrained;
    o.transfer_from = {mode == "pretrained" ? st.pretrained_records : "none"};
    o.seed = run.seed;
    o.strategy_params = st.strategy_params;
    o.batch_size = st.batch;
    o.remeasure_top = 0;
    o.measure = st.measure;
    o.db_path = st.dir + "/" + mode + std::to_string(index) + "_" + w->key + ".db";
    std::filesystem::remove(o.db_path);
    o.make_builder = [&](const std::string& wd, int jobs) {
      return std::make_unique<CachingBuilder>(tuner::make_local_builder(wd, jobs), cache);
    };
    o.make_runner = [&](const std::string& wd) {
      return std::make_unique<CachingRunner>(make_runner(wd, st), cache, run.keys);
    };
    if (stop_at > 0)
      o.stop_when = [&](const tuner::TuneSummary&) {
        if (std::chrono::steady_clock::now() >= st.extra_until) return cut = true;
        // A candidate reaches the mark only with its re-measured time (as the full runs' do, below).
        std::set<std::string> reached;
        for (auto& k : run.keys)
          if (gflops_of(k) >= stop_at) reached.insert(k);
        remeasure_keys(cache, *w, st, reached);
        return std::any_of(reached.begin(), reached.end(), [&](auto& k) { return gflops_of(k) >= stop_at; });
      };
    tuner::TuneSummary done = tuner::tune(o, [&](const tuner::TuneSummary& su, double) {
      std::fprintf(stderr, "%s  %s %s seed %llu: trials %lld  best %.1f GFLOP/s  (measured %lld)%s",
                   st.tty ? "\r" : "", spec.c_str(), mode.c_str(), (unsigned long long)run.seed,
                   (long long)su.total_trials, su.tasks[0].best_gflops, (long long)cache.measured,
                   st.tty ? "   " : "\n");
    });
    for (auto& f : done.tasks[0].fallbacks) run.fallbacks = (run.fallbacks == "-" ? "" : run.fallbacks + "+") + f;
    if (cut)
      std::fprintf(stderr, "%s %s seed %llu: stopped at --extra-until after %zu trials; left out\n", spec.c_str(),
                   mode.c_str(), (unsigned long long)run.seed, run.keys.size());
    else
      runs.push_back(std::move(run));
  };
  for (int s = 0; s < st.seeds; ++s)
    for (auto& [mode, strategy] : st.modes) tune_run(mode, strategy, s, 0);
  // Each run's two fastest candidates are re-measured with the workload's fastest: a run's end is then
  // a median too (the pretrained end against the cold end of the same seed).
  std::set<std::string> ends;
  for (auto& r : runs) {
    std::vector<std::pair<double, std::string>> mine;
    for (auto& k : std::set<std::string>(r.keys.begin(), r.keys.end())) mine.push_back({gflops_of(k), k});
    std::sort(mine.rbegin(), mine.rend());
    for (size_t i = 0; i < std::min<size_t>(2, mine.size()); ++i) ends.insert(mine[i].second);
  }
  double first_best = remeasure(cache, *w, st, ends, runs);
  double best = 0;  // the mark: the best of the full runs (the extra ones stop at 95% of it)
  // Every sample that counts as reaching 95% of the mark is re-measured first: the first one of each
  // guided and pretrained run (its trials to the mark) and every one of the random runs (their share).
  // A re-measured sample that falls short exposes the run's next one, so this repeats until none is new.
  std::set<std::string> counted;
  do {
    best = 0;
    for (auto& r : runs)
      for (auto& k : r.keys) best = std::max(best, gflops_of(k));
    counted.clear();
    for (auto& r : runs)
      for (auto& k : r.keys) {
        if (gflops_of(k) < 0.95 * best) continue;
        counted.insert(k);
        if (r.mode != "random") break;  // only the run's first one counts
      }
  } while (remeasure_keys(cache, *w, st, counted) > 0);  // it skips those re-measured already
  // Extra seeds of the searching modes: each stops once it reaches 95% of the mark, so that a seed costs
  // only its trials to the mark (what the medians below need), not the whole budget.
  for (int e = 0; e < st.extra_seeds; ++e)
    for (auto& [mode, strategy] : st.modes)
      if (mode != "random" && std::chrono::steady_clock::now() < st.extra_until)
        tune_run(mode, strategy, st.seeds + e, 0.95 * best);
  std::string curves;
  for (auto& r : runs) {
    for (auto& k : r.keys) r.gflops.push_back(gflops_of(k));
    for (size_t t = 0; t < r.gflops.size(); ++t)
      curves += '"' + spec + "\"," + r.mode + ',' + std::to_string(r.seed) + ',' + std::to_string(t + 1) + ',' +
                bench::fmt(r.gflops[t], 3) + '\n';
  }
  // The pretrained run's end against the guided run's end of the same seed (full runs; re-measured), and
  // the seeds where it is slower beyond the noise: its re-measured samples slower than the cold end's by a
  // one-sided Mann-Whitney test at 5% (the rounds measure both side by side).
  double end_ratio = 0;
  int pairs = 0, ends_worse = 0, ends_tested = 0;
  for (auto& p : runs)
    for (auto& g : runs)
      if (!p.extra && !g.extra && p.mode == "pretrained" && g.mode == "guided" && p.seed == g.seed) {
        double rp = *std::max_element(p.gflops.begin(), p.gflops.end()), rg = *std::max_element(g.gflops.begin(), g.gflops.end());
        if (rg > 0) end_ratio = end_ratio == 0 ? rp / rg : std::min(end_ratio, rp / rg);
        ++pairs;
        std::string kp = fastest(cache, p.keys), kg = fastest(cache, g.keys);
        if (kp == kg) {
          ++ends_tested;  // the same schedule
        } else if (cache.samples.count(kp) && cache.samples.count(kg)) {
          ++ends_tested;
          ends_worse += records::slower_beyond_noise(cache.samples.at(kp), cache.samples.at(kg));
        }
      }
  std::map<std::string, std::vector<double>> t95;
  std::map<std::string, bool> never;
  int64_t hits = 0, samples = 0;  // random samples within 95% of the best, of all
  for (auto& r : runs)
    if (r.mode == "random")
      for (double g : r.gflops) ++samples, hits += g >= 0.95 * best;
  nlohmann::json out = {{"runs", nlohmann::json::array()}, {"curves", curves}, {"rg", nullptr}, {"gp", nullptr}};
  for (auto& r : runs) {
    int64_t t = trials_to(r.gflops, 0.95 * best);
    if (t == 0) never[r.mode] = true;
    t95[r.mode].push_back(double(t == 0 ? st.budget_of(r.mode) : t));
    out["runs"].push_back(std::vector<std::string>{
        spec, r.mode, std::to_string(r.seed), std::to_string(r.gflops.size()),
        bench::fmt(*std::max_element(r.gflops.begin(), r.gflops.end()), 1),
        t == 0 ? ">" + std::to_string(st.budget_of(r.mode)) : std::to_string(t), std::to_string(cache.measured),
        r.extra ? "extra" : "full", r.fallbacks});
  }
  double tr_runs = records::median_of(t95["random"]), tg = records::median_of(t95["guided"]),
         tp = records::median_of(t95["pretrained"]);
  // Random's median trials to the first hit: geometric with p = hits / samples (p < 3 / samples when none).
  bool rg_bound = hits == 0;
  double p = samples == 0 ? 0 : (hits > 0 ? double(hits) : 3.0) / double(samples);
  double tr = p >= 1 ? 1 : p <= 0 ? double(st.random_trials) : std::max(1.0, std::ceil(std::log(0.5) / std::log(1.0 - p)));
  if (rg_bound) tr = std::max(tr, tr_runs);  // every run also missed: at least the runs' median
  bool g_bound = never["guided"] && tg >= double(st.trials), p_bound = never["pretrained"] && tp >= double(st.trials);
  auto ran = [&](const char* m) { return !t95[m].empty(); };  // --modes may leave a mode out
  if (ran("random") && ran("guided") && !rg_bound && !g_bound) out["rg"] = tr / tg;
  if (ran("guided") && ran("pretrained") && !g_bound && !p_bound) out["gp"] = tg / tp;
  // a / b where a or b may be a lower bound (the budget was reached first): ">=" when only a is one,
  // "<=" when only b is, "n/a" when both are.
  auto ratio = [](double a, bool a_bound, double b, bool b_bound) {
    if (a_bound && b_bound) return std::string("n/a");
    return std::string(a_bound ? ">=" : b_bound ? "<=" : "") + bench::fmt(a / b, 2);
  };
  auto show = [&](const char* m, double t) {
    if (!ran(m)) return std::string("-");
    return (never[m] && t >= double(st.budget_of(m)) ? ">=" : "") + bench::fmt(t, 0);
  };
  auto pair = [&](const char* a, const char* b, const std::string& r) { return ran(a) && ran(b) ? r : "-"; };
  out["row"] = std::vector<std::string>{
      spec, bench::fmt(best, 1), show("random", tr_runs),
      ran("random") ? std::to_string(hits) + "/" + std::to_string(samples) : "-",
      ran("random") ? (rg_bound ? ">=" : "") + bench::fmt(tr, 0) : "-", show("guided", tg), show("pretrained", tp),
      pair("random", "guided", ratio(tr, rg_bound, tg, g_bound)),
      pair("guided", "pretrained", ratio(tg, g_bound, tp, p_bound)), std::to_string(cache.measured),
      bench::fmt(first_best, 1), std::to_string(t95["guided"].size()) + "/" + std::to_string(t95["pretrained"].size()),
      end_ratio > 0 ? bench::fmt(end_ratio, 3) : "-",
      ends_tested == pairs && pairs > 0 ? std::to_string(ends_worse) + "/" + std::to_string(pairs) : "-",
      std::to_string(cache.samples.size())};
  return out;
}

/** run_workload, with a failure (a measurement error, a lock file removed under the run) reported and
 *  returned as null, so the other workloads still run and their tables are written. */
nlohmann::json run_workload_or_null(const std::string& spec, const Settings& st) {
  try {
    return run_workload(spec, st);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "search-efficiency: %s: %s\n", spec.c_str(), e.what());
    return nullptr;
  }
}

/** Runs the workloads in worker processes, at most `parallel` at once, each pinned to its own CPU (a
 *  workload's runs share one measurement cache, so they stay in one process). Results by index; a
 *  worker that failed leaves null. on_done(results so far) after each workload (null: not done). */
std::vector<nlohmann::json> run_parallel(const std::vector<std::string>& specs, const Settings& st, int parallel,
                                         const std::function<void(const std::vector<nlohmann::json>&)>& on_done) {
  std::vector<nlohmann::json> results(specs.size());
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof(allowed), &allowed);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && int(cpus.size()) < parallel; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  std::map<pid_t, std::pair<size_t, int>> running;  // pid -> (workload, cpu)
  auto file_of = [&](size_t i) { return st.dir + "/result_" + std::to_string(i) + ".json"; };
  size_t next = 0;
  while (next < specs.size() || !running.empty()) {
    while (next < specs.size() && !cpus.empty()) {
      int cpu = cpus.back();
      cpus.pop_back();
      std::fflush(nullptr);
      pid_t pid = fork();
      if (pid == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof(one), &one);
        runtime::set_num_threads(1);
        nlohmann::json r = run_workload_or_null(specs[next], st);
        if (!r.is_null()) std::ofstream(file_of(next)) << r.dump();
        std::fflush(nullptr);
        _exit(r.is_null() ? 1 : 0);
      }
      if (pid < 0) {
        std::fprintf(stderr, "search-efficiency: fork failed; running %s here\n", specs[next].c_str());
        runtime::set_num_threads(1);
        results[next] = run_workload_or_null(specs[next], st);
        on_done(results);
        cpus.push_back(cpu);
      } else {
        running[pid] = {next, cpu};
      }
      ++next;
    }
    int status = 0;
    pid_t pid = wait(&status);
    if (pid < 0) break;
    auto it = running.find(pid);
    if (it == running.end()) continue;
    auto [i, cpu] = it->second;
    running.erase(it);
    cpus.push_back(cpu);
    std::ifstream f(file_of(i));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && f) results[i] = nlohmann::json::parse(f, nullptr, false);
    if (results[i].is_discarded() || results[i].is_null()) {
      std::fprintf(stderr, "search-efficiency: the worker of %s failed\n", specs[i].c_str());
      results[i] = nullptr;
    }
    on_done(results);
  }
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv, model;
  std::string list = TESSEL_SOURCE_DIR "/costmodel/pretrained/workloads.txt", only, pretrained_records = "pretrained";
  int64_t trials = 160, random_trials = 0;
  double extra_until_min = 0;
  int seeds = 3, extra_seeds = 0, batch = 8, parallel = 1, remeasure_top = 8, remeasure_rounds = 4;
  int recheck_rounds = tuner::MeasureOptions().recheck_rounds;
  std::string recheck_merge = tuner::MeasureOptions().recheck_merge;
  uint64_t first_seed = 101;
  bool no_check = false, no_measure_lock = false;
  std::string measure_lock;
  std::vector<std::string> pool;  // --pool-curves
  std::string params_text = "{\"min_samples\":16}", pretrained_params_text = "{}", modes_text = "random,guided,pretrained", curves,
              guided_model = "xgb", strategy_text = "{}", refine_model = "auto";
  po::options_description desc("search-efficiency benchmark options");
  desc.add_options()("help,h", "help")("csv", po::value<std::string>(&csv), "CSV output")(
      "trials", po::value<int64_t>(&trials)->default_value(160), "trial budget of every run")(
      "random-trials", po::value<int64_t>(&random_trials),
      "trial budget of the random runs (default: --trials): more samples estimate random search's hit rate "
      "more tightly")(
      "seeds", po::value<int>(&seeds)->default_value(3), "seeds per workload and mode")(
      "extra-seeds", po::value<int>(&extra_seeds)->default_value(0),
      "more seeds of the guided and pretrained modes after the mark is set, each stopping once it reaches 95% "
      "of it (their medians count every seed; the mark and random's share come from the full runs)")(
      "extra-until", po::value<double>(&extra_until_min),
      "minutes after the start past which no extra seed starts; one running then is stopped and left out (the "
      "seeds_guided/pretrained column counts the runs kept; the full runs always finish)")(
      "first-seed", po::value<uint64_t>(&first_seed)->default_value(101), "seeds are first-seed, first-seed + 1, ...")(
      "batch", po::value<int>(&batch)->default_value(8), "candidates per round")(
      "parallel", po::value<int>(&parallel)->default_value(1),
      "workloads run at once, each in its own process pinned to its own CPU (at most the CPUs allowed); they "
      "measure one at a time (a lock), while building and searching overlap")(
      "measure-lock", po::value<std::string>(&measure_lock),
      "measure under an exclusive lock on this file (created if missing), shared with any other benchmark or "
      "tessel tune --measure-lock naming it (with --parallel: instead of the run's own)")(
      "no-measure-lock", po::bool_switch(&no_measure_lock),
      "with --parallel: let the workloads measure at the same time")(
      "remeasure-top", po::value<int>(&remeasure_top)->default_value(8),
      "after the runs, the fastest K candidates of a workload are measured again")(
      "remeasure-rounds", po::value<int>(&remeasure_rounds)->default_value(4),
      "times each of them is measured again (their time: the median of all; 0 = no re-measurement)")(
      "recheck-rounds", po::value<int>(&recheck_rounds)->default_value(recheck_rounds),
      "rechecks of near-best candidates while tuning (tessel tune --recheck-rounds; 0 = off)")(
      "recheck-merge", po::value<std::string>(&recheck_merge)->default_value(recheck_merge),
      "a rechecked candidate's time while tuning (tessel tune --recheck-merge: fastest or pooled)")(
      "model", po::value<std::string>(&model),
      "pretrained model file (default: the shipped one of this CPU, tessel tune --cost-model pretrained)")(
      "model-params", po::value<std::string>(&params_text), "parameters of the guided mode's (cold) model")(
      "pretrained-model-params", po::value<std::string>(&pretrained_params_text),
      "cost-model parameters of the pretrained mode (tessel tune --cost-model-params), e.g. '{\"cold_min_samples\":64}'")(
      "guided-model", po::value<std::string>(&guided_model), "kind of the guided mode's cold model (xgb, xgb-rank, mlp)")(
      "refine-model", po::value<std::string>(&refine_model),
      "refine stage of the guided and pretrained modes (tessel tune --refine-model: auto = cold for both, "
      "pretrained = the shipped code model, none = the cost model alone)")(
      "no-pretrained-check", po::bool_switch(&no_check),
      "the pretrained mode trusts its models throughout (tessel tune --no-pretrained-check)")(
      "pretrained-records", po::value<std::string>(&pretrained_records),
      "what the pretrained mode transfers from (tessel tune --transfer-from: pretrained = the shipped "
      "records of the training workloads, none, or a database / JSON-lines file)")(
      "strategy-params", po::value<std::string>(&strategy_text),
      "evolutionary search parameters of the guided and pretrained modes, e.g. '{\"population\":512}'")(
      "workloads", po::value<std::string>(&list), "workload list (its 'heldout' lines are used)")(
      "only", po::value<std::string>(&only),
      "run only workloads whose spec contains this (comma-separated: any of these parts)")(
      "modes", po::value<std::string>(&modes_text), "modes to run, comma-separated (random,guided,pretrained)")(
      "curves", po::value<std::string>(&curves), "also write every run's per-trial GFLOP/s as CSV (workload,mode,seed,trial,gflops)")(
      "pool-curves", po::value<std::vector<std::string>>(&pool)->multitoken(),
      "run nothing: count each run of these --curves files' trials to 95% of one mark per workload, the best "
      "of all their runs (an A/B of two invocations), as the benchmark counts them; --csv writes the table");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "search-efficiency: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (!pool.empty()) return pool_curves(pool, csv);
  nlohmann::json model_params, pretrained_model_params;
  for (auto [text, out, flag] : {std::tuple{&params_text, &model_params, "--model-params"},
                                 std::tuple{&pretrained_params_text, &pretrained_model_params, "--pretrained-model-params"}}) {
    try {
      *out = nlohmann::json::parse(*text);
    } catch (const std::exception& e) {
      std::cerr << "search-efficiency: " << flag << " is not JSON: " << e.what() << "\n";
      return 2;
    }
    if (!out->is_object()) {
      std::cerr << "search-efficiency: " << flag << " must be a JSON object\n";
      return 2;
    }
  }
  tuner::StrategyParams strategy_params;
  try {
    auto j = nlohmann::json::parse(strategy_text);
    for (auto& [k, v] : j.items()) {
      if (k == "epsilon") strategy_params.epsilon = v.get<double>();
      else if (k == "population") strategy_params.population = v.get<int>();
      else if (k == "generations") strategy_params.generations = v.get<int>();
      else if (k == "crossover_prob") strategy_params.crossover_prob = v.get<double>();
      else if (k == "local_mutation") strategy_params.local_mutation = v.get<double>();
      else if (k == "refine_shortlist") strategy_params.refine_shortlist = v.get<int>();
      else if (k == "refine_explore") strategy_params.refine_explore = v.get<double>();
      else if (k == "stall_batches") strategy_params.stall_batches = v.get<int>();
      else if (k == "polish") strategy_params.polish = v.get<double>();
      else throw std::runtime_error("unknown key '" + k + "' (epsilon, population, generations, crossover_prob, local_mutation, refine_shortlist, refine_explore, stall_batches, polish)");
    }
  } catch (const std::exception& e) {
    std::cerr << "search-efficiency: --strategy-params: " << e.what() << "\n";
    return 2;
  }
  if (model.empty()) {
    try {
      model = tuner::resolve_cost_model("pretrained", "host");  // the shipped one of this CPU
    } catch (const std::exception& e) {
      std::cerr << "search-efficiency: " << e.what() << "\n";
      return 2;
    }
  }
  if (!std::filesystem::is_regular_file(model)) {
    std::cerr << "search-efficiency: no pretrained model at " << model << " (scripts/train-costmodel makes it)\n";
    return 2;
  }
  auto all_specs = heldout_workloads(list);
  if (all_specs.empty()) {
    std::cerr << "search-efficiency: no 'heldout' workloads in " << list << "\n";
    return 2;
  }
  std::vector<std::string> specs, parts;
  std::stringstream only_ss(only);
  for (std::string part; std::getline(only_ss, part, ',');)
    if (!part.empty()) parts.push_back(part);
  for (auto& spec : all_specs)
    if (parts.empty() || std::any_of(parts.begin(), parts.end(), [&](auto& p) { return spec.find(p) != std::string::npos; }))
      specs.push_back(spec);
  if (specs.empty()) {
    std::cerr << "search-efficiency: --only '" << only << "' matches none of the held-out workloads\n";
    return 2;
  }
  if (parallel < 1 || seeds < 1 || extra_seeds < 0 || remeasure_top < 0 || remeasure_rounds < 0 ||
      recheck_rounds < 0 || (vm.count("extra-until") && !(extra_until_min > 0))) {
    std::cerr << "search-efficiency: --parallel and --seeds must be >= 1, --extra-seeds, --remeasure-top, "
                 "--remeasure-rounds and --recheck-rounds >= 0, --extra-until > 0\n";
    return 2;
  }
  Settings st;
  st.pretrained_records = pretrained_records;
  st.model = model, st.refine_model = refine_model, st.guided_model = guided_model;
  st.check_pretrained = !no_check;
  st.model_params = model_params, st.pretrained_model_params = pretrained_model_params, st.strategy_params = strategy_params;
  st.trials = trials, st.random_trials = random_trials > 0 ? random_trials : trials;
  st.seeds = seeds, st.extra_seeds = extra_seeds, st.first_seed = first_seed, st.batch = batch, st.remeasure_top = remeasure_top, st.remeasure_rounds = remeasure_rounds;
  if (vm.count("extra-until"))
    st.extra_until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double, std::ratio<60>>(extra_until_min));
  st.measure.threads = 1;
  st.measure.recheck_rounds = recheck_rounds;
  st.measure.recheck_merge = recheck_merge;
  if (recheck_merge != "fastest" && recheck_merge != "pooled") {
    std::cerr << "search-efficiency: --recheck-merge must be fastest or pooled, got '" << recheck_merge << "'\n";
    return 2;
  }
  st.dir = (std::filesystem::temp_directory_path() / ("tessel-bench-se-" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(st.dir);
  if (!measure_lock.empty() && no_measure_lock) {
    std::cerr << "search-efficiency: give --measure-lock or --no-measure-lock, not both\n";
    return 2;
  }
  if (!measure_lock.empty()) st.measure_lock = measure_lock;
  else if (parallel > 1 && !no_measure_lock) st.measure_lock = st.dir + "/measure.lock";
  try {  // every runner opens the lock: a bad path is refused here, before any run, with the runner's message
    make_runner(st.dir, st);
  } catch (const std::exception& e) {
    std::cerr << "search-efficiency: " << e.what() << "\n";
    std::filesystem::remove_all(st.dir);
    return 2;
  }
  for (auto& m : {"random", "guided", "pretrained"})
    if (("," + modes_text + ",").find(std::string(",") + m + ",") != std::string::npos)
      st.modes.push_back({m, std::string(m) == "random" ? "random" : "evolutionary"});
  if (st.modes.empty()) {
    std::cerr << "search-efficiency: --modes names none of random, guided, pretrained\n";
    return 2;
  }
  std::ofstream curves_out;
  if (!curves.empty()) {
    curves_out.open(curves);
    if (!curves_out) {
      std::cerr << "search-efficiency: cannot write --curves file " << curves << "\n";
      return 2;
    }
    curves_out << "workload,mode,seed,trial,gflops\n";
  }
  st.tty = parallel == 1 && isatty(fileno(stderr));

  // The tables of the workloads done so far; written after each one (a stopped run keeps them).
  struct Tables {
    bench::Table runs{{"workload", "mode", "seed", "trials", "best_gflops", "trials_to_95", "measured", "run",
                       "model_fallbacks"}};
    bench::Table main{{"workload", "best_gflops", "random_t95_runs", "random_hits", "random_t95", "guided_t95",
                       "pretrained_t95", "random/guided", "guided/pretrained", "measured", "best_first_gflops",
                       "seeds_guided/pretrained", "pretrained_end/guided_end_min", "ends_worse_beyond_noise",
                       "remeasured"}};
    std::string curves;
    bool failed = false;
  };
  auto tables_of = [](const std::vector<nlohmann::json>& results, bool final) {
    Tables t;
    std::vector<double> r_rg, r_gp;  // ratios of workloads where neither side is censored
    for (auto& r : results) {
      if (r.is_null()) {
        t.failed = t.failed || final;
        continue;
      }
      for (auto& row : r["runs"]) t.runs.add(row.get<std::vector<std::string>>());
      t.main.add(r["row"].get<std::vector<std::string>>());
      if (!r["rg"].is_null()) r_rg.push_back(r["rg"].get<double>());
      if (!r["gp"].is_null()) r_gp.push_back(r["gp"].get<double>());
      t.curves += r["curves"].get<std::string>();
    }
    auto geomean = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += std::log(x);
      return v.empty() ? 0 : std::exp(s / double(v.size()));
    };
    auto mean_of = [&](const std::vector<double>& v) {
      return (v.empty() ? std::string("n/a") : bench::fmt(geomean(v), 2)) + " (" + std::to_string(v.size()) + ")";
    };
    t.main.add({"geometric mean (workloads with both sides reached)", "", "", "", "", "", "", mean_of(r_rg),
                mean_of(r_gp), "", "", "", "", "", ""});
    return t;
  };
  auto write_tables = [&](const Tables& t) {
    bool ok = t.main.write_csv(csv);
    if (!csv.empty()) ok = t.runs.write_csv(csv.substr(0, csv.size() - 4) + "-runs.csv") && ok;
    if (curves_out.is_open()) {
      curves_out.close();
      curves_out.open(curves, std::ios::trunc);
      curves_out << "workload,mode,seed,trial,gflops\n" << t.curves << std::flush;
    }
    return ok;
  };
  auto on_done = [&](const std::vector<nlohmann::json>& done) { write_tables(tables_of(done, false)); };

  std::vector<nlohmann::json> results(specs.size());
  if (parallel > 1) {
    results = run_parallel(specs, st, parallel, on_done);
  } else {
    runtime::set_num_threads(1);
    for (size_t i = 0; i < specs.size(); ++i) {
      results[i] = run_workload_or_null(specs[i], st);
      on_done(results);
    }
  }
  Tables tables = tables_of(results, true);
  bench::Table& runs_table = tables.runs;
  bench::Table& table = tables.main;
  std::fprintf(stderr, "\n");
  runs_table.print();
  std::printf("\ntrials to reach 95%% of the best throughput found (median over %d seeds, + up to %d for guided "
              "and pretrained that stop at the mark (seeds_guided/pretrained: the runs counted); budget %lld trials, %lld for random; random_t95 from the share of "
              "random samples within 95%%, random_t95_runs as observed; the best %d candidates, each full run's "
              "best 2 and every sample counted as within 95%% (remeasured: how many) re-measured %d times, "
              "best_first_gflops before that; pretrained_end/guided_end_min: the "
              "lowest over the seeds of the pretrained run's best over the guided run's; ends_worse_beyond_noise: the seeds "
              "where the pretrained run's best is slower than the guided run's by a one-sided Mann-Whitney test at 5%% "
              "on their re-measured times)\n",
              seeds, extra_seeds, (long long)st.trials, (long long)st.random_trials, remeasure_top, remeasure_rounds);
  std::string refine_used;
  try {
    refine_used = tuner::resolve_refine_model(refine_model, model, "host");
  } catch (const std::exception& e) {
    refine_used = e.what();
  }
  std::string records_used;
  try {
    records_used = tuner::resolve_transfer_source(st.pretrained_records, model, "host").path;
  } catch (const std::exception& e) {
    records_used = e.what();
  }
  std::printf("pretrained mode on %s: cost model %s, refine model %s, records %s\n",
              codegen::Target::host().cpu.c_str(), model.c_str(), refine_used.empty() ? "none" : refine_used.c_str(),
              records_used.empty() ? "none" : records_used.c_str());
  table.print();
  if (!write_tables(tables)) return 1;
  std::filesystem::remove_all(st.dir);
  return tables.failed ? 1 : 0;
}
