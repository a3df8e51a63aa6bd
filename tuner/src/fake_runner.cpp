// FakeRunner / FakeBuilder: deterministic measurement for strategy tests (see fake_runner.h).
#include "tessel/tuner/fake_runner.h"

#include <algorithm>
#include <functional>

#include "tessel/lower/lower.h"
#include "tessel/schedule/schedule.h"

namespace tessel::tuner {
namespace {

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/** A stable hash of the trace (FNV-1a of its JSON dump, then mixed). */
uint64_t trace_hash64(const MeasureInput& in) {
  std::string s = schedule::trace_to_json(in.trace).dump();
  if (in.workload) s += in.workload->key;
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return mix(h);
}

double unit(uint64_t h) { return double(h >> 11) * (1.0 / 9007199254740992.0); }

std::string default_message(MeasureErrorKind k) {
  switch (k) {
    case MeasureErrorKind::kRuntimeError:
      return "worker died with signal 11 (SIGSEGV) while running the candidate (fake)";
    case MeasureErrorKind::kRunTimeout:
      return "no result within 10 s; the worker was killed (fake)";
    case MeasureErrorKind::kWrongAnswer:
      return "output C[0, 0] = 1 but the reference gives 2 (fake)";
    case MeasureErrorKind::kOutOfMemory:
      return "worker ran out of memory (fake)";
    default:
      return std::string(records::error_kind_name(k)) + " (fake)";
  }
}

}  // namespace

FakeRunner::FakeRunner(FakeRunnerParams p) : p_(std::move(p)) {}

double FakeRunner::hash_time(const MeasureInput& in) { return 1e-4 * (1 + 9 * unit(trace_hash64(in))); }

std::vector<MeasureResult> FakeRunner::run(const std::vector<MeasureInput>& inputs,
                                           const std::vector<BuildResult>& builds, const MeasureOptions& opt,
                                           double best_so_far_s) {
  std::vector<MeasureResult> out(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    MeasureResult& r = out[i];
    if (i < builds.size()) {
      r.build_s = builds[i].build_s;
      if (builds[i].error_kind != MeasureErrorKind::kNone) {
        r.error_kind = builds[i].error_kind;
        r.error_message = builds[i].error_message;
        continue;
      }
    }
    int64_t index = index_++;
    uint64_t h = trace_hash64(inputs[i]);
    std::optional<FakeFault> fault;
    if (auto it = p_.faults.find(index); it != p_.faults.end()) fault = it->second;
    if (!fault && p_.fault_fn) fault = p_.fault_fn(inputs[i], index);
    if (!fault && p_.fault_rate > 0 && unit(mix(h ^ 0x5bd1e995)) < p_.fault_rate) fault = FakeFault{p_.fault_kind, ""};
    if (fault) {
      r.error_kind = fault->kind;
      r.error_message = fault->message.empty() ? default_message(fault->kind) : fault->message;
      continue;
    }
    double t = p_.time_fn ? p_.time_fn(inputs[i]) : hash_time(inputs[i]);
    int n = std::max(1, p_.repeats);
    for (int k = 0; k < n; ++k) {
      double noise = p_.noise > 0 ? p_.noise * (2 * unit(mix(h + uint64_t(k) + 1)) - 1) : 0;
      r.run_times_s.push_back(t * (1 + noise));
      if (k == 0 && best_so_far_s > 0 && opt.early_abort_ratio > 0 &&
          r.run_times_s[0] > opt.early_abort_ratio * best_so_far_s) {
        r.error_kind = MeasureErrorKind::kEarlyAborted;
        r.error_message = "first timed run slower than early_abort_ratio x the best so far (fake)";
        break;
      }
    }
    for (double x : r.run_times_s) r.run_s += x;
  }
  return out;
}

std::vector<BuildResult> FakeBuilder::build(const std::vector<MeasureInput>& inputs, const MeasureOptions&) {
  std::vector<BuildResult> out(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    BuildResult& r = out[i];
    r.function_name = "kernel";
    if (!inputs[i].workload) {
      r.error_kind = MeasureErrorKind::kInvalidSchedule;
      r.error_message = "the measure input has no workload";
      continue;
    }
    try {
      schedule::Schedule s(inputs[i].workload->outputs);
      Status st = s.apply_all(inputs[i].trace);
      if (!st) {
        r.error_kind = MeasureErrorKind::kInvalidSchedule;
        r.error_message = st.message();
      } else if (lower_) {
        lower::lower(s, inputs[i].workload->args(), "kernel");
      }
    } catch (const std::exception& e) {
      r.error_kind = MeasureErrorKind::kInvalidSchedule;
      r.error_message = e.what();
    }
  }
  return out;
}

}  // namespace tessel::tuner
