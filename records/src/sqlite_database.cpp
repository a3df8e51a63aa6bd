// The SQLite implementation of records::Database -- the only file that includes sqlite3.h.
//
// Guide:
//   open_database()      inspect() first opens the file read-only (immutable when no WAL is in use, so
//                        no -wal/-shm files appear) and refuses what is not ours, corrupt or newer,
//                        before anything is written; then SqliteDatabase opens it read-write in WAL
//                        mode and creates or migrates the schema in one IMMEDIATE transaction.
//   kSchemaSql           the version-1 schema; migrate_v0_to_v1() the migration from the prototype.
//   with_retry()         every statement group runs here: SQLITE_BUSY / SQLITE_LOCKED are retried
//                        with backoff until OpenOptions::busy_timeout_ms (on top of sqlite's own
//                        busy_timeout), so concurrent writers wait instead of failing.
//   insert_record()      workload and target rows are found or created in the record's transaction.
//   read_record()        one row of kSelectRecord back into a TuningRecord.
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "tessel/records/database.h"
#include "tessel/records/target_match.h"
#include "tessel/support/error.h"
#include "tessel/support/version.h"

namespace tessel::records {

namespace {

namespace fs = std::filesystem;
constexpr const char* kFormat = "tessel-records";

/** An SQLite failure; `code` is the primary result code (BUSY/LOCKED are retried). */
struct SqliteError : UserError {
  SqliteError(int code, const std::string& msg) : UserError(msg), code(code) {}
  int code;
};

[[noreturn]] void throw_sqlite(sqlite3* db, int rc, const std::string& path, const std::string& what) {
  std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw SqliteError(rc & 0xff, "tuning database '" + path + "': " + what + ": " + msg);
}

/** A prepared statement with positional binding (1-based) and typed column reads (0-based). */
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    int rc = sqlite3_prepare_v2(db, sql.c_str(), int(sql.size()), &s_, nullptr);
    if (rc != SQLITE_OK) throw_sqlite(db, rc, path, "preparing '" + sql.substr(0, 60) + "'");
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, int64_t v) { return check(sqlite3_bind_int64(s_, i, v)); }
  Stmt& bind(int i, double v) { return check(sqlite3_bind_double(s_, i, v)); }
  Stmt& bind(int i, const std::string& v) {
    return check(sqlite3_bind_text(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT));
  }
  Stmt& bind_null(int i) { return check(sqlite3_bind_null(s_, i)); }
  /** true: a row is available; false: done. */
  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw_sqlite(db_, rc, path_, "executing '" + std::string(sqlite3_sql(s_)).substr(0, 60) + "'");
  }
  int64_t i64(int c) const { return sqlite3_column_int64(s_, c); }
  double f64(int c) const { return sqlite3_column_double(s_, c); }
  /** Ready to step again with new bindings. */
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  bool is_null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::string text(int c) const {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
    return p ? std::string(p, size_t(sqlite3_column_bytes(s_, c))) : std::string();
  }

 private:
  Stmt& check(int rc) {
    if (rc != SQLITE_OK) throw_sqlite(db_, rc, path_, "binding a parameter");
    return *this;
  }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  std::string path_;
};

void exec(sqlite3* db, const std::string& sql, const std::string& path) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqliteError(rc & 0xff, "tuning database '" + path + "': " + msg + " (in '" + sql.substr(0, 60) + "')");
  }
}

struct Connection {
  sqlite3* db = nullptr;
  ~Connection() {
    if (db) sqlite3_close_v2(db);
  }
};

const char* const kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS tessel_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE workloads(
  id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, name TEXT NOT NULL DEFAULT '',
  json TEXT NOT NULL, flop REAL NOT NULL DEFAULT 0);
CREATE TABLE targets(
  id INTEGER PRIMARY KEY, target TEXT NOT NULL, fingerprint TEXT NOT NULL, UNIQUE(target, fingerprint));
CREATE TABLE tuning_runs(
  id INTEGER PRIMARY KEY, started_us INTEGER NOT NULL, finished_us INTEGER, settings TEXT NOT NULL,
  summary TEXT, tessel_version TEXT NOT NULL, host TEXT NOT NULL);
