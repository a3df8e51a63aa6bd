// Files the database must refuse untouched (not SQLite, foreign SQLite, corrupt, newer schema) and
// the migration of an older schema.
#include <catch2/catch.hpp>

#include "records_test_util.h"

using namespace tessel;
using namespace tessel::records;
using tessel::test::make_record;
using tessel::test::TempDir;

namespace {
/** Opening `path` throws a UserError containing `what`; the file's bytes are unchanged and no
 *  -wal / -shm / -journal file appeared. */
void check_refused(const std::string& path, const std::string& what, const OpenOptions& o = {}) {
  std::string before = test::read_bytes(path);
  CHECK_THROWS_WITH(open_database(path, o), Catch::Contains(what) && Catch::Contains("left untouched"));
  CHECK(test::read_bytes(path) == before);
  CHECK_FALSE(test::fs::exists(path + "-wal"));
  CHECK_FALSE(test::fs::exists(path + "-shm"));
  CHECK_FALSE(test::fs::exists(path + "-journal"));
}

/** A closed tessel database with a few records (its -wal checkpointed away). */
std::string make_db(const TempDir& dir, const std::string& name, int n = 40) {
  std::string path = dir.file(name);
  auto db = open_database(path);
  std::vector<TuningRecord> rs;
  for (int i = 0; i < n; ++i) rs.push_back(make_record(test::host_target(), i + 1, {1e-3 * (i + 1)}));
  db->add_records(rs);
  return path;
}
}  // namespace

TEST_CASE("a file that is not SQLite is refused untouched", "[records][files]") {
  TempDir dir;
  std::string path = dir.file("notes.txt");
  test::write_bytes(path, "these are my notes, not a database\n" + std::string(5000, 'x'));
  check_refused(path, "not an SQLite file");
  test::write_bytes(path, "tiny");
  check_refused(path, "not an SQLite file");
}

TEST_CASE("a foreign SQLite database is refused untouched", "[records][files]") {
  TempDir dir;
  std::string path = dir.file("other.db");
  if (!test::sqlite3_cli(path, "CREATE TABLE people(name TEXT); INSERT INTO people VALUES('ada');")) {
    WARN("sqlite3 command-line tool not found; skipped");
    return;
  }
  check_refused(path, "not a tessel tuning database (tables: people)");
  // Also in WAL mode (no -wal file left behind by the CLI).
  REQUIRE(test::sqlite3_cli(path, "PRAGMA journal_mode=WAL;"));
  check_refused(path, "not a tessel tuning database");
}

TEST_CASE("a newer schema is refused untouched", "[records][files]") {
  TempDir dir;
  std::string path = make_db(dir, "newer.db");
  if (!test::sqlite3_cli(path, "PRAGMA user_version = 7;")) {
    WARN("sqlite3 command-line tool not found; skipped");
    return;
  }
  check_refused(path, "schema version 7, newer than this tessel");
}

TEST_CASE("corrupt databases are refused untouched", "[records][files]") {
  TempDir dir;
  SECTION("truncated") {
    std::string path = make_db(dir, "trunc.db", 300);
    std::string bytes = test::read_bytes(path);
    REQUIRE(bytes.size() > 4 * 4096);
    test::write_bytes(path, bytes.substr(0, bytes.size() / 2));
    check_refused(path, "corrupt");
  }
  SECTION("garbage pages") {
    std::string path = make_db(dir, "garbage.db", 300);
    std::string bytes = test::read_bytes(path);
    REQUIRE(bytes.size() > 6 * 4096);
    std::mt19937 rng(42);
    for (size_t i = 2 * 4096; i < 5 * 4096; ++i) bytes[i] = char(rng());
    test::write_bytes(path, bytes);
    check_refused(path, "corrupt");
  }
  SECTION("a valid header followed by garbage") {
    std::string path = dir.file("header_only.db");
    std::string bytes = test::read_bytes(make_db(dir, "src.db")).substr(0, 100);
    std::mt19937 rng(7);
    for (int i = 0; i < 3 * 4096; ++i) bytes += char(rng());
    test::write_bytes(path, bytes);
    check_refused(path, "corrupt");
  }
}

