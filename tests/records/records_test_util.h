// Helpers for the records tests: a scratch directory, records with small real traces, file bytes,
// the sqlite3 command-line tool (used to write fixtures tessel itself never writes).
#pragma once
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessel/codegen/target.h"
#include "tessel/records/database.h"
#include "tessel/records/target_match.h"
#include "tessel/schedule/step.h"
#include "tessel/workload/workload.h"

namespace tessel::test {

namespace fs = std::filesystem;

/** A fresh directory under the system temp dir, removed with the object. */
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> n{0};
    path_ = fs::temp_directory_path() /
            ("tessel_records_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + "_" + std::to_string(rand()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/** Runs the sqlite3 CLI on a database with SQL from a string; false when the tool is missing. */
inline bool sqlite3_cli(const std::string& db, const std::string& sql) {
  if (std::system("command -v sqlite3 >/dev/null 2>&1") != 0) return false;
  std::string script = db + ".sql";
  write_bytes(script, sql);
  int rc = std::system(("sqlite3 '" + db + "' < '" + script + "' > /dev/null").c_str());
  fs::remove(script);
  return rc == 0;
}

inline const workload::Workload& small_matmul() {
  static const workload::Workload w = workload::from_spec("matmul:M=32,N=32,K=32");
  return w;
}

inline std::string host_target() { return codegen::Target::host().to_string(); }

/** A matmul trace: split C.i by f (a real, replayable schedule). */
inline nlohmann::json split_trace(int64_t f) {
  return schedule::trace_to_json({schedule::SplitStep{"C", "i", f, false}});
}

/** A record of small_matmul() on target with a split-by-f trace and the given run times / error. */
inline records::TuningRecord make_record(const std::string& target, int64_t f, std::vector<double> times,
                                         records::MeasureErrorKind kind = records::MeasureErrorKind::kNone) {
  records::TuningRecord r;
  r.workload_key = small_matmul().key;
  r.workload = workload::to_json(small_matmul());
  r.target = target;
  r.target_fingerprint = records::host_fingerprint();
  r.trace = split_trace(f);
  r.run_times_s = std::move(times);
  r.error_kind = kind;
  if (kind != records::MeasureErrorKind::kNone) r.error_message = "synthetic failure";
  r.build_settings = {{"opt", 3}};
  r.run_settings = {{"repeats", 3}};
  return r;
}

}  // namespace tessel::test
