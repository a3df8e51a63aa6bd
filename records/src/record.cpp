// TuningRecord helpers: error-kind names, trace hash, timestamps, and the JSON-lines form.
#include "tessel/records/record.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include "tessel/support/error.h"
#include "tessel/support/sha256.h"

namespace tessel::records {

namespace {
struct KindName {
  MeasureErrorKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {MeasureErrorKind::kNone, "none"},
    {MeasureErrorKind::kInvalidSchedule, "invalid_schedule"},
    {MeasureErrorKind::kCompileError, "compile_error"},
    {MeasureErrorKind::kCompileTimeout, "compile_timeout"},
    {MeasureErrorKind::kRuntimeError, "runtime_error"},
    {MeasureErrorKind::kRunTimeout, "run_timeout"},
    {MeasureErrorKind::kWrongAnswer, "wrong_answer"},
    {MeasureErrorKind::kWorkerLost, "worker_lost"},
    {MeasureErrorKind::kEarlyAborted, "early_aborted"},
    {MeasureErrorKind::kOutOfMemory, "out_of_memory"},
    {MeasureErrorKind::kLaunchError, "launch_error"},
};
}  // namespace

const char* error_kind_name(MeasureErrorKind k) {
  for (auto& kn : kKindNames)
    if (kn.kind == k) return kn.name;
  TESSEL_ICHECK(false) << "unknown MeasureErrorKind " << int(k);
  return "";
}

std::optional<MeasureErrorKind> error_kind_from_name(const std::string& name) {
  for (auto& kn : kKindNames)
    if (name == kn.name) return kn.kind;
  return std::nullopt;
}

const std::vector<MeasureErrorKind>& all_error_kinds() {
  static const std::vector<MeasureErrorKind> all = [] {
    std::vector<MeasureErrorKind> v;
    for (auto& kn : kKindNames) v.push_back(kn.kind);
    return v;
  }();
  return all;
}

double TuningRecord::cv() const {
  if (run_times_s.size() < 2) return 0;
  double mean = 0, var = 0;
  for (double t : run_times_s) mean += t;
  mean /= double(run_times_s.size());
  for (double t : run_times_s) var += (t - mean) * (t - mean);
  var /= double(run_times_s.size() - 1);
  return mean > 0 ? std::sqrt(var) / mean : 0;
}

double median_of(std::vector<double> t) {
  if (t.empty()) return std::numeric_limits<double>::infinity();
  std::sort(t.begin(), t.end());
  size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

double TuningRecord::median_s() const {
  return ok() ? median_of(run_times_s) : std::numeric_limits<double>::infinity();
}

double TuningRecord::timed_s() const {
  bool ran = error_kind == MeasureErrorKind::kNone || error_kind == MeasureErrorKind::kEarlyAborted;
  return ran ? median_of(run_times_s) : std::numeric_limits<double>::infinity();
}

std::string trace_hash(const nlohmann::json& trace) { return sha256_hex(trace.dump()); }

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string format_timestamp(int64_t us) {
  std::time_t secs = std::time_t(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(us % 1000000));
  return buf;
}

nlohmann::json record_to_json(const TuningRecord& r) {
  return {{"version", kRecordJsonVersion},
          {"workload_key", r.workload_key},
          {"workload", r.workload},
          {"target", r.target},
          {"target_fingerprint", r.target_fingerprint},
          {"trace", r.trace},
          {"trace_hash", r.trace_hash.empty() ? trace_hash(r.trace) : r.trace_hash},
          {"run_times", r.run_times_s},
          {"error_kind", error_kind_name(r.error_kind)},
          {"error_message", r.error_message},
          {"build_settings", r.build_settings},
          {"run_settings", r.run_settings},
          {"tessel_version", r.tessel_version},
          {"timestamp_us", r.timestamp_us}};
}

namespace {
const nlohmann::json& field(const nlohmann::json& j, const char* name) {
  TESSEL_CHECK(j.contains(name)) << "tuning record: missing field '" << name << "'";
  return j[name];
}
std::string string_field(const nlohmann::json& j, const char* name) {
  const auto& v = field(j, name);
  TESSEL_CHECK(v.is_string()) << "tuning record: field '" << name << "' must be a string, got " << v.dump();
  return v.get<std::string>();
}
}  // namespace

TuningRecord record_from_json(const nlohmann::json& j) {
  TESSEL_CHECK(j.is_object()) << "tuning record: expected a JSON object, got " << j.type_name();
  const auto& v = field(j, "version");
  TESSEL_CHECK(v.is_number_integer()) << "tuning record: 'version' must be an integer";
  TESSEL_CHECK(v.get<int>() <= kRecordJsonVersion)
      << "tuning record version " << v.get<int>() << " is newer than this tessel reads (" << kRecordJsonVersion
      << "); upgrade tessel to import it";
  TESSEL_CHECK(v.get<int>() >= 1) << "tuning record: bad version " << v.get<int>();
  TuningRecord r;
  r.workload_key = string_field(j, "workload_key");
  r.workload = j.value("workload", nlohmann::json());
  r.target = string_field(j, "target");
  r.target_fingerprint = j.value("target_fingerprint", nlohmann::json::object());
  r.trace = field(j, "trace");
  r.trace_hash = j.contains("trace_hash") ? string_field(j, "trace_hash") : std::string();
  const auto& times = field(j, "run_times");
  TESSEL_CHECK(times.is_array()) << "tuning record: 'run_times' must be an array of seconds";
  for (auto& t : times) {
    TESSEL_CHECK(t.is_number()) << "tuning record: 'run_times' must hold numbers, got " << t.dump();
    r.run_times_s.push_back(t.get<double>());
  }
  std::string kind = string_field(j, "error_kind");
  auto k = error_kind_from_name(kind);
  TESSEL_CHECK(k.has_value()) << "tuning record: unknown error_kind '" << kind << "'";
  r.error_kind = *k;
  r.error_message = j.contains("error_message") ? string_field(j, "error_message") : std::string();
  r.build_settings = j.value("build_settings", nlohmann::json::object());
  r.run_settings = j.value("run_settings", nlohmann::json::object());
  r.tessel_version = j.contains("tessel_version") ? string_field(j, "tessel_version") : std::string();
  const auto& ts = field(j, "timestamp_us");
  TESSEL_CHECK(ts.is_number_integer()) << "tuning record: 'timestamp_us' must be an integer";
  r.timestamp_us = ts.get<int64_t>();
  TESSEL_CHECK(r.trace_hash.empty() || r.trace_hash == trace_hash(r.trace))
      << "tuning record: trace_hash does not match its trace (the line was edited?)";
  validate_record(r);
  return r;
}

void validate_record(const TuningRecord& r) {
  TESSEL_CHECK(!r.workload_key.empty()) << "tuning record: empty workload key";
  TESSEL_CHECK(!r.target.empty()) << "tuning record for workload " << r.workload_key << ": empty target";
  TESSEL_CHECK(r.trace.is_object() && r.trace.contains("steps"))
      << "tuning record for workload " << r.workload_key << ": the trace must be trace_to_json's object";
  TESSEL_CHECK(r.error_kind != MeasureErrorKind::kNone || !r.run_times_s.empty())
      << "tuning record for workload " << r.workload_key << ": a successful record needs at least one run time";
  for (double t : r.run_times_s)
    TESSEL_CHECK(std::isfinite(t) && t >= 0)
        << "tuning record for workload " << r.workload_key << ": run time " << t << " is not a finite duration";
}

}  // namespace tessel::records
