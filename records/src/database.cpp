// The parts of Database built on its primitives: best / top_k, the best-record lookup with target
// matching and reasons (find_best), JSON-lines export and import, distill.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "tessel/records/database.h"
#include "tessel/records/target_match.h"
#include "tessel/support/error.h"

namespace tessel::records {

const char* match_reason_name(MatchReason r) {
  switch (r) {
    case MatchReason::kFound: return "found";
    case MatchReason::kNoRecordForKey: return "no_record_for_key";
    case MatchReason::kOtherTargetsOnly: return "other_targets_only";
    case MatchReason::kOnlyFailed: return "only_failed";
    case MatchReason::kTraceInvalid: return "trace_invalid";
  }
  return "?";
}

std::optional<TuningRecord> Database::best(const std::string& key, const std::string& target) {
  auto v = top_k(key, target, 1);
  if (v.empty()) return std::nullopt;
  return v[0];
}

std::vector<TuningRecord> Database::top_k(const std::string& key, const std::string& target, int k) {
  TESSEL_CHECK(k >= 1) << "top_k: k must be at least 1, got " << k;
  RecordQuery q;
  q.workload_key = key;
  q.target = target;
  q.only_ok = true;
  q.best_first = true;
  q.limit = k;
  return records(q);
}

namespace {

std::string ms(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g ms", s * 1e3);
  return buf;
}

std::string kinds_text(const std::map<std::string, int64_t>& by_kind) {
  std::string out;
  for (auto& [k, n] : by_kind) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + k;
  return out;
}

struct TargetInfo {
  TargetMatch match;
  int64_t ok = 0;
  std::map<std::string, int64_t> failed;
};

}  // namespace

BestMatch Database::find_best(const std::string& key, const std::string& target, const ReplayCheck& check,
                              int max_candidates) {
  BestMatch m;
  auto groups = summarize(key);
  if (groups.empty()) {
    m.reason = MatchReason::kNoRecordForKey;
    m.message = "no record for workload key " + key;
    m.notes.push_back("the database has no record for this workload key");
    return m;
  }
  std::map<std::string, TargetInfo> targets;
  for (auto& g : groups) {
    TargetInfo& t = targets[g.target];
    if (g.error_kind == MeasureErrorKind::kNone)
      t.ok += g.count;
    else
      t.failed[error_kind_name(g.error_kind)] += g.count;
  }
  std::vector<std::string> exact, compatible;
  for (auto& [name, t] : targets) {
    t.match = match_target(name, target);
    std::string what = t.match.kind == TargetMatchKind::kExact        ? "exact match"
                       : t.match.kind == TargetMatchKind::kCompatible ? "compatible (" + t.match.reason + ")"
                                                                      : "incompatible (" + t.match.reason + ")";
    m.notes.push_back("target " + target_label(name) + ": " + what + "; " + std::to_string(t.ok) + " ok" +
                      (t.failed.empty() ? "" : ", failed: " + kinds_text(t.failed)));
    if (t.match.kind == TargetMatchKind::kExact) exact.push_back(name);
    if (t.match.kind == TargetMatchKind::kCompatible) compatible.push_back(name);
    if (t.match.kind == TargetMatchKind::kIncompatible) m.other_targets.push_back(name);
    if (t.match.kind != TargetMatchKind::kIncompatible)
      for (auto& [k, n] : t.failed) m.failed_by_kind[k] += n;
  }
  // Candidates: exact targets first, then compatible ones; best first within each tier.
  int tried = 0;
  std::string first_error;
  for (int tier = 0; tier < 2 && !m.record; ++tier) {
    std::vector<TuningRecord> cands;
    for (auto& t : tier == 0 ? exact : compatible) {
      RecordQuery q;
      q.workload_key = key;
      q.target = t;
      q.only_ok = true;
      q.best_first = true;
      q.limit = max_candidates;
      for (auto& r : records(q)) cands.push_back(std::move(r));
    }
    std::stable_sort(cands.begin(), cands.end(),
                     [](const TuningRecord& a, const TuningRecord& b) { return a.median_s() < b.median_s(); });
    for (auto& r : cands) {
      if (tried++ >= max_candidates) break;
      std::string err = check ? check(r) : std::string();
      if (!err.empty()) {
        ++m.rejected_traces;
        if (first_error.empty()) first_error = "record " + std::to_string(r.id) + ": " + err;
        m.notes.push_back("record " + std::to_string(r.id) + " (" + ms(r.median_s()) + ") rejected: " + err);
        continue;
      }
      m.record = r;
      m.fallback = tier == 1;
      break;
    }
  }
  if (m.record) {
    m.reason = MatchReason::kFound;
    m.message = "record " + std::to_string(m.record->id) + " (median " + ms(m.record->median_s()) + ")" +
                (m.fallback ? " measured on compatible target " + target_label(m.record->target) : "");
    if (m.rejected_traces)
      m.message += "; " + std::to_string(m.rejected_traces) + " better record(s) skipped: trace no longer applies";
  } else if (m.rejected_traces > 0) {
    m.reason = MatchReason::kTraceInvalid;
    m.message = std::to_string(m.rejected_traces) + " successful record(s) for workload key " + key +
                " on this target, but no trace replays on this workload (" + first_error + ")";
  } else if (!exact.empty() || !compatible.empty()) {
    m.reason = MatchReason::kOnlyFailed;
    m.message = "only failed records for workload key " + key + " on this target (" + kinds_text(m.failed_by_kind) + ")";
  } else {
    m.reason = MatchReason::kOtherTargetsOnly;
    m.message = "records for workload key " + key + " exist only for other targets:";
    for (size_t i = 0; i < m.other_targets.size(); ++i)
      m.message += (i ? "; " : " ") + target_label(m.other_targets[i]) + " (" +
                   targets[m.other_targets[i]].match.reason + ")";
  }
  return m;
}

int64_t Database::export_jsonl(const std::string& path) {
  std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::trunc);
  TESSEL_CHECK(out) << "export: cannot write '" << tmp << "'";
  int64_t n = 0;
  for (auto& r : records(RecordQuery{})) {
    out << record_to_json(r).dump() << "\n";
    ++n;
  }
  out.close();
  TESSEL_CHECK(out) << "export: writing '" << tmp << "' failed";
  TESSEL_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0) << "export: cannot rename '" << tmp << "' to '" << path << "'";
  return n;
}

