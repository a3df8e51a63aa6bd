// `tessel costmodel train | eval`: offline training of a learned cost model from tuning databases and
// its evaluation on held-out databases (pairwise accuracy, recall@30, top-1 score).
#include <algorithm>
#include <cmath>
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "subcommand.h"
#include "tessel/costmodel/code_features.h"
#include "tessel/costmodel/features.h"
#include "tessel/costmodel/learned_model.h"
#include "tessel/records/database.h"
#include "tessel/support/error.h"

namespace tessel::tools {

namespace po = boost::program_options;

namespace {

// The successful measurements of every workload in a database: (workload, traces, throughputs).
struct WorkloadData {
  std::shared_ptr<workload::Workload> workload;
  std::vector<std::vector<schedule::Step>> traces;
  std::vector<double> throughput;
  std::vector<std::string> trace_hashes;
  std::vector<bool> aborted;  // timed once and stopped (early_aborted): throughput from that run
};

std::vector<WorkloadData> load_data(const std::vector<std::string>& dbs) {
  std::vector<WorkloadData> out;
  for (auto& path : dbs) {
    records::OpenOptions oo;
    oo.create = false;
    auto db = records::open_database(path, oo);
    for (auto& wi : db->workloads()) {
      WorkloadData d;
      try {
        d.workload = std::make_shared<workload::Workload>(workload::from_json(wi.workload));
      } catch (const UserError& e) {
        std::fprintf(stderr, "skipping workload %s in %s: %s\n", wi.key.c_str(), path.c_str(), e.what());
        continue;
      }
      records::RecordQuery q;
      q.workload_key = wi.key;
      std::map<std::string, bool> seen;  // one sample per trace (re-measurements are duplicates)
      for (auto& r : db->records(q)) {
        // Successful and early-aborted (much slower than the best, timed once) candidates: the models
        // must learn the slow ones too. Failed ones carry no time.
        if (!std::isfinite(r.timed_s()) || seen[r.trace_hash]) continue;
        seen[r.trace_hash] = true;
        d.traces.push_back(schedule::trace_from_json(r.trace));
        d.throughput.push_back(d.workload->flop_count() / r.timed_s());
        d.trace_hashes.push_back(r.trace_hash);
        d.aborted.push_back(r.error_kind != records::MeasureErrorKind::kNone);
      }
      if (d.traces.size() >= 2) out.push_back(std::move(d));
    }
  }
  return out;
}

/** --params JSON (an object) with the seed added; one training thread unless it says otherwise. */
costmodel::ModelParams model_params(const std::string& text, uint64_t seed) {
  costmodel::ModelParams p = parse_json_object_flag(text, "--params");
  p["seed"] = seed;
  if (!p.contains("nthread")) p["nthread"] = 1;
  return p;
}

/** Trains on all the samples with one fit (added workload by workload, a model refits each time its data
 *  grows by a fifth: ~20 fits instead of one on a 20-workload database). */
void fit_once(costmodel::LearnedModel& model, const std::vector<costmodel::Sample>& samples) {
  model.update_samples(samples);  // fits when the samples are enough (min_samples)
  if (!model.trained()) model.fit_now();
}

std::vector<costmodel::Candidate> candidates(const WorkloadData& d) {
  std::vector<costmodel::Candidate> c;
  for (auto& t : d.traces) c.push_back({d.workload.get(), &t});
  return c;
}

/** d's measurements as training samples, with the features `model` extracts (its cache keeps them). */
std::vector<costmodel::Sample> samples_of(costmodel::LearnedModel& model, const WorkloadData& d) {
  auto fs = model.features_of(candidates(d));
  std::vector<costmodel::Sample> out;
  for (size_t t = 0; t < fs.size(); ++t) out.push_back({fs[t], d.workload->key, d.throughput[t]});
  return out;
}

int train(const std::vector<std::string>& args) {
  std::vector<std::string> dbs;
  std::string out, kind = "xgb", params_text;
  uint64_t seed = 1;
  po::options_description desc("tessel costmodel train --db A.db [--db B.db ...] -o MODEL [--model xgb|xgb-rank|mlp]\n\nOptions");
  desc.add_options()("help,h", "print this help")("db", po::value<std::vector<std::string>>(&dbs), "tuning database (repeatable)")(
      "output,o", po::value<std::string>(&out), "model file to write")(
      "model", po::value<std::string>(&kind)->default_value("xgb"), "xgb | xgb-rank | mlp")(
      "seed", po::value<uint64_t>(&seed)->default_value(1), "seed")(
      "params", po::value<std::string>(&params_text), "model parameters as a JSON object (docs/costmodel.md)");
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  if (dbs.empty()) throw po::error("give at least one --db");
  if (out.empty()) throw po::error("give -o MODEL");
  auto model = costmodel::make_learned_model(kind, model_params(params_text, seed));
  auto data = load_data(dbs);
  std::vector<costmodel::Sample> all;
  for (auto& d : data) {
    auto s = samples_of(*model, d);
    all.insert(all.end(), s.begin(), s.end());
  }
  size_t n = all.size();
  TESSEL_CHECK(n > 0) << "the databases hold no successful measurements to train on";
  fit_once(*model, all);
  model->save(out);
  std::printf("trained %s on %zu measurements of %zu workloads; wrote %s\n", kind.c_str(), n, data.size(), out.c_str());
  return 0;
}

// Held-out metrics of one workload's measurements under a model's scores.
struct Metrics {
  double pairs_ok = 0, pairs = 0, recall = 0, top1 = 0;
  double good_ok = 0, good_pairs = 0;  // pairs of which both are within 50% of the workload's best
};

Metrics metrics(const WorkloadData& d, const std::vector<double>& score) {
  Metrics m;
  size_t n = d.traces.size();
  double best = n ? *std::max_element(d.throughput.begin(), d.throughput.end()) : 0;
  costmodel::PairAgreement all = costmodel::pair_agreement(score, d.throughput);
  m.pairs = double(all.pairs), m.pairs_ok = all.agree;
  std::vector<double> good_score, good_truth;  // the candidates within 50% of the best
  for (size_t i = 0; i < n; ++i)
    if (d.throughput[i] >= 0.5 * best) good_score.push_back(score[i]), good_truth.push_back(d.throughput[i]);
  costmodel::PairAgreement good = costmodel::pair_agreement(good_score, good_truth);
  m.good_pairs = double(good.pairs), m.good_ok = good.agree;
  m.recall = costmodel::recall_at_k(score, d.throughput, 30);
  m.top1 = costmodel::top1_score(score, d.throughput);
  return m;
}

/** Adds one workload's metrics to the report (per-workload rows and the running totals). */
struct Report {
  nlohmann::json per = nlohmann::json::array();
  double pairs_ok = 0, pairs = 0, good_ok = 0, good_pairs = 0, recall_sum = 0, top1_sum = 0;
  int workloads = 0;
  void add(const WorkloadData& d, const Metrics& m) {
    per.push_back({{"workload", d.workload->spec},
                   {"candidates", d.traces.size()},
                   {"pairwise_accuracy", m.pairs > 0 ? m.pairs_ok / m.pairs : 0.0},
                   {"pairwise_accuracy_good", m.good_pairs > 0 ? m.good_ok / m.good_pairs : 0.0},
                   {"recall_at_30", m.recall},
                   {"top1_score", m.top1}});
    pairs_ok += m.pairs_ok, pairs += m.pairs, recall_sum += m.recall, top1_sum += m.top1, ++workloads;
    good_ok += m.good_ok, good_pairs += m.good_pairs;
  }
  nlohmann::json summary(const std::string& model) const {
    TESSEL_CHECK(workloads > 0) << "the held-out databases hold no workload with two or more measurements";
    return {{"model", model},
            {"workloads", per},
            {"pairwise_accuracy", pairs > 0 ? pairs_ok / pairs : 0.0},
            {"pairwise_accuracy_good", good_pairs > 0 ? good_ok / good_pairs : 0.0},
            {"recall_at_30", recall_sum / workloads},
            {"top1_score", top1_sum / workloads}};
  }
  int print(const std::string& model, bool json) const {
    nlohmann::json summary = this->summary(model);
    if (json) {
      std::cout << summary.dump(2) << "\n";
      return 0;
    }
    for (auto& w : per)
      std::printf("%-60s n=%-5d pairwise %.3f (good %.3f)  recall@30 %.3f  top-1 %.3f\n",
                  w["workload"].get<std::string>().c_str(), w["candidates"].get<int>(),
                  w["pairwise_accuracy"].get<double>(), w["pairwise_accuracy_good"].get<double>(),
                  w["recall_at_30"].get<double>(), w["top1_score"].get<double>());
    std::printf("overall: pairwise accuracy %.3f, recall@30 %.3f, top-1 score %.3f over %d workloads\n"
                "pairwise accuracy among good candidates (both within 50%% of their workload's best): %.3f\n",
                summary["pairwise_accuracy"].get<double>(), summary["recall_at_30"].get<double>(),
                summary["top1_score"].get<double>(), workloads, summary["pairwise_accuracy_good"].get<double>());
    return 0;
  }
};

int eval(const std::vector<std::string>& args) {
  std::vector<std::string> dbs;
  std::string path, scores_path;
  bool json = false;
  po::options_description desc("tessel costmodel eval --model MODEL --db HELD_OUT.db [--json] [--scores FILE.csv]\n\nOptions");
  desc.add_options()("help,h", "print this help")("model", po::value<std::string>(&path), "model file, or analytic (no file: the compiled hot loop's roofline)")(
      "db", po::value<std::vector<std::string>>(&dbs), "held-out tuning database (repeatable)")(
      "json", po::bool_switch(&json), "JSON output")(
      "scores", po::value<std::string>(&scores_path),
      "also write every candidate's measured throughput and score as CSV (workload,trace_hash,gflops,aborted,score)");
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  if (path.empty()) throw po::error("give --model MODEL");
  if (dbs.empty()) throw po::error("give at least one --db");
  // "analytic" has no file: it scores from the compiled code alone (a compile per candidate, on all cores).
  auto model = path == "analytic" ? costmodel::make_learned_model("analytic", {{"nthread", 0}})
                                  : costmodel::load_cost_model(path, {{"nthread", 1}});
  std::ofstream scores;
  if (!scores_path.empty()) {
    scores.open(scores_path);
    TESSEL_CHECK(scores.good()) << "cannot write --scores file " << scores_path;
    scores << "workload,trace_hash,gflops,aborted,score\n";
  }
  Report rep;
  for (auto& d : load_data(dbs)) {
    auto s = model->predict(candidates(d));
    rep.add(d, metrics(d, s));
    for (size_t i = 0; scores.is_open() && i < s.size(); ++i)
      scores << '"' << d.workload->spec << "\"," << d.trace_hashes[i] << ',' << d.throughput[i] / 1e9 << ','
             << int(d.aborted[i]) << ',' << s[i] << '\n';
  }
  TESSEL_CHECK(!scores.is_open() || scores.good()) << "writing --scores file " << scores_path << " failed";
  return rep.print(path, json);
}

// Every candidate's features as CSV, for studying or fitting models outside tessel: the program's summed
// loop-nest features, the bytes per FLOP moved into each cache size, the compiled code's features and the
// hot loop's roofline (what the analytic model reads).
int features(const std::vector<std::string>& args) {
  std::vector<std::string> dbs;
  std::string out_path;
  po::options_description desc("tessel costmodel features --db A.db [--db B.db ...] -o FILE.csv\n\nOptions");
  desc.add_options()("help,h", "print this help")("db", po::value<std::vector<std::string>>(&dbs),
                                                  "tuning database (repeatable)")(
      "output,o", po::value<std::string>(&out_path), "CSV file to write");
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  if (dbs.empty()) throw po::error("give at least one --db");
  if (out_path.empty()) throw po::error("give -o FILE.csv");
  std::ofstream out(out_path);
  TESSEL_CHECK(out.good()) << "cannot write " << out_path;
  out << "workload,trace_hash,gflops,aborted,traffic_l1_per_flop,traffic_l2_per_flop,traffic_l3_per_flop,"
         "hot_loop_flops_per_cycle";
  for (auto& n : costmodel::code_feature_names()) out << ",code." << n;
  for (auto& n : costmodel::feature_names()) out << ",nest." << n;
  out << "\n";
  auto model = costmodel::make_learned_model("analytic", {{"nthread", 0}});  // compiles, on all cores
  size_t rows = 0;
  for (auto& d : load_data(dbs)) {
    auto fs = model->features_of(candidates(d));
    for (size_t i = 0; i < fs.size(); ++i, ++rows) {
      const costmodel::ProgramFeatures& f = *fs[i];
      out << '"' << d.workload->spec << "\"," << d.trace_hashes[i] << ',' << d.throughput[i] / 1e9 << ','
          << int(d.aborted[i]);
      for (int level = 0; level < 3; ++level) out << ',' << costmodel::cache_traffic_per_flop(f.rows, level);
      out << ',' << costmodel::hot_loop_flops_per_cycle(f.code);
      for (size_t k = 0; k < costmodel::code_feature_names().size(); ++k) out << ',' << (k < f.code.size() ? f.code[k] : 0.f);
      std::vector<float> sum = costmodel::sum_features(f.rows);
      for (size_t k = 0; k < costmodel::feature_names().size(); ++k) out << ',' << (k < sum.size() ? sum[k] : 0.f);
      out << '\n';
    }
  }
  TESSEL_CHECK(out.good()) << "writing " << out_path << " failed";
  std::printf("wrote the features of %zu candidates to %s\n", rows, out_path.c_str());
  return 0;
}

// Leave-one-workload-out: for each workload, a model trained on all the others ranks its measurements.
// Several --params are compared on one feature extraction (the compile of every candidate, for models that
// read code, costs more than the fits of all the folds).
int cross_validate(const std::vector<std::string>& args) {
  std::vector<std::string> dbs, params_texts;
  std::string kind = "xgb";
  uint64_t seed = 1;
  bool json = false;
  po::options_description desc(
      "tessel costmodel cv --db A.db [--db B.db ...] [--model xgb|xgb-rank|mlp] [--params JSON ...] [--json]\n\n"
      "Leave-one-workload-out cross-validation: each workload is ranked by a model trained on the others.\n\nOptions");
  desc.add_options()("help,h", "print this help")("db", po::value<std::vector<std::string>>(&dbs),
                                                  "tuning database (repeatable)")(
      "model", po::value<std::string>(&kind)->default_value("xgb"), "xgb | xgb-rank | mlp")(
      "seed", po::value<uint64_t>(&seed)->default_value(1), "seed")("json", po::bool_switch(&json), "JSON output")(
      "params", po::value<std::vector<std::string>>(&params_texts),
      "model parameters as a JSON object (docs/costmodel.md); repeat to compare several settings on the same "
      "features and folds (JSON: an array of reports)");
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  if (dbs.empty()) throw po::error("give at least one --db");
  if (params_texts.empty()) params_texts.push_back("");
  std::vector<costmodel::ModelParams> settings;
  bool code = false;  // features for all settings: with the compiled code's when any setting reads it
  for (auto& t : params_texts) {
    settings.push_back(model_params(t, seed));
    code = code || costmodel::make_learned_model(kind, settings.back())->uses_code_features();
  }
  auto data = load_data(dbs);
  TESSEL_CHECK(data.size() >= 2) << "cross-validation needs measurements of two or more workloads";
  // Features are extracted once and shared by the folds and settings (extraction costs more than a fit).
  costmodel::ModelParams extract = settings.front();
  if (code) extract["code_features"] = true;
  auto extractor = costmodel::make_learned_model(kind, extract);
  std::vector<std::vector<costmodel::Sample>> samples(data.size());
  std::vector<std::vector<const costmodel::ProgramFeatures*>> programs(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    samples[i] = samples_of(*extractor, data[i]);
    for (auto& x : samples[i]) programs[i].push_back(x.features.get());
  }
  nlohmann::json reports = nlohmann::json::array();
  for (size_t s = 0; s < settings.size(); ++s) {
    Report rep;
    for (size_t held = 0; held < data.size(); ++held) {
      auto model = costmodel::make_learned_model(kind, settings[s]);
      std::vector<costmodel::Sample> others;
      for (size_t i = 0; i < data.size(); ++i)
        if (i != held) others.insert(others.end(), samples[i].begin(), samples[i].end());
      fit_once(*model, others);
      rep.add(data[held], metrics(data[held], model->predict_features(programs[held])));
    }
    if (settings.size() == 1) return rep.print(kind + " (leave-one-workload-out)", json);
    std::string label = kind + (params_texts[s].empty() ? " (defaults)" : " " + params_texts[s]) + " (leave-one-workload-out)";
    if (json) {
      reports.push_back(rep.summary(label));
    } else {
      if (s > 0) std::printf("\n");
      std::printf("== %s\n", label.c_str());
      rep.print(label, false);
    }
  }
  if (json) std::cout << reports.dump(2) << "\n";
  return 0;
}

}  // namespace

int run_costmodel(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << "tessel costmodel train --db A.db [--db B.db ...] -o MODEL [--model xgb|xgb-rank|mlp]\n"
                 "tessel costmodel eval --model MODEL --db HELD_OUT.db [--json] [--scores FILE.csv]\n"
                 "tessel costmodel cv --db A.db [--db B.db ...] [--model xgb|xgb-rank|mlp] [--params JSON ...] [--json]\n"
                 "tessel costmodel features --db A.db [--db B.db ...] -o FILE.csv\n";
    return args.empty() ? 2 : 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "train") return train(rest);
  if (args[0] == "eval") return eval(rest);
  if (args[0] == "cv") return cross_validate(rest);
  if (args[0] == "features") return features(rest);
  TESSEL_CHECK(false) << "unknown costmodel action '" << args[0] << "' (expected train, eval, cv or features)";
  return 2;
}

}  // namespace tessel::tools