CREATE TABLE records(
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  run_id INTEGER REFERENCES tuning_runs(id),
  trace TEXT NOT NULL, trace_hash TEXT NOT NULL,
  run_times TEXT NOT NULL, median_s REAL,
  error_kind TEXT NOT NULL, error_message TEXT NOT NULL,
  build_settings TEXT NOT NULL, run_settings TEXT NOT NULL,
  tessel_version TEXT NOT NULL, timestamp_us INTEGER NOT NULL);
CREATE UNIQUE INDEX records_identity ON records(workload_id, target_id, trace_hash, timestamp_us);
CREATE INDEX records_best ON records(workload_id, target_id, median_s) WHERE error_kind = 'none';
)sql";

// ---------------------------------------------------------------------------------------------------
// Inspection before anything is written.

std::string uri_for(const std::string& path, bool immutable) {
  std::string out = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/._-~", c)) {
      out += char(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  out += immutable ? "?mode=ro&immutable=1" : "?mode=ro";
  return out;
}

enum class FileState { kMissing, kEmpty, kTessel };
struct Inspection {
  FileState state = FileState::kMissing;
  int version = 0;
};

std::string untouched(const std::string& path) { return "'" + path + "' was left untouched"; }

/** Reads the file read-only and refuses (UserError) what tessel must not open. */
Inspection inspect_once(const std::string& path, const OpenOptions& options) {
  Inspection ins;
  std::error_code ec;
  if (!fs::exists(path, ec)) return ins;
  TESSEL_CHECK(!fs::is_directory(path, ec)) << "tuning database '" << path << "' is a directory";
  uintmax_t size = fs::file_size(path, ec);
  TESSEL_CHECK(!ec) << "tuning database '" << path << "': cannot read its size: " << ec.message();
  if (size == 0) {
    ins.state = FileState::kEmpty;
    return ins;
  }
  char header[100] = {};
  {
    std::ifstream in(path, std::ios::binary);
    TESSEL_CHECK(in) << "tuning database '" << path << "': cannot open it for reading";
    in.read(header, sizeof header);
  }
  TESSEL_CHECK(size >= 100 && std::memcmp(header, "SQLite format 3", 16) == 0)
      << "'" << path << "' is not a tessel tuning database (not an SQLite file); " << untouched(path)
      << ". Pass the path of a tessel database, or a new path to create one.";

  // Immutable (no locks, no -shm) unless a WAL is in use, whose frames we must see.
  bool wal_in_use = fs::exists(path + "-wal", ec);
  Connection c;
  int rc = sqlite3_open_v2(uri_for(path, !wal_in_use).c_str(), &c.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) throw_sqlite(c.db, rc, path, "opening read-only");
  sqlite3_busy_timeout(c.db, options.busy_timeout_ms);
  std::vector<std::string> tables;
  int version = 0;
  try {
    Stmt st(c.db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", path);
    while (st.step()) tables.push_back(st.text(0));
    Stmt uv(c.db, "PRAGMA user_version", path);
    if (uv.step()) version = int(uv.i64(0));
  } catch (const SqliteError& e) {
    if (e.code == SQLITE_BUSY || e.code == SQLITE_LOCKED) throw;
    TESSEL_CHECK(false) << "'" << path << "' is corrupt or not a database (" << e.what() << "); " << untouched(path)
                        << ". Restore it from a backup (or recover what is readable with `sqlite3 " << path
                        << " .recover`), or use a new path.";
  }
  if (tables.empty()) {
    ins.state = FileState::kEmpty;
    return ins;
  }
  std::string format, written_by;
  if (std::find(tables.begin(), tables.end(), "tessel_meta") != tables.end()) {
    Stmt m(c.db, "SELECT key, value FROM tessel_meta", path);
    while (m.step()) {
      if (m.text(0) == "format") format = m.text(1);
      if (m.text(0) == "created_by" || m.text(0) == "last_migrated_by") written_by = m.text(1);
    }
  }
  if (format != kFormat) {
    std::string list;
    for (size_t i = 0; i < tables.size() && i < 8; ++i) list += (i ? ", " : "") + tables[i];
    TESSEL_CHECK(false) << "'" << path << "' is an SQLite database but not a tessel tuning database (tables: " << list
                        << (tables.size() > 8 ? ", ..." : "") << "); " << untouched(path) << ". Use another path.";
  }
  TESSEL_CHECK(version <= kSchemaVersion)
      << "'" << path << "' has tuning-database schema version " << version << ", newer than this tessel ("
      << tessel::version() << ") reads (" << kSchemaVersion << ")"
      << (written_by.empty() ? "" : "; it was written by tessel " + written_by) << "; " << untouched(path)
      << ". Use a newer tessel.";
  if (options.check) {
    std::string problems;
    try {
      Stmt qc(c.db, "PRAGMA quick_check(5)", path);
      while (qc.step())
        if (qc.text(0) != "ok") problems += (problems.empty() ? "" : "; ") + qc.text(0);
    } catch (const SqliteError& e) {
      if (e.code == SQLITE_BUSY || e.code == SQLITE_LOCKED) throw;
      problems = e.what();
    }
    TESSEL_CHECK(problems.empty()) << "'" << path << "' is corrupt (quick_check: " << problems << "); "
                                   << untouched(path) << ". Restore it from a backup (or recover what is readable "
                                   << "with `sqlite3 " << path << " .recover`), or use a new path.";
  }
  ins.state = FileState::kTessel;
  ins.version = version;
  return ins;
}

/** inspect_once, repeated when a writer appeared or changed the file while an immutable read ran. */
Inspection inspect(const std::string& path, const OpenOptions& options) {
  auto stamp = [&] {
    struct stat st {};
    std::string s = ::stat(path.c_str(), &st) == 0 ? std::to_string(st.st_size) + ":" +
                                                         std::to_string(st.st_mtim.tv_sec) + "." +
                                                         std::to_string(st.st_mtim.tv_nsec)
                                                   : "none";
    std::error_code ec;
    return s + (fs::exists(path + "-wal", ec) ? "+wal" : "");
  };
  for (int attempt = 0;; ++attempt) {
    std::string before = stamp();
    try {
      Inspection ins = inspect_once(path, options);
      if (stamp() == before || attempt >= 3) return ins;
    } catch (const UserError&) {
      if (stamp() == before || attempt >= 3) throw;
    }
  }
}

// ---------------------------------------------------------------------------------------------------

const char* const kSelectRecord =
    "SELECT r.id, w.key, w.json, t.target, t.fingerprint, r.trace, r.trace_hash, r.run_times, r.error_kind, "
    "r.error_message, r.build_settings, r.run_settings, r.tessel_version, r.timestamp_us, r.run_id "
    "FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id";

nlohmann::json parse_json(const std::string& text, const std::string& what, int64_t id) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UserError("record " + std::to_string(id) + ": stored " + what + " is not valid JSON: " + e.what());
  }
}