std::pair<int64_t, int64_t> Database::import_jsonl(const std::string& path) {
  std::ifstream in(path);
  TESSEL_CHECK(in) << "import: cannot read '" << path << "'";
  std::vector<TuningRecord> batch;
  int64_t added = 0, total = 0;
  auto flush = [&] {
    int64_t n = 0;
    add_records(batch, &n);
    added += n;
    total += int64_t(batch.size());
    batch.clear();
  };
  std::string line;
  for (int64_t lineno = 1; std::getline(in, line); ++lineno) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      batch.push_back(record_from_json(nlohmann::json::parse(line)));
    } catch (const nlohmann::json::exception& e) {
      throw UserError("import: " + path + ":" + std::to_string(lineno) + ": not JSON: " + e.what());
    } catch (const UserError& e) {
      throw UserError("import: " + path + ":" + std::to_string(lineno) + ": " + e.what());
    }
    if (batch.size() >= 512) flush();
  }
  flush();
  return {added, total - added};
}

int64_t Database::distill(int k, const std::string& out_path, bool distinct) {
  TESSEL_CHECK(k >= 1) << "distill: k must be at least 1, got " << k;
  std::vector<TuningRecord> keep;
  std::set<std::pair<std::string, std::string>> seen;
  for (auto& g : summarize("")) {
    if (g.error_kind != MeasureErrorKind::kNone || !seen.insert({g.workload_key, g.target}).second) continue;
    std::set<std::string> traces;
    for (auto& r : top_k(g.workload_key, g.target, distinct ? int(std::min<int64_t>(g.count, 1 << 30)) : k)) {
      if (distinct && (int(traces.size()) >= k || !traces.insert(r.trace_hash).second)) continue;
      keep.push_back(std::move(r));
    }
  }
  if (!out_path.empty()) {
    TESSEL_CHECK(out_path != path()) << "distill: the output must differ from the input (omit it to distill in place)";
    for (auto& r : keep) r.run_id = 0;  // tuning runs are not copied
    auto out = open_database(out_path);
    out->add_records(keep);
    return int64_t(keep.size());
  }
  std::set<int64_t> kept;
  for (auto& r : keep) kept.insert(r.id);
  std::vector<int64_t> drop;
  for (auto& r : records(RecordQuery{}))
    if (!kept.count(r.id)) drop.push_back(r.id);
  remove_records(drop);
  return int64_t(keep.size());
}

}  // namespace tessel::records
