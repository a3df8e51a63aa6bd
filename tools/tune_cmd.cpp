// `tessel tune`: tunes a workload, a .te file or a whole network into a tuning database.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_util.h"
#include "subcommand.h"
#include "tessel/rpc/rpc_runner.h"
#include "tessel/support/error.h"
#include "tessel/tuner/tuner.h"
#include "tessel/workload/network.h"

namespace tessel::tools {

namespace po = boost::program_options;

namespace {

// "90" / "90s" / "20m" / "1.5h" -> seconds.
double parse_duration(const std::string& s) {
  TESSEL_CHECK(!s.empty()) << "--time needs a value like 90s, 20m or 1h";
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (const std::exception&) {
    TESSEL_CHECK(false) << "--time '" << s << "' is not a duration (e.g. 90s, 20m, 1h)";
  }
  std::string unit = s.substr(pos);
  double mult = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
  TESSEL_CHECK(mult > 0 && v >= 0) << "--time '" << s << "' is not a duration (e.g. 90s, 20m, 1h)";
  return v * mult;
}

std::string fmt_latency(double s) {
  char b[64];
  if (s <= 0) return "-";
  if (s < 1e-3)
    std::snprintf(b, sizeof b, "%.1f us", s * 1e6);
  else
    std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
  return b;
}

}  // namespace

int run_tune(const std::vector<std::string>& args) {
  tuner::TuneOptions o;
  std::string spec, te_file, network, json_path, time_str, model_params_text;
  rpc::RpcRunnerParams remote;
  SecurityFlags sec;
  bool no_check = false;
  po::options_description desc(
      "tessel tune: search for fast schedules and record every measurement\n\n"
      "  tessel tune --workload matmul:M=512,N=512,K=512 --trials 200 --db tessel.db\n"
      "  tessel tune --network resnet50 --time 20m --db resnet.db --json summary.json\n\nOptions");
  desc.add_options()("help,h", "print this help")("workload", po::value<std::string>(&spec), "workload spec NAME:P=V,...")(
      "te", po::value<std::string>(&te_file), ".te file")("network", po::value<std::string>(&network),
                                                          "network task list (tessel workloads lists them)")(
      "target", po::value<std::string>(&o.target)->default_value("host"), "code-generation target")(
      "trials", po::value<int64_t>(&o.trials)->default_value(200), "measured candidates over all tasks")(
      "time", po::value<std::string>(&time_str), "wall-clock budget (90s, 20m, 1h)")(
      "db", po::value<std::string>(&o.db_path)->default_value("tessel.db"), "tuning database (created if missing)")(
      "strategy", po::value<std::string>(&o.strategy)->default_value("evolutionary"),
      "evolutionary | random | grid | annealing")("cost-model", po::value<std::string>(&o.cost_model)->default_value("auto"),
                                                   "auto (pretrained on x86-64 CPUs, else xgb) | random | xgb | xgb-rank | mlp | pretrained (the "
                                                   "shipped model), or a trained model file")(
      "refine-model", po::value<std::string>(&o.refine_model)->default_value("auto"),
      "model that re-ranks the cost model's shortlist from the compiled code (x86-64): auto | none | cold | "
      "analytic | pretrained, or a trained model file (docs/costmodel.md)")(
      "refine-shortlist", po::value<int>(&o.strategy_params.refine_shortlist)->default_value(8),
      "the refine model chooses each batch's model-guided part among this many times as many")(
      "refine-explore", po::value<double>(&o.strategy_params.refine_explore)->default_value(-1, "auto"),
      "share of that shortlist drawn from outside the cost model's population: half mutants of the best "
      "measured, half random samples (auto: 1 with a cold cost model, 0.5 with a pretrained one)")(
      "stall-batches", po::value<int>(&o.strategy_params.stall_batches)->default_value(4),
      "after this many batches without a new best (1% above the old), that whole shortlist is drawn from "
      "outside the population until one comes (0: never)")(
      "polish", po::value<double>(&o.strategy_params.polish)->default_value(0.25),
      "share of each batch's model-chosen part given to single-knob variants of the best measured candidate, "
      "best-ranked first (0 to 1)")(
      "no-pretrained-check", po::bool_switch(&no_check),
      "trust a pretrained cost or refine model throughout (default: each is checked against the cold model on the "
      "measured batches, and the run switches to the cold one when that orders them clearly better)")(
      "cost-model-params", po::value<std::string>(&model_params_text),
      "cost-model parameters as a JSON object, e.g. '{\"min_samples\":16}' (docs/costmodel.md); "
      "cold_min_samples: the warm-up of the run's cold refine and check models (default 8; docs/tuning.md)")(
      "transfer", po::bool_switch(&o.transfer),
      "also learn from the database's records of other workloads, and measure first their best configurations")(
      "transfer-seeds", po::value<int>(&o.transfer_seeds)->default_value(4),
      "with --transfer: best configurations of each other workload measured first (0: learn only)")(
      "transfer-from", po::value<std::vector<std::string>>(&o.transfer_from)->default_value({"auto"}, "auto"),
      "also transfer, as --transfer does, from this tuning database or JSON-lines export (repeatable); "
      "pretrained: the shipped best records of the workloads the shipped models were trained on (proposed "
      "first, the model's best batch of them); auto: those with the shipped cost model; none")(
      "scheduler", po::value<std::string>(&o.scheduler)->default_value("gradient"), "gradient | round-robin")(
      "seed", po::value<uint64_t>(&o.seed)->default_value(1), "seed of every random choice")(
      "jobs,j", po::value<int>(&o.jobs)->default_value(0), "build threads (0 = all cores)")(
      "batch", po::value<int>(&o.batch_size)->default_value(16), "candidates per round")(
      "early-stopping", po::value<int>(&o.early_stopping)->default_value(0),
      "stop a task after this many trials without improvement (0 = never)")(
      "threads", po::value<int>(&o.measure.threads)->default_value(0), "threads of the measured kernels (0 = all)")(
      "repeats", po::value<int>(&o.measure.min_repeats)->default_value(3), "timed runs per candidate, at least")(
      "flush-cache", po::bool_switch(&o.measure.flush_cache), "flush the cache between timed runs")(
      "recheck-rounds", po::value<int>(&o.measure.recheck_rounds)->default_value(o.measure.recheck_rounds),
      "measure near-best candidates again in this many later rounds over their batch, keeping the fastest round "
      "(against slow phases of the machine; 0 = off; local and remote measurement)")(
      "recheck-ratio", po::value<double>(&o.measure.recheck_ratio)->default_value(o.measure.recheck_ratio, (std::ostringstream() << o.measure.recheck_ratio).str()),
      "near-best: a median within this factor of the best time known")(
      "recheck-max", po::value<int>(&o.measure.recheck_max)->default_value(o.measure.recheck_max), "candidates rechecked per batch, at most")(
      "recheck-merge", po::value<std::string>(&o.measure.recheck_merge)->default_value(o.measure.recheck_merge),
      "a rechecked candidate's time: fastest (the fastest round's median) or pooled (the median of every "
      "round's timed runs)")(
      "measure-lock", po::value<std::string>(&o.measure_lock),
      "measure each candidate under an exclusive lock on this file (created if missing): tuning runs that share "
      "a machine and name the same file never time kernels at once (local measurement only)")(
      "json", po::value<std::string>(&json_path), "write the summary as JSON here")(
      "tracker", po::value<std::string>(&remote.tracker), "measure on remote workers leased from this tracker (HOST:PORT)")(
      "key", po::value<std::string>(&remote.key)->default_value("default"), "device key of the remote workers")(
      "worker", po::value<std::vector<std::string>>(&remote.workers)->composing(),
      "measure on this remote worker (HOST:PORT, repeatable; no tracker)")(
      "priority", po::value<int>(&remote.priority)->default_value(0), "priority of this tuner's lease requests")(
      "max-workers", po::value<int>(&remote.max_workers)->default_value(0), "remote workers used at once (0 = all free)");
  sec.add_to(desc, false);
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  TESSEL_CHECK(int(!spec.empty()) + int(!te_file.empty()) + int(!network.empty()) == 1)
      << "give exactly one of --workload, --te, --network";
  if (!time_str.empty()) o.time_budget_s = parse_duration(time_str);
  o.model_params = parse_json_object_flag(model_params_text, "--cost-model-params");
  o.check_pretrained = !no_check;
  if (!network.empty()) {
    for (auto& t : workload::load_network(network).tasks)
      o.tasks.push_back({std::make_shared<workload::Workload>(workload::from_spec(t.spec)), double(t.count), t.name});
  } else {
    auto w = std::make_shared<workload::Workload>(spec.empty() ? workload::from_te_file(te_file)
                                                               : workload::from_spec(spec));
    o.tasks.push_back({w, 1, w->spec});
  }
  TESSEL_CHECK(remote.tracker.empty() || remote.workers.empty()) << "give --tracker or --worker, not both";
  bool use_rpc = !remote.tracker.empty() || !remote.workers.empty();
  TESSEL_CHECK(!use_rpc || o.measure_lock.empty())
      << "--measure-lock is for local measurement (a remote worker measures one candidate at a time; workers "
                                     "sharing a machine take `tessel worker --measure-lock FILE`)";
  if (use_rpc) {
    remote.security = sec.load();
    remote.stats = std::make_shared<rpc::RpcRunnerStats>();
    o.make_runner = [remote, target = o.target](const std::string& work_dir) {
      rpc::RpcRunnerParams p = remote;
      p.work_dir = work_dir;
      p.target = target;
      return rpc::make_rpc_runner(p);
    };
  }
  bool tty = isatty(fileno(stderr));
  auto progress = [&](const tuner::TuneSummary& s, double eta) {
    double best_gflops = 0;
    for (auto& t : s.tasks) best_gflops = std::max(best_gflops, t.best_gflops);
    std::fprintf(stderr, "%s[tune] trials %lld/%lld  best %.2f GFLOP/s  est. latency %s  %.0fs  ETA %.0fs%s",
                 tty ? "\r" : "", (long long)s.total_trials, (long long)o.trials, best_gflops,
                 fmt_latency(s.estimated_latency_s).c_str(), s.wall_s, eta, tty ? "   " : "\n");
    std::fflush(stderr);
  };
  tuner::TuneSummary s = tuner::tune(o, progress);
  if (tty) std::fprintf(stderr, "\n");
  std::printf("\n%-36s %7s %8s %12s %10s  %s\n", "task", "weight", "trials", "best", "GFLOP/s", "errors");
  for (auto& t : s.tasks) {
    std::string errs;
    for (auto& [k, v] : t.errors) errs += (errs.empty() ? "" : ", ") + k + "=" + std::to_string(v);
    std::string name = t.name.size() > 36 ? t.name.substr(0, 33) + "..." : t.name;
    std::printf("%-36s %7.0f %8lld %12s %10.2f  %s\n", name.c_str(), t.weight, (long long)t.trials,
                fmt_latency(t.best_latency_s).c_str(), t.best_gflops, errs.empty() ? "-" : errs.c_str());
  }
  for (auto& t : s.tasks)
    for (auto& m : t.fallbacks)
      std::printf("%s: the pretrained %s ordered this run's measurements worse than a cold one; the cold one "
                  "chose the later candidates (--no-pretrained-check to keep it)\n", t.name.c_str(), m.c_str());
  std::printf("\n%lld trials in %.1f s%s; estimated latency %s; database %s\n", (long long)s.total_trials, s.wall_s,
              s.stopped_by_time ? " (time budget reached)" : "", fmt_latency(s.estimated_latency_s).c_str(),
              o.db_path.c_str());
  if (use_rpc)
    std::printf("remote measurement: %lld candidates measured by workers (and %lld rechecks), %lld resent after a "
                "lost worker, %lld workers lost\n",
                (long long)(remote.stats->measured - remote.stats->rechecks), (long long)remote.stats->rechecks,
                (long long)remote.stats->retried, (long long)remote.stats->workers_lost);
  if (!json_path.empty()) {
    std::ofstream os(json_path);
    TESSEL_CHECK(bool(os)) << "cannot write " << json_path;
    os << s.to_json().dump(2) << "\n";
  }
  return 0;
}

}  // namespace tessel::tools
