// A tuning record: one measurement of one schedule (trace) of one workload on one target, with every
// run time or the error that stopped it. Records are what the database stores, what JSON lines carry
// (one versioned object per line) and what the compiler replays. See docs/records.md.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tessel::records {

/** How a measurement ended. Stored as its stable text name ("none", "compile_error", ...); the tuner's
 *  MeasureResult uses the same enum. */
enum class MeasureErrorKind {
  kNone,             // success: at least one run time
  kInvalidSchedule,  // the trace does not apply / does not lower
  kCompileError,
  kCompileTimeout,
  kRuntimeError,
  kRunTimeout,
  kWrongAnswer,
  kWorkerLost,
  kEarlyAborted,
  kOutOfMemory,
  kLaunchError,  // a GPU kernel launch the device refuses (too many threads, registers or shared memory)
};

/** The stable name of a kind: "none", "invalid_schedule", "compile_error", "compile_timeout",
 *  "runtime_error", "run_timeout", "wrong_answer", "worker_lost", "early_aborted", "out_of_memory", "launch_error". */
const char* error_kind_name(MeasureErrorKind k);
/** Inverse of error_kind_name; nullopt for an unknown name. */
std::optional<MeasureErrorKind> error_kind_from_name(const std::string& name);
/** All kinds, in declaration order. */
const std::vector<MeasureErrorKind>& all_error_kinds();

/** JSON-lines record format version ("version" of every exported line); readers refuse newer ones. */
constexpr int kRecordJsonVersion = 1;

struct TuningRecord {
  int64_t id = 0;                       // database row id (0: not stored; not exported)
  std::string workload_key;             // workload::Workload::key
  nlohmann::json workload;              // workload::to_json(w); may be null when the database knows the key
  std::string target;                   // codegen::Target::to_string() the schedule was measured for
  nlohmann::json target_fingerprint;    // host_fingerprint() of the measuring machine ({} if unknown)
  nlohmann::json trace;                 // schedule::trace_to_json(steps)
  std::string trace_hash;               // trace_hash(trace); add_record fills it when empty
  std::vector<double> run_times_s;      // every timed repeat, seconds (empty on error)
  MeasureErrorKind error_kind = MeasureErrorKind::kNone;
  std::string error_message;            // empty on success
  nlohmann::json build_settings = nlohmann::json::object();  // compiler options used
  nlohmann::json run_settings = nlohmann::json::object();    // timing options used (repeats, threads)
  std::string tessel_version;           // tessel::version() of the writer; add_record fills it when empty
  int64_t timestamp_us = 0;             // microseconds since the Unix epoch (UTC); add_record: now if 0
  int64_t run_id = 0;                   // tuning run (Database::begin_run), 0 = none; not exported

  /** A usable measurement: kind none and at least one run time. */
  bool ok() const { return error_kind == MeasureErrorKind::kNone && !run_times_s.empty(); }
  /** Median run time in seconds; +infinity when !ok(). */
  double median_s() const;
  /** What the cost models learn from: the median run time of a candidate that ran correctly, including
   *  one stopped after its first run as much slower than the best (early_aborted); +infinity otherwise. */
  double timed_s() const;
  /** Coefficient of variation (standard deviation / mean) of the run times; 0 with fewer than two. */
  double cv() const;
};

/** Median of run times (seconds); +infinity for none. */
double median_of(std::vector<double> times);

/** SHA-256 (hex) of the canonical dump of a trace (sorted keys, no spaces): the identity used for
 *  exact resume and deduplication. */
std::string trace_hash(const nlohmann::json& trace);
/** Microseconds since the Unix epoch, now. */
int64_t now_us();
/** "2025-01-31T12:00:00.123456Z" */
std::string format_timestamp(int64_t us);

/** One JSON-lines object: {"version":1,"workload_key",...}; id and run_id are left out. */
nlohmann::json record_to_json(const TuningRecord& r);
/** Parses record_to_json's output; throws UserError naming the field for malformed input and
 *  refusing versions newer than kRecordJsonVersion. */
TuningRecord record_from_json(const nlohmann::json& j);

/** Checks a record before it is stored (key, target and trace present; ok records have run times,
 *  failed ones none required); throws UserError naming the problem. */
void validate_record(const TuningRecord& r);

}  // namespace tessel::records