TEST_CASE("missing, empty and read-only opens", "[records][files]") {
  TempDir dir;
  OpenOptions no_create;
  no_create.create = false;
  CHECK_THROWS_WITH(open_database(dir.file("missing.db"), no_create), Catch::Contains("no tessel tuning database"));
  CHECK_FALSE(test::fs::exists(dir.file("missing.db")));
  test::write_bytes(dir.file("empty.db"), "");
  CHECK_THROWS_WITH(open_database(dir.file("empty.db"), no_create), Catch::Contains("is empty"));
  CHECK(open_database(dir.file("empty.db"))->stats().records == 0);  // an empty file may become one

  std::string path = make_db(dir, "ro.db", 3);
  std::string before = test::read_bytes(path);
  OpenOptions ro;
  ro.read_only = true;
  auto db = open_database(path, ro);
  CHECK(db->stats().records == 3);
  CHECK_THROWS_WITH(db->add_record(make_record(test::host_target(), 99, {1e-3})), Catch::Contains("read-only"));
  db.reset();
  CHECK(test::read_bytes(path) == before);
}

TEST_CASE("a version-0 database is migrated", "[records][files]") {
  TempDir dir;
  std::string path = dir.file("v0.db");
  const auto& w = test::small_matmul();
  std::string host = test::host_target();
  std::string wjson = workload::to_json(w).dump();
  auto q = [](const std::string& s) {  // SQL string literal
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  };
  std::string sql =
      "CREATE TABLE tessel_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
      "INSERT INTO tessel_meta VALUES('format', 'tessel-records'), ('created_by', '0.0.1');\n"
      "CREATE TABLE workloads(key TEXT PRIMARY KEY, json TEXT NOT NULL);\n"
      "CREATE TABLE records(id INTEGER PRIMARY KEY, workload_key TEXT NOT NULL, target TEXT NOT NULL,\n"
      "  trace TEXT NOT NULL, run_times TEXT NOT NULL, error TEXT NOT NULL DEFAULT '', created TEXT NOT NULL);\n"
      "INSERT INTO workloads VALUES(" + q(w.key) + ", " + q(wjson) + ");\n"
      "INSERT INTO records VALUES(1, " + q(w.key) + ", " + q(host) + ", " + q(test::split_trace(4).dump()) +
      ", '[0.002, 0.001, 0.003]', '', '2024-05-01 10:00:00');\n"
      "INSERT INTO records VALUES(2, " + q(w.key) + ", " + q(host) + ", " + q(test::split_trace(8).dump()) +
      ", '[]', 'compile_timeout: took 60 s', '2024-05-01 10:00:01');\n"
      "INSERT INTO records VALUES(3, 'abcdabcdabcdabcdabcdabcdabcdabcd', " + q(host) + ", " +
      q(test::split_trace(2).dump()) + ", '[]', 'segfault in worker', '2024-05-01 10:00:02');\n";
  if (!test::sqlite3_cli(path, sql)) {
    WARN("sqlite3 command-line tool not found; skipped");
    return;
  }
  OpenOptions ro;
  ro.read_only = true;
  std::string before = test::read_bytes(path);
  CHECK_THROWS_WITH(open_database(path, ro), Catch::Contains("schema version 0 and must be migrated"));
  CHECK(test::read_bytes(path) == before);

  auto db = open_database(path);
  DbStats s = db->stats();
  CHECK(s.schema_version == kSchemaVersion);
  CHECK(s.records == 3);
  CHECK(s.workloads == 2);
  CHECK(s.records_by_error_kind["none"] == 1);
  CHECK(s.records_by_error_kind["compile_timeout"] == 1);
  CHECK(s.records_by_error_kind["runtime_error"] == 1);
  auto best = db->best(w.key, host);
  REQUIRE(best.has_value());
  CHECK(best->median_s() == Approx(0.002));
  CHECK(best->trace_hash == trace_hash(test::split_trace(4)));
  CHECK(format_timestamp(best->timestamp_us).rfind("2024-05-01T10:00:00", 0) == 0);
  CHECK(db->has_record(w.key, host, trace_hash(test::split_trace(8))));
  auto failed = db->records({w.key, host, false, false, 0});
  REQUIRE(failed.size() == 2);
  CHECK(failed[1].error_message == "took 60 s");
  // Migrated once: reopening does nothing more.
  db.reset();
  CHECK(open_database(path)->stats().records == 3);
}
