// The tuning-record database: an abstract interface with one implementation (SQLite, the embedded
// default: src/sqlite_database.cpp), created with open_database(). Schema, versioning, concurrency and
// target matching: docs/records.md. One Database object per thread; any number of processes may
// write one file at once (WAL mode, busy retries).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/records/record.h"
#include "tessel/workload/workload.h"

namespace tessel::records {

/** The schema version this tessel writes (PRAGMA user_version); older files are migrated on open. */
constexpr int kSchemaVersion = 1;

struct OpenOptions {
  bool create = true;      // create a missing (or empty) file; false: a missing file is a UserError
  bool read_only = false;  // never write (an older schema is then refused instead of migrated)
  bool check = true;       // PRAGMA quick_check before use (refuses corrupt files untouched)
  int busy_timeout_ms = 60000;  // a write waits this long for other writers before failing
};

class Database;
/** Opens (or creates) a tuning database. Throws UserError, leaving the file byte-for-byte untouched,
 *  for: a file that is not SQLite, a SQLite file without tessel's tables, a corrupt file, a newer
 *  schema. Migrates an older schema in one transaction. */
std::unique_ptr<Database> open_database(const std::string& path, const OpenOptions& options = {});

/** Which records records() returns. Empty strings match anything. */
struct RecordQuery {
  std::string workload_key;
  std::string target;      // exact target string
  bool only_ok = false;    // successful measurements only
  bool best_first = false; // order by median run time (ok first), else by id
  int64_t limit = 0;       // 0 = no limit
};

/** Records of one (workload, target, error kind): what the best-record lookup reasons about. */
struct RecordGroup {
  std::string workload_key, target;
  MeasureErrorKind error_kind = MeasureErrorKind::kNone;
  int64_t count = 0;
  double best_median_s = 0;  // lowest median among ok records (0 for failed groups)
};

struct WorkloadInfo {
  std::string key, name;
  nlohmann::json workload;  // workload::to_json
  int64_t records = 0;
};

struct DbStats {
  std::string path;
  int schema_version = 0;
  int64_t workloads = 0, targets = 0, runs = 0, records = 0, ok_records = 0;
  std::map<std::string, int64_t> records_by_error_kind;  // error kind name -> count
  int64_t file_bytes = 0;
};

/** Why the best-record lookup found (or did not find) a record; see find_best. */
enum class MatchReason {
  kFound,              // record set (exact target, or compatible when `fallback`)
  kNoRecordForKey,     // nothing for this workload key at all
  kOtherTargetsOnly,   // records exist, but only for incompatible targets (listed in other_targets)
  kOnlyFailed,         // matching targets have only failed records (failed_by_kind)
  kTraceInvalid,       // successful records exist but none of their traces replays on this workload
};

struct BestMatch {
  MatchReason reason = MatchReason::kNoRecordForKey;
  std::optional<TuningRecord> record;
  bool fallback = false;                          // matched by the compatibility rule, not exactly
  std::string message;                            // one line, for users ("no record for workload ...")
  std::vector<std::string> other_targets;         // incompatible targets that have records
  std::map<std::string, int64_t> failed_by_kind;  // failed records on matching targets, by kind name
  int rejected_traces = 0;                        // candidates refused by the replay check
  std::vector<std::string> notes;                 // per-target explanation (what `tessel db why` prints)
};

/** Returns an error message when a candidate record cannot be used (e.g. its trace does not replay),
 *  or an empty string when it can. */
using ReplayCheck = std::function<std::string(const TuningRecord&)>;

class Database {
 public:
  virtual ~Database() = default;

  /** Stores (or finds) a workload by key; returns its row id. */
  virtual int64_t add_workload(const workload::Workload& w) = 0;
  /** Starts a tuning run with its settings (JSON); returns its id for TuningRecord::run_id. */
  virtual int64_t begin_run(const nlohmann::json& settings) = 0;
  virtual void end_run(int64_t run_id, const nlohmann::json& summary) = 0;
  /** Adds a record in one transaction, durable on return; fills trace_hash, version and timestamp when
   *  empty. A record equal in (key, target, trace hash, timestamp) to a stored one is not added again:
   *  its id is returned and *inserted set to false. Retries while other processes hold the lock. */
  virtual int64_t add_record(const TuningRecord& r, bool* inserted = nullptr) = 0;
  /** add_record for many records in one transaction (one sync); returns their ids in order and the
   *  number actually inserted in *inserted. */
  virtual std::vector<int64_t> add_records(const std::vector<TuningRecord>& rs, int64_t* inserted = nullptr) = 0;
  /** Exact resume: whether any record (ok or failed) exists for this (workload, target, trace). */
  virtual bool has_record(const std::string& key, const std::string& target, const std::string& trace_hash) = 0;
  /** The trace hashes recorded for (workload, target): a tuner loads them once instead of calling
   *  has_record per candidate. */
  virtual std::vector<std::string> trace_hashes(const std::string& key, const std::string& target) = 0;
  virtual std::vector<TuningRecord> records(const RecordQuery& q) = 0;
  virtual std::optional<TuningRecord> record(int64_t id) = 0;
  /** Record counts per (workload, target, error kind); key "" = all workloads. */
  virtual std::vector<RecordGroup> summarize(const std::string& key) = 0;
  virtual std::vector<WorkloadInfo> workloads() = 0;
  virtual DbStats stats() = 0;
  /** Deletes records by id (used by distill in place). */
  virtual void remove_records(const std::vector<int64_t>& ids) = 0;
  virtual const std::string& path() const = 0;

  // --- built on the above (src/database.cpp) ---
  /** The lowest-median ok record for exactly this target string. */
  std::optional<TuningRecord> best(const std::string& key, const std::string& target);
  /** The k lowest-median ok records for exactly this target string. */
  std::vector<TuningRecord> top_k(const std::string& key, const std::string& target, int k);
  /** Best-record lookup with target matching (exact first, then compatible targets) and the reason when
   *  nothing is usable. Candidates are tried best first (at most max_candidates) through `check`. */
  BestMatch find_best(const std::string& key, const std::string& target, const ReplayCheck& check = {},
                      int max_candidates = 16);
  /** Writes every record as JSON lines; returns the count. */
  int64_t export_jsonl(const std::string& path);
  /** Adds the records of a JSON-lines file (deduplicated); returns {added, skipped as duplicates}. */
  std::pair<int64_t, int64_t> import_jsonl(const std::string& path);
  /** Keeps the best k ok records per (workload, target): into a new database at out_path, or in place
   *  when out_path is empty (failed records are dropped). With `distinct`, the best records of k distinct
   *  schedules (trace hashes): re-measurements of one schedule count once. Returns the number kept. */
  int64_t distill(int k, const std::string& out_path = "", bool distinct = false);
};

/** Stable name of a MatchReason ("found", "no_record_for_key", ...). */
const char* match_reason_name(MatchReason r);

}  // namespace tessel::records
