// Test helper: creates a tuning database for the CLI and example-project tests.
//   records_fill_db DB empty          an empty tessel database
//   records_fill_db DB best SPEC      for matmul SPEC on the host: one good record (tiled, vectorized),
//                                     one slower record, one failed record, one record on another CPU
#include <cstdio>
#include <iostream>
#include <string>

#include "tessel/codegen/target.h"
#include "tessel/records/database.h"
#include "tessel/records/target_match.h"
#include "tessel/schedule/schedule.h"
#include "tessel/support/error.h"
#include "tessel/workload/workload.h"

using namespace tessel;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: records_fill_db DB (empty | best SPEC)\n";
    return 2;
  }
  try {
    auto db = records::open_database(argv[1]);
    std::string mode = argv[2];
    if (mode == "empty") return 0;
    if (mode != "best" || argc < 4) {
      std::cerr << "records_fill_db: unknown mode\n";
      return 2;
    }
    workload::Workload w = workload::from_spec(argv[3]);
    db->add_workload(w);
    std::string host = codegen::Target::host().to_string();
    int64_t run = db->begin_run({{"strategy", "records_fill_db"}});
    auto make = [&](const std::vector<schedule::Step>& steps, std::vector<double> times, const std::string& target) {
      records::TuningRecord r;
      r.workload_key = w.key;
      r.workload = workload::to_json(w);
      r.target = target;
      r.target_fingerprint = records::host_fingerprint();
      r.trace = schedule::trace_to_json(steps);
      r.run_times_s = std::move(times);
      r.run_id = run;
      return r;
    };
    schedule::Schedule s(w.outputs);
    auto axes = s.tile("C", "i", "j", 4, 16);
    s.reorder("C", {axes[0], axes[1], "k", axes[2], axes[3]});
    s.vectorize("C", axes[3]);
    s.parallel("C", axes[0]);
    int64_t best = db->add_record(make(s.trace(), {1.0e-5, 1.1e-5, 0.9e-5}, host));
    db->add_record(make({schedule::SplitStep{"C", "i", 8, false}}, {5e-5, 5e-5}, host));
    records::TuningRecord failed = make({schedule::SplitStep{"C", "j", 3, false}}, {}, host);
    failed.error_kind = records::MeasureErrorKind::kCompileTimeout;
    failed.error_message = "took longer than 10 s";
    db->add_record(failed);
    codegen::Target other = codegen::Target::host();
    other.cpu = other.cpu == "skylake-avx512" ? "znver3" : "skylake-avx512";
    db->add_record(make({schedule::SplitStep{"C", "i", 2, false}}, {1e-7}, other.to_string()));
    db->end_run(run, {{"records", 4}});
    std::cout << "best record " << best << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "records_fill_db: " << e.what() << "\n";
    return 1;
  }
}
