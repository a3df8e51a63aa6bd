// Test helper: a small tuning database for the report tests, written through the records API.
// Two matmul workloads (a "network" of two tasks), records one to two seconds apart: mostly improving
// successes, failures of three kinds (one message with HTML in it), and a remeasured best.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessel/codegen/target.h"
#include "tessel/records/database.h"
#include "tessel/schedule/step.h"
#include "tessel/workload/workload.h"

namespace tessel::test {

constexpr const char* kReportSpecA = "matmul:M=64,N=64,K=64";
constexpr const char* kReportSpecB = "matmul:M=32,N=64,K=16";
constexpr int kReportRecordsA = 30, kReportRecordsB = 12;
/** A failure message that must appear escaped in the page. */
constexpr const char* kReportNastyMessage = "error: </script><script>alert(\"x\")</script> & <b>bold</b>";

/** Fills `path` (created) with the records above; returns the number of records added. */
inline int fill_report_db(const std::string& path) {
  using records::MeasureErrorKind;
  auto db = records::open_database(path);
  const std::string target = codegen::Target::host().to_string();
  const int64_t t0 = 1700000000000000;  // fixed, so the charts' time axis is reproducible
  int64_t run = db->begin_run({{"strategy", "report-test"}});
  int added = 0;
  auto add = [&](const workload::Workload& w, int i, int64_t ts, double time_s, MeasureErrorKind kind,
                 const std::string& message, bool remeasure) {
    records::TuningRecord r;
    r.workload_key = w.key;
    r.workload = workload::to_json(w);
    r.target = target;
    r.trace = schedule::trace_to_json({schedule::SplitStep{"C", "i", int64_t(1) << (i % 6), false},
                                       schedule::SplitStep{"C", "j", int64_t(2 + i), false}});
    if (kind == MeasureErrorKind::kNone) r.run_times_s = {time_s, time_s * 1.02, time_s * 0.99};
    r.error_kind = kind;
    r.error_message = message;
    r.build_settings = {{"strategy", "evolutionary"}, {"knobs", {{"i", i}}}, {"space", "test"}};
    r.run_settings = {{"repeats", 3}};
    if (remeasure) r.run_settings["remeasure"] = true;
    r.timestamp_us = ts;
    r.run_id = run;
    db->add_record(r);
    ++added;
  };
  workload::Workload a = workload::from_spec(kReportSpecA), b = workload::from_spec(kReportSpecB);
  db->add_workload(a);
  db->add_workload(b);
  for (int i = 0; i < kReportRecordsA; ++i) {
    int64_t ts = t0 + int64_t(i) * 2000000;
    double t = 4e-4 / (1 + 0.15 * i) * (i % 4 == 3 ? 1.6 : 1.0);  // improving, with some worse trials
    if (i == 4 || i == 17)
      add(a, i, ts, 0, MeasureErrorKind::kCompileError, kReportNastyMessage, false);
    else if (i == 9 || i == 22)
      add(a, i, ts, 0, MeasureErrorKind::kRunTimeout, "took longer than 1 s", false);
    else if (i == 13)
      add(a, i, ts, 0, MeasureErrorKind::kWrongAnswer, "C[3, 5]: 1.5 != 2.25", false);
    else
      add(a, i, ts, t, MeasureErrorKind::kNone, "", i == kReportRecordsA - 1);
  }
  for (int i = 0; i < kReportRecordsB; ++i) {
    int64_t ts = t0 + 1000000 + int64_t(i) * 4000000;
    if (i == 5)
      add(b, i, ts, 0, MeasureErrorKind::kCompileTimeout, "took longer than 10 s", false);
    else
      add(b, i, ts, 1e-4 / (1 + 0.1 * i), MeasureErrorKind::kNone, "", false);
  }
  db->end_run(run, {{"records", added}});
  return added;
}

}  // namespace tessel::test