TuningRecord read_record(const Stmt& st) {
  TuningRecord r;
  r.id = st.i64(0);
  r.workload_key = st.text(1);
  r.workload = parse_json(st.text(2), "workload", r.id);
  r.target = st.text(3);
  r.target_fingerprint = parse_json(st.text(4), "target fingerprint", r.id);
  r.trace = parse_json(st.text(5), "trace", r.id);
  r.trace_hash = st.text(6);
  for (auto& t : parse_json(st.text(7), "run times", r.id)) r.run_times_s.push_back(t.get<double>());
  r.error_kind = error_kind_from_name(st.text(8)).value_or(MeasureErrorKind::kRuntimeError);
  r.error_message = st.text(9);
  r.build_settings = parse_json(st.text(10), "build settings", r.id);
  r.run_settings = parse_json(st.text(11), "run settings", r.id);
  r.tessel_version = st.text(12);
  r.timestamp_us = st.i64(13);
  r.run_id = st.is_null(14) ? 0 : st.i64(14);
  return r;
}

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(std::string path, const OpenOptions& options) : path_(std::move(path)), options_(options) {}

  void open(const Inspection& ins) {
    int flags = options_.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    int rc = sqlite3_open_v2(path_.c_str(), &conn_.db, flags, nullptr);
    if (rc != SQLITE_OK) throw_sqlite(conn_.db, rc, path_, "opening");
    sqlite3_busy_timeout(conn_.db, std::min(options_.busy_timeout_ms, 5000));
    if (options_.read_only) {
      TESSEL_CHECK(ins.state == FileState::kTessel) << "no tessel tuning database at '" << path_ << "'";
      TESSEL_CHECK(ins.version == kSchemaVersion)
          << "'" << path_ << "' has schema version " << ins.version << " and must be migrated to " << kSchemaVersion
          << "; open it once without read-only (e.g. `tessel db stats --db " << path_ << "`) to migrate it";
      return;
    }
    with_retry([&] {
      Stmt jm(conn_.db, "PRAGMA journal_mode = WAL", path_);
      jm.step();
    });
    exec(conn_.db, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", path_);
    write_txn([&] {
      int version = int(scalar("PRAGMA user_version"));
      int64_t tables = scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
      if (tables == 0) {
        exec(conn_.db, kSchemaSql, path_);
        set_meta({{"format", kFormat},
                  {"schema_version", std::to_string(kSchemaVersion)},
                  {"created_by", tessel::version()},
                  {"created", format_timestamp(now_us())}});
        exec(conn_.db, "PRAGMA user_version = " + std::to_string(kSchemaVersion), path_);
        return;
      }
      // Another process may have changed the file since inspection: check again under the lock.
      TESSEL_CHECK(version <= kSchemaVersion) << "'" << path_ << "' has schema version " << version
                                              << ", newer than this tessel reads (" << kSchemaVersion << ")";
      if (version < kSchemaVersion) migrate(version);
    });
  }

  int64_t add_workload(const workload::Workload& w) override {
    std::string json = workload::to_json(w).dump();
    int64_t id = 0;
    write_txn([&] {
      id = workload_id(w.key, json, true);
      Stmt up(conn_.db, "UPDATE workloads SET flop = ?1, name = ?2 WHERE id = ?3", path_);
      up.bind(1, w.flop_count()).bind(2, w.name).bind(3, id).step();
    });
    return id;
  }

  int64_t begin_run(const nlohmann::json& settings) override {
    int64_t id = 0;
    write_txn([&] {
      Stmt st(conn_.db,
              "INSERT INTO tuning_runs(started_us, settings, tessel_version, host) VALUES (?1, ?2, ?3, ?4)", path_);
      st.bind(1, now_us()).bind(2, settings.dump()).bind(3, std::string(tessel::version()));
      st.bind(4, host_fingerprint().dump()).step();
      id = sqlite3_last_insert_rowid(conn_.db);
    });
    return id;
  }

  void end_run(int64_t run_id, const nlohmann::json& summary) override {
    write_txn([&] {
      Stmt st(conn_.db, "UPDATE tuning_runs SET finished_us = ?1, summary = ?2 WHERE id = ?3", path_);
      st.bind(1, now_us()).bind(2, summary.dump()).bind(3, run_id).step();
      TESSEL_CHECK(sqlite3_changes(conn_.db) == 1) << "end_run: no tuning run " << run_id << " in '" << path_ << "'";
    });
  }

  int64_t add_record(const TuningRecord& r, bool* inserted) override {
    validate_record(r);
    std::pair<int64_t, bool> res;
    write_txn([&] { res = insert_record(r); });
    if (inserted) *inserted = res.second;
    return res.first;
  }

  std::vector<int64_t> add_records(const std::vector<TuningRecord>& rs, int64_t* inserted) override {
    for (auto& r : rs) validate_record(r);
    std::vector<int64_t> ids;
    int64_t n = 0;
    write_txn([&] {
      ids.clear();
      n = 0;
      for (auto& r : rs) {
        auto res = insert_record(r);
        ids.push_back(res.first);
        n += res.second;
      }
    });
    if (inserted) *inserted = n;
    return ids;
  }

  bool has_record(const std::string& key, const std::string& target, const std::string& hash) override {
    bool found = false;
    with_retry([&] {
      Stmt st(conn_.db,
              "SELECT 1 FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = "
              "r.target_id WHERE w.key = ?1 AND t.target = ?2 AND r.trace_hash = ?3 LIMIT 1",
              path_);
      st.bind(1, key).bind(2, target).bind(3, hash);
      found = st.step();
    });
    return found;
  }

  std::vector<std::string> trace_hashes(const std::string& key, const std::string& target) override {
    std::vector<std::string> out;
    with_retry([&] {
      out.clear();
      Stmt st(conn_.db,
              "SELECT DISTINCT r.trace_hash FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t "
              "ON t.id = r.target_id WHERE w.key = ?1 AND t.target = ?2",
              path_);
      st.bind(1, key).bind(2, target);
      while (st.step()) out.push_back(st.text(0));
    });
    return out;
  }

  std::vector<TuningRecord> records(const RecordQuery& q) override {
    std::string sql = kSelectRecord;
    std::vector<std::string> where;
    if (!q.workload_key.empty()) where.push_back("w.key = ?1");
    if (!q.target.empty()) where.push_back("t.target = ?2");
    if (q.only_ok) where.push_back("r.error_kind = 'none'");
    for (size_t i = 0; i < where.size(); ++i) sql += (i ? " AND " : " WHERE ") + where[i];
    sql += q.best_first ? " ORDER BY r.median_s IS NULL, r.median_s, r.id" : " ORDER BY r.id";
    if (q.limit > 0) sql += " LIMIT " + std::to_string(q.limit);
    std::vector<TuningRecord> out;
    with_retry([&] {
      out.clear();
      Stmt st(conn_.db, sql, path_);
      if (!q.workload_key.empty()) st.bind(1, q.workload_key);
      if (!q.target.empty()) st.bind(2, q.target);
      while (st.step()) out.push_back(read_record(st));
    });
    return out;
  }

  std::optional<TuningRecord> record(int64_t id) override {
    std::optional<TuningRecord> out;
    with_retry([&] {
      Stmt st(conn_.db, std::string(kSelectRecord) + " WHERE r.id = ?1", path_);
      st.bind(1, id);
      if (st.step()) out = read_record(st);
    });
    return out;
  }

  std::vector<RecordGroup> summarize(const std::string& key) override {
    std::vector<RecordGroup> out;
    with_retry([&] {
      out.clear();
      Stmt st(conn_.db,
              std::string("SELECT w.key, t.target, r.error_kind, count(*), min(r.median_s) FROM records r JOIN "
                          "workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id") +
                  (key.empty() ? "" : " WHERE w.key = ?1") + " GROUP BY w.key, t.target, r.error_kind ORDER BY 1, 2, 3",
              path_);
      if (!key.empty()) st.bind(1, key);
      while (st.step()) {
        RecordGroup g{st.text(0), st.text(1), error_kind_from_name(st.text(2)).value_or(MeasureErrorKind::kRuntimeError),
                      st.i64(3), st.is_null(4) ? 0.0 : st.f64(4)};
        out.push_back(g);
      }
    });
    return out;
  }

  std::vector<WorkloadInfo> workloads() override {
    std::vector<WorkloadInfo> out;
    with_retry([&] {
      out.clear();
      Stmt st(conn_.db,
              "SELECT w.key, w.name, w.json, (SELECT count(*) FROM records r WHERE r.workload_id = w.id) "
              "FROM workloads w ORDER BY w.id",
              path_);
      while (st.step()) out.push_back({st.text(0), st.text(1), parse_json(st.text(2), "workload", 0), st.i64(3)});
    });
    return out;
  }

  DbStats stats() override {
    DbStats s;
    s.path = path_;
    with_retry([&] {
      s.schema_version = int(scalar("PRAGMA user_version"));
      s.workloads = scalar("SELECT count(*) FROM workloads");
      s.targets = scalar("SELECT count(DISTINCT target) FROM targets");
      s.runs = scalar("SELECT count(*) FROM tuning_runs");
      s.records = scalar("SELECT count(*) FROM records");
      s.ok_records = scalar("SELECT count(*) FROM records WHERE error_kind = 'none'");
      s.records_by_error_kind.clear();
      Stmt st(conn_.db, "SELECT error_kind, count(*) FROM records GROUP BY error_kind ORDER BY 1", path_);
      while (st.step()) s.records_by_error_kind[st.text(0)] = st.i64(1);
    });
    std::error_code ec;
    s.file_bytes = int64_t(fs::file_size(path_, ec));
    return s;
  }

  void remove_records(const std::vector<int64_t>& ids) override {
    write_txn([&] {
      Stmt st(conn_.db, "DELETE FROM records WHERE id = ?1", path_);
      for (int64_t id : ids) {
        st.reset();
        st.bind(1, id).step();
      }
    });
  }

  const std::string& path() const override { return path_; }

 private:
  /** Runs f, retrying on SQLITE_BUSY / SQLITE_LOCKED with jittered exponential backoff. */
  template <class F>
  void with_retry(F&& f) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.busy_timeout_ms);
    std::minstd_rand rng(std::random_device{}());
    int delay_us = 500;
    for (;;) {
      try {
        f();
        return;
      } catch (const SqliteError& e) {
        if (e.code != SQLITE_BUSY && e.code != SQLITE_LOCKED) throw;
        if (std::chrono::steady_clock::now() > deadline)
          throw UserError("tuning database '" + path_ + "' stayed locked by other processes for " +
                          std::to_string(options_.busy_timeout_ms) + " ms: " + e.what());
      }
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us / 2 + int(rng() % unsigned(delay_us))));
      delay_us = std::min(delay_us * 2, 100000);
    }
  }

  /** f inside BEGIN IMMEDIATE ... COMMIT (rolled back on any exception), with retries. */
  template <class F>
  void write_txn(F&& f) {
    TESSEL_CHECK(!options_.read_only) << "tuning database '" << path_ << "' was opened read-only";
    with_retry([&] {
      exec(conn_.db, "BEGIN IMMEDIATE", path_);
      try {
        f();
        exec(conn_.db, "COMMIT", path_);
      } catch (...) {
        if (!sqlite3_get_autocommit(conn_.db)) sqlite3_exec(conn_.db, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
      }
    });
  }

  int64_t scalar(const std::string& sql) {
    Stmt st(conn_.db, sql, path_);
    return st.step() ? st.i64(0) : 0;
  }

  void set_meta(const std::vector<std::pair<std::string, std::string>>& kv) {
    for (auto& [k, v] : kv) {
      Stmt st(conn_.db, "INSERT OR REPLACE INTO tessel_meta(key, value) VALUES (?1, ?2)", path_);
      st.bind(1, k).bind(2, v).step();
    }
  }

  /** Row id of a workload key; inserted with `json` when absent (json must then be non-empty). */
  int64_t workload_id(const std::string& key, const std::string& json, bool create) {
    Stmt find(conn_.db, "SELECT id FROM workloads WHERE key = ?1", path_);
    find.bind(1, key);
    if (find.step()) return find.i64(0);
    TESSEL_CHECK(create && !json.empty() && json != "null")
        << "record for workload " << key << ": the database does not know this workload and the record carries "
        << "no workload JSON; add the workload first (Database::add_workload)";
    std::string name;
    try {
      name = nlohmann::json::parse(json).value("name", std::string());
    } catch (const nlohmann::json::exception&) {
    }
    Stmt ins(conn_.db, "INSERT INTO workloads(key, name, json) VALUES (?1, ?2, ?3)", path_);
    ins.bind(1, key).bind(2, name).bind(3, json).step();
    return sqlite3_last_insert_rowid(conn_.db);
  }

  int64_t target_id(const std::string& target, const std::string& fingerprint) {
    Stmt find(conn_.db, "SELECT id FROM targets WHERE target = ?1 AND fingerprint = ?2", path_);
    find.bind(1, target).bind(2, fingerprint);
    if (find.step()) return find.i64(0);
    Stmt ins(conn_.db, "INSERT INTO targets(target, fingerprint) VALUES (?1, ?2)", path_);
    ins.bind(1, target).bind(2, fingerprint).step();
    return sqlite3_last_insert_rowid(conn_.db);
  }

  /** Inside a transaction: inserts r (or finds its identical twin). Returns {id, inserted}. */
  std::pair<int64_t, bool> insert_record(const TuningRecord& r) {
    int64_t wid = workload_id(r.workload_key, r.workload.is_null() ? "" : r.workload.dump(), true);
    nlohmann::json fp = r.target_fingerprint.is_null() ? nlohmann::json::object() : r.target_fingerprint;
    int64_t tid = target_id(r.target, fp.dump());
    std::string hash = r.trace_hash.empty() ? trace_hash(r.trace) : r.trace_hash;
    int64_t ts = r.timestamp_us ? r.timestamp_us : now_us();
    Stmt st(conn_.db,
            "INSERT OR IGNORE INTO records(workload_id, target_id, run_id, trace, trace_hash, run_times, median_s, "
            "error_kind, error_message, build_settings, run_settings, tessel_version, timestamp_us) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            path_);
    st.bind(1, wid).bind(2, tid);
    if (r.run_id)
      st.bind(3, r.run_id);
    else
      st.bind_null(3);
    st.bind(4, r.trace.dump()).bind(5, hash).bind(6, nlohmann::json(r.run_times_s).dump());
    if (r.ok())
      st.bind(7, r.median_s());
    else
      st.bind_null(7);
    st.bind(8, std::string(error_kind_name(r.error_kind))).bind(9, r.error_message);
    st.bind(10, r.build_settings.dump()).bind(11, r.run_settings.dump());
    st.bind(12, r.tessel_version.empty() ? std::string(tessel::version()) : r.tessel_version).bind(13, ts);
    st.step();
    if (sqlite3_changes(conn_.db) == 1) return {sqlite3_last_insert_rowid(conn_.db), true};
    Stmt twin(conn_.db,
              "SELECT id FROM records WHERE workload_id = ?1 AND target_id = ?2 AND trace_hash = ?3 AND "
              "timestamp_us = ?4",
              path_);
    twin.bind(1, wid).bind(2, tid).bind(3, hash).bind(4, ts);
    TESSEL_ICHECK(twin.step()) << "INSERT OR IGNORE ignored a record without a twin";
    return {twin.i64(0), false};
  }

  /** Inside the open transaction: brings the schema from `from` to kSchemaVersion. */
  void migrate(int from) {
    if (from == 0) migrate_v0_to_v1();
    set_meta({{"schema_version", std::to_string(kSchemaVersion)},
              {"last_migrated_by", tessel::version()},
              {"migrated_from", std::to_string(from)}});
    exec(conn_.db, "PRAGMA user_version = " + std::to_string(kSchemaVersion), path_);
  }

  /** Version 0 (the prototype, docs/records.md): workloads(key, json) and records(id, workload_key,
   *  target, trace, run_times, error, created) with error '' or "kind: message"; no targets, no hashes. */
  void migrate_v0_to_v1() {
    exec(conn_.db, "ALTER TABLE workloads RENAME TO v0_workloads; ALTER TABLE records RENAME TO v0_records;", path_);
    exec(conn_.db, kSchemaSql, path_);
    {
      Stmt st(conn_.db, "SELECT key, json FROM v0_workloads ORDER BY rowid", path_);
      while (st.step()) workload_id(st.text(0), st.text(1), true);
    }
    Stmt st(conn_.db,
            "SELECT id, workload_key, target, trace, run_times, error, "
            "CAST(strftime('%s', created) AS INTEGER) FROM v0_records ORDER BY id",
            path_);
    while (st.step()) {
      TuningRecord r;
      r.workload_key = st.text(1);
      r.target = st.text(2);
      r.target_fingerprint = nlohmann::json::object();
      r.trace = parse_json(st.text(3), "trace", st.i64(0));
      for (auto& t : parse_json(st.text(4), "run times", st.i64(0))) r.run_times_s.push_back(t.get<double>());
      std::string err = st.text(5);
      if (err.empty()) {
        r.error_kind = MeasureErrorKind::kNone;
      } else {
        auto colon = err.find(':');
        auto kind = error_kind_from_name(err.substr(0, colon));
        r.error_kind = kind.value_or(MeasureErrorKind::kRuntimeError);
        r.error_message = kind && colon != std::string::npos ? err.substr(colon + 1) : err;
        if (!r.error_message.empty() && r.error_message[0] == ' ') r.error_message.erase(0, 1);
      }
      if (r.error_kind == MeasureErrorKind::kNone && r.run_times_s.empty()) {
        r.error_kind = MeasureErrorKind::kRuntimeError;
        r.error_message = "migrated from schema 0 without run times";
      }
      r.tessel_version = "schema-0";
      workload_id(r.workload_key, "{}", true);  // a v0 record of an unknown workload keeps an empty JSON
      // Seconds resolution in v0: the old row id keeps identities distinct.
      r.timestamp_us = st.i64(6) * 1000000 + st.i64(0) % 1000000;
      insert_record(r);
    }
    exec(conn_.db, "DROP TABLE v0_records; DROP TABLE v0_workloads;", path_);
  }

  std::string path_;
  OpenOptions options_;
  Connection conn_;
};

}  // namespace

std::unique_ptr<Database> open_database(const std::string& path, const OpenOptions& options) {
  TESSEL_CHECK(!path.empty()) << "tuning database: empty path";
  Inspection ins = inspect(path, options);
  if (ins.state == FileState::kMissing)
    TESSEL_CHECK(options.create && !options.read_only) << "no tessel tuning database at '" << path << "'";
  if (ins.state == FileState::kEmpty)
    TESSEL_CHECK(options.create && !options.read_only)
        << "'" << path << "' is empty, not a tessel tuning database; " << untouched(path);
  auto db = std::make_unique<SqliteDatabase>(path, options);
  db->open(ins);
  return db;
}

}  // namespace tessel::records
