// Compile-time use of the database: build a workload for a target with its best record, or with the
// default schedule and one line saying why nothing matched. docs/compile.md.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tessel/codegen/jit.h"
#include "tessel/codegen/target.h"
#include "tessel/ir/stmt.h"
#include "tessel/lower/lower.h"
#include "tessel/records/database.h"
#include "tessel/workload/workload.h"

namespace tessel::records {

struct BuildOptions {
  std::string name = "kernel";  // the function's name (NAME and NAME_packed)
  bool jit = false;             // also JIT-compile it (CompiledKernel::module)
  int max_candidates = 16;      // records tried (best first) before falling back to the default
  lower::LowerOptions lower;
  /** Receives the one-line summary once; null = print it to stderr; set it to [](auto&){} to silence. */
  std::function<void(const std::string&)> report;
};

struct CompiledKernel {
  ir::LoweredFunc func;                        // lowered with the record's trace (or the default schedule)
  std::unique_ptr<codegen::JitModule> module;  // when BuildOptions::jit
  BestMatch match;                             // the lookup: record used, or the reason there is none
  bool used_record() const { return match.record.has_value(); }
  std::string summary;                         // the line that was reported
};

/** The schedule used when there is no usable record: ops::default_schedule (intermediates that are
 *  neither outputs nor reductions inlined, outer data-parallel loops parallel). */
schedule::Schedule default_schedule(const workload::Workload& w);

/** Replays a record's trace on a fresh schedule of w and lowers it; returns the error text, or empty
 *  when the record is usable (the ReplayCheck build_best uses). */
std::string check_replay(const workload::Workload& w, const TuningRecord& r);

/** Looks up the best usable record for (w.key, target) (find_best: exact target first, then compatible),
 *  replays its trace and lowers it; falls back to default_schedule with the reason. Reports one line. */
CompiledKernel build_best(Database& db, const workload::Workload& w, const codegen::Target& target,
                          const BuildOptions& options = {});

}  // namespace tessel::records
