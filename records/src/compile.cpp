// Compile-time use of the database: replay the best usable record, or fall back to the default
// schedule, and say so once.
#include "tessel/records/compile.h"

#include <cstdio>
#include <iostream>

#include "tessel/ops/default_schedule.h"
#include "tessel/records/target_match.h"
#include "tessel/schedule/step.h"
#include "tessel/support/error.h"

namespace tessel::records {

schedule::Schedule default_schedule(const workload::Workload& w) {
  ops::OpTensors t;
  t.inputs = w.inputs;
  t.outputs = w.outputs;
  return ops::default_schedule(t);
}

std::string check_replay(const workload::Workload& w, const TuningRecord& r) {
  try {
    schedule::Schedule s(w.outputs);
    Status st = s.apply_all(schedule::trace_from_json(r.trace));
    if (!st) return "trace does not apply: " + st.message();
    (void)lower::lower(s, w.args(), "check");
    return "";
  } catch (const UserError& e) {
    return std::string("trace does not lower: ") + e.what();
  }
}

CompiledKernel build_best(Database& db, const workload::Workload& w, const codegen::Target& target,
                          const BuildOptions& options) {
  CompiledKernel k;
  std::optional<schedule::Schedule> sch;
  k.match = db.find_best(
      w.key, target.to_string(),
      [&](const TuningRecord& r) {
        std::string err = check_replay(w, r);
        if (err.empty()) {
          sch.emplace(w.outputs);
          (void)sch->apply_all(schedule::trace_from_json(r.trace));
        }
        return err;
      },
      options.max_candidates);
  char line[512];
  if (k.match.record) {
    double t = k.match.record->median_s();
    double gflops = t > 0 ? w.flop_count() / t / 1e9 : 0;
    std::snprintf(line, sizeof line, "tessel: %s (%s): using record %lld, median %.4g ms, %.1f GFLOP/s%s",
                  options.name.c_str(), w.name.c_str(), static_cast<long long>(k.match.record->id), t * 1e3, gflops,
                  k.match.fallback ? (" (compatible target " + target_label(k.match.record->target) + ")").c_str() : "");
    k.summary = line;
    if (k.match.rejected_traces)
      k.summary += "; skipped " + std::to_string(k.match.rejected_traces) + " record(s) whose trace no longer applies";
  } else {
    if (target.is_cuda()) {
      ops::OpTensors t{w.inputs, w.outputs};
      sch.emplace(ops::default_gpu_schedule(t));
    } else {
      sch.emplace(default_schedule(w));
    }
    k.summary = "tessel: " + options.name + " (" + w.name + "): default schedule: " + k.match.message;
  }
  k.func = lower::lower(*sch, w.args(), options.name, options.lower);
  if (options.jit && !target.is_cuda()) k.module = codegen::JitModule::compile(k.func, target);
  if (options.report)
    options.report(k.summary);
  else
    std::cerr << k.summary << "\n";
  return k;
}

}  // namespace tessel::records
