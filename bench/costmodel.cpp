// bench: cost model: feature extraction and prediction throughput (candidates/s, one core), training time
//
// Candidates: random valid points of the default rule space of a matmul (like the search's population).
// Rows: feature extraction (trace -> extraction IR -> rows), prediction of each learned model on
// precomputed features ("features excluded") and through CostModel::predict on unseen candidates
// ("features included"), and the time one fit takes. Models are trained on random labels (speed only;
// accuracy is tested in tests/costmodel). Reproduce: scripts/bench costmodel [--candidates N] [--spec S]
#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "common/bench_util.h"
#include "tessel/codegen/target.h"
#include "tessel/costmodel/learned_model.h"
#include "tessel/runtime/thread_pool.h"
#include "tessel/tuner/search_space.h"

using namespace tessel;
namespace po = boost::program_options;

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

int main(int argc, char** argv) {
  std::string csv, spec = "matmul:M=64,N=64,K=64";
  int n = 1000;
  po::options_description desc("costmodel benchmark options");
  desc.add_options()("help,h", "help")("csv", po::value<std::string>(&csv), "write results to this CSV file")(
      "candidates", po::value<int>(&n)->default_value(1000), "candidates per measurement")(
      "spec", po::value<std::string>(&spec)->default_value(spec), "workload spec");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "costmodel: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  runtime::set_num_threads(1);
  auto w = std::make_shared<const workload::Workload>(workload::from_spec(spec));
  auto space = tuner::make_target_space(w, codegen::Target::parse("host"));  // the space tune searches here
  std::mt19937_64 rng(1);
  std::set<std::string> seen;
  std::vector<std::vector<schedule::Step>> traces;
  for (int tries = 0; int(traces.size()) < 2 * n && tries < 200 * n; ++tries) {
    tuner::KnobValues k;
    for (auto& kn : space->knobs()) k.push_back(std::uniform_int_distribution<int>(0, int(kn.options.size()) - 1)(rng));
    std::vector<schedule::Step> t;
    if (space->make_trace(k, &t) && seen.insert(schedule::trace_to_json(t).dump()).second) traces.push_back(t);
  }
  if (int(traces.size()) < 2 * n) {
    std::cerr << "costmodel: only " << traces.size() << " distinct candidates of " << spec << "\n";
    n = int(traces.size()) / 2;
  }
  bench::Table table({"measurement", "model", "candidates", "seconds", "candidates_per_s", "note"});
  auto add = [&](const std::string& what, const std::string& model, int count, double s, const std::string& note) {
    table.add({what, model, std::to_string(count), bench::fmt(s, 4), bench::fmt(count / s, 0), note});
  };

  // Features of the first n candidates.
  std::vector<std::shared_ptr<const costmodel::ProgramFeatures>> feats;
  size_t rows = 0;
  double t0 = now_s();
  for (int i = 0; i < n; ++i) {
    feats.push_back(std::make_shared<const costmodel::ProgramFeatures>(costmodel::extract_features(*w, traces[i])));
    rows += feats.back()->rows.size();
  }
  add("extract_features", "-", n, now_s() - t0, bench::fmt(double(rows) / n, 1) + " rows/candidate");

  std::vector<const costmodel::ProgramFeatures*> progs;
  for (auto& f : feats) progs.push_back(f.get());
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<costmodel::Candidate> cands;  // unseen: the second n candidates
  for (int i = n; i < 2 * n; ++i) cands.push_back({w.get(), &traces[i]});
  double sink = 0;
  auto time_predictions = [&](costmodel::LearnedModel& m, const std::string& name) {
    // Prediction on precomputed features: repeat until 0.5 s passed.
    int reps = 0;
    t0 = now_s();
    do {
      sink += m.predict_features(progs)[0];
      ++reps;
    } while (now_s() - t0 < 0.5);
    add("predict (features excluded)", name, n * reps, now_s() - t0, "batch of " + std::to_string(n));
    // Through the interface on unseen candidates: extraction + prediction.
    t0 = now_s();
    sink += m.predict(cands)[0];
    add("predict (features included)", name, n, now_s() - t0, "unseen candidates");
    t0 = now_s();
    sink += m.predict(cands)[0];
    add("predict (features cached)", name, n, now_s() - t0, "same candidates again");
  };
  for (std::string name : {"xgb", "xgb-rank", "mlp"}) {
    auto m = costmodel::make_learned_model(name, {{"seed", 1}, {"nthread", 1}});
    std::vector<costmodel::Sample> samples;
    for (auto& f : feats) samples.push_back({f, w->key, u(rng) * 1e9});
    t0 = now_s();
    m->update_samples(samples);
    add("fit", name, n, now_s() - t0, "random labels, 1 thread");
    time_predictions(*m, name);
  }
  // The shipped pretrained model (larger than the defaults above: see docs/costmodel.md).
  auto shipped = costmodel::load_cost_model(costmodel::pretrained_model_path(codegen::Target::host().cpu), {{"nthread", 1}});
  time_predictions(*shipped, "pretrained (" + shipped->name() + ")");
  if (sink == 12345.678) std::cout << "";
  std::cout << "cost model on " << spec << " (one thread)\n";
  table.print();
  return table.write_csv(csv) ? 0 : 1;
}
