// `tessel db`: inspect and maintain a tuning database: list, best, show, export, import, distill, stats,
// why. Each action takes --db PATH. See docs/records.md.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "subcommand.h"
#include "tessel/codegen/target.h"
#include "tessel/records/compile.h"
#include "tessel/records/database.h"
#include "tessel/records/target_match.h"
#include "tessel/schedule/step.h"
#include "tessel/workload/workload.h"

namespace tessel::tools {

namespace po = boost::program_options;

namespace {

const char* kUsage =
    "tessel db: inspect and maintain a tuning database\n\n"
    "  tessel db list     --db PATH [--workload SPEC | --te FILE | --key KEY] [--target T] [--limit N]\n"
    "                     workloads with record counts; with a workload: its records\n"
    "  tessel db best     --db PATH (--workload SPEC | --te FILE | --key KEY) [--target T] [--json]\n"
    "                     the record `tessel compile` would use (exit 1 when none, with the reason)\n"
    "  tessel db show     --db PATH --id N [--json]          one record, with its trace\n"
    "  tessel db export   --db PATH -o FILE.jsonl            every record as JSON lines\n"
    "  tessel db import   --db PATH FILE.jsonl               add records (duplicates skipped)\n"
    "  tessel db distill  --db PATH --k K [-o OUT.db] [--distinct]\n"
    "                     keep the best K per workload and target (--distinct: of K distinct schedules)\n"
    "  tessel db stats    --db PATH [--json]                 counts, by error kind\n"
    "  tessel db why      --db PATH (--workload SPEC | --te FILE | --key KEY) [--target T]\n"
    "                     explain the best-record lookup target by target\n\n"
    "--target is 'host' (default) or a target string. Options";

struct Args {
  std::string action, db, spec, te, key, target = "host", output, input;
  int64_t id = 0, limit = 0;
  int k = 0;
  bool json = false, distinct = false;
};

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", s * 1e3);
  return buf;
}

std::optional<workload::Workload> workload_of(const Args& a) {
  if (!a.spec.empty()) return workload::from_spec(a.spec);
  if (!a.te.empty()) return workload::from_te_file(a.te);
  return std::nullopt;
}

std::string key_of(const Args& a, const std::optional<workload::Workload>& w, bool required) {
  if (w) return w->key;
  if (!a.key.empty()) return a.key;
  if (required) throw po::error("tessel db " + a.action + ": give --workload SPEC, --te FILE or --key KEY");
  return "";
}

nlohmann::json record_json(const records::TuningRecord& r) {
  nlohmann::json j = records::record_to_json(r);
  j["id"] = r.id;
  j["run_id"] = r.run_id;
  j["median_s"] = r.ok() ? nlohmann::json(r.median_s()) : nlohmann::json();
  j["cv"] = r.cv();
  j["timestamp"] = records::format_timestamp(r.timestamp_us);
  return j;
}

int do_list(records::Database& db, const Args& a) {
  auto w = workload_of(a);
  std::string key = key_of(a, w, false);
  if (key.empty()) {
    std::printf("%-32s %-24s %8s  %s\n", "key", "name", "records", "best (ms) by target");
    for (auto& wi : db.workloads()) {
      std::string best;
      for (auto& g : db.summarize(wi.key))
        if (g.error_kind == records::MeasureErrorKind::kNone)
          best += (best.empty() ? "" : "; ") + ms(g.best_median_s) + " on " + records::target_label(g.target);
      std::printf("%-32s %-24s %8lld  %s\n", wi.key.c_str(), wi.name.c_str(), static_cast<long long>(wi.records),
                  best.empty() ? "-" : best.c_str());
    }
    return 0;
  }
  records::RecordQuery q;
  q.workload_key = key;
  if (a.target != "host") q.target = codegen::Target::parse(a.target).to_string();
  q.limit = a.limit;
  std::printf("%8s %-18s %12s %-28s %s\n", "id", "status", "median (ms)", "timestamp", "target");
  for (auto& r : db.records(q))
    std::printf("%8lld %-18s %12s %-28s %s\n", static_cast<long long>(r.id), records::error_kind_name(r.error_kind),
                r.ok() ? ms(r.median_s()).c_str() : "-", records::format_timestamp(r.timestamp_us).c_str(),
                records::target_label(r.target).c_str());
  return 0;
}

int do_best(records::Database& db, const Args& a, bool explain) {
  auto w = workload_of(a);
  std::string key = key_of(a, w, true);
  std::string target = codegen::Target::parse(a.target).to_string();
  records::ReplayCheck check;
  if (w) check = [&](const records::TuningRecord& r) { return records::check_replay(*w, r); };
  records::BestMatch m = db.find_best(key, target, check);
  double flop = w ? w->flop_count() : 0;
  if (explain) {
    std::cout << "workload key " << key << (w ? " (" + w->spec + ")" : std::string()) << "\n"
              << "requested target: " << records::target_label(target) << "\n  " << target << "\n"
              << "rule: exact target string first; else same triple and cpu with the record's features a subset of "
                 "the target's (fallback); best = lowest median among successful records"
              << (w ? "; each candidate's trace is replayed and lowered" : "; pass --workload to check replay")
              << "\n";
    for (auto& n : m.notes) std::cout << "  " << n << "\n";
    std::cout << (m.record ? "=> uses " : "=> default schedule: ") << m.message << "\n";
    return 0;
  }
  if (a.json) {
    nlohmann::json j = {{"found", m.record.has_value()},
                        {"reason", records::match_reason_name(m.reason)},
                        {"message", m.message},
                        {"fallback", m.fallback},
                        {"workload_key", key},
                        {"target", target}};
    if (m.record) {
      j["record"] = record_json(*m.record);
      if (flop > 0) j["gflops"] = flop / m.record->median_s() / 1e9;
    }
    std::cout << j.dump(2) << "\n";
    return m.record ? 0 : 1;
  }
  if (!m.record) {
    std::cout << "no usable record: " << m.message << "\n";
    return 1;
  }
  const auto& r = *m.record;
  std::cout << "record " << r.id << ": median " << ms(r.median_s()) << " ms";
  if (flop > 0) std::printf(", %.1f GFLOP/s", flop / r.median_s() / 1e9);
  std::cout << (m.fallback ? " (compatible target)" : "") << "\n  target " << r.target << "\n  trace:\n";
  for (auto& s : schedule::trace_from_json(r.trace)) std::cout << "    " << schedule::step_to_string(s) << "\n";
  return 0;
}

int do_show(records::Database& db, const Args& a) {
  if (a.id <= 0) throw po::error("tessel db show: --id N is required");
  auto r = db.record(a.id);
  TESSEL_CHECK(r.has_value()) << "no record with id " << a.id << " in '" << db.path() << "'";
  if (a.json) {
    std::cout << record_json(*r).dump(2) << "\n";
    return 0;
  }
  std::cout << "record " << r->id << "\n  workload   " << r->workload_key << " " << r->workload.value("name", "")
            << "\n  target     " << r->target << "\n  status     " << records::error_kind_name(r->error_kind)
            << (r->error_message.empty() ? "" : ": " + r->error_message) << "\n";
  if (r->ok())
    std::cout << "  median     " << ms(r->median_s()) << " ms over " << r->run_times_s.size() << " runs (cv "
              << r->cv() << ")\n";
  std::cout << "  measured   " << records::format_timestamp(r->timestamp_us) << " by tessel " << r->tessel_version
            << (r->run_id ? ", run " + std::to_string(r->run_id) : "") << "\n  machine    " << r->target_fingerprint.dump()
            << "\n  trace " << r->trace_hash.substr(0, 16) << ":\n";
  try {
    for (auto& s : schedule::trace_from_json(r->trace)) std::cout << "    " << schedule::step_to_string(s) << "\n";
  } catch (const UserError& e) {
    std::cout << "    (unreadable: " << e.what() << ")\n";
  }
  return 0;
}

int do_stats(records::Database& db, const Args& a) {
  records::DbStats s = db.stats();
  if (a.json) {
    std::cout << nlohmann::json{{"path", s.path},
                                {"schema_version", s.schema_version},
                                {"workloads", s.workloads},
                                {"targets", s.targets},
                                {"runs", s.runs},
                                {"records", s.records},
                                {"ok_records", s.ok_records},
                                {"records_by_error_kind", s.records_by_error_kind},
                                {"file_bytes", s.file_bytes}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << s.path << ": schema version " << s.schema_version << ", " << s.file_bytes << " bytes\n"
            << "  workloads " << s.workloads << ", targets " << s.targets << ", tuning runs " << s.runs << "\n"
            << "  records " << s.records << " (" << s.ok_records << " ok)\n";
  for (auto& [k, n] : s.records_by_error_kind) std::cout << "    " << k << ": " << n << "\n";
  return 0;
}

}  // namespace

int run_db(const std::vector<std::string>& args) {
  Args a;
  po::options_description desc(kUsage);
  desc.add_options()("help,h", "print this help")("db", po::value<std::string>(&a.db), "tuning database")(
      "workload", po::value<std::string>(&a.spec), "workload spec NAME:P=V,...")(
      "te", po::value<std::string>(&a.te), "workload from a .te file")(
      "key", po::value<std::string>(&a.key), "workload key")(
      "target", po::value<std::string>(&a.target)->default_value("host"), "target ('host' or a target string)")(
      "json", po::bool_switch(&a.json), "JSON output (best, show, stats)")(
      "id", po::value<int64_t>(&a.id), "record id (show)")("limit", po::value<int64_t>(&a.limit), "at most N rows (list)")(
      "k", po::value<int>(&a.k), "records kept per workload and target (distill)")(
      "output,o", po::value<std::string>(&a.output), "output file (export, distill)")(
      "distinct", po::bool_switch(&a.distinct), "distill: the best record of each of K distinct schedules");
  po::options_description hidden;
  hidden.add_options()("action", po::value<std::string>(&a.action))("input", po::value<std::string>(&a.input));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("action", 1).add("input", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help") || a.action.empty()) {
    std::cout << desc << "\n";
    return vm.count("help") ? 0 : 2;
  }
  static const std::set<std::string> actions = {"list", "best", "show", "export", "import", "distill", "stats", "why"};
  if (!actions.count(a.action)) throw po::error("unknown action '" + a.action + "'");
  if (a.db.empty()) throw po::error("tessel db " + a.action + ": --db PATH is required");
  if (!a.input.empty() && a.action != "import") throw po::error("unexpected argument '" + a.input + "'");
  if (int(!a.spec.empty()) + int(!a.te.empty()) + int(!a.key.empty()) > 1)
    throw po::error("give at most one of --workload, --te, --key");

  records::OpenOptions oo;
  oo.create = a.action == "import";
  if (a.action == "import") {
    if (a.input.empty()) throw po::error("tessel db import: give the JSON-lines file to import");
    auto db = records::open_database(a.db, oo);
    auto [added, skipped] = db->import_jsonl(a.input);
    std::cout << "imported " << added << " record(s) into " << a.db << " (" << skipped << " already present)\n";
    return 0;
  }
  bool writes = a.action == "distill" && a.output.empty();
  oo.read_only = !writes && ::access(a.db.c_str(), W_OK) != 0 && ::access(a.db.c_str(), R_OK) == 0;
  auto db = records::open_database(a.db, oo);
  if (a.action == "list") return do_list(*db, a);
  if (a.action == "best") return do_best(*db, a, false);
  if (a.action == "why") return do_best(*db, a, true);
  if (a.action == "show") return do_show(*db, a);
  if (a.action == "stats") return do_stats(*db, a);
  if (a.action == "export") {
    if (a.output.empty()) throw po::error("tessel db export: -o FILE is required");
    int64_t n = db->export_jsonl(a.output);
    std::cout << "exported " << n << " record(s) to " << a.output << "\n";
    return 0;
  }
  // distill
  if (a.k < 1) throw po::error("tessel db distill: --k K (at least 1) is required");
  int64_t kept = db->distill(a.k, a.output, a.distinct);
  std::cout << "kept " << kept << " record(s) (best " << a.k << (a.distinct ? " distinct schedules" : "")
            << " per workload and target) "
            << (a.output.empty() ? "in " + a.db : "in " + a.output) << "\n";
  return 0;
}

}  // namespace tessel::tools
