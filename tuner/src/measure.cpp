// MeasureOptions JSON, MeasureResult::median_s and helpers shared by the builder and the runner.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "measure_internal.h"
#include "tessel/ir/expr.h"
#include "tessel/support/error.h"

namespace tessel::tuner {
namespace {

template <class T>
void read_field(const nlohmann::json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if constexpr (std::is_same_v<T, bool>) {
    TESSEL_CHECK(it->is_boolean()) << "measure options: '" << key << "' must be true or false";
  } else if constexpr (std::is_integral_v<T>) {
    TESSEL_CHECK(it->is_number_integer()) << "measure options: '" << key << "' must be an integer";
  } else if constexpr (std::is_same_v<T, std::string>) {
    TESSEL_CHECK(it->is_string()) << "measure options: '" << key << "' must be a string";
  } else {
    TESSEL_CHECK(it->is_number()) << "measure options: '" << key << "' must be a number";
  }
  *out = it->get<T>();
}

}  // namespace

void check_recheck_merge(const std::string& merge) {
  TESSEL_CHECK(merge == "fastest" || merge == "pooled")
      << "recheck merge must be 'fastest' or 'pooled', got '" << merge << "'";
}

nlohmann::json MeasureOptions::to_json() const {
  return {{"warmup", warmup},
          {"min_repeats", min_repeats},
          {"min_time_s", min_time_s},
          {"max_repeats", max_repeats},
          {"flush_cache", flush_cache},
          {"early_abort_ratio", early_abort_ratio},
          {"build_timeout_s", build_timeout_s},
          {"run_timeout_s", run_timeout_s},
          {"memory_limit_mb", memory_limit_mb},
          {"threads", threads},
          {"seed", seed},
          {"recheck_rounds", recheck_rounds},
          {"recheck_ratio", recheck_ratio},
          {"recheck_max", recheck_max},
          {"recheck_merge", recheck_merge}};
}

MeasureOptions MeasureOptions::from_json(const nlohmann::json& j) {
  TESSEL_CHECK(j.is_object()) << "measure options must be a JSON object, got " << j.dump();
  MeasureOptions o;
  read_field(j, "warmup", &o.warmup);
  read_field(j, "min_repeats", &o.min_repeats);
  read_field(j, "min_time_s", &o.min_time_s);
  read_field(j, "max_repeats", &o.max_repeats);
  read_field(j, "flush_cache", &o.flush_cache);
  read_field(j, "early_abort_ratio", &o.early_abort_ratio);
  read_field(j, "build_timeout_s", &o.build_timeout_s);
  read_field(j, "run_timeout_s", &o.run_timeout_s);
  read_field(j, "memory_limit_mb", &o.memory_limit_mb);
  read_field(j, "threads", &o.threads);
  read_field(j, "seed", &o.seed);
  read_field(j, "recheck_rounds", &o.recheck_rounds);
  read_field(j, "recheck_ratio", &o.recheck_ratio);
  read_field(j, "recheck_max", &o.recheck_max);
  read_field(j, "recheck_merge", &o.recheck_merge);
  check_recheck_merge(o.recheck_merge);
  return o;
}

double MeasureResult::median_s() const {
  return ok() ? records::median_of(run_times_s) : std::numeric_limits<double>::infinity();
}

double MeasureResult::timed_s() const {
  bool ran = error_kind == MeasureErrorKind::kNone || error_kind == MeasureErrorKind::kEarlyAborted;
  return ran ? records::median_of(run_times_s) : std::numeric_limits<double>::infinity();
}

namespace detail {

std::vector<WorkerArg> worker_args(const workload::Workload& w) {
  std::vector<WorkerArg> out;
  auto add = [&](const te::Tensor& t, bool output) {
    WorkerArg a;
    a.name = t.name();
    a.dtype = t.dtype().to_string();
    a.output = output;
    for (auto& e : t.shape()) {
      const int64_t* v = ir::as_const_int(e);
      TESSEL_CHECK(v != nullptr) << "workload " << w.name << ": tensor " << t.name()
                                 << " has a non-constant shape; it cannot be measured";
      a.shape.push_back(*v);
    }
    out.push_back(std::move(a));
  };
  for (auto& t : w.inputs) add(t, false);
  for (auto& t : w.outputs) add(t, true);
  return out;
}

std::string safe_key(const std::string& key) {
  std::string s;
  for (char c : key)
    if (std::isalnum(static_cast<unsigned char>(c)) && s.size() < 40) s += c;
  return s.empty() ? "workload" : s;
}

}  // namespace detail
}  // namespace tessel::tuner
